/* Clock synchronisation by a linear model of the offset; see clocksync.h. */
#include "core/clocksync.h"

#include <math.h>
#include <string.h>

void jt_clock_fit(const jt_clock_exchange *ex, int nwin, int per_win, jt_clock_model *m)
{
    memset(m, 0, sizeof *m);
    if (nwin < 1 || per_win < 1)
        return;
    double x[nwin], y[nwin], half[nwin];
    for (int w = 0; w < nwin; w++) {
        const jt_clock_exchange *best = &ex[w * per_win];
        for (int k = 1; k < per_win; k++) {
            const jt_clock_exchange *e = &ex[w * per_win + k];
            if (e->t1 - e->t0 < best->t1 - best->t0)
                best = e;
        }
        x[w] = 0.5 * (best->t0 + best->t1);
        y[w] = best->tr - x[w];
        half[w] = 0.5 * (best->t1 - best->t0);
    }
    double mx = 0, my = 0;
    for (int w = 0; w < nwin; w++) {
        mx += x[w] / nwin;
        my += y[w] / nwin;
    }
    double sxx = 0, sxy = 0;
    for (int w = 0; w < nwin; w++) {
        sxx += (x[w] - mx) * (x[w] - mx);
        sxy += (x[w] - mx) * (y[w] - my);
    }
    m->t_ref = mx;
    m->offset = my;
    m->drift = sxx > 0 ? sxy / sxx : 0.0; /* one window, or all at one time: no drift seen */
    double ss = 0, worst = 0;
    for (int w = 0; w < nwin; w++) {
        double r = y[w] - jt_clock_offset_at(m, x[w]);
        ss += r * r;
        worst = fmax(worst, half[w]);
    }
    m->residual = sqrt(ss / nwin);
    m->error = worst + 2 * m->residual;
    m->span = x[nwin - 1] - x[0];
    m->fitpoints = nwin;
}

double jt_clock_offset_at(const jt_clock_model *m, double t)
{
    return m->offset + m->drift * (t - m->t_ref);
}

double jt_clock_to_reference(const jt_clock_model *m, double t_other)
{
    /* t_other = t + offset + drift (t - t_ref), solved for t */
    return m->t_ref + (t_other - m->t_ref - m->offset) / (1.0 + m->drift);
}
