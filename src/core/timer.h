/* The clock of every sample: CLOCK_MONOTONIC through the vDSO (tens of ns per read, no
 * system call), as in the reference loop of Zahn 2021, listing 1. */
#ifndef JT_TIMER_H
#define JT_TIMER_H

#include <time.h>

static inline double jt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Smallest step of the clock, measured: the run metadata records it. */
double jt_timer_resolution(void);

/* What an empty sample measures: the median of many back-to-back readings' differences.  A
 * sample t1 - t0 contains one such reading cost besides the work, so the harness subtracts it
 * from every sample (about 20 ns here: 5% of an intra-node round trip). */
double jt_timer_overhead(void);

#endif
