/* Every rank's clock mapped to rank 0's, for a benchmark that compares times read on
 * different ranks (bcast: when the last recipient holds the data). */
#ifndef JT_BENCH_CLOCK_OFFSET_H
#define JT_BENCH_CLOCK_OFFSET_H

#include "bench/bench.h"
#include "core/clocksync.h"

typedef struct {
    jt_clock_model model; /* this rank's clock to rank 0's */
    int remote;           /* on another host than rank 0: its readings are corrected */
    /* rank 0: the worst over the ranks measured */
    double max_error, max_offset, max_drift, max_residual, span;
    int corrected;        /* ranks on other hosts, whose readings are corrected */
    int measured;         /* every rank but 0 */
} jt_clock_offset;

/* Collective over ctx->comm; fills *out (zeroed first).  Every rank's clock is modelled against
 * rank 0's (offset and drift fitted to windows of exchanges: core/clocksync.h); a rank on rank
 * 0's host reads the same CLOCK_MONOTONIC, so its model is recorded (the method's own error,
 * seen where the truth is zero) but not applied.  Not for SimGrid, where every rank reads the
 * one simulated clock. */
void jt_clock_offset_measure(jt_ctx *ctx, jt_clock_offset *out);

/* "clock": {...} for the meta line (rank 0): the method and the worst over the ranks. */
void jt_clock_offset_json(const jt_clock_offset *c, int simulated, jt_json *j);

/* Now, on rank 0's clock. */
double jt_clock_offset_now(const jt_clock_offset *c);

#endif
