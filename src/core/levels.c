/* Two levels; the why is in levels.h. */
#include "core/levels.h"

#include "core/stats.h"
#include "core/summary.h"

#include <math.h>

/* Whether the share of samples at or below v could be one half: its 95% interval (binomial
 * for independent samples; from the shares of JT_BATCHES batches when lag1 says they are not,
 * as for the median, core/summary.h) reaches 0.5. */
static int half_below(const double *x, size_t n, double v, double share, double lag1)
{
    double half = 1.96 * sqrt(share * (1 - share) / (double)n);
    if (jt_lag1_significant(lag1, n) && n >= (size_t)JT_BATCHES * JT_BATCH_MIN) {
        const double t975 = 2.093024054; /* Student's t, 19 degrees of freedom */
        double f[JT_BATCHES], mean = 0.0, m2 = 0.0, c1 = 0.0;
        for (int b = 0; b < JT_BATCHES; b++) {
            size_t from = (size_t)b * n / JT_BATCHES, to = (size_t)(b + 1) * n / JT_BATCHES, c = 0;
            for (size_t i = from; i < to; i++)
                c += x[i] <= v;
            f[b] = (double)c / (double)(to - from);
            mean += f[b] / JT_BATCHES;
        }
        for (int b = 0; b < JT_BATCHES; b++) {
            m2 += (f[b] - mean) * (f[b] - mean);
            c1 += b ? (f[b] - mean) * (f[b - 1] - mean) : 0.0;
        }
        /* runs of one level longer than a batch leave neighbouring batches alike: the
         * variance of their mean is (1 + r) / (1 - r) times the batches' over B, r their own
         * lag-1 correlation (an AR(1)'s; Fishman, "Principles of Discrete Event Simulation",
         * 1978) */
        double r = m2 > 0 ? fmin(fmax(c1 / m2, 0.0), 0.9) : 0.0;
        half = fmax(half, t975 * sqrt(m2 / (JT_BATCHES - 1) * (1 + r) / (1 - r) / JT_BATCHES));
    }
    return fabs(share - 0.5) <= half;
}

int jt_levels_split(const double *order, const double *x, size_t n, double lag1,
                    const jt_modes *m, double *lo, double *hi, jt_levels *out)
{
    out->n = 0;
    if (n == 0 || m->n < 2 || isnan(*lo) || isnan(*hi))
        return 0;
    size_t from[JT_MODES_MAX + 1];
    double cum = 0.0;
    from[0] = 0;
    for (int k = 0; k < m->n; k++) {
        cum += m->m[k].share;
        size_t to = k == m->n - 1 ? n : (size_t)llround(cum * (double)n);
        from[k + 1] = to < from[k] ? from[k] : to > n ? n : to;
    }
    int first = -1, last = -1; /* the levels on either side of the valleys crossed */
    for (int k = 1; k < m->n; k++) {
        size_t b = from[k];
        if (b == 0 || b >= n)
            continue;
        if (!(*lo <= x[b - 1] && *hi >= x[b]) &&
            !half_below(order, n, x[b - 1], (double)b / (double)n, lag1))
            continue;
        first = first < 0 ? k - 1 : first;
        last = k;
    }
    if (first < 0)
        return 0;
    out->n = m->n;
    for (int k = 0; k < m->n; k++) {
        jt_level *l = &out->l[k];
        size_t c = from[k + 1] - from[k];
        l->share = (double)c / (double)n;
        l->median = jt_quantile_sorted(x + from[k], c, 0.5);
        jt_median_ci95_sorted(x + from[k], c, &l->lo, &l->hi);
    }
    *lo = fmin(*lo, out->l[first].lo);
    *hi = fmax(*hi, out->l[last].hi);
    return 1;
}
