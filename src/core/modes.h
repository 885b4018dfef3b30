/* The modes of a distribution of samples: a kernel-density count with a significance test
 * (docs/statistics.md, "Modes").
 *
 * Method: a Gaussian kernel density of the samples (of their logarithm when all are positive,
 * since timings are skewed to the right), bandwidth by Silverman's rule of thumb
 * h = 0.9 min(sd, IQR/1.34) n^(-1/5) (Silverman, "Density Estimation for Statistics and Data
 * Analysis", 1986, eq. 3.31), never below the data's quantum (the median gap between distinct
 * values) nor the clock's tick in the samples' unit when it is known (the tick's lattice
 * would otherwise make every tick a mode).  Its local maxima are the candidate modes; two
 * closer than JT_MODES_TICKS ticks are one (the lower merged into the higher: nothing finer
 * than the clock is reported).  Two neighbours stay apart only when the valley between them is
 * significantly below the lower peak: by more than JT_MODES_Z standard errors of the density
 * estimate, se(x) = sqrt(f(x) R(K) / (n h)) with R(K) = 1/(2 sqrt(pi)) (Silverman 1986,
 * eq. 3.18; the idea of judging a bump by its standard error is SiZer's, Chaudhuri & Marron,
 * JASA 94, 1999) and by at least JT_MODES_DEPTH of that peak; and a mode holds at least
 * JT_MODES_MIN_SHARE of the samples.  Otherwise the weaker is merged into its neighbour, the
 * weakest first. */
#ifndef JT_MODES_H
#define JT_MODES_H

#include <stddef.h>

#define JT_MODES_MAX 8
#define JT_MODES_MIN_N 50        /* fewer samples: not tested (one mode reported) */
#define JT_MODES_Z 4.0
#define JT_MODES_DEPTH 0.2
#define JT_MODES_MIN_SHARE 0.05
#define JT_MODES_TICKS 3.0       /* modes closer than this many ticks are one */

typedef struct jt_mode {
    double at;    /* location: the density's maximum, in the samples' unit */
    double share; /* fraction of the samples in its basin (between the valleys around it) */
} jt_mode;

typedef struct jt_modes {
    int n;             /* modes found (1 when not tested) */
    int tested;        /* 0: too few samples, or all equal */
    double bandwidth;  /* h, on the scale the density was estimated (log when log_scale) */
    double tick;       /* the tick it was given, in the samples' unit */
    int log_scale;
    jt_mode m[JT_MODES_MAX]; /* in increasing location */
} jt_modes;

/* The modes of x[0..n-1], sorted ascending (jt_stats_compute sorts); tick is the clock's tick
 * in x's unit (as the metric is derived from a duration: divided by the operations per
 * sample, halved for half a round trip), 0 when x is not a timing. */
void jt_modes_find(const double *x, size_t n, double tick, jt_modes *out);

#endif
