#include "harness/stopping.h"

#include <math.h>
#include <string.h>

const char *jt_stop_reason_name(int reason)
{
    static const char *const names[] = {NULL,         "precision", "clock",   "not narrowing",
                                        "two levels", "max-time",  "max-reps"};
    return reason > 0 && reason <= JT_STOP_MAX_REPS ? names[reason] : NULL;
}

/* Whether the half-width hw at n samples narrowed less than 1/sqrt(n) allows for since the
 * last decision at least JT_STOP_WINDOW-fold fewer samples ago (stopping.h). */
static int not_narrowing(const jt_stop_trace *t, size_t n, double hw, int method)
{
    if (!t || !(isfinite(hw) && hw > 0))
        return 0;
    for (int k = t->len - 1; k >= 0; k--) {
        if (t->method[k] != method)
            return 0;
        if ((double)t->n[k] * JT_STOP_WINDOW > (double)n)
            continue;
        if (t->n[k] < JT_STOP_FROM_N)
            return 0;
        double expected = t->hw[k] * sqrt((double)t->n[k] / (double)n);
        return isfinite(t->hw[k]) && t->hw[k] > 0 && hw > JT_STOP_SLACK * expected;
    }
    return 0;
}

static void remember(jt_stop_trace *t, size_t n, double hw, int method)
{
    if (!t || !(isfinite(hw) && hw > 0))
        return;
    if (t->len == JT_STOP_TRACE) {
        memmove(t->n, t->n + 1, (JT_STOP_TRACE - 1) * sizeof *t->n);
        memmove(t->hw, t->hw + 1, (JT_STOP_TRACE - 1) * sizeof *t->hw);
        memmove(t->method, t->method + 1, (JT_STOP_TRACE - 1) * sizeof *t->method);
        t->len--;
    }
    t->n[t->len] = n;
    t->method[t->len] = method;
    t->hw[t->len++] = hw;
}

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
    int exists = s->total > 0 && s->total >= s->need;
    int conv = exists && s->hw <= limit; /* NAN compares false */
    int stalled = exists && not_narrowing(s->trace, s->total, s->hw, s->method);
    int confirmed = stalled && s->trace->stalled;
    if (s->trace)
        s->trace->stalled = stalled;
    *next = next_batch(r, s, limit);
    if (exists)
        remember(s->trace, s->total, s->hw, s->method);
    if (s->el < r->min_time)
        return JT_STOP_NO;
    if (conv)
        return s->hw <= r->precision ? JT_STOP_PRECISION : JT_STOP_CLOCK;
    if (exists && s->levels)
        return JT_STOP_LEVELS;
    if (confirmed)
        return JT_STOP_NOT_NARROWING;
    if (s->el >= fmax(r->max_time, r->min_time))
        return JT_STOP_MAX_TIME;
    return (long)s->total >= r->max_reps ? JT_STOP_MAX_REPS : JT_STOP_NO;
}
