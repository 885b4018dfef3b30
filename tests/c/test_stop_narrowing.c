/* The stopping rule's second way out (harness/stopping.h): a point whose interval stops
 * narrowing as 1/sqrt(n) stops ("not narrowing") long before --max-time, while independent
 * samples and stationary correlated ones narrow to the target ("precision") and are never
 * stopped for it, and a median between two levels stops ("two levels").  The loop of
 * jt_measure_point with a virtual clock and the statistics of a real point (core/summary.h,
 * core/levels.h).  Seeded: every run prints the same numbers. */
#include "check.h"
#include "rng.h"

#include "core/levels.h"
#include "core/summary.h"
#include "harness/stopping.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { IID, AR1, WALK, LEVELS };

/* Samples around 10: independent N(10, 3); AR(1) rho 0.8 (stationary, sd 3); a random walk of
 * the level (steps of sd 0.05) under N(0, 3): a machine that drifts; two levels 10 and 12 in
 * runs of 20 samples on average. */
typedef struct gen {
    int kind;
    double e, level;
} gen;

static double next_sample(gen *g)
{
    switch (g->kind) {
    case AR1:
        g->e = 0.8 * g->e + 0.6 * normal();
        return 10.0 + 3 * g->e;
    case WALK:
        g->level += 0.05 * normal();
        return 10.0 + g->level + 3 * normal();
    case LEVELS:
        if (uniform() < 1.0 / 20)
            g->level = uniform() < 0.5 ? 0.0 : 2.0;
        return 10.0 + g->level + 0.1 * normal();
    default:
        return 10.0 + 3 * normal();
    }
}

#define CAP 100000
static double x[CAP], sorted[CAP];

/* One point: samples of 10 us each, --precision 0.0173 (a launch's of three), --max-time 0.5 s:
 * returns the reason it stopped, *n the samples it took.  Without the trace (rule 0), the rule
 * before issue 46: precision, the clock, --max-time or --max-reps. */
static int point(int kind, uint64_t seed, int rule, size_t *n)
{
    rng_state = seed;
    gen g = {kind, 0.0, uniform() < 0.5 ? 0.0 : 2.0};
    jt_stopping r = {34, CAP, 0.0173, 0.5, 0};
    jt_stop_trace trace = {0};
    long next = r.min_reps;
    size_t total = 0;
    for (;;) {
        for (long k = 0; k < next && total < CAP; k++)
            x[total++] = next_sample(&g);
        jt_stats st;
        jt_modes m;
        jt_levels lv;
        jt_summary(x, total, 0.0, sorted, &st);
        jt_modes_find(sorted, total, 0.0, &m);
        st.ci_levels = jt_levels_split(x, sorted, total, st.lag1, &m, &st.ci_lo, &st.ci_hi, &lv);
        /* correlated samples are judged on batches only (measure.c, jt_target_halfwidth) */
        size_t need = jt_lag1_significant(st.lag1, total) ? jt_quantile_batches_min_n(0.5) : 0;
        jt_stop_state s = {total, 1e-5 * (double)total, jt_stats_rel_halfwidth(&st), 0.0, need,
                           rule && st.ci_levels, st.ci_batches ? JT_CI_BATCHES : JT_CI_ORDER,
                           rule ? &trace : NULL};
        int why = jt_stopping_decide(&r, &s, &next);
        if (why || total >= CAP) {
            *n = total;
            return why;
        }
    }
}

typedef struct tally {
    int why[JT_STOP_MAX_REPS + 1];
    double mean_n;
} tally;

static tally points(int kind, const char *name, int rule, int draws)
{
    tally t = {{0}, 0.0};
    for (int d = 0; d < draws; d++) {
        size_t n;
        t.why[point(kind, 100 + (uint64_t)d * 7919, rule, &n)]++;
        t.mean_n += (double)n / draws;
    }
    printf("%-10s %-6s %d points: precision %d, not narrowing %d, two levels %d, max-time %d, "
           "max-reps %d; %.0f samples on average\n", name, rule ? "now" : "before", draws, t.why[JT_STOP_PRECISION],
           t.why[JT_STOP_NOT_NARROWING], t.why[JT_STOP_LEVELS], t.why[JT_STOP_MAX_TIME],
           t.why[JT_STOP_MAX_REPS], t.mean_n);
    return t;
}

int main(void)
{
    const int D = 60;
    tally iid = points(IID, "iid", 1, D);
    CHECKF(iid.why[JT_STOP_PRECISION] >= D * 98 / 100, "independent: %d of %d at precision",
           iid.why[JT_STOP_PRECISION], D);
    tally ar = points(AR1, "AR(1) 0.8", 1, D);
    CHECKF(ar.why[JT_STOP_PRECISION] >= D * 95 / 100, "stationary correlated: %d of %d at "
           "precision", ar.why[JT_STOP_PRECISION], D);
    /* A drift, and two levels in runs: before, most ran to --max-time; now they stop when
     * more samples stop helping, in a fraction of the time. */
    for (int kind = WALK; kind <= LEVELS; kind++) {
        const char *name = kind == WALK ? "walk" : "levels";
        tally before = points(kind, name, 0, D / 2), now = points(kind, name, 1, D);
        int spent = now.why[JT_STOP_MAX_TIME] + now.why[JT_STOP_MAX_REPS];
        CHECKF(before.why[JT_STOP_MAX_TIME] >= D / 2 * 30 / 100, "%s: %d of %d ran to "
               "--max-time before: the test does not show the fault", name,
               before.why[JT_STOP_MAX_TIME], D / 2);
        CHECKF(spent <= D * 5 / 100, "%s: %d of %d ran out of time or samples", name, spent, D);
        CHECKF(now.mean_n < 0.8 * before.mean_n, "%s: %.0f samples on average, %.0f before",
               name, now.mean_n, before.mean_n);
    }
    CHECK(jt_stop_reason_name(JT_STOP_NOT_NARROWING) &&
          !strcmp(jt_stop_reason_name(JT_STOP_NOT_NARROWING), "not narrowing") &&
          !jt_stop_reason_name(JT_STOP_NO));
    TEST_END();
}
