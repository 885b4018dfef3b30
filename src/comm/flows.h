/* Many flows at once: N pairs of ranks (pair i = rank i with rank i+N, as osu_mbw_mr pairs
 * them, so that with two nodes every pair crosses the network), each rank with T
 * communicating threads (thread t talks to thread t of its partner on a communicator of its
 * own, as the MPI 4 standard's advice on thread-level parallelism suggests), each flow running
 * one two-sided pattern of comm/p2p.h.
 *
 * How the flows are kept together (docs/cli.md, "pairs and threads"):
 *   - no threads (T = 0: the rank's main thread is its one flow): stream and bidir take two
 *     barriers of every rank before each window and acknowledge it with 1 byte, as osu_mbw_mr
 *     does in the OMB release of 2024 (one barrier before each iteration, one more before
 *     each pass of its validation loop; the 2023 release took one barrier and acknowledged
 *     with 4 bytes, as osu_bw does); pingpong one barrier per batch of samples, as
 *     osu_multi_lat per size;
 *   - threads (T >= 1, MPI_THREAD_MULTIPLE): a barrier of every rank before each batch, taken
 *     inside the last of a rank's threads to arrive, then each thread takes its samples on its
 *     own, as osu_latency_mt's threads do per size (a barrier in the main thread, then waking
 *     the threads, put the wake-up in their first samples). */
#ifndef JT_FLOWS_H
#define JT_FLOWS_H

#include "comm/p2p.h"
#include "topo/bind.h"

#include <pthread.h>

#define JT_FLOWS_MAX_THREADS 64
#define JT_FLOWS_MAX 64 /* pairs x threads: each is a series and a metric line per point */
#define JT_FLOWS_ACK_BYTES 1 /* a stream window's acknowledgement, osu_mbw_mr's (OMB 2024) */

/* This rank's part: side 0 (sends, times), 1 (answers) or -1 (idle), its pair and partner. */
void jt_flows_role(int rank, int size, int pairs, int *side, int *pair, int *peer);

typedef struct jt_flow {
    struct jt_flows *owner;
    int index;          /* thread t */
    int core, numa;     /* asked for: core and NUMA node of the buffers (or JT_MEM_*) */
    MPI_Comm comm;
    jt_p2p p2p;
    jt_buffer buf;
    jt_binding bind;    /* obtained */
    double *times;      /* the last batch's samples (side 0) */
    size_t cap;
    pthread_t th;
} jt_flow;

typedef struct jt_flows {
    const jt_topo *topo;
    MPI_Comm world;
    int side, pair, peer;
    int threads;        /* 0: the calling thread is the one flow */
    int nflow;          /* max(threads, 1) */
    jt_p2p_mode mode;
    jt_p2p_buffers buffers;
    int window, check;
    size_t arena_bytes, frames;
    jt_flow *flow;
    /* The job the threads run, and the count of those that finished it. */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    long job;           /* incremented per batch; -1 to stop */
    size_t job_bytes, job_n;
    int job_touch, done;
    int arrived;        /* threads at the current batch's barrier */
    long gen;           /* barriers taken: what a waiting thread watches */
} jt_flows;

/* Per flow what to pattern: mode, buffers, window, check, arena bytes and frames (as
 * jt_p2p_init takes them), and the core and NUMA node of each flow (nflow of each).  With
 * threads, each thread binds itself, allocates and first-touches its arena and duplicates its
 * communicator (collective over world, in thread order).  Collective. */
void jt_flows_init(jt_flows *f, const jt_topo *topo, MPI_Comm world, int pairs, int threads,
                   jt_p2p_mode mode, jt_p2p_buffers buffers, int window, int check,
                   size_t arena_bytes, size_t frames, const int *cores, const int *numas);

/* n samples of `bytes` per flow (touching the buffers first when touch is set, as pingpong
 * does before a size's warm-up); side 0's sample k of flow t is f->flow[t].times[k].
 * Collective over world. */
void jt_flows_run(jt_flows *f, size_t bytes, size_t n, int touch);

void jt_flows_free(jt_flows *f);

#endif
