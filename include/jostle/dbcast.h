/*
 * jostle — dynamic broadcasts in the communication layer (jt_dbcast).
 *
 * A root posts ONE send with the list of its recipients; every recipient posts an
 * ordinary receive keyed by (original source, tag), without knowing that the data
 * comes from a broadcast, nor who else receives it. Routing is source routing: the
 * header of every message carries the sub-list of ranks the receiver must forward
 * to, and the forwarding is done by this layer's progress engine as soon as the
 * data (or each segment of it) arrives, independently of the receiver's application.
 *
 * Design, message format, routing choice and guarantees: docs/dbcast.md.
 *
 * Thread safety: all calls on one context are serialized by an internal mutex; with
 * JT_PROGRESS_THREAD, the application may call them from any thread (the MPI library
 * must grant MPI_THREAD_MULTIPLE). Several contexts may coexist (each duplicates its
 * communicator). No global mutable state.
 */
#ifndef JOSTLE_DBCAST_H
#define JOSTLE_DBCAST_H

#include <stddef.h>
#include <stdint.h>
#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Routing of a broadcast, chosen by the root and carried in every header. */
typedef enum {
    JT_ROUTE_AUTO = 0,        /* chosen per message from size and recipient count */
    JT_ROUTE_FLAT,            /* the root sends to every recipient */
    JT_ROUTE_BINOMIAL,        /* binomial tree: ceil(log2(n+1)) rounds, depth floor(log2(n+1)) */
    JT_ROUTE_CHAIN,           /* root -> r0 -> r1 -> ... (whole message per hop) */
    JT_ROUTE_PIPELINE_CHAIN,  /* chain, message split into segments forwarded as they arrive */
    JT_ROUTE_PIPELINE_TREE,   /* binary tree, segmented, forwarded as they arrive */
    JT_ROUTE_TWO_TREE,        /* two pipelined binary trees, each carrying half the segments;
                                 a node interior in one is a leaf in the other (Sanders,
                                 Speck, Traff 2009): every node sends the message once */
    JT_ROUTE_KNOMIAL4,        /* k-nomial trees of whole messages, radix 4, 8, 16: */
    JT_ROUTE_KNOMIAL8,        /*   ceil(log_k(n+1)) rounds of up to k-1 children each, a */
    JT_ROUTE_KNOMIAL16,       /*   round's sends at once (appended: the wire carries values) */
    JT_ROUTE_SCATTER_ALLGATHER, /* binomial scatter of n+1 chunks, then recursive-doubling
                                   allgather among the recipients, each message one range
                                   sent when that range is complete at its sender */
    JT_ROUTE_COUNT_
} jt_dbcast_routing;

typedef enum {
    JT_PROGRESS_AUTO = 0,  /* thread if MPI_THREAD_MULTIPLE is granted (and not SimGrid), else poll */
    JT_PROGRESS_THREAD,    /* a progress thread per context; needs MPI_THREAD_MULTIPLE */
    JT_PROGRESS_POLL       /* no thread: the runtime calls jt_dbcast_progress() from its loop */
} jt_dbcast_progress_mode;

/* How jt_dbcast_wait / jt_dbcast_wait_arrived wait in poll mode (thread mode always polls:
 * the progress thread needs the context's lock). */
typedef enum {
    JT_WAIT_AUTO = 0,  /* block under SimGrid or without MPI_THREAD_MULTIPLE, else spin */
    JT_WAIT_BLOCK,     /* block in MPI_Waitany until one of the layer's requests completes:
                          no spinning; only when no other thread uses the context meanwhile */
    JT_WAIT_SPIN       /* loop on the progress engine */
} jt_dbcast_wait_mode;

/* Cost model of the automatic routing and of the segment size (seconds, bytes/s): a
 * message of b bytes over one hop costs latency(b) + overhead + b / bandwidth(b); a sender
 * pays overhead + b / bandwidth(b) per message it injects; a forwarding hop adds
 * forward_delay; a link carrying x bytes in and y out at once takes
 * (max(x,y) + duplex * min(x,y)) / bandwidth. latency(b) and bandwidth(b) are piecewise
 * constant in b (SMPI's latency and bandwidth factors; a real network's eager and
 * rendezvous protocols): piece k stands for the sizes nearest piece_bytes[k] (from the
 * geometric mean with the previous piece's size to the one with the next; piece 0 holds
 * below piece 1's size).
 * jt_dbcast_init fits it to the platform by probes (cfg.probe); docs/dbcast.md says how. */
#define JT_DBCAST_MODEL_PIECES 12
typedef struct {
    double latency;        /* s, > 0: of the largest messages (the last piece) */
    double overhead;       /* s per message injected, > 0 */
    double bandwidth;      /* bytes/s per link, > 0: of the largest messages */
    double forward_delay;  /* s per forwarding hop, >= 0 */
    double duplex;         /* 0 (full duplex) .. 1 (a link shared by both directions) */
    int npieces;           /* 0..JT_DBCAST_MODEL_PIECES; 0: latency, bandwidth at all sizes */
    size_t piece_bytes[JT_DBCAST_MODEL_PIECES];  /* ascending, piece_bytes[0] = 0 */
    double piece_latency[JT_DBCAST_MODEL_PIECES];
    double piece_bandwidth[JT_DBCAST_MODEL_PIECES];
    int fitted;            /* set by the probe: 1 fitted at init, 0 given */
    size_t inline_bytes;   /* payloads up to this size travel in the header message, whose
                              bytes the cost then counts, jt_dbcast_hdr_est (jt_dbcast_init sets
                              it from cfg.inline_bytes; default 8192) */
} jt_dbcast_model;

void jt_dbcast_model_default(jt_dbcast_model *m);

typedef struct {
    jt_dbcast_routing routing;       /* default JT_ROUTE_AUTO */
    size_t segment_bytes;            /* pipelined routings; 0 = automatic (default) */
    size_t inline_bytes;             /* payloads up to this size travel inside the header
                                        message (one message per hop); default 8192 */
    jt_dbcast_progress_mode progress;/* default JT_PROGRESS_AUTO */
    int quiet;                       /* 1: do not print error messages to stderr */
    jt_dbcast_wait_mode wait;        /* default JT_WAIT_AUTO */
    jt_dbcast_model model;           /* of the automatic routing; default jt_dbcast_model_default */
    int probe;                       /* 1 (default): jt_dbcast_init measures the platform
                                        (a few ping-pongs between two ranks) and fits model
                                        to it; 0: use model as given */
} jt_dbcast_cfg;

/* Wildcards for jt_dbcast_recv. */
#define JT_DBCAST_ANY_SOURCE (-1)
#define JT_DBCAST_ANY_TAG    (-1)

/* Return codes (0 = success): all that the library returns.  A failure of the machine inside
 * the library (out of memory, a failed MPI call, a corrupt message from a peer) is not returned: it prints one
 * line on stderr and aborts the job (MPI_Abort) with exit status 1, the failure status, as an
 * MPI error does under MPI's default handler (MPI_ERRORS_ARE_FATAL).  Codes -3 and -4 are no
 * longer used (they were an MPI failure and out of memory, never returned). */
#define JT_DBCAST_OK        0
#define JT_DBCAST_EINVAL   (-1)  /* bad argument (message printed unless cfg.quiet) */
#define JT_DBCAST_ETRUNC   (-2)  /* incoming broadcast larger than the receive buffer */
#define JT_DBCAST_ESTATE   (-5)  /* e.g. finalize with requests still pending */

typedef struct jt_dbcast_ctx jt_dbcast_ctx;
typedef struct jt_dbcast_req jt_dbcast_req;

typedef struct {
    int source;                 /* original root of the broadcast (rank in the ctx comm) */
    int tag;                    /* user tag */
    size_t bytes;               /* size of the broadcast data */
    int error;                  /* JT_DBCAST_OK or JT_DBCAST_ETRUNC */
    jt_dbcast_routing routing;  /* routing the root used (resolved, never AUTO) */
} jt_dbcast_status;

typedef struct {
    uint64_t sent_roots;        /* broadcasts started here as root */
    uint64_t headers_received;  /* broadcast messages received (one per broadcast) */
    uint64_t forwarded_msgs;    /* header messages forwarded to children */
    uint64_t forwarded_bytes;   /* payload bytes forwarded */
    uint64_t unexpected;        /* arrived before a matching receive was posted */
    uint64_t reordered;         /* arrived before an earlier broadcast of the same root */
} jt_dbcast_stats;

void jt_dbcast_cfg_default(jt_dbcast_cfg *cfg);

/* Collective over comm. Returns NULL (with a message on stderr) on bad cfg or
 * if JT_PROGRESS_THREAD is requested without MPI_THREAD_MULTIPLE. cfg may be NULL. */
jt_dbcast_ctx *jt_dbcast_init(MPI_Comm comm, const jt_dbcast_cfg *cfg);

/* Collective. Call after every broadcast has been received (each matching receive
 * completed) and every request waited for; drains forwarding, then frees. Reports
 * (and drops) broadcasts that arrived and were never received. */
int jt_dbcast_finalize(jt_dbcast_ctx *ctx);

/* Root side: start a broadcast of bytes to recipients (ranks of the ctx comm, distinct,
 * not the caller), listed most urgent first: whatever the routing, the tree reaches them in
 * that order as far as its shape allows. tag >= 0. The request completes when buf may be
 * reused. */
int jt_dbcast_send(jt_dbcast_ctx *ctx, const void *buf, size_t bytes, int tag,
                   const int *recipients, int nrecipients, jt_dbcast_req **req);
/* Same with a routing for this message only (JT_ROUTE_AUTO = automatic). */
int jt_dbcast_send_routed(jt_dbcast_ctx *ctx, const void *buf, size_t bytes, int tag,
                          const int *recipients, int nrecipients,
                          jt_dbcast_routing routing, jt_dbcast_req **req);

/* Receiver side: an ordinary receive of up to bytes, from source (the original root,
 * or JT_DBCAST_ANY_SOURCE) with tag (or JT_DBCAST_ANY_TAG). Completes when the data is
 * in buf AND this rank's forwarding of the broadcast has completed (whether it reads buf
 * or an internal copy), so that buf may be modified and, in poll mode, the rank owes no
 * forwarding of it any more (docs/dbcast.md, "Progress"). */
int jt_dbcast_recv(jt_dbcast_ctx *ctx, void *buf, size_t bytes, int source, int tag,
                   jt_dbcast_req **req);

/* *flag = 1 once complete; then *req is freed and set to NULL; status may be NULL.
 * Returns the request's error (JT_DBCAST_ETRUNC) or JT_DBCAST_OK. */
int jt_dbcast_test(jt_dbcast_ctx *ctx, jt_dbcast_req **req, int *flag, jt_dbcast_status *status);
int jt_dbcast_wait(jt_dbcast_ctx *ctx, jt_dbcast_req **req, jt_dbcast_status *status);
/* Receive side only: *flag = 1 once the data is in buf (read-only: forwards may still be
 * reading it). Does not free the request. */
int jt_dbcast_test_arrived(jt_dbcast_ctx *ctx, jt_dbcast_req *req, int *flag);
/* Receive side only: returns once the data is in buf (as test_arrived); does not free the
 * request. A root's request: once complete. */
int jt_dbcast_wait_arrived(jt_dbcast_ctx *ctx, jt_dbcast_req *req);

/* Thread-free progress: call from the runtime's scheduling loop. Returns the number of
 * events handled (>= 0), or a negative error. Harmless in thread mode. In poll mode a
 * rank must keep driving the engine (this, test or wait) from a root's send until it has
 * completed its receive of that broadcast, even before posting that receive: it may
 * have to forward the broadcast; an MPI call (MPI_Barrier...) does not drive it. */
int jt_dbcast_progress(jt_dbcast_ctx *ctx);

jt_dbcast_progress_mode jt_dbcast_progress_mode_used(const jt_dbcast_ctx *ctx);
/* The cost model in use (fitted at init unless cfg.probe was 0); the same on every rank. */
void jt_dbcast_get_model(const jt_dbcast_ctx *ctx, jt_dbcast_model *model);
void jt_dbcast_get_stats(jt_dbcast_ctx *ctx, jt_dbcast_stats *stats);
const char *jt_dbcast_strerror(int err);

/* "auto", "flat", "binomial", "chain", "pipeline-chain", "pipeline-tree", "two-tree",
 * "knomial-4", "knomial-8", "knomial-16", "scatter-allgather" */
const char *jt_dbcast_route_name(jt_dbcast_routing r);
int jt_dbcast_route_parse(const char *name, jt_dbcast_routing *out); /* 0 ok, -1 unknown */

#ifdef __cplusplus
}
#endif
#endif
