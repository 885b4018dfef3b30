/* The run loop of one point: warm-up, the operations per sample, then batches of samples
 * until the stopping rule (stopping.h) says enough.  Rank 0 decides after each batch; the
 * others follow its broadcast. */
#include "harness/internal.h"
#include "harness/stopping.h"

#include "core/levels.h"
#include "core/summary.h"
#include "core/timer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void clear(const jt_bench *b, jt_series *ser)
{
    for (int k = 0; k < b->nseries; k++)
        jt_series_clear(&ser[k]);
}

/* Bit k of ratio_series for series k; a series past its bits (a flow of pingpong's 65) is a
 * duration (shifting by 32 or more would be undefined). */
static int is_ratio(const jt_bench *b, int series)
{
    return series < (int)(8 * sizeof b->ratio_series) && (b->ratio_series >> series & 1);
}

double jt_ctx_timer_tick(jt_ctx *ctx)
{
    if (!(ctx->timer_tick > 0))
        ctx->timer_tick = jt_timer_resolution();
    return ctx->timer_tick;
}

double jt_metric_tick(jt_ctx *ctx, const jt_bench *b, const jt_point *p, const jt_metric *mt,
                      const double *raw, size_t n, int sample_reps)
{
    if (n == 0 || is_ratio(b, mt->series))
        return 0.0;
    double *t = malloc(n * sizeof *t);
    if (!t)
        return 0.0;
    memcpy(t, raw, n * sizeof *t);
    qsort(t, n, sizeof *t, cmp_double);
    double med = jt_quantile_sorted(t, n, 0.5);
    free(t);
    double step = jt_ctx_timer_tick(ctx) / (sample_reps > 0 ? sample_reps : 1);
    double tick = fabs(mt->derive(med + step, p) - mt->derive(med, p));
    return isfinite(tick) ? tick : 0.0;
}

void jt_point_stats(const double *x, size_t n, double tick, double *sorted, jt_stats *st,
                    jt_modes *modes, jt_levels *levels)
{
    jt_summary(x, n, tick, sorted, st);
    jt_modes_find(sorted, n, tick, modes);
    st->ci_levels =
        jt_levels_split(x, sorted, n, st->lag1, modes, &st->ci_lo, &st->ci_hi, levels);
}

size_t jt_quantile_needs_n(const jt_stats *s, double q)
{
    return jt_lag1_significant(s->lag1, s->n) ? jt_quantile_batches_min_n(q)
                                              : jt_quantile_ci95_min_n(q);
}

double jt_target_halfwidth(const jt_ctx *ctx, const jt_stats *s, const double *x,
                           const double *sorted, double *floor, size_t *need)
{
    double q = ctx->cfg.target > 0 ? ctx->cfg.target / 100.0 : 0.5;
    double v = s->median, lo = s->ci_lo, hi = s->ci_hi;
    *need = 0;
    if (q != 0.5) {
        v = jt_quantile_sorted(sorted, s->n, q);
        jt_quantile_ci95(x, sorted, s->n, q, s->lag1, &lo, &hi);
        jt_widen_to_tick(v, s->tick, &lo, &hi);
        *need = jt_quantile_needs_n(s, q);
    }
    else /* correlated: judged on batches only; else order statistics give a 95% interval of
          * the median from 6 samples on ([min, max] of 3 covers it 75% of the time only) */
        *need = jt_quantile_needs_n(s, 0.5);
    *floor = v != 0 ? 0.5 * s->tick / fabs(v) : 0.0;
    if (s->n == 0 || isnan(lo))
        return NAN;
    if (hi == lo) /* a constant metric (bandwidth of 0 B) is exactly known */
        return 0.0;
    return v != 0 ? 0.5 * (hi - lo) / fabs(v) : INFINITY;
}

/* Operations per sample of point p, the same on every rank (docs/statistics.md, "Samples the
 * clock can resolve"): 1 where the point cannot repeat or --sample-reps 1; N with
 * --sample-reps N; with auto, the power of two that makes a sample last --min-sample-ticks
 * ticks, judged on the shortest warm-up sample (up to JT_SAMPLE_REPS_MAX): the operations the
 * clock resolves worst are the fastest, and on a busy host most of ten samples can be
 * descheduled ones.  Collective where auto has a choice to make. */
static int sample_reps(jt_ctx *ctx, const jt_bench *b, const jt_point *p, jt_series *ser,
                       int conv)
{
    if (!p->repeatable || ctx->cfg.sample_reps == 1 || is_ratio(b, conv))
        return 1;
    if (ctx->cfg.sample_reps > 1)
        return (int)ctx->cfg.sample_reps;
    int r = 1;
    if (ctx->rank == 0) {
        jt_series *s = &ser[conv];
        double d = s->n ? s->v[0] : NAN, tick = jt_ctx_timer_tick(ctx);
        for (size_t k = 1; k < s->n; k++)
            d = fmin(d, s->v[k]);
        double want = ctx->cfg.min_sample_ticks * tick;
        if (s->n && !(d > 0)) /* shorter than the clock can see */
            r = JT_SAMPLE_REPS_MAX;
        else if (d < want)
            while (r < JT_SAMPLE_REPS_MAX && r * d < want)
                r *= 2;
    }
    MPI_Bcast(&r, 1, MPI_INT, 0, ctx->comm);
    return r;
}

jt_point_result jt_measure_point(jt_ctx *ctx, const jt_bench *b, void *st, size_t i,
                                 const jt_point *p, jt_series *ser)
{
    clear(b, ser);
    int conv_series = p->nmetrics > 0 ? p->metrics[0].series : 0;
    int autoreps = p->repeatable && ctx->cfg.sample_reps == 0 && !is_ratio(b, conv_series);
    ctx->sample_reps = p->repeatable && ctx->cfg.sample_reps > 1 ? (int)ctx->cfg.sample_reps : 1;
    if (ctx->cfg.warmup > 0)
        b->run(ctx, st, i, ser, (size_t)ctx->cfg.warmup);
    else if (autoreps) /* nothing to choose from: a few samples, dropped */
        b->run(ctx, st, i, ser, JT_SAMPLE_PROBE);
    ctx->sample_reps = sample_reps(ctx, b, p, ser, conv_series);
    const int reps = ctx->sample_reps;
    clear(b, ser);
    double t0 = jt_now();
    long decision[2] = {0, ctx->cfg.min_reps}; /* stop, next batch */
    const jt_stopping rule = {ctx->cfg.min_reps, ctx->cfg.max_reps, ctx->cfg.precision,
                              ctx->cfg.max_time, p->min_time};
    jt_stop_trace trace = {0};
    size_t total = 0;
    double *tmp = NULL, *sorted = NULL;
    size_t tmpcap = 0;
    size_t *done = calloc((size_t)b->nseries, sizeof *done);
    for (;;) {
        b->run(ctx, st, i, ser, (size_t)decision[1]);
        total += (size_t)decision[1];
        /* Each sample holds one clock reading's cost besides the work: OSU keeps one per
         * iteration (the default, so that their numbers and jostle's compare: a sample of r
         * operations is charged the r - 1 readings it did not make, at their cost measured at
         * start-up); --clock-overhead subtract takes it out.  The sample is then divided by
         * its operations. */
        for (int k = 0; k < b->nseries; k++) {
            int durations = !is_ratio(b, k);
            for (size_t q = done[k]; durations && q < ser[k].n; q++) {
                double v = ser[k].v[q];
                if (ctx->cfg.clock_subtract)
                    v = fmax(v - ctx->timer_overhead, 1e-9);
                else
                    v += (reps - 1) * ctx->timer_overhead;
                ser[k].v[q] = v / reps;
            }
            done[k] = ser[k].n;
        }
        /* A fixed count (--iterations) and no minimum time: every rank knows the decision, and
         * at hundreds of simulated ranks its broadcast would cost more than the point. */
        if (ctx->cfg.min_reps == ctx->cfg.max_reps && p->min_time <= 0 &&
            (long)total >= ctx->cfg.max_reps) {
            decision[0] = JT_STOP_MAX_REPS;
            break;
        }
        if (ctx->rank == 0) {
            double el = jt_now() - t0;
            jt_series *s = &ser[conv_series];
            if (s->n > tmpcap) {
                tmpcap = s->cap;
                tmp = realloc(tmp, tmpcap * sizeof *tmp);
                sorted = realloc(sorted, tmpcap * sizeof *sorted);
            }
            /* the stopping rule judges the first metric, as the record states it */
            const jt_metric *mt = p->nmetrics > 0 ? &p->metrics[0] : NULL;
            for (size_t q = 0; q < s->n; q++)
                tmp[q] = mt ? mt->derive(s->v[q], p) : s->v[q];
            double tick = mt ? jt_metric_tick(ctx, b, p, mt, s->v, s->n, reps) : 0.0;
            jt_stats st_;
            jt_modes modes;
            jt_levels levels;
            jt_point_stats(tmp, s->n, tick, sorted, &st_, &modes, &levels);
            jt_stop_state now = {total, el, NAN, 0.0, 0, 0, 0, &trace};
            now.hw = jt_target_halfwidth(ctx, &st_, tmp, sorted, &now.floor, &now.need);
            now.levels = !(ctx->cfg.target > 0) && st_.ci_levels;
            now.method = st_.ci_batches ? JT_CI_BATCHES : JT_CI_ORDER;
            decision[0] = jt_stopping_decide(&rule, &now, &decision[1]);
        }
        MPI_Bcast(decision, 2, MPI_LONG, 0, ctx->comm);
        if (decision[0])
            break;
    }
    free(tmp);
    free(sorted);
    free(done);
    jt_point_result r = {total, jt_now() - t0, reps, (int)decision[0]};
    return r;
}
