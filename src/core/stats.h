/* Statistics of a distribution of samples. */
#ifndef JT_STATS_H
#define JT_STATS_H

#include "core/json.h"

#include <stddef.h>

/* How an interval of a quantile was had (core/summary.h, jt_quantile_ci95). */
enum { JT_CI_ORDER, JT_CI_BATCHES, JT_CI_FEW, JT_CI_CORRELATED };

typedef struct jt_stats {
    size_t n;
    double min, p25, median, p75, p99, max;
    double mean, stddev;           /* stddev with n-1 */
    double ci_lo, ci_hi;           /* 95% confidence interval of the median */
    double p99_lo, p99_hi;         /* 95% interval of p99, NAN when n is too small for one */
    /* Set by jt_summary (core/summary.h), left at their defaults here: */
    double lag1;                   /* lag-1 autocorrelation of the ranks (NAN: not computed) */
    int ci_batches;                /* the median's interval is from batch medians */
    int ci_levels;                 /* it spans two levels (core/levels.h): none is stated */
    int p99_method;                /* JT_CI_*: how p99's interval was had, or why not */
    size_t p99_needs_n;            /* the samples its interval needs, where none is stated */
    double tick;                   /* the clock's tick in the samples' unit (0: none known) */
} jt_stats;

/* Quantile q in [0,1] of sorted x by linear interpolation between order statistics
 * (Hyndman & Fan type 7, the default of numpy and R). */
double jt_quantile_sorted(const double *x, size_t n, double q);

/* Distribution-free 95% interval of the median: the order statistics of ranks
 * floor(n/2 - 0.98 sqrt n) and ceil(n/2 + 1 + 0.98 sqrt n) (1-based), as in Le Boudec,
 * "Performance Evaluation of Computer and Communication Systems", EPFL Press 2010, thm 2.1;
 * for n < 6 no interval exists at 95% and [min, max] is returned. */
void jt_median_ci95_sorted(const double *x, size_t n, double *lo, double *hi);

/* Distribution-free 95% interval of the quantile q (0 < q < 1) of sorted x: the order
 * statistics x(j) and x(k) (1-based) with P(B < j) <= 2.5% and P(B >= k) <= 2.5%, B the
 * binomial(n, q) count of samples below the true quantile (equal tails; David and Nagaraja,
 * "Order Statistics", 3rd ed., 2003, sec. 7.1), computed exactly.  Returns 0, or -1 with lo
 * and hi NAN when n is below jt_quantile_ci95_min_n(q). */
int jt_quantile_ci95_sorted(const double *x, size_t n, double q, double *lo, double *hi);

/* The fewest samples for which that interval exists: both x(1) and x(n) must be beyond the
 * quantile with 97.5% chance, n = ceil(ln 0.025 / ln max(q, 1 - q)): 6 for the median, 72 for
 * p95, 368 for p99, 3688 for p99.9. */
size_t jt_quantile_ci95_min_n(double q);

/* An interval narrower than the clock's tick is not precision: widens [*lo, *hi] to at least
 * half a tick on each side of v (NAN bounds stay NAN). */
void jt_widen_to_tick(double v, double tick, double *lo, double *hi);

/* Sorts x in place and fills s. */
void jt_stats_compute(double *x, size_t n, jt_stats *s);

/* Relative half-width of the median's interval, (hi - lo) / 2 / |median|. */
double jt_stats_rel_halfwidth(const jt_stats *s);

#define JT_PERCENTILES_MAX 16

/* Parses --percentiles "50,90,99,99.9": each strictly between 0 and 100, at most
 * JT_PERCENTILES_MAX, into p[] in the order given.  Returns how many, or -1 with a message in
 * err naming the value. */
int jt_percentiles_parse(const char *spec, double *p, char *err, size_t errlen);

/* Parses --target: "median" (*pct = 0) or "pNN" with NN strictly between 0 and 100 (*pct =
 * NN).  Returns 0, or -1 with a message in err naming the value. */
int jt_target_parse(const char *spec, double *pct, char *err, size_t errlen);

/* Parses --sample-reps: "auto" (*reps = 0) or an integer from 1 to max.  Returns 0, or -1 with
 * a message in err naming the value. */
int jt_sample_reps_parse(const char *spec, long max, long *reps, char *err, size_t errlen);

/* The distribution's keys of a record's point line (docs/records.md): min … stddev, ci95, its
 * method, lag1 when computed, p99's interval (or null and the samples it needs). */
void jt_stats_json(const jt_stats *st, jt_json *j);

#endif
