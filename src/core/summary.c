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

int jt_median_ci95_batches(const double *x, size_t n, double m, double *lo, double *hi)
{
    enum { B = JT_BATCHES };
    const double t975 = 2.093024054; /* Student's t, 19 degrees of freedom */
    if (n < (size_t)B * JT_BATCH_MIN)
        return -1;
    double *buf = malloc((n / B + 1) * sizeof *buf), med[B], mean = 0.0, m2 = 0.0;
    if (!buf)
        return -1;
    for (int b = 0; b < B; b++) {
        size_t from = (size_t)b * n / B, to = (size_t)(b + 1) * n / B;
        memcpy(buf, x + from, (to - from) * sizeof *buf);
        qsort(buf, to - from, sizeof *buf, cmp_double);
        med[b] = jt_quantile_sorted(buf, to - from, 0.5);
        double d = med[b] - mean;
        mean += d / (b + 1);
        m2 += d * (med[b] - mean);
    }
    free(buf);
    double half = t975 * sqrt(m2 / (B - 1)) / sqrt((double)B);
    *lo = m - half;
    *hi = m + half;
    return 0;
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
    if (jt_lag1_significant(s->lag1, n) && jt_median_ci95_batches(x, n, s->median, &lo, &hi) == 0) {
        /* never narrower than the order statistics' (a batch estimate can come out narrow by
         * chance; the dependent samples' interval is not narrower than independent ones'), and
         * never beyond the samples: a t interval of batch medians is symmetric, and one far
         * batch took a round trip's lower bound below zero (-0.45 us for a median of 1.56) */
        s->ci_lo = fmax(fmin(lo, s->ci_lo), s->min);
        s->ci_hi = fmin(fmax(hi, s->ci_hi), s->max);
        s->ci_batches = 1;
    }
    jt_widen_to_tick(s->median, s->tick, &s->ci_lo, &s->ci_hi);
    jt_widen_to_tick(s->p99, s->tick, &s->p99_lo, &s->p99_hi);
}
