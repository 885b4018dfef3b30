#include "core/stats.h"
#include "core/timer.h"

double jt_timer_resolution(void)
{
    double best = 1.0;
    for (int i = 0; i < 1000; i++) {
        double t0 = jt_now(), t1;
        while ((t1 = jt_now()) == t0)
            ;
        if (t1 - t0 < best)
            best = t1 - t0;
    }
    return best;
}

double jt_timer_overhead(void)
{
    enum { N = 20001 };
    static double d[N];
    for (int i = 0; i < N; i++) {
        double t0 = jt_now();
        d[i] = jt_now() - t0;
    }
    jt_stats s;
    jt_stats_compute(d, N, &s);
    return s.median;
}
