/* A point whose samples sit at two levels (docs/statistics.md, "Two levels").
 *
 * When the modes of a point's samples (core/modes.h) are apart and the 95% interval of its
 * median reaches across the valley between two of them, the median lies in the valley, where
 * hardly a sample is: it moves from one level to the other with the share of samples at each,
 * and an interval around it says nothing of either (the order statistics' interval covered the
 * median of a 50/50 mixture of two levels in 16.6% of draws in issue 50's review, 14% in
 * tests/c/test_levels.c where the level lasts 100 samples on average).  Such a point states
 * each level's median with its own interval and share, and its interval spans the levels it
 * reached across: from the lower one's interval to the upper one's, never an interval around
 * the valley.  The levels are the modes' basins, which are runs of the sorted samples. */
#ifndef JT_LEVELS_H
#define JT_LEVELS_H

#include "core/modes.h"

#include <stddef.h>

typedef struct jt_level {
    double median, lo, hi; /* the level's median and its 95% interval (order statistics) */
    double share;          /* fraction of the samples at this level */
} jt_level;

typedef struct jt_levels {
    int n; /* 0: the median's interval crosses no valley */
    jt_level l[JT_MODES_MAX];
} jt_levels;

/* For samples order[0..n-1] (in the order measured; x, the same sorted; lag1 their rank
 * autocorrelation, core/summary.h) with modes m: when [*lo, *hi] reaches across a valley
 * between two modes, or the share of samples below the valley could be one half (its 95%
 * interval, from batches when the samples are correlated, reaches 0.5: samples that stay at one
 * level in runs make a narrow interval on one side of a valley the median may be beyond),
 * fills out with every level, widens [*lo, *hi] to span the levels on either side of those
 * valleys and returns 1; otherwise out->n = 0 and returns 0. */
int jt_levels_split(const double *order, const double *x, size_t n, double lag1,
                    const jt_modes *m, double *lo, double *hi, jt_levels *out);

#endif
