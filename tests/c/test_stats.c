/* Statistics against values computed independently (numpy.quantile, type 7; numpy.std with
 * ddof=1; Le Boudec 2010, table A.1 for the order statistics of the median's interval). */
#include "check.h"
#include "core/stats.h"

#include <stdlib.h>
#include <string.h>

int main(void)
{
    double x[] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4};
    jt_stats s;
    jt_stats_compute(x, 20, &s);
    CHECK(s.n == 20);
    CHECK_NEAR(s.min, 1, 0);
    CHECK_NEAR(s.max, 9, 0);
    CHECK_NEAR(s.p25, 3.0, 1e-12);
    CHECK_NEAR(s.median, 4.5, 1e-12);
    CHECK_NEAR(s.p75, 7.25, 1e-12);
    CHECK_NEAR(s.p99, 9.0, 1e-12);
    CHECK_NEAR(s.mean, 4.85, 1e-12);
    CHECK_NEAR(s.stddev, 2.7003898354048617, 1e-12);
    for (int i = 1; i < 20; i++) /* sorted in place */
        CHECK(x[i - 1] <= x[i]);

    /* 1..100 shuffled: quantiles and the interval [x(40), x(61)] of Le Boudec's table. */
    double y[100];
    for (int i = 0; i < 100; i++)
        y[i] = (double)((i * 37) % 100 + 1);
    jt_stats_compute(y, 100, &s);
    CHECK_NEAR(s.p25, 25.75, 1e-12);
    CHECK_NEAR(s.median, 50.5, 1e-12);
    CHECK_NEAR(s.p75, 75.25, 1e-12);
    CHECK_NEAR(s.p99, 99.01, 1e-9);
    CHECK_NEAR(s.stddev, 29.011491975882016, 1e-9);
    CHECK_NEAR(s.ci_lo, 40, 0);
    CHECK_NEAR(s.ci_hi, 61, 0);
    CHECK_NEAR(jt_stats_rel_halfwidth(&s), 10.5 / 50.5, 1e-12);

    /* Too few samples for a 95% interval: [min, max]. */
    double z[] = {2, 1, 3};
    jt_stats_compute(z, 3, &s);
    CHECK_NEAR(s.ci_lo, 1, 0);
    CHECK_NEAR(s.ci_hi, 3, 0);
    CHECK_NEAR(s.stddev, 1.0, 1e-12);

    /* A constant metric is exactly known; an empty one never converges. */
    double c[10] = {0};
    jt_stats_compute(c, 10, &s);
    CHECK(jt_stats_rel_halfwidth(&s) == 0.0);
    jt_stats_compute(c, 0, &s);
    CHECK(isinf(jt_stats_rel_halfwidth(&s)));

    /* The interval covers the true median about 95% of the time (a coverage check: it could
     * fail if the order statistics were wrong, e.g. 68% or 99.9%). */
    srand(12345);
    int covered = 0, trials = 2000;
    for (int t = 0; t < trials; t++) {
        double u[201];
        for (int i = 0; i < 201; i++)
            u[i] = (double)rand() / RAND_MAX; /* true median 0.5 */
        jt_stats_compute(u, 201, &s);
        covered += s.ci_lo <= 0.5 && 0.5 <= s.ci_hi;
    }
    double cov = (double)covered / trials;
    CHECK(cov > 0.93 && cov < 0.985);

    /* Quantile intervals: the order statistics of the exact binomial (computed apart with
     * Python's math.lgamma), and none below the samples they need. */
    CHECK(jt_quantile_ci95_min_n(0.5) == 6 && jt_quantile_ci95_min_n(0.95) == 72 &&
          jt_quantile_ci95_min_n(0.99) == 368 && jt_quantile_ci95_min_n(0.999) == 3688 &&
          jt_quantile_ci95_min_n(0.05) == 72);
    static double r[100000];
    for (int i = 0; i < 100000; i++)
        r[i] = i + 1; /* x(k) = k */
    static const struct { size_t n; double q; double lo, hi; } want[] = {
        {100, 0.5, 40, 61},       {100, 0.9, 84, 96},     {1000, 0.99, 983, 997},
        {368, 0.99, 360, 368},    {400, 0.99, 392, 400},  {5000, 0.999, 4990, 5000},
        {200, 0.05, 4, 17},       {100000, 0.99, 98938, 99062},
    };
    for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
        double lo, hi;
        int rc = jt_quantile_ci95_sorted(r, want[k].n, want[k].q, &lo, &hi);
        CHECKF(rc == 0 && lo == want[k].lo && hi == want[k].hi, "n %zu q %g: [%g, %g], "
               "expected [%g, %g]", want[k].n, want[k].q, lo, hi, want[k].lo, want[k].hi);
    }
    double lo, hi;
    CHECK(jt_quantile_ci95_sorted(r, 367, 0.99, &lo, &hi) == -1 && isnan(lo) && isnan(hi));
    jt_stats_compute(r, 100, &s); /* the default --min-reps: p99 has no interval */
    CHECK(isnan(s.p99_lo) && isnan(s.p99_hi));
    jt_stats_compute(r, 1000, &s);
    CHECK(s.p99_lo == 983 && s.p99_hi == 997);

    /* The tick: an interval never narrower than half a tick each side, NAN kept. */
    lo = hi = 5.0;
    jt_widen_to_tick(5.0, 0.2, &lo, &hi);
    CHECK_NEAR(lo, 4.9, 1e-12);
    CHECK_NEAR(hi, 5.1, 1e-12);
    lo = 4.0, hi = NAN;
    jt_widen_to_tick(5.0, 0.2, &lo, &hi);
    CHECK(lo == 4.0 && isnan(hi));

    /* --target and --sample-reps: what is allowed, and one line naming what is not. */
    double pct;
    char err[256];
    CHECK(jt_target_parse("median", &pct, err, sizeof err) == 0 && pct == 0.0);
    CHECK(jt_target_parse("p99", &pct, err, sizeof err) == 0 && pct == 99.0);
    CHECK(jt_target_parse("p99.9", &pct, err, sizeof err) == 0 && pct == 99.9);
    static const char *const bad_targets[] = {"p101", "p0", "p100", "99", "p", "p 5", "mean",
                                              "p99x", ""};
    for (size_t k = 0; k < sizeof bad_targets / sizeof *bad_targets; k++) {
        err[0] = 0;
        CHECKF(jt_target_parse(bad_targets[k], &pct, err, sizeof err) == -1 &&
               strstr(err, bad_targets[k]) && strstr(err, "median or pNN") && !strchr(err, '\n'),
               "--target '%s': %s", bad_targets[k], err);
    }
    long reps;
    CHECK(jt_sample_reps_parse("auto", 4096, &reps, err, sizeof err) == 0 && reps == 0);
    CHECK(jt_sample_reps_parse("1", 4096, &reps, err, sizeof err) == 0 && reps == 1);
    CHECK(jt_sample_reps_parse("64", 4096, &reps, err, sizeof err) == 0 && reps == 64);
    static const char *const bad_reps[] = {"0", "-3", "abc", "4097", "+5", " 5", "5 ", "1e3", ""};
    for (size_t k = 0; k < sizeof bad_reps / sizeof *bad_reps; k++) {
        err[0] = 0;
        CHECKF(jt_sample_reps_parse(bad_reps[k], 4096, &reps, err, sizeof err) == -1 &&
               strstr(err, "auto or an integer from 1 to 4096") && !strchr(err, '\n'),
               "--sample-reps '%s': %s", bad_reps[k], err);
    }
    TEST_END();
}
