/* The two STREAM loops, copy and triad, in the widest vector instructions this CPU has (chosen
 * at run time, so one binary serves every x86-64), with normal or non-temporal stores.
 * Non-temporal stores write whole lines to memory without reading them first (no
 * write-allocate) and end each sweep with a store fence, as likwid-bench's *_mem kernels do. */
#ifndef JT_KERNELS_STREAM_LOOPS_H
#define JT_KERNELS_STREAM_LOOPS_H

#include <stddef.h>

enum { JT_STORES_NORMAL, JT_STORES_NT };
extern const char *const jt_stores_names[]; /* "normal", "nt", NULL */

/* The instruction set the loops use here: "avx2+fma", "sse2" or "c" (no x86 vectors; no nt). */
const char *jt_streams_isa(void);
int jt_streams_nt_available(void);

/* b[i] = a[i] */
void jt_stream_copy(double *restrict b, const double *restrict a, size_t n, int stores);
/* c[i] = a[i] + s*b[i] */
void jt_stream_triad(double *restrict c, const double *restrict a, const double *restrict b,
                     double s, size_t n, int stores);

#endif
