/* Binding of threads to cores and of buffers to NUMA nodes, and reading back what the OS
 * actually gave: the records report the binding obtained, not the one asked for. */
#ifndef JT_BIND_H
#define JT_BIND_H

#include "topo/topo.h"

struct jt_json;

#define JT_MEM_ANY (-1)        /* no policy: first touch by the allocating thread */
#define JT_MEM_INTERLEAVE (-2) /* pages spread round-robin over every NUMA node */

typedef struct jt_binding {
    int requested_core; /* -1: not asked */
    int core;           /* logical core obtained, -1 when not bound */
    int pu_os;          /* OS index of the PU the thread runs on */
    int ok;
    char note[160];     /* why not, when not */
} jt_binding;

/* The pages of a buffer (--pages).  Intra-node transfers of large messages go through the
 * kernel (CMA's process_vm_readv in Open MPI's vader and UCX), which pins and copies the
 * sender's pages one by one: with 2 MiB pages a 4 MiB osu_mbw_mr window ran 2.2 times as fast
 * with MPICH/UCX on a 2-core KVM guest (docs/validation.md), so the page size is chosen and
 * recorded, not left to where a mapping happens to start. */
typedef enum {
    JT_PAGES_SYSTEM, /* what the kernel's THP setting gives a page-aligned buffer, as OSU's */
    JT_PAGES_BASE,   /* base pages: THP refused (MADV_NOHUGEPAGE) */
    JT_PAGES_HUGE    /* 2 MiB-aligned mapping, THP asked for (MADV_HUGEPAGE) */
} jt_pages;
extern const char *const jt_pages_names[]; /* "system", "base", "huge", NULL */

typedef struct jt_buffer {
    void *p;
    size_t bytes;
    int requested_numa; /* node, JT_MEM_ANY or JT_MEM_INTERLEAVE */
    int numa;           /* node holding the pages, read back; -1 unknown, -2 several */
    int hwloc_alloc;    /* freed with hwloc_free */
    size_t mapped;      /* bytes of its own mapping (huge pages), freed with munmap; else 0 */
    jt_pages pages;     /* asked for */
    long long huge;     /* bytes on transparent huge pages, read back; -1 unknown */
    char note[160];
} jt_buffer;

/* Binds the calling thread to one core (all its PUs). */
void jt_bind_thread(const jt_topo *tp, int core, jt_binding *b);
/* The pages of every buffer jt_buffer_alloc makes from now on: one choice for the process
 * (the harness sets --pages once, before any buffer). */
void jt_buffer_pages(jt_pages pages);
/* Allocates, binds, touches every page (so it really lands), and reads the location back. */
void jt_buffer_alloc(const jt_topo *tp, jt_buffer *buf, size_t bytes, int numa);
/* The same, its pages left untouched: the caller touches the first `touched` bytes (a chain
 * built in the time it is given), then jt_buffer_settle reads their location back. */
void jt_buffer_reserve(const jt_topo *tp, jt_buffer *buf, size_t bytes, int numa);
void jt_buffer_settle(const jt_topo *tp, jt_buffer *buf, size_t touched);
void jt_buffer_free(const jt_topo *tp, jt_buffer *buf);
/* NUMA node holding the pages of [p, p+bytes): logical index, -1 unknown, -2 several. */
int jt_mem_location(const jt_topo *tp, const void *p, size_t bytes);

void jt_binding_json(const jt_binding *b, struct jt_json *j);  /* core, pu_os, requested, note */
/* mem_numa, requested_mem, pages, huge_bytes, mem_note */
void jt_buffer_json(const jt_buffer *buf, struct jt_json *j);

#endif
