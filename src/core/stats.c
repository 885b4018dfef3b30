#include "core/stats.h"

#include <ctype.h>
#include <errno.h>
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

size_t jt_quantile_ci95_min_n(double q)
{
    double m = q > 0.5 ? q : 1.0 - q;
    if (!(m < 1.0))
        return (size_t)-1;
    return (size_t)ceil(log(0.025) / log(m) - 1e-9);
}

/* log P(B = k), B ~ binomial(n, q) */
static double log_pmf(size_t n, double q, size_t k)
{
    return lgamma((double)n + 1) - lgamma((double)k + 1) - lgamma((double)(n - k) + 1) +
           (double)k * log(q) + (double)(n - k) * log1p(-q);
}

int jt_quantile_ci95_sorted(const double *x, size_t n, double q, double *lo, double *hi)
{
    *lo = *hi = NAN;
    if (n == 0 || !(q > 0 && q < 1) || n < jt_quantile_ci95_min_n(q))
        return -1;
    /* The binomial's mass lies within 12 standard deviations of its mean (and a few counts
     * where it is tiny): summed there, exactly, from the lower end. */
    double mu = (double)n * q, w = 12.0 * sqrt(mu * (1.0 - q)) + 12.0;
    size_t a = mu - w > 0 ? (size_t)(mu - w) : 0;
    size_t b = mu + w < (double)n ? (size_t)(mu + w) : n;
    double cdf = 0.0;
    size_t j = 0, k = 0; /* 1-based order statistics; 0: not found yet */
    for (size_t c = a; c <= b; c++) {
        cdf += exp(log_pmf(n, q, c)); /* P(B <= c) */
        if (cdf <= 0.025)
            j = c + 1; /* P(B < c + 1) <= 2.5%: x(c+1) is below the quantile with >= 97.5% */
        if (cdf >= 0.975) {
            k = c + 1; /* P(B >= c + 1) <= 2.5% */
            break;
        }
    }
    if (j < 1)
        j = 1;
    if (k < 1 || k > n) /* rounding at the edge: min_n said it exists */
        k = n;
    *lo = x[j - 1];
    *hi = x[k - 1];
    return 0;
}

void jt_widen_to_tick(double v, double tick, double *lo, double *hi)
{
    if (!(tick > 0) || isnan(v))
        return;
    if (!isnan(*lo))
        *lo = fmin(*lo, v - 0.5 * tick);
    if (!isnan(*hi))
        *hi = fmax(*hi, v + 0.5 * tick);
}

void jt_stats_compute(double *x, size_t n, jt_stats *s)
{
    s->n = n;
    s->lag1 = NAN;
    s->ci_batches = 0;
    s->ci_levels = 0;
    s->tick = 0.0;
    s->p99_lo = s->p99_hi = NAN;
    s->p99_method = JT_CI_FEW;
    s->p99_needs_n = jt_quantile_ci95_min_n(0.99);
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
    s->p99_method = jt_quantile_ci95_sorted(x, n, 0.99, &s->p99_lo, &s->p99_hi) == 0
                        ? JT_CI_ORDER : JT_CI_FEW;
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
    jt_json_kpair(j, "ci95", st->ci_lo, st->ci_hi);
    jt_json_kstr(j, "ci95_method", st->ci_levels    ? "two levels"
                                   : st->ci_batches ? "batch medians"
                                                    : "order statistics");
    if (!isnan(st->lag1))
        jt_json_knum(j, "lag1", st->lag1);
    jt_json_key(j, "p99_ci95");
    if (isnan(st->p99_lo)) {
        jt_json_null(j);
        jt_json_kint(j, "p99_ci95_needs_n", (long long)st->p99_needs_n);
    } else {
        jt_json_pair(j, st->p99_lo, st->p99_hi);
    }
    jt_json_kstr(j, "p99_ci95_method", st->p99_method == JT_CI_BATCHES ? "batch p99s"
                                       : st->p99_method == JT_CI_ORDER ? "order statistics"
                                       : st->p99_method == JT_CI_CORRELATED
                                           ? "none: correlated samples, too few for batches"
                                           : "none: too few samples");
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

int jt_target_parse(const char *spec, double *pct, char *err, size_t errlen)
{
    char *end = NULL;
    double v = 0.0;
    if (strcmp(spec, "median") == 0) {
        *pct = 0.0;
        return 0;
    }
    if (spec[0] == 'p' && spec[1] && !isspace((unsigned char)spec[1]))
        v = strtod(spec + 1, &end);
    if (!end || *end || !(v > 0 && v < 100)) {
        snprintf(err, errlen, "--target '%s' is not allowed: expected median or pNN, a "
                 "percentile strictly between 0 and 100 (e.g. p99, p99.9)", spec);
        return -1;
    }
    *pct = v;
    return 0;
}

int jt_sample_reps_parse(const char *spec, long max, long *reps, char *err, size_t errlen)
{
    char *end;
    if (strcmp(spec, "auto") == 0) {
        *reps = 0;
        return 0;
    }
    errno = 0;
    long v = strtol(spec, &end, 10);
    if (errno || end == spec || *end || v < 1 || v > max || !isdigit((unsigned char)spec[0])) {
        snprintf(err, errlen, "--sample-reps '%s' is not allowed: expected auto or an integer "
                 "from 1 to %ld (operations timed together in one sample)", spec, max);
        return -1;
    }
    *reps = v;
    return 0;
}
