/* The statistics of one point's samples; the methods and their sources are in summary.h. */
#include "core/summary.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Values of sorted y below v (strict) or at most v. */
static size_t count_below(const double *y, size_t n, double v, int or_equal)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (y[mid] < v || (or_equal && y[mid] == v))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The mid-rank of v among sorted y, 1-based. */
static double midrank(const double *y, size_t n, double v)
{
    return 0.5 * ((double)count_below(y, n, v, 0) + (double)count_below(y, n, v, 1) + 1.0);
}

double jt_lag1_rank(const double *x, const double *sorted, size_t n)
{
    if (n < 3 || sorted[0] == sorted[n - 1])
        return NAN;
    double mean = 0.5 * ((double)n + 1.0), num = 0.0, den = 0.0;
    double prev = midrank(sorted, n, x[0]) - mean;
    den = prev * prev;
    for (size_t i = 1; i < n; i++) {
        double r = midrank(sorted, n, x[i]) - mean;
        num += prev * r;
        den += r * r;
        prev = r;
    }
    return den > 0 ? num / den : NAN;
}

int jt_lag1_significant(double r1, size_t n)
{
    return !isnan(r1) && n >= 3 && fabs(r1) > 1.96 / sqrt((double)n);
}

size_t jt_quantile_batches_min_n(double q)
{
    size_t per = jt_quantile_ci95_min_n(q);
    return (size_t)JT_BATCHES * (per > JT_BATCH_MIN ? per : JT_BATCH_MIN);
}

int jt_quantile_ci95_batches(const double *x, size_t n, double q, double v, double *lo,
                             double *hi)
{
    enum { B = JT_BATCHES };
    const double t975 = 2.093024054; /* Student's t, 19 degrees of freedom */
    if (n < jt_quantile_batches_min_n(q))
        return -1;
    double *buf = malloc((n / B + 1) * sizeof *buf), est[B], mean = 0.0, m2 = 0.0;
    if (!buf)
        return -1;
    for (int b = 0; b < B; b++) {
        size_t from = (size_t)b * n / B, to = (size_t)(b + 1) * n / B;
        memcpy(buf, x + from, (to - from) * sizeof *buf);
        qsort(buf, to - from, sizeof *buf, cmp_double);
        est[b] = jt_quantile_sorted(buf, to - from, q);
        double d = est[b] - mean;
        mean += d / (b + 1);
        m2 += d * (est[b] - mean);
    }
    free(buf);
    double half = t975 * sqrt(m2 / (B - 1)) / sqrt((double)B);
    *lo = v - half;
    *hi = v + half;
    return 0;
}

int jt_quantile_ci95(const double *x, const double *sorted, size_t n, double q, double lag1,
                     double *lo, double *hi)
{
    double blo, bhi;
    int few = jt_quantile_ci95_sorted(sorted, n, q, lo, hi) != 0;
    if (!jt_lag1_significant(lag1, n))
        return few ? JT_CI_FEW : JT_CI_ORDER;
    if (few || jt_quantile_ci95_batches(x, n, q, jt_quantile_sorted(sorted, n, q), &blo,
                                        &bhi) != 0) {
        *lo = *hi = NAN;
        return JT_CI_CORRELATED;
    }
    /* never narrower than the order statistics' (a batch estimate can come out narrow by
     * chance; the dependent samples' interval is not narrower than independent ones'), and
     * never beyond the samples: a t interval of batch medians is symmetric, and one far batch
     * took a round trip's lower bound below zero (-0.45 us for a median of 1.56) */
    *lo = fmax(fmin(blo, *lo), sorted[0]);
    *hi = fmin(fmax(bhi, *hi), sorted[n - 1]);
    return JT_CI_BATCHES;
}

void jt_summary(const double *x, size_t n, double tick, double *sorted, jt_stats *s)
{
    if (n)
        memcpy(sorted, x, n * sizeof *sorted);
    jt_stats_compute(sorted, n, s);
    s->tick = tick > 0 ? tick : 0.0;
    if (n == 0)
        return;
    s->lag1 = jt_lag1_rank(x, sorted, n);
    double lo, hi;
    /* the median keeps the order statistics' interval where batches cannot be had (it is
     * what the stopping rule reads from the first samples) */
    if (jt_quantile_ci95(x, sorted, n, 0.5, s->lag1, &lo, &hi) == JT_CI_BATCHES) {
        s->ci_lo = lo;
        s->ci_hi = hi;
        s->ci_batches = 1;
    }
    s->p99_method = jt_quantile_ci95(x, sorted, n, 0.99, s->lag1, &s->p99_lo, &s->p99_hi);
    if (s->p99_method == JT_CI_CORRELATED)
        s->p99_needs_n = jt_quantile_batches_min_n(0.99);
    jt_widen_to_tick(s->median, s->tick, &s->ci_lo, &s->ci_hi);
    jt_widen_to_tick(s->p99, s->tick, &s->p99_lo, &s->p99_hi);
}
