/* The statistics of one point's samples as a record states them (docs/statistics.md): the
 * distribution (core/stats.h), the lag-1 autocorrelation of the samples in the order measured,
 * the 95% interval of the median from order statistics when the samples look independent and
 * from batch medians when they do not, and every interval widened to the clock's tick.
 *
 * Dependence.  Order-statistic intervals assume independent samples; a machine that drifts
 * (a neighbour, a frequency change, a busy hypervisor) gives positively correlated samples and
 * an interval too narrow.  The lag-1 autocorrelation is taken on the samples' ranks (mid-ranks
 * for ties), Spearman's form: the rare sample a thousand times slower would otherwise decide
 * it.  Under independence it is about normal with variance 1/n (Bartlett 1946; for ranks:
 * Knoke, "Testing for randomness against autocorrelation", Biometrika 64, 1977), so it is
 * significant when |r1| > 1.96 / sqrt(n).  Then the series is cut into JT_BATCHES batches of
 * consecutive samples, the median of each taken, and the interval is the overall median
 * +- t(0.975, b-1) sd(batch medians) / sqrt(b): the batch-quantile method (Seila, "A batching
 * approach to quantile estimation in regenerative simulations", Management Science 28, 1982;
 * the number of batches as Schmeiser, "Batch size effects in the analysis of simulation
 * output", Operations Research 30, 1982, advises: 10 to 30). */
#ifndef JT_SUMMARY_H
#define JT_SUMMARY_H

#include "core/stats.h"

#include <stddef.h>

#define JT_BATCHES 20
#define JT_BATCH_MIN 10 /* samples per batch at least: fewer samples, no batch interval */

/* Lag-1 autocorrelation of the ranks of x[0..n-1] (in the order measured); sorted is the same
 * values sorted (the ranks are read from it).  NAN when n < 3 or every value is equal. */
double jt_lag1_rank(const double *x, const double *sorted, size_t n);

/* Whether r1 from n independent samples would be this far from 0 less than 5% of the time. */
int jt_lag1_significant(double r1, size_t n);

/* The batch-median interval of the median m of x[0..n-1] (in the order measured); returns 0,
 * or -1 when n < JT_BATCHES x JT_BATCH_MIN. */
int jt_median_ci95_batches(const double *x, size_t n, double m, double *lo, double *hi);

/* Fills s from x[0..n-1] in the order measured (x is not changed; sorted receives the sorted
 * copy, n values): the distribution, lag1, the interval of the median (batch medians when lag1
 * is significant and n allows), and every interval widened to tick (in x's unit; 0: none). */
void jt_summary(const double *x, size_t n, double tick, double *sorted, jt_stats *s);

#endif
