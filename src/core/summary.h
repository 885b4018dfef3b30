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
 * output", Operations Research 30, 1982, advises: 10 to 30).  A percentile's interval (p99,
 * --percentiles, --target pNN) is built the same way from the batches' percentiles, with batches
 * large enough for each to hold that percentile's own interval; on correlated samples too few
 * for that, no interval is stated (an order-statistics interval would claim the independence
 * that the samples lack: p99's covered 58.6% of AR(1) draws at rho 0.9, 2026-11-29). */
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

/* The fewest samples for a batch interval of quantile q: JT_BATCHES batches each of at least
 * JT_BATCH_MIN samples and of jt_quantile_ci95_min_n(q) (7360 for p99). */
size_t jt_quantile_batches_min_n(double q);

/* The batch interval of quantile q (value v over all samples) of x[0..n-1] (in the order
 * measured): v +- t(0.975, b-1) sd(batch quantiles) / sqrt(b); returns 0, or -1 when n is
 * below jt_quantile_batches_min_n(q). */
int jt_quantile_ci95_batches(const double *x, size_t n, double q, double v, double *lo,
                             double *hi);

/* The 95% interval of quantile q (0 < q < 1) of x[0..n-1] (in the order measured; sorted, the
 * same sorted), lag1 its rank autocorrelation: order statistics when lag1 is not significant
 * (JT_CI_ORDER, or JT_CI_FEW when n is too small); when it is, batch quantiles, never
 * narrower than the order statistics' nor beyond the samples (JT_CI_BATCHES), or JT_CI_
 * CORRELATED when n is too small for batches.  The bounds are NAN where no interval is
 * stated. */
int jt_quantile_ci95(const double *x, const double *sorted, size_t n, double q, double lag1,
                     double *lo, double *hi);

/* Fills s from x[0..n-1] in the order measured (x is not changed; sorted receives the sorted
 * copy, n values): the distribution, lag1, the interval of the median (batch medians when lag1
 * is significant and n allows; the order statistics' otherwise), p99's (jt_quantile_ci95), and
 * every interval widened to tick (in x's unit; 0: none). */
void jt_summary(const double *x, size_t n, double tick, double *sorted, jt_stats *s);

#endif
