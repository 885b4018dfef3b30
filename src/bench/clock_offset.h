/* The offset of every rank's clock to rank 0's, for a benchmark that compares times read on
 * different ranks (bcast: when the last recipient holds the data). */
#ifndef JT_BENCH_CLOCK_OFFSET_H
#define JT_BENCH_CLOCK_OFFSET_H

#include "bench/bench.h"

typedef struct {
    double offset;      /* this rank's clock minus rank 0's, s */
    double max_error;   /* rank 0: the largest error bound over the corrected ranks, s */
    double max_offset;  /* rank 0: the largest |offset| over them, s */
    int corrected;      /* rank 0: ranks on other hosts, whose offset was estimated */
} jt_clock_offset;

/* Collective over ctx->comm; fills *out (zeroed first). Ranks on rank 0's host read the same
 * CLOCK_MONOTONIC: offset 0. A rank on another host has its offset estimated (Cristian: the
 * exchange of least round trip among 16; error at most half that round trip, drift ignored).
 * Not for SimGrid, where every rank reads the one simulated clock (offset 0 without asking). */
void jt_clock_offset_measure(jt_ctx *ctx, jt_clock_offset *out);

#endif
