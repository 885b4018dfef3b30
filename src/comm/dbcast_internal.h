/*
 * jt_dbcast internals, shared by the files of the dynamic broadcast and by no one else
 * (the public API is include/jostle/dbcast.h; docs/dbcast.md has the design).
 *
 * Wire protocol on a private duplicate of the user's communicator:
 *   - tag 1 (TAG_HDR): one header message per broadcast per hop, variable length, at
 *     most hdr_cap bytes (the hops of a whole communicator + MAX_INLINE), received by a
 *     receive from any source that is always posted. Small payloads travel inline after
 *     the header (one message per hop).
 *   - tags >= 2: "stream tags". For a non-inline broadcast the header names a stream
 *     tag, unique per (sender, receiver) link among recent streams, and the payload
 *     follows as nseg segment messages on that tag. The receiver posts the segment
 *     receives straight away (into the application buffer when a matching receive is
 *     already posted, else into an internal buffer), and forwards segment k to its
 *     children as soon as segment k completes.
 * Ordering: the root numbers its broadcasts per recipient (seq, carried for every hop
 * of the sub-list). A receiver makes broadcasts of one origin matchable in that order,
 * whatever route they took, so matching obeys MPI's non-overtaking rule per origin.
 *
 * All state lives in the context; one mutex serializes the entry points and the
 * progress engine (the progress thread, if any, takes it too). The functions of the
 * sending, receiving and progress files declared here run with that mutex held;
 * jt_dbcast_thread_start and jt_dbcast_thread_stop without it.
 *
 * The files:
 *   dbcast.c           the context: configuration, init, finalize, errors, statistics
 *   dbcast_send.c      the root's send and the segment send queue that forwarders share
 *   dbcast_recv.c      incoming broadcasts: header, forwarding set-up, per-origin order,
 *                      matching with the application's receives
 *   dbcast_sag.c       scatter-allgather: byte ranges joined from several senders, the sends
 *                      each node posts when their range is complete
 *   dbcast_progress.c  the progress engine (MPI requests and what their completion does),
 *                      the progress thread, and test / wait in thread and poll modes
 *   dbcast_probe.c     the probe at init that fits the cost model to the platform
 *   dbcast_header.c    the wire header (pure)
 *   dbcast_route.c     the routings (pure), dispatching to route_<name>.c, one per routing
 *   dbcast_model.c     the cost model, segment size and automatic choice (pure)
 */
#ifndef JT_COMM_DBCAST_INTERNAL_H
#define JT_COMM_DBCAST_INTERNAL_H

#include "comm/dbcast_header.h"
#include "comm/dbcast_route.h"
#include "jostle/dbcast.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Names below without the jt_ prefix are macros and types private to src/comm/dbcast*.c. */
#define TAG_HDR 1
#define TAG_STREAM_MIN 2
#define MAX_INLINE ((size_t)1 << 20)

/* What an outstanding MPI request of the engine is for. */
enum { OP_HDR_SEND, OP_SEG_SEND_ROOT, OP_SEG_SEND_FWD, OP_SEG_RECV, OP_HDR_RECV, OP_BARRIER,
       OP_SAG_SEND };

typedef struct jt_dbcast_inb jt_dbcast_inb;

/* A node's part in a scatter-allgather broadcast (dbcast_sag.c): its plan (place, view:
 * the ranks of the nodes it sends to and those its scatter children will) and its sends,
 * posted one at a time in order, each when its byte range is complete at this node. */
typedef struct {
    int nodes, place;
    jt_dbcast_hop *hops;            /* the view's ranks and seqs (the root: its list) */
    jt_route_span span[JT_ROUTE_SAG_MAX_SPANS];
    int nspans;
    jt_route_sag_send send[JT_ROUTE_SAG_MAX_SENDS];
    int nsends, next, inflight;
    const unsigned char *data;      /* the message (all of it, as far as it has arrived) */
    jt_dbcast_hdr base;             /* origin, tag, total, id */
    jt_dbcast_inb *in;              /* a recipient's broadcast, or */
    jt_dbcast_req *req;             /* the root's request */
} jt_dbcast_sag;

/* The segment sends of one broadcast from one rank to its children, in the order
 * (segment 0: child 0, child 1, ...; segment 1: ...) with at most `window` in flight.
 * Posting every segment at once would make them share the link as parallel flows (a
 * fluid network model such as SimGrid's, or a NIC interleaving its queues): segment 0
 * would arrive no sooner than the last, which defeats pipelining, and a tree's first
 * child (the largest subtree) would wait for its siblings' data too.  Window: 1 for a
 * whole message per child of a tree (children served in order, as MPI's trees do), 2 per
 * child for the pipelined routings (the next segment's latency hides behind this one), and
 * every child at once for flat: a linear broadcast posts all its sends (Open MPI's basic
 * linear bcast, StarPU-MPI's sends of one data), the baseline dynamic broadcasts replace.
 * An inline payload goes through the same queue, as one message per child (header and
 * payload): a binomial tree's node then serves its children one after the other, as
 * MPI's binomial bcast does, instead of sharing its link among ceil(log2 n) flows. */
typedef struct {
    const unsigned char *data;
    int nkids;
    int *dest, *tag;       /* per child */
    unsigned char **msg;   /* inline payload: per child, its header + payload message (sent
                              on TAG_HDR through the window like a segment), else NULL */
    size_t *msglen;
    uint64_t next;         /* queue position: segment next / nkids, child next % nkids */
    int inflight, window;
} jt_dbcast_sendq;

/* One stream of a root's broadcast: its byte range (h) and the sends to its children. */
typedef struct {
    jt_dbcast_hdr h;
    jt_dbcast_sendq q;
    jt_dbcast_req *req;
} jt_dbcast_out;

struct jt_dbcast_req {
    int is_recv;
    int done;
    int arrived;
    int error;
    long pending;          /* root: segment sends still reading buf */
    void *buf;
    size_t bytes;
    int source, tag;       /* receive: what to match */
    jt_dbcast_inb *inb;    /* receive: bound incoming broadcast */
    jt_dbcast_out out[JT_DBCAST_MAX_STREAMS]; /* root: its streams (two for the two-tree) */
    int nout;
    jt_dbcast_sag *sag;    /* root of a scatter-allgather */
    jt_dbcast_status st;
    jt_dbcast_req *next;   /* posted-receive queue */
};

/* One stream of an incoming broadcast: a byte range of the data (all of it, or a half for
 * the two-tree), received from one parent in segments and forwarded to this rank's
 * children in that stream's tree. */
typedef struct {
    jt_dbcast_hdr h;               /* this stream's header as received */
    int from;                      /* immediate sender (stream source) */
    jt_dbcast_hop *hops;           /* sub-list this rank forwards to */
    jt_dbcast_route_child *kids;
    int nkids;
    unsigned char *seg_done;       /* [nseg] arrival flags */
    uint32_t arrived;              /* segments arrived */
    uint32_t next_fwd;             /* segments are forwarded strictly in order */
    jt_dbcast_sendq q;             /* forwarding sends still to post (q.data: the range) */
    jt_dbcast_inb *in;
} jt_dbcast_part;

/* One broadcast as seen by a receiver (and forwarder): its streams assembled into one
 * buffer, matched with one receive. */
struct jt_dbcast_inb {
    jt_dbcast_hdr h;                         /* of the first stream that arrived */
    jt_dbcast_part part[JT_DBCAST_MAX_STREAMS];
    int nparts;                              /* streams arrived (of h.streams) */
    uint64_t nseg, arrived;                  /* segments of the arrived streams; arrived */
    unsigned char *data;           /* where the payload is */
    void *internal;                /* owned block (NULL when data is the user buffer) */
    int direct;                    /* data is the bound receive's buffer */
    long fwd_pending;              /* forwarding sends reading data (queued or posted) */
    int delivered;                 /* bound receive has been given the data */
    jt_dbcast_req *req;            /* bound receive (until it completes) */
    jt_dbcast_inb *next;           /* hold list or unexpected queue */
    jt_dbcast_inb *next_partial;   /* ctx->partial: streams still to come */
    /* scatter-allgather: the byte ranges arrived (disjoint, sorted, merged: [cov[2i],
     * cov[2i+1])), their total, and this node's plan once its scatter message came */
    int is_sag;
    uint64_t *cov;
    int ncov, capcov;
    uint64_t covered;
    jt_dbcast_sag *sag;
};

typedef struct {
    int kind;
    void *owner;
    uint32_t seg;
    void *freebuf;
} jt_dbcast_op;

typedef struct {
    jt_dbcast_op op;
    MPI_Status st;   /* copied: handling an op may grow (move) the status array */
} jt_dbcast_done;

struct jt_dbcast_ctx {
    MPI_Comm comm;
    int rank, size;
    long long stream_span;   /* number of stream tags: [TAG_STREAM_MIN, tag_ub] */
    jt_dbcast_cfg cfg;
    jt_dbcast_model model;
    jt_dbcast_progress_mode mode;

    pthread_mutex_t lock;
    pthread_t thread;
    int thread_started;
    atomic_int stop;

    MPI_Request *reqs;       /* outstanding MPI requests, parallel to ops */
    jt_dbcast_op *ops;
    int *idx;
    MPI_Status *sts;         /* Testsome statuses (a real array: some MPI headers warn
                                about MPI_STATUSES_IGNORE under -Wstringop-overflow) */
    int nops, capops;
    jt_dbcast_done *done;            /* completed ops copied out of ops before handling */
    int capdone;

    /* Headers arrive in one receive from any source, always posted, so that a waiting
     * rank can block in MPI_Waitany on everything it expects: spinning on MPI_Iprobe
     * notices arrivals a polling period late, and SimGrid charges each failed probe or
     * test more than the last (smpi/grow-injected-times). */
    unsigned char *hdr_buf;
    size_t hdr_cap;
    int hdr_open;            /* the header receive is posted (until finalize closes it) */
    int headers_seen;        /* header receives completed (progress drains headers) */
    int barrier_done;        /* finalize */
    int block;               /* waits block in MPI_Waitany (cfg.wait resolved) */

    uint32_t *send_seq;      /* [size] as origin: broadcasts sent to each rank */
    uint32_t *expect_seq;    /* [size] as receiver: next seq expected from each origin */
    uint64_t *stream_next;   /* [size] per destination: stream tag counter */
    uint32_t *mark;          /* [size] duplicate detection */
    uint32_t mark_gen;
    uint64_t next_id;

    jt_dbcast_inb *hold;                     /* arrived ahead of an earlier one of its origin */
    jt_dbcast_inb *unexp_head, *unexp_tail;  /* matchable, not yet matched (FIFO) */
    jt_dbcast_req *posted_head, *posted_tail;
    jt_dbcast_inb *partial;                  /* broadcasts with streams still to come */

    long live_reqs;
    long live_inb;
    jt_dbcast_stats stats;
};

/* ------------------------------------------------------------------ dbcast.c */

/* Prints "jostle: dbcast: [rank R: ]fn: message" unless quiet; returns code. */
int jt_dbcast_complain(const jt_dbcast_ctx *ctx, int quiet, int code, const char *fn,
                       const char *fmt, ...);
#define BAD(ctx, fn, ...) \
    jt_dbcast_complain((ctx), (ctx)->cfg.quiet, JT_DBCAST_EINVAL, (fn), __VA_ARGS__)
/* What every call taking a buffer and returning a request checks first. */
int jt_dbcast_check_call(jt_dbcast_ctx *ctx, const char *fn, const void *buf, size_t bytes,
                         jt_dbcast_req **reqp);
/* Prints and aborts the job: for what the layer cannot recover from (MPI, memory). */
void jt_dbcast_fatal(jt_dbcast_ctx *ctx, const char *fmt, ...);
void *jt_dbcast_xmalloc(jt_dbcast_ctx *ctx, size_t n);
void *jt_dbcast_xcalloc(jt_dbcast_ctx *ctx, size_t n, size_t sz);

#define MPICHECK(ctx, call)                                                              \
    do {                                                                                 \
        int rc_ = (call);                                                                \
        if (rc_ != MPI_SUCCESS)                                                          \
            jt_dbcast_fatal((ctx), "%s failed (MPI error %d) at %s:%d", #call, rc_,       \
                            __FILE__, __LINE__);                                         \
    } while (0)

/* Bytes of segment k of a stream (the last one may be short). */
static inline size_t jt_dbcast_seg_len(const jt_dbcast_hdr *h, uint32_t k)
{
    uint64_t off = (uint64_t)k * h->seg_bytes;
    uint64_t left = h->range_bytes - off;
    return (size_t)(left < h->seg_bytes ? left : h->seg_bytes);
}

/* Built with SimGrid's smpicc (its mpi.h defines SMPI_H). */
static inline int jt_dbcast_under_smpi(void)
{
#ifdef SMPI_H
    return 1;
#else
    return 0;
#endif
}

/* ------------------------------------------------------------- dbcast_send.c */

/* The next stream tag of the link to dest. */
int jt_dbcast_stream_tag(jt_dbcast_ctx *ctx, int dest);
/* Encodes the header for one child (and the inline payload) into q (child c) and posts it
 * at once, or, inline, leaves it in q->msg[c] for jt_dbcast_sendq_pump (the window). */
void jt_dbcast_send_header(jt_dbcast_ctx *ctx, const jt_dbcast_hdr *base,
                           const jt_dbcast_hop *hops, const jt_dbcast_route_child *kid,
                           jt_dbcast_sendq *q, int c, const void *payload);
/* Frees what sendq_init allocated (and unsent inline messages). */
void jt_dbcast_sendq_free(jt_dbcast_sendq *q);
void jt_dbcast_sendq_init(jt_dbcast_ctx *ctx, jt_dbcast_sendq *q, const jt_dbcast_hdr *h,
                          const unsigned char *data, int nkids);
/* Posts queued segment sends while the window allows; segments below avail exist (an
 * inline queue: its one message per child, whatever avail). */
void jt_dbcast_sendq_pump(jt_dbcast_ctx *ctx, jt_dbcast_sendq *q, const jt_dbcast_hdr *h,
                          uint32_t avail, int kind, void *owner);

/* ------------------------------------------------------------ dbcast_probe.c */

/* Collective over ctx->comm, before any broadcast: measures the platform between two ranks
 * and fits ctx->model (the same on every rank). */
void jt_dbcast_probe_fit(jt_dbcast_ctx *ctx);

/* ------------------------------------------------------------- dbcast_recv.c */

/* (Re)posts the one receive of header messages from any source. */
void jt_dbcast_header_recv_post(jt_dbcast_ctx *ctx);
/* A header message (msg, owned from now on) arrived from rank from: forwards it, posts
 * the segment receives, and matches or holds the broadcast. */
void jt_dbcast_header_arrived(jt_dbcast_ctx *ctx, unsigned char *msg, size_t len, int from);
/* The hops of a message (decoded into h) from rank from, each checked (a rank of the
 * communicator, not this one, not the origin: fatal otherwise); malloc'd. */
jt_dbcast_hop *jt_dbcast_take_hops(jt_dbcast_ctx *ctx, const unsigned char *msg,
                                   const jt_dbcast_hdr *h, int from);
/* Advances an incoming broadcast after any event (delivers, completes, frees). */
void jt_dbcast_inb_check(jt_dbcast_ctx *ctx, jt_dbcast_inb *in);
void jt_dbcast_inb_free(jt_dbcast_ctx *ctx, jt_dbcast_inb *in);

/* -------------------------------------------------------------- dbcast_sag.c */

/* The broadcast (origin, id) of a scatter-allgather message, if one of its messages came. */
jt_dbcast_inb *jt_dbcast_sag_find(jt_dbcast_ctx *ctx, const jt_dbcast_hdr *h);
/* A message of in (header h, message msg, from rank from): its range into the data, its plan
 * if it carries one, then the sends that became possible. */
void jt_dbcast_sag_piece(jt_dbcast_ctx *ctx, jt_dbcast_inb *in, const unsigned char *msg,
                         const jt_dbcast_hdr *h, int from);
/* Every byte and the plan are in. */
int jt_dbcast_sag_all(const jt_dbcast_inb *in);
/* The root's side: plans and sends for recipients[0..n-1] (r's request, buf of bytes). */
void jt_dbcast_sag_root(jt_dbcast_ctx *ctx, jt_dbcast_req *r, const void *buf, size_t bytes,
                        int tag, const int *recipients, int n);
/* A send of s completed. */
void jt_dbcast_sag_sent(jt_dbcast_ctx *ctx, jt_dbcast_sag *s);
void jt_dbcast_sag_free(jt_dbcast_sag *s);

/* --------------------------------------------------------- dbcast_progress.c */

void jt_dbcast_op_push(jt_dbcast_ctx *ctx, MPI_Request r, int kind, void *owner, uint32_t seg,
                       void *freebuf);
/* Non-blocking: handles whatever completed. Returns the number of events. */
int jt_dbcast_progress_locked(jt_dbcast_ctx *ctx);
/* Blocking: waits in MPI_Waitany for one request and handles it. */
int jt_dbcast_progress_block(jt_dbcast_ctx *ctx);
/* Drives the engine until *flag (a field of a request or of the context) is set. */
void jt_dbcast_wait_flag_locked(jt_dbcast_ctx *ctx, const int *flag);
/* The progress thread of JT_PROGRESS_THREAD (called without the mutex). */
void jt_dbcast_thread_start(jt_dbcast_ctx *ctx);
void jt_dbcast_thread_stop(jt_dbcast_ctx *ctx);

#endif
