#include "harness/stopping.h"

#include <math.h>

/* Samples to take next (see stopping.h). */
static long next_batch(const jt_stopping *r, size_t total, double el, double hw)
{
    double per = total > 0 ? el / (double)total : 0.0;
    double cap_time = fmax(r->max_time, r->min_time);
    double want = (double)total * JT_STOP_GROW_MIN;
    if (isfinite(hw) && hw > 0) {
        double q = hw / r->precision;
        want = fmax(want, fmin((double)total * (JT_STOP_AIM * q * q - 1.0),
                               (double)total * JT_STOP_GROW_MAX));
    }
    if (el < r->min_time && per > 0) /* a phase that must last: fill the time asked for */
        want = fmax(want, (r->min_time - el) / per);
    double left = per > 0 ? (cap_time - el) / per : want;
    double next = fmin(want, fmax(left, 1.0));
    next = fmin(next, (double)(r->max_reps - (long)total));
    return next < 1 ? 1 : (long)ceil(next);
}

int jt_stopping_decide(const jt_stopping *r, size_t total, double el, double hw, long *next)
{
    int conv = total > 0 && hw <= r->precision; /* NAN compares false */
    *next = next_batch(r, total, el, hw);
    return el >= r->min_time &&
           (conv || el >= fmax(r->max_time, r->min_time) || (long)total >= r->max_reps);
}
