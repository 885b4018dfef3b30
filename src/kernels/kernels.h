/* Compute kernels for the contention benchmark.  Each one sweeps its own arrays (allocated and
 * first touched by the thread that runs it) and says what one sweep counts: bytes moved in the
 * STREAM convention (no write-allocate), bytes with write-allocate, and flops. */
#ifndef JT_KERNELS_H
#define JT_KERNELS_H

#include "topo/bind.h"

#include <stddef.h>

typedef struct jt_kws {
    jt_buffer buf[3];         /* arrays a, b, c (matrix, vectors for cg) */
    double *a, *b, *c;
    double *v[4];             /* cg: x, r, p, q (small, cache-resident) */
    size_t n;                 /* elements per array, or matrix order */
    int reps;                 /* triad: operations per element (arithmetic intensity) */
    int iter;                 /* cg: iterations since the last restart */
    int stores;               /* copy, triad: JT_STORES_* (stream_loops.h), set before init */
    double sink;              /* keeps results alive */
    double bytes, bytes_wa, flops; /* per sweep; with nt stores bytes_wa = bytes */
} jt_kws;

typedef struct jt_kernel {
    const char *what;         /* for --help and the records */
    int needs_blas;
    int has_stores;           /* takes --stores (normal or non-temporal) */
    /* In the worker thread, after binding: allocate on numa (JT_MEM_*), first touch, account. */
    void (*init)(jt_kws *w, const jt_topo *tp, size_t bytes, int numa, int reps);
    void (*sweep)(jt_kws *w);
} jt_kernel;

/* The kernels by name (NULL-terminated; --kernel's choices) and, in the same order, what they
 * are. */
extern const char *const jt_kernel_names[];
extern const jt_kernel jt_kernels[];
const jt_kernel *jt_kernel_find(const char *name); /* NULL when it is none */
const char *jt_kernel_name(const jt_kernel *k);
void jt_kws_free(jt_kws *w, const jt_topo *tp);

/* Triad operations per element for an arithmetic intensity in flop/byte (2 flops and 24 bytes
 * per repetition: the lowest intensity is 1/12).  The intensity executed is recorded from the
 * sweep's counts (flops / bytes). */
int jt_triad_reps_for_ai(double ai);

#endif
