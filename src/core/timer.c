#include "core/stats.h"
#include "core/timer.h"

/* Under SimGrid (JT_SMPI) the clock is the simulated one: reading it costs what the option
 * smpi/wtime says (0 in jostle's simulated runs) and each reading is a context switch of the
 * simulator, so there is nothing to calibrate and 40000 readings per rank would dominate the
 * real time of a run of hundreds of ranks. */
double jt_timer_resolution(void)
{
#ifdef JT_SMPI
    return 1e-9;
#endif
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
#ifdef JT_SMPI
    return 0.0;
#endif
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
