/* The stopping rule of a point (docs/records.md, "harness"), apart from MPI and the clock so
 * that it can be tested alone (tests/c/test_stopping.c): at least min_reps samples, then more
 * until the 95% interval of the target (the median, or a percentile with --target) is within
 * precision of it, the point has run max_time seconds (or its own min_time), or max_reps are
 * taken.  Batches are sized so that a point converges in few decisions without overshooting:
 * the interval's half-width shrinks as 1/sqrt(n), so the samples still needed are predicted
 * from the width measured so far; a percentile's interval that does not exist yet asks for
 * the samples it needs.
 *
 * The clock: an interval is never narrower than the tick (core/summary.h widens it), so the
 * half-width is at least the floor, half a tick over the value.  A point whose floor exceeds
 * precision is resolution-limited: it stops once its interval is as narrow as the clock
 * allows (the half-width at the floor), since more samples cannot make it narrower. */
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

/* Where a point stands after a batch. */
typedef struct jt_stop_state {
    size_t total; /* samples taken */
    double el;    /* seconds spent */
    double hw;    /* relative half-width of the target's interval (NAN or infinite: none yet) */
    double floor; /* the clock's: half a tick over the target's value (0: no tick) */
    size_t need;  /* samples the target's interval needs to exist (0: none) */
} jt_stop_state;

/* Returns 1 to stop; otherwise 0 and *next, the samples to take next (at least 1). */
int jt_stopping_decide(const jt_stopping *r, const jt_stop_state *s, long *next);

/* Whether the clock alone keeps the interval wider than precision. */
int jt_resolution_limited(double precision, double floor);

#endif
