/*
 * jt_dbcast: dynamic broadcasts in the communication layer (source routing).
 * See include/jostle/dbcast.h for the API and docs/dbcast.md for the design.
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
 * progress engine (the progress thread, if any, takes it too).
 */
#define _POSIX_C_SOURCE 200809L
#include "jostle/dbcast.h"
#include "comm/dbcast_header.h"
#include "comm/dbcast_route.h"

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TAG_HDR 1
#define TAG_STREAM_MIN 2
#define MAX_INLINE ((size_t)1 << 20)
#define DEFAULT_INLINE ((size_t)8192)
#define HEADERS_PER_PROGRESS 64

enum { OP_HDR_SEND, OP_SEG_SEND_ROOT, OP_SEG_SEND_FWD, OP_SEG_RECV, OP_HDR_RECV, OP_BARRIER };

typedef struct inb inb_t;

/* The segment sends of one broadcast from one rank to its children, in the order
 * (segment 0: child 0, child 1, ...; segment 1: ...) with at most `window` in flight.
 * Posting every segment at once would make them share the link as parallel flows (a
 * fluid network model such as SimGrid's, or a NIC interleaving its queues): segment 0
 * would arrive no sooner than the last, which defeats pipelining, and a tree's first
 * child (the largest subtree) would wait for its siblings' data too.  Window: 1 for a
 * whole message per child of a tree (children served in order, as MPI's trees do), 2 per
 * child for the pipelined routings (the next segment's latency hides behind this one), and
 * every child at once for flat: a linear broadcast posts all its sends (Open MPI's basic
 * linear bcast, StarPU-MPI's sends of one data), the baseline dynamic broadcasts replace. */
typedef struct {
    const unsigned char *data;
    int nkids;
    int *dest, *tag;       /* per child */
    uint64_t next;         /* queue position: segment next / nkids, child next % nkids */
    int inflight, window;
} sendq_t;

struct jt_dbcast_req {
    int is_recv;
    int done;
    int arrived;
    int error;
    long pending;          /* root: segment sends still reading buf */
    void *buf;
    size_t bytes;
    int source, tag;       /* receive: what to match */
    inb_t *inb;            /* receive: bound incoming broadcast */
    jt_dbcast_hdr h;       /* root: what its segment sends cut buf into */
    sendq_t q;             /* root: segment sends still to post */
    jt_dbcast_status st;
    jt_dbcast_req *next;   /* posted-receive queue */
};

/* One broadcast as seen by a receiver (and forwarder). */
struct inb {
    jt_dbcast_hdr h;
    int from;                      /* immediate sender (stream source) */
    jt_dbcast_hop *hops;           /* sub-list this rank forwards to */
    jt_dbcast_route_child *kids;
    int nkids;
    int *kid_tag;                  /* stream tag per child (non-inline) */
    unsigned char *data;           /* where the payload is */
    void *internal;                /* owned block (NULL when data is the user buffer) */
    int direct;                    /* data is the bound receive's buffer */
    uint32_t arrived;              /* segments arrived */
    uint32_t next_fwd;             /* segments are forwarded strictly in order */
    unsigned char *seg_done;       /* [nseg] arrival flags */
    long fwd_pending;              /* forwarding sends reading data (queued or posted) */
    sendq_t q;                     /* forwarding sends still to post */
    int delivered;                 /* bound receive has been given the data */
    jt_dbcast_req *req;            /* bound receive (until it completes) */
    inb_t *next;                   /* hold list or unexpected queue */
};

typedef struct {
    int kind;
    void *owner;
    uint32_t seg;
    void *freebuf;
} op_t;

typedef struct {
    op_t op;
    MPI_Status st;   /* copied: handling an op may grow (move) the status array */
} done_t;

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
    op_t *ops;
    int *idx;
    MPI_Status *sts;         /* Testsome statuses (a real array: some MPI headers warn
                                about MPI_STATUSES_IGNORE under -Wstringop-overflow) */
    int nops, capops;
    done_t *done;            /* completed ops copied out of ops before handling */
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

    inb_t *hold;                         /* arrived ahead of an earlier one of its origin */
    inb_t *unexp_head, *unexp_tail;      /* matchable, not yet matched (FIFO) */
    jt_dbcast_req *posted_head, *posted_tail;

    long live_reqs;
    long live_inb;
    jt_dbcast_stats stats;
};

/* ------------------------------------------------------------------ errors */

static int complain(const jt_dbcast_ctx *ctx, int quiet, int code, const char *fn,
                    const char *fmt, ...)
{
    if (!quiet) {
        va_list ap;
        va_start(ap, fmt);
        if (ctx)
            fprintf(stderr, "jostle: dbcast: rank %d: %s: ", ctx->rank, fn);
        else
            fprintf(stderr, "jostle: dbcast: %s: ", fn);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
    }
    return code;
}

#define BAD(ctx, fn, ...) complain((ctx), (ctx)->cfg.quiet, JT_DBCAST_EINVAL, (fn), __VA_ARGS__)

/* What every call taking a buffer and returning a request checks first. */
static int check_call(jt_dbcast_ctx *ctx, const char *fn, const void *buf, size_t bytes,
                      jt_dbcast_req **reqp)
{
    if (!ctx)
        return complain(NULL, 0, JT_DBCAST_EINVAL, fn, "context is NULL");
    if (!reqp)
        return BAD(ctx, fn, "request pointer is NULL");
    *reqp = NULL;
    if (!buf && bytes)
        return BAD(ctx, fn, "buffer is NULL for %zu bytes", bytes);
    return JT_DBCAST_OK;
}

static void fatal(jt_dbcast_ctx *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "jostle: dbcast: rank %d: fatal: ", ctx->rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    MPI_Abort(ctx->comm, 2);
    exit(2);
}

const char *jt_dbcast_strerror(int err)
{
    switch (err) {
    case JT_DBCAST_OK: return "success";
    case JT_DBCAST_EINVAL: return "invalid argument";
    case JT_DBCAST_ETRUNC: return "broadcast larger than the receive buffer";
    case JT_DBCAST_EMPI: return "MPI call failed";
    case JT_DBCAST_ENOMEM: return "out of memory";
    case JT_DBCAST_ESTATE: return "requests still pending";
    default: return "unknown error";
    }
}

static void *xmalloc(jt_dbcast_ctx *ctx, size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        fatal(ctx, "out of memory (%zu bytes)", n);
    return p;
}

static void *xcalloc(jt_dbcast_ctx *ctx, size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz ? sz : 1);
    if (!p)
        fatal(ctx, "out of memory (%zu x %zu bytes)", n, sz);
    return p;
}

#define MPICHECK(ctx, call)                                                        \
    do {                                                                           \
        int rc_ = (call);                                                          \
        if (rc_ != MPI_SUCCESS)                                                    \
            fatal((ctx), "%s failed (MPI error %d) at %s:%d", #call, rc_, __FILE__, \
                  __LINE__);                                                       \
    } while (0)

/* ------------------------------------------------------------ op registry */

static void push_op(jt_dbcast_ctx *ctx, MPI_Request r, int kind, void *owner, uint32_t seg,
                    void *freebuf)
{
    if (ctx->nops == ctx->capops) {
        int cap = ctx->capops ? 2 * ctx->capops : 64;
        MPI_Request *nr = realloc(ctx->reqs, (size_t)cap * sizeof *nr);
        op_t *no = realloc(ctx->ops, (size_t)cap * sizeof *no);
        int *ni = realloc(ctx->idx, (size_t)cap * sizeof *ni);
        MPI_Status *ns = realloc(ctx->sts, (size_t)cap * sizeof *ns);
        if (!nr || !no || !ni || !ns)
            fatal(ctx, "out of memory (request table of %d)", cap);
        ctx->sts = ns;
        ctx->reqs = nr;
        ctx->ops = no;
        ctx->idx = ni;
        ctx->capops = cap;
    }
    ctx->reqs[ctx->nops] = r;
    ctx->ops[ctx->nops] = (op_t){kind, owner, seg, freebuf};
    ctx->nops++;
}

static int next_stream_tag(jt_dbcast_ctx *ctx, int dest)
{
    uint64_t k = ctx->stream_next[dest]++;
    return (int)(TAG_STREAM_MIN + (long long)(k % (uint64_t)ctx->stream_span));
}

static size_t seg_len(const jt_dbcast_hdr *h, uint32_t k)
{
    uint64_t off = (uint64_t)k * h->seg_bytes;
    uint64_t left = h->total_bytes - off;
    return (size_t)(left < h->seg_bytes ? left : h->seg_bytes);
}

/* ------------------------------------------------------------- matching */

static int req_matches(const jt_dbcast_req *r, const inb_t *in)
{
    return (r->source == JT_DBCAST_ANY_SOURCE || r->source == in->h.origin) &&
           (r->tag == JT_DBCAST_ANY_TAG || r->tag == in->h.tag);
}

static jt_dbcast_req *take_posted(jt_dbcast_ctx *ctx, const inb_t *in)
{
    jt_dbcast_req *prev = NULL;
    for (jt_dbcast_req *r = ctx->posted_head; r; prev = r, r = r->next) {
        if (req_matches(r, in)) {
            if (prev)
                prev->next = r->next;
            else
                ctx->posted_head = r->next;
            if (ctx->posted_tail == r)
                ctx->posted_tail = prev;
            r->next = NULL;
            return r;
        }
    }
    return NULL;
}

static void bind_recv(inb_t *in, jt_dbcast_req *r)
{
    in->req = r;
    r->inb = in;
    r->st.source = in->h.origin;
    r->st.tag = in->h.tag;
    r->st.bytes = (size_t)in->h.total_bytes;
    r->st.routing = (jt_dbcast_routing)in->h.routing;
    if (in->h.total_bytes > r->bytes) {
        r->error = JT_DBCAST_ETRUNC;
        r->st.error = JT_DBCAST_ETRUNC;
    }
}

static void free_inb(jt_dbcast_ctx *ctx, inb_t *in)
{
    free(in->internal);
    free(in->hops);
    free(in->kids);
    free(in->kid_tag);
    free(in->seg_done);
    free(in->q.dest);
    free(in->q.tag);
    free(in);
    ctx->live_inb--;
}

/* Advance the state of an incoming broadcast after any event. */
static void inb_check(jt_dbcast_ctx *ctx, inb_t *in)
{
    int all = in->arrived == in->h.nseg;
    jt_dbcast_req *r = in->req;
    if (all && r && !in->delivered) {
        if (!r->error && !in->direct && in->h.total_bytes)
            memcpy(r->buf, in->data, (size_t)in->h.total_bytes);
        r->arrived = 1;
        in->delivered = 1;
    }
    /* Complete only once this rank's forwarding of the broadcast is done too, even when
     * the data sits in an internal buffer (unexpected or truncated): the segment sends
     * beyond the sending window are posted by this engine only, so a receive completed
     * earlier would let a poll-mode application leave for an MPI call that does not
     * drive it (MPI_Barrier, MPI_Comm_dup) while its children starve. With this, a rank
     * whose requests have all completed owes nothing that needs its engine: what is left
     * are posted MPI sends, which MPI progresses by itself. test_arrived says earlier
     * when the data is readable. */
    if (in->delivered && r && in->fwd_pending == 0) {
        r->done = 1;
        r->inb = NULL;
        in->req = NULL;
    }
    if (all && in->delivered && !in->req && in->fwd_pending == 0)
        free_inb(ctx, in);
}

static void unexp_append(jt_dbcast_ctx *ctx, inb_t *in)
{
    in->next = NULL;
    if (ctx->unexp_tail)
        ctx->unexp_tail->next = in;
    else
        ctx->unexp_head = in;
    ctx->unexp_tail = in;
    ctx->stats.unexpected++;
}

/* An incoming broadcast becomes matchable (in per-origin order). */
static void make_matchable(jt_dbcast_ctx *ctx, inb_t *in)
{
    ctx->expect_seq[in->h.origin]++;
    if (!in->req) {
        jt_dbcast_req *r = take_posted(ctx, in);
        if (r)
            bind_recv(in, r);
        else
            unexp_append(ctx, in);
    }
}

/* Release broadcasts of origin that were held behind a missing earlier one. */
static void release_held(jt_dbcast_ctx *ctx, int origin)
{
    int found = 1;
    while (found) {
        found = 0;
        inb_t *prev = NULL;
        for (inb_t *in = ctx->hold; in; prev = in, in = in->next) {
            if (in->h.origin == origin && in->h.seq == ctx->expect_seq[origin]) {
                if (prev)
                    prev->next = in->next;
                else
                    ctx->hold = in->next;
                in->next = NULL;
                make_matchable(ctx, in);
                inb_check(ctx, in);
                found = 1;
                break;
            }
        }
    }
}

/* ------------------------------------------------------------ sending */

/* Encodes the header for one child (and the inline payload) and posts it. */
static void send_header(jt_dbcast_ctx *ctx, const jt_dbcast_hdr *base, const jt_dbcast_hop *hops,
                        const jt_dbcast_route_child *kid, int stream_tag, const void *payload)
{
    jt_dbcast_hdr h = *base;
    const jt_dbcast_hop *me = &hops[kid->child];
    h.seq = me->seq;
    h.nhops = (uint32_t)kid->sub_len;
    h.stream_tag = (h.flags & JT_DBCAST_HDR_INLINE) ? 0 : stream_tag;
    size_t hl = jt_dbcast_hdr_size(h.nhops);
    size_t pl = (h.flags & JT_DBCAST_HDR_INLINE) ? (size_t)h.total_bytes : 0;
    unsigned char *msg = xmalloc(ctx, hl + pl);
    long rc = jt_dbcast_hdr_encode(&h, hops + kid->sub_off, msg, hl);
    if (rc < 0)
        fatal(ctx, "cannot encode a header: %s", jt_dbcast_hdr_strerror((int)rc));
    if (pl)
        memcpy(msg + hl, payload, pl);
    MPI_Request r;
    MPICHECK(ctx, MPI_Isend(msg, (int)(hl + pl), MPI_BYTE, me->rank, TAG_HDR, ctx->comm, &r));
    push_op(ctx, r, OP_HDR_SEND, NULL, 0, msg);
}

static void send_segment(jt_dbcast_ctx *ctx, const jt_dbcast_hdr *h, const unsigned char *data,
                         uint32_t k, int dest, int stream_tag, int kind, void *owner)
{
    size_t len = seg_len(h, k);
    MPI_Request r;
    MPICHECK(ctx, MPI_Isend(data + (size_t)k * h->seg_bytes, (int)len, MPI_BYTE, dest,
                            stream_tag, ctx->comm, &r));
    push_op(ctx, r, kind, owner, k, NULL);
}

static void sendq_init(jt_dbcast_ctx *ctx, sendq_t *q, const jt_dbcast_hdr *h,
                       const unsigned char *data, int nkids)
{
    q->data = data;
    q->nkids = nkids;
    q->dest = xcalloc(ctx, (size_t)nkids, sizeof *q->dest);
    q->tag = xcalloc(ctx, (size_t)nkids, sizeof *q->tag);
    q->next = 0;
    q->inflight = 0;
    q->window = h->routing == JT_ROUTE_FLAT ? nkids
              : jt_dbcast_route_is_pipelined((jt_dbcast_routing)h->routing) ? 2 * nkids : 1;
}

/* Posts queued segment sends while the window allows; segments below avail exist. */
static void sendq_pump(jt_dbcast_ctx *ctx, sendq_t *q, const jt_dbcast_hdr *h, uint32_t avail,
                       int kind, void *owner)
{
    if (q->nkids <= 0)
        return;
    uint64_t end = (uint64_t)avail * (uint64_t)q->nkids;
    while (q->inflight < q->window && q->next < end) {
        uint32_t k = (uint32_t)(q->next / (uint64_t)q->nkids);
        int c = (int)(q->next % (uint64_t)q->nkids);
        send_segment(ctx, h, q->data, k, q->dest[c], q->tag[c], kind, owner);
        q->next++;
        q->inflight++;
    }
}

/* ------------------------------------------------------------ receiving */

static void handle_header(jt_dbcast_ctx *ctx, unsigned char *msg, size_t len, int from)
{
    jt_dbcast_hdr h;
    int rc = jt_dbcast_hdr_decode(msg, len, &h);
    if (rc)
        fatal(ctx, "malformed broadcast message (%zu bytes) from rank %d: %s", len, from,
              jt_dbcast_hdr_strerror(rc));
    if (h.origin >= ctx->size || h.origin == ctx->rank)
        fatal(ctx, "broadcast message from rank %d names origin %d (communicator of %d)",
              from, (int)h.origin, ctx->size);
    if (h.nhops > (uint32_t)ctx->size)
        fatal(ctx, "broadcast message from rank %d carries %u hops for %d ranks", from,
              (unsigned)h.nhops, ctx->size);
    inb_t *in = xcalloc(ctx, 1, sizeof *in);
    ctx->live_inb++;
    ctx->stats.headers_received++;
    in->h = h;
    in->from = from;
    in->hops = xmalloc(ctx, (size_t)h.nhops * sizeof *in->hops);
    jt_dbcast_hdr_hops(msg, h.nhops, in->hops);
    for (uint32_t i = 0; i < h.nhops; i++) {
        int rk = in->hops[i].rank;
        if (rk < 0 || rk >= ctx->size || rk == ctx->rank || rk == h.origin)
            fatal(ctx, "broadcast message from rank %d: hop %u is rank %d (bad)", from,
                  (unsigned)i, rk);
    }
    int nk = jt_dbcast_route_max_children((jt_dbcast_routing)h.routing, (int)h.nhops);
    in->kids = xmalloc(ctx, (size_t)nk * sizeof *in->kids);
    in->nkids = jt_dbcast_route_children((jt_dbcast_routing)h.routing, (int)h.nhops, in->kids);
    if (in->nkids < 0)
        fatal(ctx, "broadcast message from rank %d: unknown routing %d", from, h.routing);
    in->kid_tag = xcalloc(ctx, (size_t)in->nkids, sizeof *in->kid_tag);

    int matchable = h.seq == ctx->expect_seq[h.origin];
    jt_dbcast_req *r = matchable ? take_posted(ctx, in) : NULL;
    int inl = (h.flags & JT_DBCAST_HDR_INLINE) != 0;

    if (inl) {
        in->internal = msg; /* keep the message: the payload is in it */
        in->data = msg + jt_dbcast_hdr_size(h.nhops);
    } else {
        free(msg);
        if (r && h.total_bytes <= r->bytes) {
            in->data = r->buf;
            in->direct = 1;
        } else {
            in->internal = xmalloc(ctx, (size_t)h.total_bytes);
            in->data = in->internal;
        }
    }
    if (r)
        bind_recv(in, r);

    /* Forward the header at once, before anything else happens to the data. */
    sendq_init(ctx, &in->q, &in->h, in->data, in->nkids);
    for (int c = 0; c < in->nkids; c++) {
        int dest = in->hops[in->kids[c].child].rank;
        in->kid_tag[c] = inl ? 0 : next_stream_tag(ctx, dest);
        in->q.dest[c] = dest;
        in->q.tag[c] = in->kid_tag[c];
        send_header(ctx, &in->h, in->hops, &in->kids[c], in->kid_tag[c], in->data);
        ctx->stats.forwarded_msgs++;
        if (inl)
            ctx->stats.forwarded_bytes += h.total_bytes;
    }
    /* Segment receives, forwarded one by one as they complete. */
    in->seg_done = xcalloc(ctx, h.nseg, 1);
    for (uint32_t k = 0; k < h.nseg; k++) {
        MPI_Request q;
        MPICHECK(ctx, MPI_Irecv(in->data + (size_t)k * h.seg_bytes, (int)seg_len(&h, k), MPI_BYTE,
                                from, h.stream_tag, ctx->comm, &q));
        push_op(ctx, q, OP_SEG_RECV, in, k, NULL);
    }

    if (matchable) {
        make_matchable(ctx, in);
        inb_check(ctx, in);
        release_held(ctx, h.origin);
    } else {
        ctx->stats.reordered++;
        in->next = ctx->hold;
        ctx->hold = in;
    }
}

static void post_header_recv(jt_dbcast_ctx *ctx)
{
    MPI_Request r;
    MPICHECK(ctx, MPI_Irecv(ctx->hdr_buf, (int)ctx->hdr_cap, MPI_BYTE, MPI_ANY_SOURCE, TAG_HDR,
                            ctx->comm, &r));
    push_op(ctx, r, OP_HDR_RECV, NULL, 0, NULL);
    ctx->hdr_open = 1;
}

static void handle_op(jt_dbcast_ctx *ctx, const op_t *op, const MPI_Status *st)
{
    switch (op->kind) {
    case OP_HDR_SEND:
        free(op->freebuf);
        break;
    case OP_HDR_RECV: {
        int count = 0;
        MPICHECK(ctx, MPI_Get_count(st, MPI_BYTE, &count));
        ctx->headers_seen++;
        if (count == 0 && st->MPI_SOURCE == ctx->rank) {
            ctx->hdr_open = 0; /* finalize's empty message to itself: no more headers */
            break;
        }
        /* copied out so that the one large buffer is posted again at once */
        unsigned char *msg = xmalloc(ctx, (size_t)count);
        memcpy(msg, ctx->hdr_buf, (size_t)count);
        post_header_recv(ctx);
        handle_header(ctx, msg, (size_t)count, st->MPI_SOURCE);
        break;
    }
    case OP_BARRIER:
        ctx->barrier_done = 1;
        break;
    case OP_SEG_SEND_ROOT: {
        jt_dbcast_req *r = op->owner;
        r->q.inflight--;
        if (--r->pending == 0)
            r->done = 1;
        else
            sendq_pump(ctx, &r->q, &r->h, r->h.nseg, OP_SEG_SEND_ROOT, r);
        break;
    }
    case OP_SEG_SEND_FWD: {
        inb_t *in = op->owner;
        in->fwd_pending--;
        in->q.inflight--;
        sendq_pump(ctx, &in->q, &in->h, in->next_fwd, OP_SEG_SEND_FWD, in);
        inb_check(ctx, in);
        break;
    }
    case OP_SEG_RECV: {
        inb_t *in = op->owner;
        in->arrived++;
        in->seg_done[op->seg] = 1;
        /* Forward in segment order: the child matches segments by order on the stream
         * tag, and receives may complete out of order. */
        while (in->next_fwd < in->h.nseg && in->seg_done[in->next_fwd]) {
            in->fwd_pending += in->nkids;
            ctx->stats.forwarded_bytes += (uint64_t)in->nkids * seg_len(&in->h, in->next_fwd);
            in->next_fwd++;
        }
        sendq_pump(ctx, &in->q, &in->h, in->next_fwd, OP_SEG_SEND_FWD, in);
        inb_check(ctx, in);
        break;
    }
    }
}

/* One MPI_Testsome over every outstanding request; handles what completed. */
static int testsome_once(jt_dbcast_ctx *ctx)
{
    if (ctx->nops == 0)
        return 0;
    int outcount = 0;
    MPICHECK(ctx, MPI_Testsome(ctx->nops, ctx->reqs, &outcount, ctx->idx, ctx->sts));
    if (outcount <= 0 || outcount == MPI_UNDEFINED)
        return 0;
    if (outcount > ctx->capdone) {
        done_t *nd = realloc(ctx->done, (size_t)ctx->capops * sizeof *nd);
        if (!nd)
            fatal(ctx, "out of memory");
        ctx->done = nd;
        ctx->capdone = ctx->capops;
    }
    for (int i = 0; i < outcount; i++) {
        ctx->done[i].op = ctx->ops[ctx->idx[i]];
        ctx->done[i].st = ctx->sts[i];
    }
    /* compact: completed requests were set to MPI_REQUEST_NULL */
    int w = 0;
    for (int i = 0; i < ctx->nops; i++) {
        if (ctx->reqs[i] != MPI_REQUEST_NULL) {
            ctx->reqs[w] = ctx->reqs[i];
            ctx->ops[w] = ctx->ops[i];
            w++;
        }
    }
    ctx->nops = w;
    for (int i = 0; i < outcount; i++)
        handle_op(ctx, &ctx->done[i].op, &ctx->done[i].st);
    return outcount;
}

/* Non-blocking: handles whatever completed, draining a burst of headers (one header
 * receive is posted at a time). */
static int progress_locked(jt_dbcast_ctx *ctx)
{
    int events = 0;
    for (int i = 0; i < HEADERS_PER_PROGRESS; i++) {
        int seen = ctx->headers_seen;
        events += testsome_once(ctx);
        if (ctx->headers_seen == seen)
            break;
    }
    return events;
}

/* Blocking: waits until one request completes (there is always one while the header
 * receive is posted) and handles it. MPI_Waitany, not Waitsome: SimGrid's Waitsome
 * tests the other requests one by one, at the injected cost of a test each. */
static int progress_block(jt_dbcast_ctx *ctx)
{
    if (ctx->nops == 0)
        return 0;
    int i = MPI_UNDEFINED;
    MPI_Status st;
    MPICHECK(ctx, MPI_Waitany(ctx->nops, ctx->reqs, &i, &st));
    if (i == MPI_UNDEFINED)
        return 0;
    op_t op = ctx->ops[i];
    ctx->nops--;
    ctx->reqs[i] = ctx->reqs[ctx->nops]; /* the order of outstanding requests is immaterial */
    ctx->ops[i] = ctx->ops[ctx->nops];
    handle_op(ctx, &op, &st);
    return 1;
}

/* ------------------------------------------------------------ progress thread */

static void idle_pause(int idle)
{
    if (idle < 64) {
        sched_yield();
    } else {
        struct timespec ts = {0, idle < 1024 ? 2000 : 20000};
        nanosleep(&ts, NULL);
    }
}

static void *progress_main(void *arg)
{
    jt_dbcast_ctx *ctx = arg;
    int idle = 0;
    while (!atomic_load(&ctx->stop)) {
        pthread_mutex_lock(&ctx->lock);
        int ev = progress_locked(ctx);
        pthread_mutex_unlock(&ctx->lock);
        idle = ev ? 0 : idle + 1;
        if (!ev)
            idle_pause(idle);
    }
    return NULL;
}

/* ------------------------------------------------------------ public API */

void jt_dbcast_cfg_default(jt_dbcast_cfg *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->routing = JT_ROUTE_AUTO;
    cfg->segment_bytes = 0;
    cfg->inline_bytes = DEFAULT_INLINE;
    cfg->progress = JT_PROGRESS_AUTO;
    cfg->quiet = 0;
    cfg->wait = JT_WAIT_AUTO;
    jt_dbcast_model_default(&cfg->model);
}

static int running_under_smpi(void)
{
#ifdef SMPI_H
    return 1;
#else
    return 0;
#endif
}

jt_dbcast_ctx *jt_dbcast_init(MPI_Comm comm, const jt_dbcast_cfg *cfgp)
{
    const char *fn = "jt_dbcast_init";
    jt_dbcast_cfg cfg;
    if (cfgp)
        cfg = *cfgp;
    else
        jt_dbcast_cfg_default(&cfg);
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
        complain(NULL, cfg.quiet, JT_DBCAST_EINVAL, fn, "MPI is not initialized");
        return NULL;
    }
    if (comm == MPI_COMM_NULL) {
        complain(NULL, cfg.quiet, JT_DBCAST_EINVAL, fn, "communicator is MPI_COMM_NULL");
        return NULL;
    }
    if ((int)cfg.routing < 0 || cfg.routing >= JT_ROUTE_COUNT_) {
        complain(NULL, cfg.quiet, JT_DBCAST_EINVAL, fn,
                 "unknown routing %d (expected auto, flat, binomial, chain, pipeline-chain, "
                 "pipeline-tree)", (int)cfg.routing);
        return NULL;
    }
    if (cfg.segment_bytes > JT_DBCAST_MAX_SEGMENT) {
        complain(NULL, cfg.quiet, JT_DBCAST_EINVAL, fn,
                 "segment_bytes %zu exceeds the maximum %zu (1 GiB)", cfg.segment_bytes,
                 JT_DBCAST_MAX_SEGMENT);
        return NULL;
    }
    if (cfg.inline_bytes > MAX_INLINE) {
        complain(NULL, cfg.quiet, JT_DBCAST_EINVAL, fn,
                 "inline_bytes %zu exceeds the maximum %zu (1 MiB)", cfg.inline_bytes, MAX_INLINE);
        return NULL;
    }
    const jt_dbcast_model *md = &cfg.model;
    if (!(md->latency > 0 && md->overhead > 0 && md->bandwidth > 0 && md->forward_delay >= 0 &&
          md->latency < 1 && md->overhead < 1 && md->bandwidth < 1e15 && md->forward_delay < 1)) {
        complain(NULL, cfg.quiet, JT_DBCAST_EINVAL, fn,
                 "cost model (latency %g s, overhead %g s, bandwidth %g B/s, forward delay %g s) "
                 "is not allowed: each > 0 (forward delay >= 0), times under 1 s, bandwidth "
                 "under 1e15 B/s (jt_dbcast_cfg_default fills it)", md->latency, md->overhead,
                 md->bandwidth, md->forward_delay);
        return NULL;
    }
    if ((int)cfg.wait < JT_WAIT_AUTO || cfg.wait > JT_WAIT_SPIN) {
        complain(NULL, cfg.quiet, JT_DBCAST_EINVAL, fn, "unknown wait mode %d", (int)cfg.wait);
        return NULL;
    }
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    jt_dbcast_progress_mode mode = cfg.progress;
    switch (mode) {
    case JT_PROGRESS_AUTO:
        mode = (level == MPI_THREAD_MULTIPLE && !running_under_smpi()) ? JT_PROGRESS_THREAD
                                                                        : JT_PROGRESS_POLL;
        break;
    case JT_PROGRESS_THREAD:
        if (running_under_smpi()) {
            complain(NULL, cfg.quiet, JT_DBCAST_EINVAL, fn,
                     "progress thread requested, but SimGrid forbids MPI calls from extra "
                     "threads: use JT_PROGRESS_POLL");
            return NULL;
        }
        if (level != MPI_THREAD_MULTIPLE) {
            complain(NULL, cfg.quiet, JT_DBCAST_EINVAL, fn,
                     "progress thread requested, but MPI granted thread level %d, not "
                     "MPI_THREAD_MULTIPLE (use MPI_Init_thread or JT_PROGRESS_POLL)", level);
            return NULL;
        }
        break;
    case JT_PROGRESS_POLL:
        break;
    default:
        complain(NULL, cfg.quiet, JT_DBCAST_EINVAL, fn, "unknown progress mode %d", (int)mode);
        return NULL;
    }

    jt_dbcast_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx) {
        complain(NULL, cfg.quiet, JT_DBCAST_ENOMEM, fn, "out of memory");
        return NULL;
    }
    ctx->cfg = cfg;
    ctx->mode = mode;
    ctx->model = cfg.model;
    /* Blocking with the lock held is safe only when no other thread may need the context
     * (or the MPI library) meanwhile: never beside the progress thread, and by default
     * only where threads cannot call MPI concurrently. */
    ctx->block = mode == JT_PROGRESS_POLL &&
                 (cfg.wait == JT_WAIT_BLOCK ||
                  (cfg.wait == JT_WAIT_AUTO && (level < MPI_THREAD_MULTIPLE || running_under_smpi())));
    MPICHECK(ctx, MPI_Comm_dup(comm, &ctx->comm));
    MPI_Comm_rank(ctx->comm, &ctx->rank);
    MPI_Comm_size(ctx->comm, &ctx->size);
    ctx->hdr_cap = jt_dbcast_hdr_size((uint32_t)ctx->size) + MAX_INLINE;
    ctx->hdr_buf = xmalloc(ctx, ctx->hdr_cap);
    post_header_recv(ctx);
    void *attr = NULL;
    int flag = 0;
    MPI_Comm_get_attr(ctx->comm, MPI_TAG_UB, &attr, &flag);
    int tag_ub = (flag && attr) ? *(int *)attr : 32767;
    if (tag_ub < 32767)
        tag_ub = 32767; /* the standard's minimum */
    ctx->stream_span = (long long)tag_ub - TAG_STREAM_MIN + 1;
    ctx->send_seq = xcalloc(ctx, (size_t)ctx->size, sizeof *ctx->send_seq);
    ctx->expect_seq = xcalloc(ctx, (size_t)ctx->size, sizeof *ctx->expect_seq);
    ctx->stream_next = xcalloc(ctx, (size_t)ctx->size, sizeof *ctx->stream_next);
    ctx->mark = xcalloc(ctx, (size_t)ctx->size, sizeof *ctx->mark);
    pthread_mutex_init(&ctx->lock, NULL);
    atomic_init(&ctx->stop, 0);
    if (mode == JT_PROGRESS_THREAD) {
        if (pthread_create(&ctx->thread, NULL, progress_main, ctx) != 0)
            fatal(ctx, "cannot create the progress thread");
        ctx->thread_started = 1;
    }
    return ctx;
}

jt_dbcast_progress_mode jt_dbcast_progress_mode_used(const jt_dbcast_ctx *ctx)
{
    return ctx->mode;
}

void jt_dbcast_get_stats(jt_dbcast_ctx *ctx, jt_dbcast_stats *stats)
{
    pthread_mutex_lock(&ctx->lock);
    *stats = ctx->stats;
    pthread_mutex_unlock(&ctx->lock);
}

int jt_dbcast_send(jt_dbcast_ctx *ctx, const void *buf, size_t bytes, int tag,
                   const int *recipients, int nrecipients, jt_dbcast_req **req)
{
    return jt_dbcast_send_routed(ctx, buf, bytes, tag, recipients, nrecipients, JT_ROUTE_AUTO, req);
}

int jt_dbcast_send_routed(jt_dbcast_ctx *ctx, const void *buf, size_t bytes, int tag,
                          const int *recipients, int nrecipients, jt_dbcast_routing routing,
                          jt_dbcast_req **reqp)
{
    const char *fn = "jt_dbcast_send";
    int rc = check_call(ctx, fn, buf, bytes, reqp);
    if (rc != JT_DBCAST_OK)
        return rc;
    if (tag < 0)
        return BAD(ctx, fn, "tag %d is negative (tags are 0..INT_MAX)", tag);
    if (nrecipients < 0)
        return BAD(ctx, fn, "%d recipients (must be >= 0)", nrecipients);
    if (nrecipients > 0 && !recipients)
        return BAD(ctx, fn, "recipient list is NULL for %d recipients", nrecipients);
    if (nrecipients >= ctx->size)
        return BAD(ctx, fn, "%d recipients in a communicator of %d ranks", nrecipients, ctx->size);
    if ((int)routing < 0 || routing >= JT_ROUTE_COUNT_)
        return BAD(ctx, fn, "unknown routing %d", (int)routing);
    if ((uint64_t)bytes > (uint64_t)INT64_MAX)
        return BAD(ctx, fn, "message of %zu bytes is too large", bytes);

    pthread_mutex_lock(&ctx->lock);
    if (++ctx->mark_gen == 0) {
        memset(ctx->mark, 0, (size_t)ctx->size * sizeof *ctx->mark);
        ctx->mark_gen = 1;
    }
    for (int i = 0; i < nrecipients; i++) {
        int r = recipients[i];
        int rc = JT_DBCAST_OK;
        if (r < 0 || r >= ctx->size)
            rc = BAD(ctx, fn, "recipient %d (index %d) is out of range [0,%d)", r, i, ctx->size);
        else if (r == ctx->rank)
            rc = BAD(ctx, fn, "recipient %d (index %d) is the root itself", r, i);
        else if (ctx->mark[r] == ctx->mark_gen)
            rc = BAD(ctx, fn, "recipient %d is listed twice (index %d)", r, i);
        if (rc) {
            pthread_mutex_unlock(&ctx->lock);
            return rc;
        }
        ctx->mark[r] = ctx->mark_gen;
    }

    if (routing == JT_ROUTE_AUTO)
        routing = ctx->cfg.routing;
    size_t seg;
    if (routing == JT_ROUTE_AUTO)
        routing = jt_dbcast_route_choose(bytes, nrecipients, ctx->cfg.segment_bytes, &ctx->model, &seg);
    else
        seg = jt_dbcast_route_segment(routing, bytes, nrecipients, ctx->cfg.segment_bytes, &ctx->model);
    int inl = bytes <= ctx->cfg.inline_bytes;
    if (!inl && (bytes + seg - 1) / seg > UINT32_MAX) {
        pthread_mutex_unlock(&ctx->lock);
        return BAD(ctx, fn, "%zu bytes in segments of %zu bytes are too many segments", bytes, seg);
    }

    jt_dbcast_req *r = xcalloc(ctx, 1, sizeof *r);
    ctx->live_reqs++;
    ctx->stats.sent_roots++;
    r->buf = (void *)buf;
    r->bytes = bytes;
    r->st.source = ctx->rank;
    r->st.tag = tag;
    r->st.bytes = bytes;
    r->st.routing = routing;

    /* The caller's order is its urgency: the k-th recipient takes the k-th place the tree
     * reaches (identity for flat and chains; binomial reaches its list's middle first). */
    jt_dbcast_hop *hops = xmalloc(ctx, (size_t)nrecipients * sizeof *hops);
    int *place = xmalloc(ctx, (size_t)(nrecipients > 0 ? nrecipients : 1) * sizeof *place);
    if (jt_dbcast_route_arrival(routing, nrecipients, place) != nrecipients)
        for (int i = 0; i < nrecipients; i++)
            place[i] = i;
    for (int i = 0; i < nrecipients; i++) {
        hops[place[i]].rank = recipients[i];
        hops[place[i]].seq = ctx->send_seq[recipients[i]]++;
    }
    free(place);
    int nk = jt_dbcast_route_max_children(routing, nrecipients);
    jt_dbcast_route_child *kids = xmalloc(ctx, (size_t)nk * sizeof *kids);
    nk = jt_dbcast_route_children(routing, nrecipients, kids);

    jt_dbcast_hdr h;
    memset(&h, 0, sizeof h);
    h.routing = (uint8_t)routing;
    h.flags = inl ? JT_DBCAST_HDR_INLINE : 0;
    h.origin = ctx->rank;
    h.tag = tag;
    h.bcast_id = ctx->next_id++;
    h.total_bytes = bytes;
    h.seg_bytes = inl ? 0 : seg;
    h.nseg = inl ? 0 : (uint32_t)((bytes + seg - 1) / seg);
    r->h = h;
    sendq_init(ctx, &r->q, &h, buf, nk);
    for (int c = 0; c < nk; c++) {
        int dest = hops[kids[c].child].rank;
        int st = inl ? 0 : next_stream_tag(ctx, dest);
        send_header(ctx, &h, hops, &kids[c], st, buf);
        r->q.dest[c] = dest;
        r->q.tag[c] = st;
    }
    r->pending = (long)h.nseg * nk;
    sendq_pump(ctx, &r->q, &r->h, h.nseg, OP_SEG_SEND_ROOT, r);
    free(hops);
    free(kids);
    if (r->pending == 0)
        r->done = 1; /* inline payloads were copied; nothing reads buf any more */
    *reqp = r;
    pthread_mutex_unlock(&ctx->lock);
    return JT_DBCAST_OK;
}

int jt_dbcast_recv(jt_dbcast_ctx *ctx, void *buf, size_t bytes, int source, int tag,
                   jt_dbcast_req **reqp)
{
    const char *fn = "jt_dbcast_recv";
    int rc = check_call(ctx, fn, buf, bytes, reqp);
    if (rc != JT_DBCAST_OK)
        return rc;
    if (source != JT_DBCAST_ANY_SOURCE && (source < 0 || source >= ctx->size))
        return BAD(ctx, fn, "source %d is out of range [0,%d) (or JT_DBCAST_ANY_SOURCE)",
                   source, ctx->size);
    if (source == ctx->rank)
        return BAD(ctx, fn, "source %d is the caller itself (a root never receives its own "
                   "broadcast)", source);
    if (tag < 0 && tag != JT_DBCAST_ANY_TAG)
        return BAD(ctx, fn, "tag %d is negative (tags are 0..INT_MAX or JT_DBCAST_ANY_TAG)", tag);

    jt_dbcast_req *r = calloc(1, sizeof *r);
    if (!r)
        return BAD(ctx, fn, "out of memory");
    r->is_recv = 1;
    r->buf = buf;
    r->bytes = bytes;
    r->source = source;
    r->tag = tag;
    pthread_mutex_lock(&ctx->lock);
    ctx->live_reqs++;
    inb_t *prev = NULL;
    inb_t *in = ctx->unexp_head;
    for (; in; prev = in, in = in->next) {
        if (req_matches(r, in))
            break;
    }
    if (in) {
        if (prev)
            prev->next = in->next;
        else
            ctx->unexp_head = in->next;
        if (ctx->unexp_tail == in)
            ctx->unexp_tail = prev;
        in->next = NULL;
        bind_recv(in, r);
        inb_check(ctx, in);
    } else {
        if (ctx->posted_tail)
            ctx->posted_tail->next = r;
        else
            ctx->posted_head = r;
        ctx->posted_tail = r;
    }
    *reqp = r;
    pthread_mutex_unlock(&ctx->lock);
    return JT_DBCAST_OK;
}

int jt_dbcast_progress(jt_dbcast_ctx *ctx)
{
    if (!ctx)
        return complain(NULL, 0, JT_DBCAST_EINVAL, "jt_dbcast_progress", "context is NULL");
    pthread_mutex_lock(&ctx->lock);
    int ev = progress_locked(ctx);
    pthread_mutex_unlock(&ctx->lock);
    return ev;
}

/* Frees a request if it is complete (*flag says). */
static int finish_locked(jt_dbcast_ctx *ctx, jt_dbcast_req **reqp, int *flag,
                         jt_dbcast_status *status)
{
    jt_dbcast_req *r = *reqp;
    if (!r->done) {
        *flag = 0;
        return JT_DBCAST_OK;
    }
    *flag = 1;
    int rc = r->error;
    if (status)
        *status = r->st;
    free(r->q.dest);
    free(r->q.tag);
    free(r);
    ctx->live_reqs--;
    *reqp = NULL;
    return rc;
}

int jt_dbcast_test(jt_dbcast_ctx *ctx, jt_dbcast_req **reqp, int *flag, jt_dbcast_status *status)
{
    const char *fn = "jt_dbcast_test";
    if (!ctx)
        return complain(NULL, 0, JT_DBCAST_EINVAL, fn, "context is NULL");
    if (!reqp || !*reqp || !flag)
        return BAD(ctx, fn, "request or flag pointer is NULL");
    pthread_mutex_lock(&ctx->lock);
    progress_locked(ctx);
    int rc = finish_locked(ctx, reqp, flag, status);
    pthread_mutex_unlock(&ctx->lock);
    return rc;
}

/* Drives the engine until *flag (a field of a request or of the context) is set. */
static void wait_flag_locked(jt_dbcast_ctx *ctx, const int *flag)
{
    int idle = 0;
    while (!*flag) {
        if (ctx->block) {
            progress_block(ctx);
            continue;
        }
        int ev = progress_locked(ctx);
        if (*flag)
            break;
        idle = ev ? 0 : idle + 1;
        pthread_mutex_unlock(&ctx->lock); /* let the progress thread and others in */
        if (!ev && !running_under_smpi())
            idle_pause(idle);
        pthread_mutex_lock(&ctx->lock);
    }
}

int jt_dbcast_wait(jt_dbcast_ctx *ctx, jt_dbcast_req **reqp, jt_dbcast_status *status)
{
    const char *fn = "jt_dbcast_wait";
    if (!ctx)
        return complain(NULL, 0, JT_DBCAST_EINVAL, fn, "context is NULL");
    if (!reqp || !*reqp)
        return BAD(ctx, fn, "request pointer is NULL");
    int flag = 0;
    pthread_mutex_lock(&ctx->lock);
    wait_flag_locked(ctx, &(*reqp)->done);
    int rc = finish_locked(ctx, reqp, &flag, status);
    pthread_mutex_unlock(&ctx->lock);
    return rc;
}

int jt_dbcast_test_arrived(jt_dbcast_ctx *ctx, jt_dbcast_req *req, int *flag)
{
    const char *fn = "jt_dbcast_test_arrived";
    if (!ctx)
        return complain(NULL, 0, JT_DBCAST_EINVAL, fn, "context is NULL");
    if (!req || !flag)
        return BAD(ctx, fn, "request or flag pointer is NULL");
    pthread_mutex_lock(&ctx->lock);
    progress_locked(ctx);
    *flag = req->is_recv ? req->arrived : req->done;
    pthread_mutex_unlock(&ctx->lock);
    return JT_DBCAST_OK;
}

int jt_dbcast_wait_arrived(jt_dbcast_ctx *ctx, jt_dbcast_req *req)
{
    const char *fn = "jt_dbcast_wait_arrived";
    if (!ctx)
        return complain(NULL, 0, JT_DBCAST_EINVAL, fn, "context is NULL");
    if (!req)
        return BAD(ctx, fn, "request pointer is NULL");
    pthread_mutex_lock(&ctx->lock);
    wait_flag_locked(ctx, req->is_recv ? &req->arrived : &req->done);
    pthread_mutex_unlock(&ctx->lock);
    return JT_DBCAST_OK;
}

int jt_dbcast_finalize(jt_dbcast_ctx *ctx)
{
    if (!ctx)
        return JT_DBCAST_OK;
    int rc = JT_DBCAST_OK;
    if (ctx->thread_started) {
        atomic_store(&ctx->stop, 1);
        pthread_join(ctx->thread, NULL);
        ctx->thread_started = 0;
    }
    pthread_mutex_lock(&ctx->lock);
    if (ctx->live_reqs > 0) {
        rc = complain(ctx, ctx->cfg.quiet, JT_DBCAST_ESTATE, "jt_dbcast_finalize",
                      "%ld request(s) not completed by jt_dbcast_wait/test", ctx->live_reqs);
    }
    /* Drain: forwarding may still be needed by others even when our application is done.
     * No other thread uses the context now: waits may block. */
    ctx->block = 1;
    while (ctx->nops > 1) /* more than the header receive */
        progress_block(ctx);
    MPI_Request barrier;
    MPICHECK(ctx, MPI_Ibarrier(ctx->comm, &barrier));
    push_op(ctx, barrier, OP_BARRIER, NULL, 0, NULL);
    wait_flag_locked(ctx, &ctx->barrier_done);
    /* Everyone's transfers are done: close the header receive with an empty message to
     * ourselves (a header is never empty), handling any header that comes before it. */
    MPI_Request close;
    static const char nothing = 0;
    MPICHECK(ctx, MPI_Isend(&nothing, 0, MPI_BYTE, ctx->rank, TAG_HDR, ctx->comm, &close));
    push_op(ctx, close, OP_HDR_SEND, NULL, 0, NULL);
    while (ctx->hdr_open)
        progress_block(ctx);
    /* One more sweep for what may still be in transit to a rank that never receives
     * it (an application error). What is still pending is released, not waited for:
     * its peer may have left already. */
    progress_locked(ctx);
    if (ctx->nops > 0) {
        if (!ctx->cfg.quiet)
            fprintf(stderr, "jostle: dbcast: rank %d: jt_dbcast_finalize: %d transfer(s) of "
                            "never-received broadcasts abandoned\n", ctx->rank, ctx->nops);
        for (int i = 0; i < ctx->nops; i++)
            MPI_Request_free(&ctx->reqs[i]);
        ctx->nops = 0;
        rc = JT_DBCAST_ESTATE;
        /* their buffers are leaked on purpose: MPI may still read or write them */
        ctx->unexp_head = ctx->unexp_tail = NULL;
        ctx->hold = NULL;
    }
    long unexp = 0;
    for (inb_t *in = ctx->unexp_head; in;) {
        inb_t *n = in->next;
        if (unexp < 4 && !ctx->cfg.quiet)
            fprintf(stderr, "jostle: dbcast: rank %d: broadcast from rank %d tag %d (%llu bytes) "
                            "arrived but was never received\n",
                    ctx->rank, (int)in->h.origin, (int)in->h.tag,
                    (unsigned long long)in->h.total_bytes);
        unexp++;
        free_inb(ctx, in);
        in = n;
    }
    for (inb_t *in = ctx->hold; in;) {
        inb_t *n = in->next;
        unexp++;
        free_inb(ctx, in);
        in = n;
    }
    if (unexp > 0 && rc == JT_DBCAST_OK)
        rc = complain(ctx, ctx->cfg.quiet, JT_DBCAST_ESTATE, "jt_dbcast_finalize",
                      "%ld broadcast(s) arrived but were never received", unexp);
    for (jt_dbcast_req *r = ctx->posted_head; r;) {
        jt_dbcast_req *n = r->next;
        free(r);
        r = n;
    }
    pthread_mutex_unlock(&ctx->lock);
    MPI_Comm_free(&ctx->comm);
    pthread_mutex_destroy(&ctx->lock);
    free(ctx->reqs);
    free(ctx->ops);
    free(ctx->idx);
    free(ctx->sts);
    free(ctx->done);
    free(ctx->hdr_buf);
    free(ctx->send_seq);
    free(ctx->expect_seq);
    free(ctx->stream_next);
    free(ctx->mark);
    free(ctx);
    return rc;
}
