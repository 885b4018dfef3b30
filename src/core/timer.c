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
