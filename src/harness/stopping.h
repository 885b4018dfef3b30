/* The stopping rule of a point (docs/records.md, "harness"), apart from MPI and the clock so
 * that it can be tested alone (tests/c/test_stopping.c): at least min_reps samples, then more
 * until the 95% interval of the median is within precision of it, the point has run max_time
 * seconds (or its own min_time), or max_reps are taken.  Batches are sized so that a point
 * converges in few decisions without overshooting: the interval's half-width shrinks as
 * 1/sqrt(n), so the samples still needed are predicted from the width measured so far. */
#ifndef JT_HARNESS_STOPPING_H
#define JT_HARNESS_STOPPING_H

#include <stddef.h>

/* Aim a little past the target (the width measured on n samples is itself noisy), and never
 * add less than a quarter of what was taken nor more than three times it at once (a width
 * read from few samples can be far off either way), unless the time or the repetitions left
 * are fewer. */
#define JT_STOP_AIM 1.15
#define JT_STOP_GROW_MIN 0.25
#define JT_STOP_GROW_MAX 3.0

typedef struct jt_stopping {
    long min_reps, max_reps;   /* --min-reps, --max-reps (--iterations sets both) */
    double precision;          /* --precision: relative half-width of the median's 95% CI */
    double max_time;           /* --max-time, seconds */
    double min_time;           /* the point's own: a phase that must last this long */
} jt_stopping;

/* After a batch: total samples taken in el seconds, the relative half-width hw reached (NAN
 * or infinite: none yet).  Returns 1 to stop; otherwise 0 and *next, the samples to take next
 * (at least 1). */
int jt_stopping_decide(const jt_stopping *r, size_t total, double el, double hw, long *next);

#endif
