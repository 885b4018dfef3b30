#include "core/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double jt_quantile_sorted(const double *x, size_t n, double q)
{
    if (n == 0)
        return NAN;
    double h = (double)(n - 1) * q;
    size_t lo = (size_t)floor(h);
    if (lo + 1 >= n)
        return x[n - 1];
    return x[lo] + (h - (double)lo) * (x[lo + 1] - x[lo]);
}

void jt_median_ci95_sorted(const double *x, size_t n, double *lo, double *hi)
{
    if (n < 6) {
        *lo = n ? x[0] : NAN;
        *hi = n ? x[n - 1] : NAN;
        return;
    }
    double half = 0.98 * sqrt((double)n); /* 1.96/2 */
    long j = (long)floor(0.5 * (double)n - half);
    long k = (long)ceil(0.5 * (double)n + 1.0 + half);
    if (j < 1)
        j = 1;
    if (k > (long)n)
        k = (long)n;
    *lo = x[j - 1];
    *hi = x[k - 1];
}

void jt_stats_compute(double *x, size_t n, jt_stats *s)
{
    s->n = n;
    if (n == 0) {
        s->min = s->p25 = s->median = s->p75 = s->p99 = s->max = NAN;
        s->mean = s->stddev = s->ci_lo = s->ci_hi = NAN;
        return;
    }
    qsort(x, n, sizeof *x, cmp_double);
    s->min = x[0];
    s->max = x[n - 1];
    s->p25 = jt_quantile_sorted(x, n, 0.25);
    s->median = jt_quantile_sorted(x, n, 0.5);
    s->p75 = jt_quantile_sorted(x, n, 0.75);
    s->p99 = jt_quantile_sorted(x, n, 0.99);
    /* Welford: stable for the long runs of nearly equal samples that timings are. */
    double mean = 0.0, m2 = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = x[i] - mean;
        mean += d / (double)(i + 1);
        m2 += d * (x[i] - mean);
    }
    s->mean = mean;
    s->stddev = n > 1 ? sqrt(m2 / (double)(n - 1)) : 0.0;
    jt_median_ci95_sorted(x, n, &s->ci_lo, &s->ci_hi);
}

double jt_stats_rel_halfwidth(const jt_stats *s)
{
    if (s->n == 0)
        return INFINITY;
    if (s->ci_hi == s->ci_lo) /* a constant metric (bandwidth of 0 B) is exactly known */
        return 0.0;
    if (s->median == 0.0)
        return INFINITY;
    return 0.5 * (s->ci_hi - s->ci_lo) / fabs(s->median);
}

void jt_stats_json(const jt_stats *st, jt_json *j)
{
    jt_json_knum(j, "min", st->min);
    jt_json_knum(j, "p25", st->p25);
    jt_json_knum(j, "median", st->median);
    jt_json_knum(j, "p75", st->p75);
    jt_json_knum(j, "p99", st->p99);
    jt_json_knum(j, "max", st->max);
    jt_json_knum(j, "mean", st->mean);
    jt_json_knum(j, "stddev", st->stddev);
    jt_json_key(j, "ci95");
    jt_json_array(j);
    jt_json_num(j, st->ci_lo);
    jt_json_num(j, st->ci_hi);
    jt_json_end(j);
}

int jt_percentiles_parse(const char *spec, double *p, char *err, size_t errlen)
{
    int n = 0;
    for (const char *c = spec;; c++) {
        char *end;
        double v = strtod(c, &end);
        if (end == c || (*end && *end != ',') || !(v > 0 && v < 100) || n == JT_PERCENTILES_MAX) {
            snprintf(err, errlen, "--percentiles '%s' is not allowed: expected up to %d "
                     "comma-separated percents strictly between 0 and 100, e.g. 50,90,99,99.9",
                     spec, JT_PERCENTILES_MAX);
            return -1;
        }
        p[n++] = v;
        c = end;
        if (!*c)
            return n;
    }
}
