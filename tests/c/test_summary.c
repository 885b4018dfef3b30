/* A point's statistics on correlated samples (core/summary.h): on AR(1) series of known
 * correlation the interval of the median covers the true median in at least 93% of the draws,
 * where the order statistics' interval, which assumes independence, does not; on independent
 * samples the correlation is called significant about 5% of the time and nothing changes.
 * Seeded: every run prints the same numbers (docs/statistics.md quotes them). */
#include "check.h"
#include "rng.h"
#include "core/summary.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* x_t = 10 + e_t, e_t = rho e_{t-1} + sqrt(1 - rho^2) z_t: stationary, sd 1, median 10. */
static void ar1(double *x, size_t n, double rho)
{
    double e = normal();
    for (size_t i = 0; i < n; i++) {
        x[i] = 10.0 + e;
        e = rho * e + sqrt(1 - rho * rho) * normal();
    }
}

typedef struct tally {
    int draws, covered, covered_iid, significant, batches;
    double lag1;
} tally;

static tally draw(double rho, size_t n, int draws, uint64_t seed)
{
    static double x[20000], sorted[20000], iid[20000];
    tally t = {draws, 0, 0, 0, 0, 0.0};
    for (int d = 0; d < draws; d++) {
        rng_state = seed + (uint64_t)d * 7919;
        ar1(x, n, rho);
        jt_stats s, si;
        jt_summary(x, n, 0.0, sorted, &s);
        memcpy(iid, x, n * sizeof *iid);
        jt_stats_compute(iid, n, &si);
        t.covered += s.ci_lo <= 10.0 && 10.0 <= s.ci_hi;
        t.covered_iid += si.ci_lo <= 10.0 && 10.0 <= si.ci_hi;
        t.significant += jt_lag1_significant(s.lag1, n);
        t.batches += s.ci_batches;
        t.lag1 += s.lag1 / draws;
    }
    printf("AR(1) rho %.1f, n %zu: lag1 %.3f on average, significant in %d/%d, batch interval "
           "covers the median in %d/%d, the independent-samples interval in %d/%d\n", rho, n,
           t.lag1, t.significant, draws, t.covered, draws, t.covered_iid, draws);
    return t;
}

/* p99 on AR(1) rho 0.9: the batch p99s' interval covers the true p99 (10 + z(0.99)); the
 * order statistics' does not.  Returns the draws covered; *iid those the order statistics'
 * interval covered. */
static int draw_p99(size_t n, int draws, int *iid)
{
    static double x[20000], sorted[20000];
    const double truth = 10.0 + 2.326347874;
    int covered = 0;
    *iid = 0;
    for (int d = 0; d < draws; d++) {
        rng_state = 7000 + (uint64_t)d * 7919;
        ar1(x, n, 0.9);
        jt_stats s;
        jt_summary(x, n, 0.0, sorted, &s);
        double lo, hi;
        jt_quantile_ci95_sorted(sorted, n, 0.99, &lo, &hi);
        *iid += lo <= truth && truth <= hi;
        covered += s.p99_method == JT_CI_BATCHES && s.p99_lo <= truth && truth <= s.p99_hi;
    }
    printf("AR(1) rho 0.9, n %zu: p99's batch interval covers in %d/%d, the independent-"
           "samples interval in %d/%d\n", n, covered, draws, *iid, draws);
    return covered;
}

int main(void)
{
    /* p99 under correlation: batches of p99s where there are samples enough for them. */
    int iid, p99 = draw_p99(20000, 200, &iid);
    CHECKF(p99 >= 200 * 90 / 100, "p99 covered in %d of 200", p99);
    CHECKF(iid < 200 * 75 / 100, "the iid p99 interval covered %d of 200: the test does not "
           "tell them apart", iid);

    /* Correlated: the batch medians' interval covers; the order statistics' does not. */
    static const double rhos[] = {0.5, 0.8};
    static const size_t ns[] = {2000, 4000}; /* the stronger, the more samples batches need */
    for (size_t k = 0; k < 2; k++) {
        tally t = draw(rhos[k], ns[k], 400, 1000 + k);
        CHECKF(t.covered >= t.draws * 93 / 100, "rho %g: covered in %d of %d", rhos[k],
               t.covered, t.draws);
        CHECKF(t.covered_iid < t.draws * 85 / 100, "rho %g: the iid interval covered in %d of "
               "%d: the test does not tell them apart", rhos[k], t.covered_iid, t.draws);
        CHECK(t.significant >= t.draws * 99 / 100 && t.batches == t.significant);
        /* the rank correlation of a Gaussian AR(1) is (6/pi) asin(rho/2) */
        CHECK_NEAR(t.lag1, 6 / M_PI * asin(rhos[k] / 2), 0.02);
    }
    /* Independent: significant about 5% of the time, coverage about 95% either way. */
    tally t = draw(0.0, 2000, 400, 5000);
    CHECKF(t.significant <= t.draws * 9 / 100, "independent samples: significant in %d of %d",
           t.significant, t.draws);
    CHECK(t.covered >= t.draws * 93 / 100 && t.covered_iid >= t.draws * 92 / 100);

    /* Too few samples for batches: the order statistics' interval, whatever the correlation. */
    double x[150], sorted[150];
    for (int i = 0; i < 150; i++)
        x[i] = i < 75 ? 1.0 + i * 1e-3 : 2.0 + i * 1e-3; /* a step: strongly correlated */
    jt_stats s;
    jt_summary(x, 150, 0.0, sorted, &s);
    CHECK(jt_lag1_significant(s.lag1, 150) && !s.ci_batches);
    /* Correlated, with one far batch: the batch medians' t interval would reach below zero;
     * it stays inside the samples. */
    static double y[400], ysorted[400];
    for (int i = 0; i < 400; i++)
        y[i] = i < 380 ? 1.5 + (i / 20) * 1e-3 : 200.0 + i * 1e-3;
    jt_summary(y, 400, 0.0, ysorted, &s);
    CHECK(s.ci_batches && s.ci_lo >= s.min && s.ci_hi <= s.max && s.ci_lo <= s.median);
    CHECKF(s.ci_lo > 0, "a round trip's interval from %g", s.ci_lo);
    /* ... and none where there are not: an order-statistics interval would claim the
     * independence the samples lack; the record says what batches need. */
    static double z[4000], zsorted[4000];
    rng_state = 99;
    ar1(z, 4000, 0.9);
    jt_summary(z, 4000, 0.0, zsorted, &s);
    CHECK(s.p99_method == JT_CI_CORRELATED && isnan(s.p99_lo) && isnan(s.p99_hi));
    CHECK(s.p99_needs_n == 7360 && jt_quantile_batches_min_n(0.99) == 7360);
    /* All equal: no correlation, and the interval is the tick's. */
    for (int i = 0; i < 150; i++)
        x[i] = 0.25;
    jt_summary(x, 150, 0.01, sorted, &s);
    CHECK(isnan(s.lag1) && !s.ci_batches);
    CHECK_NEAR(s.ci_lo, 0.245, 1e-12);
    CHECK_NEAR(s.ci_hi, 0.255, 1e-12);
    CHECK(s.tick == 0.01);
    /* The input is left in its order. */
    for (int i = 1; i < 150; i++)
        CHECK(sorted[i - 1] <= sorted[i]);
    TEST_END();
}
