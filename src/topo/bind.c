#define _GNU_SOURCE /* MAP_ANONYMOUS, MADV_HUGEPAGE */
#include "topo/bind.h"

#include "core/errors.h"
#include "core/json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void jt_bind_thread(const jt_topo *tp, int core, jt_binding *b)
{
    memset(b, 0, sizeof *b);
    b->requested_core = core;
    b->core = -1;
    b->pu_os = -1;
    if (!tp->this_system) {
        snprintf(b->note, sizeof b->note, "not bound: topology '%.100s' is not this system", tp->source);
        return;
    }
    hwloc_obj_t c = jt_topo_core(tp, core);
    if (!c) {
        snprintf(b->note, sizeof b->note, "not bound: no core %d", core);
        return;
    }
    if (hwloc_set_cpubind(tp->t, c->cpuset, HWLOC_CPUBIND_THREAD) != 0) {
        snprintf(b->note, sizeof b->note, "binding to core %d failed: %s", core, strerror(errno));
        return;
    }
    /* Read back: the binding the OS holds, and where the thread runs now. */
    hwloc_bitmap_t got = hwloc_bitmap_alloc(), where = hwloc_bitmap_alloc();
    if (hwloc_get_cpubind(tp->t, got, HWLOC_CPUBIND_THREAD) == 0 &&
        hwloc_bitmap_isincluded(got, c->cpuset)) {
        b->ok = 1;
        b->core = core;
    } else {
        snprintf(b->note, sizeof b->note, "asked for core %d, the OS reports another cpuset", core);
    }
    if (hwloc_get_last_cpu_location(tp->t, where, HWLOC_CPUBIND_THREAD) == 0)
        b->pu_os = hwloc_bitmap_first(where);
    hwloc_bitmap_free(got);
    hwloc_bitmap_free(where);
}

int jt_mem_location(const jt_topo *tp, const void *p, size_t bytes)
{
    if (!tp->this_system || bytes == 0)
        return -1;
    hwloc_nodeset_t ns = hwloc_bitmap_alloc();
    int r = -1;
    if (hwloc_get_area_memlocation(tp->t, p, bytes, ns, HWLOC_MEMBIND_BYNODESET) == 0) {
        int w = hwloc_bitmap_weight(ns);
        r = w == 1 ? jt_topo_numa_of_nodeset(tp, ns) : (w > 1 ? -2 : -1);
    }
    hwloc_bitmap_free(ns);
    return r;
}

const char *const jt_pages_names[] = {"system", "base", "huge", NULL};

static jt_pages page_choice = JT_PAGES_SYSTEM;

void jt_buffer_pages(jt_pages pages) { page_choice = pages; }

#define HUGE_PAGE ((size_t)2 << 20)

/* A private mapping of at least len bytes on a 2 MiB boundary, THP asked for: a page-aligned
 * buffer only gets huge pages on the 2 MiB ranges it happens to cover whole.  NULL on failure. */
static void *map_huge(size_t len, size_t *mapped, char *note, size_t notelen)
{
    size_t want = (len + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    char *m = mmap(NULL, want + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    char *a = (char *)(((uintptr_t)m + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
    if (a > m)
        munmap(m, (size_t)(a - m));
    munmap(a + want, (size_t)(m + HUGE_PAGE - a)); /* a < m + HUGE_PAGE: never empty */
    if (madvise(a, want, MADV_HUGEPAGE) != 0)
        snprintf(note, notelen, "huge pages not asked for: madvise: %s", strerror(errno));
    *mapped = want;
    return a;
}

/* Bytes of [p, p + len) on transparent huge pages: the AnonHugePages of the mappings holding
 * it (/proc/self/smaps), at most len; -1 when unreadable. */
static long long huge_bytes(const void *p, size_t len)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    uintptr_t lo = (uintptr_t)p, hi = lo + len;
    unsigned long a, b;
    long long kb, sum = 0;
    int in = 0, seen = 0;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%lx-%lx ", &a, &b) == 2)
            in = a < hi && b > lo;
        else if (in && sscanf(line, "AnonHugePages: %lld kB", &kb) == 1) {
            sum += kb * 1024;
            seen = 1;
        }
    }
    fclose(f);
    return !seen ? -1 : (sum > (long long)len ? (long long)len : sum);
}

static void buffer_map(const jt_topo *tp, jt_buffer *buf, size_t bytes, int numa)
{
    memset(buf, 0, sizeof *buf);
    buf->bytes = bytes;
    buf->requested_numa = numa;
    buf->numa = -1;
    buf->pages = page_choice;
    size_t len = bytes ? bytes : 1;
    hwloc_nodeset_t ns = NULL;
    hwloc_membind_policy_t pol = HWLOC_MEMBIND_BIND;
    if (tp->this_system && numa != JT_MEM_ANY) {
        ns = hwloc_bitmap_alloc();
        if (numa == JT_MEM_INTERLEAVE) {
            hwloc_bitmap_copy(ns, hwloc_topology_get_topology_nodeset(tp->t));
            pol = HWLOC_MEMBIND_INTERLEAVE;
        } else {
            hwloc_obj_t n = jt_topo_numa(tp, numa);
            if (n)
                hwloc_bitmap_copy(ns, n->nodeset);
        }
        if (hwloc_bitmap_iszero(ns)) {
            hwloc_bitmap_free(ns);
            ns = NULL;
        }
    } else if (!tp->this_system && numa != JT_MEM_ANY) {
        snprintf(buf->note, sizeof buf->note, "not bound: topology '%.100s' is not this system",
                 tp->source);
    }
    if (page_choice == JT_PAGES_HUGE) {
        buf->p = map_huge(len, &buf->mapped, buf->note, sizeof buf->note);
        if (buf->p && ns &&
            hwloc_set_area_membind(tp->t, buf->p, buf->mapped, ns, pol, HWLOC_MEMBIND_BYNODESET))
            snprintf(buf->note, sizeof buf->note, "memory binding to node %d failed: %s", numa,
                     strerror(errno));
    } else if (ns) {
        buf->p = hwloc_alloc_membind(tp->t, len, ns, pol, HWLOC_MEMBIND_BYNODESET);
        buf->hwloc_alloc = buf->p != NULL;
        if (!buf->p)
            snprintf(buf->note, sizeof buf->note, "memory binding to node %d failed: %s", numa,
                     strerror(errno));
    }
    if (ns)
        hwloc_bitmap_free(ns);
    if (!buf->p) {
        long pg = sysconf(_SC_PAGESIZE);
        if (posix_memalign(&buf->p, pg > 0 ? (size_t)pg : 4096, len) != 0)
            buf->p = NULL;
    }
    if (!buf->p)
        jt_fatal("cannot allocate %zu bytes: %s", len, strerror(errno));
    if (page_choice == JT_PAGES_BASE && madvise(buf->p, len, MADV_NOHUGEPAGE) != 0 && !buf->note[0])
        snprintf(buf->note, sizeof buf->note, "huge pages not refused: madvise: %s",
                 strerror(errno));
}

void jt_buffer_reserve(const jt_topo *tp, jt_buffer *buf, size_t bytes, int numa)
{
    buffer_map(tp, buf, bytes, numa);
}

void jt_buffer_alloc(const jt_topo *tp, jt_buffer *buf, size_t bytes, int numa)
{
    buffer_map(tp, buf, bytes, numa);
    /* Touch every page from this thread so that pages exist (first touch or bound). */
    memset(buf->p, 0, bytes ? bytes : 1);
    jt_buffer_settle(tp, buf, bytes);
}

void jt_buffer_settle(const jt_topo *tp, jt_buffer *buf, size_t touched)
{
    size_t len = touched ? touched : 1;
    int numa = buf->requested_numa;
    if (numa == JT_MEM_INTERLEAVE)
        buf->numa = -2;
    else
        buf->numa = jt_mem_location(tp, buf->p, len);
    if (numa >= 0 && buf->numa >= 0 && buf->numa != numa && !buf->note[0])
        snprintf(buf->note, sizeof buf->note, "asked for node %d, pages are on node %d", numa,
                 buf->numa);
    buf->huge = huge_bytes(buf->p, len);
    if (buf->pages == JT_PAGES_HUGE && buf->huge >= 0 && buf->huge < (long long)len &&
        !buf->note[0])
        snprintf(buf->note, sizeof buf->note, "asked for huge pages, %lld of %zu bytes are on "
                 "them (see /sys/kernel/mm/transparent_hugepage)", buf->huge, len);
}

void jt_buffer_free(const jt_topo *tp, jt_buffer *buf)
{
    if (!buf->p)
        return;
    if (buf->mapped)
        munmap(buf->p, buf->mapped);
    else if (buf->hwloc_alloc)
        hwloc_free(tp->t, buf->p, buf->bytes ? buf->bytes : 1);
    else
        free(buf->p);
    buf->p = NULL;
}

void jt_binding_json(const jt_binding *b, jt_json *j)
{
    jt_json_key(j, "core");
    if (b->ok)
        jt_json_int(j, b->core);
    else
        jt_json_null(j);
    jt_json_key(j, "pu_os");
    if (b->pu_os >= 0)
        jt_json_int(j, b->pu_os);
    else
        jt_json_null(j);
    jt_json_kint(j, "requested_core", b->requested_core);
    if (b->note[0])
        jt_json_kstr(j, "note", b->note);
}

static void numa_value(jt_json *j, int v)
{
    if (v >= 0)
        jt_json_int(j, v);
    else if (v == JT_MEM_INTERLEAVE)
        jt_json_str(j, "interleave");
    else
        jt_json_null(j);
}

void jt_buffer_json(const jt_buffer *buf, jt_json *j)
{
    jt_json_key(j, "mem_numa");
    numa_value(j, buf->numa);
    jt_json_key(j, "requested_mem");
    numa_value(j, buf->requested_numa);
    jt_json_kstr(j, "pages", jt_pages_names[buf->pages]);
    jt_json_key(j, "huge_bytes");
    if (buf->huge >= 0)
        jt_json_int(j, buf->huge);
    else
        jt_json_null(j);
    if (buf->note[0])
        jt_json_kstr(j, "mem_note", buf->note);
}
