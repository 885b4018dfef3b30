/* The benchmarks jostle-bench knows: one file each in src/bench/, listed in registry.c. */
#ifndef JT_BENCH_H
#define JT_BENCH_H

#include "harness/harness.h"

extern const jt_bench jt_bench_pingpong;
extern const jt_bench jt_bench_contention;
extern const jt_bench jt_bench_overlap;
extern const jt_bench jt_bench_bcast;
extern const jt_bench jt_bench_cholesky;
extern const jt_bench jt_bench_tile_kernels;

/* NULL-terminated. */
extern const jt_bench *const jt_benches[];

/* --sizes, or dflt when not given, as message sizes: parsed, each within one MPI message (an int
 * count of MPI_BYTE); a usage error names the bad value.  Returns how many; *sizes is malloc'ed. */
size_t jt_bench_sizes(const jt_ctx *ctx, const char *dflt, uint64_t **sizes);

/* Bytes this host can give each of its ranks (MemAvailable / local ranks), for size checks. */
size_t jt_bench_memory_per_rank(const jt_ctx *ctx);

#endif
