#include "harness/stopping.h"

#include <math.h>

int jt_resolution_limited(double precision, double floor) { return floor > precision; }

/* Samples to take next (see stopping.h); limit is the half-width to reach. */
static long next_batch(const jt_stopping *r, const jt_stop_state *s, double limit)
{
    double total = (double)s->total, el = s->el, hw = s->hw;
    double per = total > 0 ? el / total : 0.0;
    double cap_time = fmax(r->max_time, r->min_time);
    double want = total * JT_STOP_GROW_MIN;
    if (isfinite(hw) && hw > 0) {
        double q = hw / limit;
        want = fmax(want, fmin(total * (JT_STOP_AIM * q * q - 1.0), total * JT_STOP_GROW_MAX));
    }
    if (s->need > s->total) /* an interval that does not exist yet: the samples it needs */
        want = fmax(want, (double)(s->need - s->total));
    /* A phase that must last: fill the time asked for, growing at most GROW_MAX-fold a batch:
     * a batch sized from the first samples alone, which the scheduler then slows (a compute
     * thread sharing the core), ran 4 x past its phase (0.8 s for 0.2 s, 2026-11-29). */
    if (el < r->min_time && per > 0)
        want = fmax(want, fmin((r->min_time - el) / per, fmax(total, 1.0) * JT_STOP_GROW_MAX));
    double left = per > 0 ? (cap_time - el) / per : want;
    double next = fmin(want, fmax(left, 1.0));
    next = fmin(next, (double)(r->max_reps - (long)s->total));
    return next < 1 ? 1 : (long)ceil(next);
}

int jt_stopping_decide(const jt_stopping *r, const jt_stop_state *s, long *next)
{
    /* resolution-limited: as narrow as the clock allows (a relative margin for rounding) */
    double limit = fmax(r->precision, s->floor > 0 ? s->floor * (1 + 1e-9) : 0.0);
    int conv = s->total > 0 && s->total >= s->need && s->hw <= limit; /* NAN compares false */
    *next = next_batch(r, s, limit);
    return s->el >= r->min_time &&
           (conv || s->el >= fmax(r->max_time, r->min_time) || (long)s->total >= r->max_reps);
}
