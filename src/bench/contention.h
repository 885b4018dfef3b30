/* contention's state and what its two files share: contention_options.c reads and checks the
 * options; contention.c allocates, places and measures. */
#ifndef JT_BENCH_CONTENTION_H
#define JT_BENCH_CONTENTION_H

#include "bench/bench.h"
#include "bench/pingpong_flows.h"
#include "comm/p2p.h"
#include "kernels/workers.h"

extern const jt_opt_spec jt_contention_options[];

enum { PH_COMPUTE, PH_COMM, PH_TOGETHER, NPHASES };
extern const char *const jt_contention_phase_names[]; /* in enum order */
/* Series: round trips, per-sweep times, stalled fractions, and the phase's aggregate compute
 * throughput (one value, replaced as the phase goes on). */
enum { S_COMM, S_COMPUTE, S_STALL, S_AGG };

typedef struct state {
    uint64_t *sizes;
    size_t nsizes;
    int phases[8], nphases, repeat;
    double phase_time;
    double setup_time;
    size_t array_bytes_wanted; /* before the cut to the setup time */
    double touch_rate;         /* bytes/s, measured when there is a setup time */
    const jt_kernel *kernel;
    int reps, stores, ncompute, computing, compute_mem;
    size_t array_bytes;
    jt_pool pool;
    jt_buffer buf;
    jt_p2p p2p;
    jt_p2p_buffers buffers; /* of the communicating thread's ping-pong */
    jt_pp_flows *flows;     /* --pairs, --comm-threads: every flow's ping-pong at once */
    int pairs, threads;
    long active;       /* point whose phase is running, -1 none */
    double since;      /* sweeps that start before this belong to an earlier point */
    jt_metric comm_m[3], comp_m[5], both_m[8];
    int ncomp_m;
    int compute_on;    /* --compute-on: both, sender, none */
    char counters_reason[160];
} state;

/* The options into the state (before MPI's ranks know their hosts: TP may be NULL). */
void jt_contention_read(const jt_opts *o, const jt_topo *tp, void *st);

#endif
