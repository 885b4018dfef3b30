/* overlap's state and what its two files share: overlap_options.c reads and checks the options
 * (pure) and places the rank and its progress thread; overlap.c allocates, calibrates and
 * measures. */
#ifndef JT_BENCH_OVERLAP_H
#define JT_BENCH_OVERLAP_H

#include "bench/bench.h"
#include "comm/nbc.h"
#include "jostle/placement.h"
#include "kernels/work.h"

enum { MODE_NONE, MODE_POLLING, MODE_THREAD, MODE_ASYNC };
extern const char *const jt_overlap_mode_names[]; /* --progress-mode, in enum order */
extern const jt_opt_spec jt_overlap_options[];

/* MPICH's own progress thread, switched on by the variable it reads in MPI_Init. */
#define ASYNC_CVAR "MPIR_CVAR_ASYNC_PROGRESS"
enum { S_PURE, S_CPU, S_OVRL, NSERIES };
enum { M_OVRL, M_PURE, M_CPU }; /* metrics: t_ovrl first, the one that converges last */
#define CALIB_SAMPLES 32
#define MAX_BATCH 1024

typedef struct jt_overlap_state {
    uint64_t *sizes;
    size_t nsizes;
    int ops[JT_NBC_COUNT_], nops, root, batch, mode, policy, thread_pol, rank_core, thread_core;
    double poll_s;
    int kind, idle;      /* --kernel, --thread-idle */
    size_t array;        /* --array-bytes, 0 when not given */
    jt_work work;
    jt_buffer sbuf, rbuf;
    jt_progress_thread pt;
    jt_layout layout;
    long cur, units;     /* point calibrated, work units for its t_pure */
    double *local, *all;
    size_t cap;
} jt_overlap_state;

/* jt_bench.read of overlap. */
void jt_overlap_read(const jt_opts *o, const jt_topo *tp, void *state);
/* Where this rank and its progress thread go (logical cores).  Collective. */
void jt_overlap_place(jt_ctx *ctx, jt_overlap_state *s);

#endif
