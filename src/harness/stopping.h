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
 * allows (the half-width at the floor), since more samples cannot make it narrower.
 *
 * More samples cannot help either (issue 46) when the interval stops narrowing as it should:
 * an interval of independent samples, or of the batch medians of stationary correlated ones
 * (core/summary.h), shrinks as 1/sqrt(n); a machine that drifts, or samples that stay at one
 * level for long runs, give batch medians that disagree however many there are.  Once the
 * samples have grown JT_STOP_WINDOW-fold since an earlier decision and the half-width is more
 * than JT_STOP_SLACK times what 1/sqrt(n) predicts from it (it narrowed as n^(-1/4) or slower),
 * at two decisions running (the width of a few hundred order statistics varies by a fifth), the
 * point stops: what it would spend goes to the next launch, whose spread is what the launch
 * as the unit reports.  A median whose
 * interval spans two levels (core/levels.h) stops too.  The point's record says which rule
 * stopped it (jt_stop_reason_name). */
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
#define JT_STOP_WINDOW 4.0
#define JT_STOP_SLACK 1.41421356 /* 4^(1/4): n^(-1/4) over the 4-fold window */
#define JT_STOP_TRACE 64         /* the decisions remembered (the oldest dropped) */
#define JT_STOP_FROM_N 200       /* no judgement from fewer samples: their width is noisy */

/* Why a point stopped; 0: it goes on. */
enum {
    JT_STOP_NO,
    JT_STOP_PRECISION,     /* the interval within --precision */
    JT_STOP_CLOCK,         /* as narrow as the clock's tick allows */
    JT_STOP_NOT_NARROWING, /* narrowing slower than 1/sqrt(n) allows for (see above) */
    JT_STOP_LEVELS,        /* the median's interval spans two levels */
    JT_STOP_MAX_TIME,      /* --max-time (or the phase's own time) spent */
    JT_STOP_MAX_REPS       /* --max-reps (--iterations) taken */
};

/* The record's words for a reason: "precision", "clock", "not narrowing", "two levels",
 * "max-time", "max-reps"; NULL for JT_STOP_NO. */
const char *jt_stop_reason_name(int reason);

/* The half-widths at the decisions so far, kept by the caller for one point. */
typedef struct jt_stop_trace {
    int len;
    size_t n[JT_STOP_TRACE];
    double hw[JT_STOP_TRACE];
    int method[JT_STOP_TRACE];
    int stalled; /* the last decision found it not narrowing */
} jt_stop_trace;

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
    int levels;   /* the median's interval spans two levels (core/levels.h) */
    int method;   /* how the interval was had (JT_CI_*): widths are compared within one (the
                   * batch interval that takes over from the order statistics' is wider) */
    jt_stop_trace *trace; /* the point's earlier decisions, this one added (NULL: none kept) */
} jt_stop_state;

/* Returns the reason to stop (JT_STOP_*); otherwise 0 and *next, the samples to take next (at
 * least 1). */
int jt_stopping_decide(const jt_stopping *r, const jt_stop_state *s, long *next);

/* Whether the clock alone keeps the interval wider than precision. */
int jt_resolution_limited(double precision, double floor);

#endif
