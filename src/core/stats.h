/* Statistics of a distribution of samples. */
#ifndef JT_STATS_H
#define JT_STATS_H

#include "core/json.h"

#include <stddef.h>

typedef struct jt_stats {
    size_t n;
    double min, p25, median, p75, p99, max;
    double mean, stddev;           /* stddev with n-1 */
    double ci_lo, ci_hi;           /* 95% confidence interval of the median */
} jt_stats;

/* Quantile q in [0,1] of sorted x by linear interpolation between order statistics
 * (Hyndman & Fan type 7, the default of numpy and R). */
double jt_quantile_sorted(const double *x, size_t n, double q);

/* Distribution-free 95% interval of the median: the order statistics of ranks
 * floor(n/2 - 0.98 sqrt n) and ceil(n/2 + 1 + 0.98 sqrt n) (1-based), as in Le Boudec,
 * "Performance Evaluation of Computer and Communication Systems", EPFL Press 2010, thm 2.1;
 * for n < 6 no interval exists at 95% and [min, max] is returned. */
void jt_median_ci95_sorted(const double *x, size_t n, double *lo, double *hi);

/* Sorts x in place and fills s. */
void jt_stats_compute(double *x, size_t n, jt_stats *s);

/* Relative half-width of the median's interval, (hi - lo) / 2 / |median|. */
double jt_stats_rel_halfwidth(const jt_stats *s);

#define JT_PERCENTILES_MAX 16

/* Parses --percentiles "50,90,99,99.9": each strictly between 0 and 100, at most
 * JT_PERCENTILES_MAX, into p[] in the order given.  Returns how many, or -1 with a message in
 * err naming the value. */
int jt_percentiles_parse(const char *spec, double *p, char *err, size_t errlen);

/* The distribution's keys of a record's point line (docs/records.md): min … stddev, ci95. */
void jt_stats_json(const jt_stats *st, jt_json *j);

#endif
