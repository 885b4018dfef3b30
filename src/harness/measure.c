/* The run loop of one point: warm-up, then batches of samples until the stopping rule
 * (stopping.h) says enough.  Rank 0 decides after each batch; the others follow its
 * broadcast. */
#include "harness/internal.h"
#include "harness/stopping.h"

#include "core/stats.h"
#include "core/timer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void clear(const jt_bench *b, jt_series *ser)
{
    for (int k = 0; k < b->nseries; k++)
        jt_series_clear(&ser[k]);
}

jt_point_result jt_measure_point(jt_ctx *ctx, const jt_bench *b, void *st, size_t i,
                                 const jt_point *p, jt_series *ser)
{
    clear(b, ser);
    if (ctx->cfg.warmup > 0) {
        b->run(ctx, st, i, ser, (size_t)ctx->cfg.warmup);
        clear(b, ser);
    }
    int conv_series = p->nmetrics > 0 ? p->metrics[0].series : 0;
    double t0 = jt_now();
    long decision[2] = {0, ctx->cfg.min_reps}; /* stop, next batch */
    const jt_stopping rule = {ctx->cfg.min_reps, ctx->cfg.max_reps, ctx->cfg.precision,
                              ctx->cfg.max_time, p->min_time};
    size_t total = 0;
    double *tmp = NULL;
    size_t tmpcap = 0;
    size_t *done = calloc((size_t)b->nseries, sizeof *done);
    for (;;) {
        b->run(ctx, st, i, ser, (size_t)decision[1]);
        total += (size_t)decision[1];
        /* Each sample holds one clock reading's cost besides the work: OSU and IMB keep it
         * (the default, so that their numbers and jostle's compare); --clock-overhead subtract
         * takes it out. */
        for (int k = 0; k < b->nseries; k++) {
            int durations = !(b->ratio_series >> k & 1) && ctx->cfg.clock_subtract;
            for (size_t q = done[k]; durations && q < ser[k].n; q++)
                ser[k].v[q] = fmax(ser[k].v[q] - ctx->timer_overhead, 1e-9);
            done[k] = ser[k].n;
        }
        /* A fixed count (--iterations) and no minimum time: every rank knows the decision, and
         * at hundreds of simulated ranks its broadcast would cost more than the point. */
        if (ctx->cfg.min_reps == ctx->cfg.max_reps && p->min_time <= 0 &&
            (long)total >= ctx->cfg.max_reps)
            break;
        if (ctx->rank == 0) {
            double el = jt_now() - t0;
            jt_series *s = &ser[conv_series];
            if (s->n > tmpcap) {
                tmpcap = s->cap;
                tmp = realloc(tmp, tmpcap * sizeof *tmp);
            }
            memcpy(tmp, s->v, s->n * sizeof *tmp);
            jt_stats st_;
            jt_stats_compute(tmp, s->n, &st_);
            double hw = s->n > 0 ? jt_stats_rel_halfwidth(&st_) : NAN;
            decision[0] = jt_stopping_decide(&rule, total, el, hw, &decision[1]);
        }
        MPI_Bcast(decision, 2, MPI_LONG, 0, ctx->comm);
        if (decision[0])
            break;
    }
    free(tmp);
    free(done);
    jt_point_result r = {total, jt_now() - t0};
    return r;
}
