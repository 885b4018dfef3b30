/* The run loop of one point: warm-up, batches of samples, the stopping rule.
 *
 * The rule (docs/records.md, "harness"): at least --min-reps samples, then more until the 95%
 * interval of the median is within --precision of it, the point has run --max-time seconds
 * (or its own min_time), or --max-reps are taken.  Rank 0 decides after each batch; the
 * others follow its broadcast.  Batches are sized so that a point converges in few decisions
 * without overshooting: the interval's half-width shrinks as 1/sqrt(n), so the samples still
 * needed are predicted from the width measured so far. */
#include "harness/internal.h"

#include "core/stats.h"
#include "core/timer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Aim a little past the target (the width measured on n samples is itself noisy), and never
 * add less than a quarter of what was taken nor more than three times it at once (a width
 * read from few samples can be far off either way). */
#define AIM 1.15
#define GROW_MIN 0.25
#define GROW_MAX 3.0

static void clear(const jt_bench *b, jt_series *ser)
{
    for (int k = 0; k < b->nseries; k++)
        jt_series_clear(&ser[k]);
}

/* Samples to take next given total taken so far in el seconds, the relative half-width hw
 * reached (NAN: none yet), the precision asked and the time and repetitions left. */
static long next_batch(const jt_ctx *ctx, const jt_point *p, size_t total, double el, double hw)
{
    double per = total > 0 ? el / (double)total : 0.0;
    double cap_time = fmax(ctx->cfg.max_time, p->min_time);
    double want = (double)total * GROW_MIN;
    if (isfinite(hw) && hw > 0) {
        double r = hw / ctx->cfg.precision;
        want = fmax(want, fmin((double)total * (AIM * r * r - 1.0), (double)total * GROW_MAX));
    }
    if (el < p->min_time && per > 0) /* a phase that must last: fill the time asked for */
        want = fmax(want, (p->min_time - el) / per);
    double left = per > 0 ? (cap_time - el) / per : want;
    double next = fmin(want, fmax(left, 1.0));
    next = fmin(next, (double)(ctx->cfg.max_reps - (long)total));
    return next < 1 ? 1 : (long)ceil(next);
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
            int conv = s->n > 0 && hw <= ctx->cfg.precision;
            decision[0] = el >= p->min_time &&
                          (conv || el >= fmax(ctx->cfg.max_time, p->min_time) ||
                           (long)total >= ctx->cfg.max_reps);
            decision[1] = next_batch(ctx, p, total, el, hw);
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
