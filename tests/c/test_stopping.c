/* The stopping rule (harness/stopping.h) on its own, with a virtual clock: the batch bounds,
 * convergence on a known distribution without gross overshoot, and --max-time, --max-reps and
 * a phase's min_time honoured. */
#include "check.h"

#include "core/stats.h"
#include "harness/stopping.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double uniform(void) /* xorshift64*, in (0, 1) */
{
    rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
    return ((double)((rng * 2685821657736338717ull) >> 11) + 0.5) / 9007199254740992.0;
}
static double normal(double mean, double sd) /* Box-Muller */
{
    return mean + sd * sqrt(-2 * log(uniform())) * cos(6.283185307179586 * uniform());
}

static double halfwidth(const double *v, size_t n)
{
    double *t = malloc(n * sizeof *t);
    memcpy(t, v, n * sizeof *t);
    jt_stats st;
    jt_stats_compute(t, n, &st);
    free(t);
    return jt_stats_rel_halfwidth(&st);
}

typedef struct run {
    size_t total;
    double el, median, hw;
    int decisions;
} run;

/* The loop of jt_measure_point with a virtual clock: every sample is |N(mean, sd)| and lasts
 * dt seconds, or its own value when dt is 0. */
static run simulate(const jt_stopping *r, double mean, double sd, double dt, double *v,
                    size_t cap)
{
    run out = {0, 0, 0, 0, 0};
    long next = r->min_reps;
    jt_stop_trace trace = {0}; /* independent samples narrow as they should: never stalled */
    for (;;) {
        for (long k = 0; k < next && out.total < cap; k++) {
            double x = fabs(normal(mean, sd));
            v[out.total++] = x;
            out.el += dt > 0 ? dt : x;
        }
        out.hw = halfwidth(v, out.total);
        out.decisions++;
        jt_stop_state st = {out.total, out.el, out.hw, 0.0, 0, 0, 0, &trace};
        if (jt_stopping_decide(r, &st, &next) || out.total >= cap)
            break;
    }
    double *t = malloc(out.total * sizeof *t);
    memcpy(t, v, out.total * sizeof *t);
    jt_stats st;
    jt_stats_compute(t, out.total, &st);
    out.median = st.median;
    free(t);
    return out;
}

int main(void)
{
    /* Bounds: with time and repetitions to spare, a batch is at least a quarter of what was
     * taken and at most three times it, whatever the width measured. */
    jt_stopping wide = {100, 1000000000L, 0.01, 1e9, 0};
    const double widths[] = {NAN, INFINITY, 0.0, 1e-6, 0.009, 0.0101, 0.02, 0.1, 1.0, 50.0};
    for (size_t total = 1; total < 200000; total = total * 3 + 1)
        for (size_t w = 0; w < sizeof widths / sizeof *widths; w++) {
            long next;
            jt_stop_state st = {total, 1e-3 * (double)total, widths[w], 0.0, 0, 0, 0, NULL};
            jt_stopping_decide(&wide, &st, &next);
            CHECKF(next >= (long)ceil(0.25 * (double)total) && next <= (long)ceil(3.0 * total),
                   "total %zu, width %g: next batch %ld outside [%zu/4, 3 x %zu]", total,
                   widths[w], next, total, total);
        }
    /* The prediction: a width twice the target asks for about 4.6 times the samples in all
     * (1.15 x 2^2), capped at 3 more; a width just above it for a little more. */
    long next;
    jt_stop_state a = {1000, 1.0, 0.02, 0.0, 0, 0, 0, NULL};
    CHECK(!jt_stopping_decide(&wide, &a, &next) && next == 3000);
    a.hw = 0.0102;
    CHECK(!jt_stopping_decide(&wide, &a, &next) && next >= 250 && next <= 300);
    a.hw = 0.0099;
    CHECK(jt_stopping_decide(&wide, &a, &next)); /* converged */
    a.hw = NAN;
    CHECK(!jt_stopping_decide(&wide, &a, &next) && next == 250);

    /* The clock: a floor under precision changes nothing; one above it (resolution-limited)
     * stops once the interval is at the floor, not before, and never waits for --max-time. */
    a = (jt_stop_state){1000, 1.0, 0.0099, 0.004, 0, 0, 0, NULL};
    CHECK(jt_stopping_decide(&wide, &a, &next) && !jt_resolution_limited(0.01, 0.004));
    a = (jt_stop_state){1000, 1.0, 0.03, 0.025, 0, 0, 0, NULL};
    CHECK(!jt_stopping_decide(&wide, &a, &next) && jt_resolution_limited(0.01, 0.025));
    CHECKF(next >= 400 && next <= 700, "%ld more for a width 1.2 x the floor", next);
    a.hw = 0.025; /* the widened interval is at the floor: nothing more to gain */
    CHECK(jt_stopping_decide(&wide, &a, &next));
    /* A percentile's interval that does not exist yet: the samples it needs, then judged. */
    a = (jt_stop_state){100, 0.1, NAN, 0.0, 368, 0, 0, NULL};
    CHECK(!jt_stopping_decide(&wide, &a, &next) && next == 268);
    a = (jt_stop_state){368, 0.4, 0.005, 0.0, 368, 0, 0, NULL};
    CHECK(jt_stopping_decide(&wide, &a, &next));
    a.total = 367; /* even narrow, an interval of fewer samples than it needs is no interval */
    CHECK(!jt_stopping_decide(&wide, &a, &next) && next >= 1);

    /* Convergence on a known distribution, N(10, 1): the median's interval within 1% (about
     * 600 samples by the normal approximation), the median close to 10, in few decisions, and
     * without taking more than 3 times the samples that would have sufficed. */
    size_t cap = 2000000;
    double *v = malloc(cap * sizeof *v);
    jt_stopping conv = {100, 1000000000L, 0.01, 1e9, 0};
    run c = simulate(&conv, 10.0, 1.0, 0, v, cap);
    CHECKF(c.hw <= 0.01, "width %g after %zu samples", c.hw, c.total);
    CHECKF(fabs(c.median - 10.0) <= 0.2, "median %g, expected 10 +- 0.2", c.median);
    CHECKF(c.decisions <= 6, "%d decisions for %zu samples", c.decisions, c.total);
    size_t enough = 100;
    while (enough < c.total && halfwidth(v, enough) > 0.01)
        enough += 10;
    CHECKF(c.total <= 3 * enough, "took %zu samples, %zu sufficed", c.total, enough);
    printf("N(10,1) at 1%%: %zu samples (%zu sufficed) in %d decisions, median %.4f\n", c.total,
           enough, c.decisions, c.median);

    /* --max-time: a distribution too wide to converge stops once the time is spent; with
     * samples of constant duration the batches are sized not to overrun it by more than one,
     * and with durations that vary, by no more than their noise (here 2%). */
    jt_stopping timed = {100, 1000000000L, 1e-6, 50.0, 0};
    run t = simulate(&timed, 1.0, 0.5, 0.01, v, cap);
    CHECKF(t.el >= 50.0 - 1e-9 && t.el <= 50.0 + 0.01 + 1e-9, "stopped after %g s of --max-time "
           "50 (samples of 0.01 s)", t.el);
    CHECK(t.hw > 1e-6);
    t = simulate(&timed, 0.01, 0.005, 0, v, cap);
    CHECKF(t.el >= 50.0 && t.el <= 51.0, "stopped after %g s of --max-time 50", t.el);

    /* --max-reps: never more samples than allowed, and stopped on reaching them. */
    jt_stopping reps = {100, 777, 1e-6, 1e9, 0};
    run m = simulate(&reps, 1.0, 0.5, 0, v, cap);
    CHECKF(m.total == 777, "%zu samples under --max-reps 777", m.total);
    /* --iterations N: min = max = N, one batch. */
    jt_stopping iters = {37, 37, 0.01, 1e9, 0};
    run it = simulate(&iters, 1.0, 0.5, 0, v, cap);
    CHECK(it.total == 37 && it.decisions == 1);

    /* A phase's min_time: not stopped before it even when converged (a constant sample). */
    jt_stopping phase = {100, 1000000000L, 0.01, 0.5, 3.0};
    run ph = simulate(&phase, 1.0, 0.0, 0.01, v, cap);
    CHECK(ph.hw == 0.0);
    CHECKF(ph.el >= 3.0 - 1e-9 && ph.el <= 3.0 + 0.01 + 1e-9, "phase stopped after %g s, "
           "min_time 3", ph.el);
    free(v);
    TEST_END();
}
