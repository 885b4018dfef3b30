#include "kernels/setup_time.h"

#include "core/timer.h"
#include "topo/bind.h"

#include <string.h>

double jt_touch_rate(const jt_topo *tp, int numa)
{
    jt_buffer b;
    size_t bytes = (size_t)32 << 20;
    jt_buffer_reserve(tp, &b, bytes, numa);
    double t0 = jt_now();
    memset(b.p, 1, bytes);
    double dt = jt_now() - t0;
    jt_buffer_free(tp, &b);
    return dt > 0 ? (double)bytes / dt : 1e12;
}

size_t jt_cap_to_time(size_t want, double rate, double seconds, size_t floor)
{
    if (seconds <= 0 || rate <= 0 || (double)want <= rate * seconds)
        return want;
    double fit = rate * seconds;
    size_t p = floor;
    while ((double)p * 2 <= fit && p * 2 < want)
        p *= 2;
    return p < want ? p : want;
}
