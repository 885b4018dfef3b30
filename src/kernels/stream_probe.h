/* The node's STREAM triad on all cores: the bound a contention run's compute throughput is set
 * against (Hoefler and Belli, SC15, rule 11).  One thread per core, each bound and with its
 * own arrays first-touched on its own node (as STREAM with OMP_PROC_BIND), all sweeping the
 * triad at once; the aggregate counts STREAM bytes (24 per element, no write-allocate), as the
 * contention benchmark's compute_throughput does. */
#ifndef JT_KERNELS_STREAM_PROBE_H
#define JT_KERNELS_STREAM_PROBE_H

#include "topo/topo.h"

#include <stddef.h>

typedef struct jt_stream_result {
    int threads;             /* one per core */
    size_t bytes;            /* of arrays per thread */
    int rounds;
    double best, median, worst; /* GB/s over rounds; STREAM reports the best */
    int unbound;             /* threads whose binding failed */
    char note[200];          /* the first binding failure, "" when none */
} jt_stream_result;

/* Bytes of arrays per thread: 4 x every last-level cache together / the cores (so the arrays
 * are far out of cache), at least 24 MiB (STREAM's rule: 4 x the caches in all). */
size_t jt_stream_default_bytes(const jt_topo *tp);

/* Runs the triad on every core for ROUNDS rounds of SECONDS each. */
void jt_stream_probe(const jt_topo *tp, size_t bytes, int rounds, double seconds,
                     jt_stream_result *out);

#endif
