/* A working set sized by the time its setup is given as well as by the caches (docs/check.md,
 * "Budget"): a health check's step must build its buffers inside its share of the budget on
 * any node, whatever hwloc says its caches are (a guest may report a 300 MiB L3). */
#ifndef JT_KERNELS_SETUP_TIME_H
#define JT_KERNELS_SETUP_TIME_H

#include "topo/topo.h"

#include <stddef.h>

/* Bytes per second at which this thread makes new pages exist (mapped, bound and first
 * written) on NUMA node numa, measured on 32 MiB (about 10-30 ms). */
double jt_touch_rate(const jt_topo *tp, int numa);

/* want, or when `bytes` of it cannot be made in `seconds` at `rate` bytes per second, the
 * largest power of two that can (at least floor): a cap that moves only when the rate moves
 * twofold, so repeated runs keep one size.  seconds <= 0: no cap. */
size_t jt_cap_to_time(size_t want, double rate, double seconds, size_t floor);

#endif
