#include "kernels/latency.h"

#include "core/errors.h"
#include "core/timer.h"
#include "kernels/kernels.h"
#include "topo/bind.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE 64
/* No cut below this many lines (1 MiB): a stall at a few lines (a huge page zeroed, a time
 * slice lost at 30% of a core) cut a chain at 128 B, whose walk read an L1's 1.4 ns and which
 * --bytes refuses to build again (4K at least).  1 MiB builds in about a millisecond. */
#define MIN_CUT_LINES ((size_t)1 << 14)

size_t jt_latency_default_bytes(const jt_topo *tp)
{
    size_t big = 0;
    for (int d = 0; d < hwloc_topology_get_depth(tp->t); d++) {
        hwloc_obj_t o = hwloc_get_obj_by_depth(tp->t, d, 0);
        if (o && hwloc_obj_type_is_dcache(o->type) && o->attr->cache.size > big)
            big = (size_t)o->attr->cache.size;
    }
    size_t b = 4 * big, floor = (size_t)64 << 20;
    return b > floor ? b : floor;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void summarize(double *v, int n, jt_probe *out)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    out->rounds = n;
    out->min = v[0];
    out->max = v[n - 1];
    out->ns = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int bind(const jt_topo *tp, int core, jt_probe *out)
{
    memset(out, 0, sizeof *out);
    out->core = out->mem = -1;
    jt_binding b;
    jt_bind_thread(tp, core, &b);
    if (!tp->this_system) {
        snprintf(out->note, sizeof out->note, "not measured: %s", b.note);
        return -1;
    }
    out->core = b.ok ? b.core : -1;
    snprintf(out->note, sizeof out->note, "%s", b.note);
    return 0;
}

/* xorshift64*: a fixed seed makes the permutation the same on every run. */
static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

#define MAX_ROUNDS 64

static int clamp_rounds(int rounds)
{
    return rounds < 1 ? 1 : rounds > MAX_ROUNDS ? MAX_ROUNDS : rounds;
}

void jt_chase_init(const jt_topo *tp, jt_chase *c, size_t bytes, int mem, double seconds)
{
    size_t want = bytes / LINE;
    if (want < 2)
        want = 2;
    memset(c, 0, sizeof *c);
    jt_buffer_reserve(tp, &c->buf, want * LINE, mem);
    c->wanted = want;
    char *base = c->buf.p;
    double t0 = jt_now(), build = seconds > 0 ? 0.6 * seconds : INFINITY;
    /* One random cycle through the lines, in an order no prefetcher follows, grown one line
     * at a time (line i goes in after a random line of the cycle so far: every cycle of the
     * first n lines is as likely, as with Sattolo's shuffle).  It is whole at every n, so it
     * may stop at a power of two when the next doubling would not end in the build's share:
     * the size then moves only when the node's speed moves twofold. */
    *(void **)base = base;
    size_t n = 1, stage = 2;
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (size_t i = 1; i < want; i++) {
        void **li = (void **)(base + i * LINE), **lj = (void **)(base + (next_rand(&seed) % i) * LINE);
        *li = *lj;
        *lj = li;
        n = i + 1;
        if (n == stage && n < want) { /* whole at the size wanted: nothing was cut */
            stage *= 2;
            if (n < MIN_CUT_LINES)
                continue;
            double el = jt_now() - t0;
            size_t more = want - n < n ? want - n : n;
            /* the next stage costs at least what the last did per line, and more (misses) */
            if (el + 1.5 * el * (double)more / (double)n > build) {
                c->capped = 1;
                break;
            }
        }
    }
    c->lines = n;
    c->at = (void **)base;
    /* Warm-up: a lap, so that the TLB and the walk start in a steady state; cut at the
     * setup's time (what is left of it is the lap's). */
    for (size_t done = 0; done < n;) {
        size_t step = n - done < ((size_t)1 << 16) ? n - done : ((size_t)1 << 16);
        jt_chase_walk(c, (long)step);
        done += step;
        if (seconds > 0 && jt_now() - t0 > seconds)
            break;
    }
    c->build_s = jt_now() - t0;
    jt_buffer_settle(tp, &c->buf, n * LINE);
}

void jt_chase_walk(jt_chase *c, long accesses)
{
    void **p = c->at;
    for (long i = 0; i < accesses; i++)
        p = (void **)*p;
    c->at = p; /* kept: the walk is not optimised away, and the next one goes on from here */
}

void jt_chase_free(const jt_topo *tp, jt_chase *c)
{
    jt_buffer_free(tp, &c->buf);
    memset(c, 0, sizeof *c);
}

int jt_latency_probe(const jt_topo *tp, int core, int mem, size_t bytes, long accesses,
                     int rounds, jt_probe *out)
{
    if (bind(tp, core, out) != 0)
        return -1;
    jt_chase c;
    jt_chase_init(tp, &c, bytes, mem, 0);
    out->mem = c.buf.numa;
    if (c.buf.note[0])
        snprintf(out->note + strlen(out->note), sizeof out->note - strlen(out->note), "%s%s",
                 out->note[0] ? "; " : "", c.buf.note);
    double v[MAX_ROUNDS];
    rounds = clamp_rounds(rounds);
    for (int r = 0; r < rounds; r++) {
        double t0 = jt_now();
        jt_chase_walk(&c, accesses);
        v[r] = (jt_now() - t0) * 1e9 / (double)accesses;
    }
    summarize(v, rounds, out);
    jt_chase_free(tp, &c);
    return 0;
}

int jt_bandwidth_probe(const jt_topo *tp, int core, int mem, size_t bytes, int rounds,
                       jt_probe *out)
{
    if (bind(tp, core, out) != 0)
        return -1;
    const jt_kernel *k = jt_kernel_find("copy");
    jt_kws w;
    memset(&w, 0, sizeof w);
    k->init(&w, tp, bytes, mem, 1);
    out->mem = w.buf[0].numa;
    k->sweep(&w); /* warm-up */
    double v[MAX_ROUNDS];
    rounds = clamp_rounds(rounds);
    for (int r = 0; r < rounds; r++) {
        double t0 = jt_now();
        k->sweep(&w);
        v[r] = w.bytes / (jt_now() - t0) / 1e9;
    }
    summarize(v, rounds, out);
    jt_kws_free(&w, tp);
    return 0;
}
