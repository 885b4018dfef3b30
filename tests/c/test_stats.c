/* Statistics against values computed independently (numpy.quantile, type 7; numpy.std with
 * ddof=1; Le Boudec 2010, table A.1 for the order statistics of the median's interval). */
#include "check.h"
#include "core/stats.h"

#include <stdlib.h>

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
    TEST_END();
}
