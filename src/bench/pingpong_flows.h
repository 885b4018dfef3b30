/* pingpong with several flows at once (--pairs N, --comm-threads T; comm/flows.h): the
 * aggregate over flows, osu_mbw_mr's message rate, and each flow's own distribution. */
#ifndef JT_BENCH_PINGPONG_FLOWS_H
#define JT_BENCH_PINGPONG_FLOWS_H

#include "bench/bench.h"
#include "comm/flows.h"

/* Series of pingpong: 0 the aggregate (per sample, the mean over flows of side 0's time),
 * then one per flow (pair-major: flow p x threads + t). */
#define JT_PP_SERIES (1 + JT_FLOWS_MAX)

typedef struct jt_pp_flows {
    int pairs, threads, per_rank; /* per_rank: flows of a rank, max(threads, 1) */
    int nflows;                   /* pairs x per_rank */
    jt_p2p_mode mode;
    jt_p2p_buffers buffers;
    int window;
    jt_flows f;
    const jt_bench *bench;        /* whose table its metrics come from */
    jt_metric m[4 + JT_FLOWS_MAX];
    char extra[JT_FLOWS_MAX][48];
    const char *extras[4 + JT_FLOWS_MAX]; /* by metric: the flow's, NULL for the aggregate */
    double *gathered;             /* rank 0: every rank's per-flow samples of a batch */
    size_t gathered_cap;
    char placement[200];
} jt_pp_flows;

/* --pairs and --comm-threads, for every benchmark that takes them. */
#define JT_PP_FLOWS_OPTIONS                                                                       \
    {"pairs", "N", NULL, "N pairs at once, rank i with rank i+N (osu_mbw_mr's pairing): the "    \
                         "aggregate bandwidth and message rate, and each pair's distribution",   \
     NULL},                                                                                       \
    {"comm-threads", "T", NULL, "T communicating threads per rank (MPI_THREAD_MULTIPLE), thread " \
                                "t with thread t of the partner on its own communicator", NULL}

/* Whether the command line asks for flows (--pairs or --comm-threads), and the MPI thread
 * level that needs (jt_bench.thread_level_for). */
int jt_pp_flows_wanted(const jt_opts *o);
int jt_pp_flows_thread_level(const jt_opts *o);

/* --pairs (1 when not given) and --comm-threads (0 when not given) for MODE, judged without
 * ranks (a benchmark's read, --validate): a bad value or combination is a usage error naming it. */
void jt_pp_flows_options(const jt_opts *o, jt_p2p_mode mode, int *pairs, int *threads);

/* The same, then what needs the job: the ranks the pairs take, the thread level the library
 * granted (every rank judges the same, before any file is written). */
void jt_pp_flows_read(jt_ctx *ctx, jt_p2p_mode mode, int *pairs, int *threads);

/* Reads the options (jt_pp_flows_read), places, binds and allocates each flow's thread and
 * arena. */
jt_pp_flows *jt_pp_flows_setup(jt_ctx *ctx, jt_p2p_mode mode, jt_p2p_buffers buffers, int window,
                               int check, size_t arena, size_t frames);
void jt_pp_flows_point(jt_pp_flows *m, uint64_t bytes, jt_point *p);
/* The three metrics of b's table (pingpong's) that MODE reports: latency, bandwidth and rtt
 * of round trips, or bandwidth, message_rate and window_time of a window. */
void jt_pp_metrics(const jt_bench *b, jt_p2p_mode mode, jt_metric *out);
/* n samples of every flow: rank 0 appends the aggregate (the mean over flows of each sample)
 * to agg and, when each is not NULL, flow f's samples to each[f].  Collective. */
void jt_pp_flows_run(jt_ctx *ctx, jt_pp_flows *m, uint64_t bytes, int touch, jt_series *agg,
                     jt_series *each, size_t n);
/* n cores for compute threads of this rank that none of its flows' threads has: its share's
 * cores in order (jt_place_compute_cores, which leaves out thread 0's core) less the others'. */
void jt_pp_flows_compute_cores(const jt_ctx *ctx, const jt_pp_flows *m, int n, int *cores);
/* "pairs" and "comm_threads": what a point's params add. */
void jt_pp_flows_params(const jt_pp_flows *m, jt_json *j);
void jt_pp_flows_meta(const jt_pp_flows *m, jt_json *j);
void jt_pp_flows_free(jt_pp_flows *m);

#endif
