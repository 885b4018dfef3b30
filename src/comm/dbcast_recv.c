/*
 * jt_dbcast, receiving side: an incoming broadcast (its header decoded and checked,
 * forwarded at once, its segment receives posted), the per-origin order of broadcasts,
 * and their matching with the application's receives. See comm/dbcast_internal.h.
 */
#define _POSIX_C_SOURCE 200809L
#include "comm/dbcast_internal.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- matching */

static int req_matches(const jt_dbcast_req *r, const jt_dbcast_inb *in)
{
    return (r->source == JT_DBCAST_ANY_SOURCE || r->source == in->h.origin) &&
           (r->tag == JT_DBCAST_ANY_TAG || r->tag == in->h.tag);
}

static jt_dbcast_req *take_posted(jt_dbcast_ctx *ctx, const jt_dbcast_inb *in)
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

static void bind_recv(jt_dbcast_inb *in, jt_dbcast_req *r)
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

void jt_dbcast_inb_free(jt_dbcast_ctx *ctx, jt_dbcast_inb *in)
{
    free(in->internal);
    free(in->cov);
    jt_dbcast_sag_free(in->sag);
    for (int i = 0; i < in->nparts; i++) {
        jt_dbcast_part *p = &in->part[i];
        free(p->hops);
        free(p->kids);
        free(p->seg_done);
        jt_dbcast_sendq_free(&p->q);
    }
    free(in);
    ctx->live_inb--;
}

/* Advance the state of an incoming broadcast after any event. */
void jt_dbcast_inb_check(jt_dbcast_ctx *ctx, jt_dbcast_inb *in)
{
    int all = in->is_sag ? jt_dbcast_sag_all(in)
                         : in->nparts == (int)in->h.streams && in->arrived == in->nseg;
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
        jt_dbcast_inb_free(ctx, in);
}

static void unexp_append(jt_dbcast_ctx *ctx, jt_dbcast_inb *in)
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
static void make_matchable(jt_dbcast_ctx *ctx, jt_dbcast_inb *in)
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
        jt_dbcast_inb *prev = NULL;
        for (jt_dbcast_inb *in = ctx->hold; in; prev = in, in = in->next) {
            if (in->h.origin == origin && in->h.seq == ctx->expect_seq[origin]) {
                if (prev)
                    prev->next = in->next;
                else
                    ctx->hold = in->next;
                in->next = NULL;
                make_matchable(ctx, in);
                jt_dbcast_inb_check(ctx, in);
                found = 1;
                break;
            }
        }
    }
}

/* ------------------------------------------------------------ arrival */

jt_dbcast_hop *jt_dbcast_take_hops(jt_dbcast_ctx *ctx, const unsigned char *msg,
                                   const jt_dbcast_hdr *h, int from)
{
    jt_dbcast_hop *hops = jt_dbcast_xmalloc(ctx, (size_t)h->nhops * sizeof *hops);
    jt_dbcast_hdr_hops(msg, h, hops);
    for (uint32_t i = 0; i < h->nhops; i++) {
        int rk = hops[i].rank;
        if (rk < 0 || rk >= ctx->size || rk == ctx->rank || rk == h->origin)
            jt_dbcast_fatal(ctx, "broadcast message from rank %d: hop %u is rank %d (bad)", from,
                            (unsigned)i, rk);
    }
    return hops;
}

/* A stream of in arrived (header decoded in p->h, message msg): checks its hops, forwards
 * its header to this rank's children in its tree, posts its segment receives. */
static void stream_start(jt_dbcast_ctx *ctx, jt_dbcast_inb *in, jt_dbcast_part *p,
                         const unsigned char *msg, int from)
{
    const jt_dbcast_hdr *h = &p->h;
    p->in = in;
    p->from = from;
    p->hops = jt_dbcast_take_hops(ctx, msg, h, from);
    int nk = jt_dbcast_route_max_children((jt_dbcast_routing)h->routing, (int)h->nhops);
    p->kids = jt_dbcast_xmalloc(ctx, (size_t)nk * sizeof *p->kids);
    p->nkids = jt_dbcast_route_children((jt_dbcast_routing)h->routing, (int)h->nhops, p->kids);
    if (p->nkids < 0)
        jt_dbcast_fatal(ctx, "broadcast message from rank %d: unknown routing %d", from, h->routing);
    int inl = (h->flags & JT_DBCAST_HDR_INLINE) != 0;
    unsigned char *base = in->data + h->range_off;
    /* Forward the header at once, before anything else happens to the data; an inline
     * payload goes with it, through the sending window (children one at a time for a
     * binomial tree). */
    jt_dbcast_sendq_init(ctx, &p->q, h, base, p->nkids);
    for (int c = 0; c < p->nkids; c++) {
        int dest = p->hops[p->kids[c].child].rank;
        p->q.dest[c] = dest;
        p->q.tag[c] = inl ? 0 : jt_dbcast_stream_tag(ctx, dest);
        jt_dbcast_send_header(ctx, h, p->hops, &p->kids[c], &p->q, c, in->data);
        ctx->stats.forwarded_msgs++;
        if (inl)
            ctx->stats.forwarded_bytes += h->total_bytes;
    }
    if (inl) {
        in->fwd_pending += p->nkids;
        jt_dbcast_sendq_pump(ctx, &p->q, h, 1, OP_SEG_SEND_FWD, p);
    }
    /* Segment receives, forwarded one by one as they complete. */
    p->seg_done = jt_dbcast_xcalloc(ctx, h->nseg, 1);
    in->nseg += h->nseg;
    for (uint32_t k = 0; k < h->nseg; k++) {
        MPI_Request q;
        MPICHECK(ctx, MPI_Irecv(base + (size_t)k * h->seg_bytes, (int)jt_dbcast_seg_len(h, k),
                                MPI_BYTE, from, h->stream_tag, ctx->comm, &q));
        jt_dbcast_op_push(ctx, q, OP_SEG_RECV, p, k, NULL);
    }
}

/* The broadcast a second stream belongs to (same origin and id), if its first came. */
static jt_dbcast_inb *take_partial(jt_dbcast_ctx *ctx, const jt_dbcast_hdr *h, int from)
{
    jt_dbcast_inb *prev = NULL;
    for (jt_dbcast_inb *in = ctx->partial; in; prev = in, in = in->next_partial) {
        if (in->h.origin != h->origin || in->h.bcast_id != h->bcast_id)
            continue;
        const jt_dbcast_hdr *f = &in->part[0].h;
        if (f->tag != h->tag || f->seq != h->seq || f->total_bytes != h->total_bytes ||
            f->streams != h->streams || f->routing != h->routing ||
            (h->range_off < f->range_off + f->range_bytes &&
             f->range_off < h->range_off + h->range_bytes))
            jt_dbcast_fatal(ctx, "broadcast message from rank %d: its stream disagrees with the "
                            "other stream of broadcast %llu of rank %d", from,
                            (unsigned long long)h->bcast_id, (int)h->origin);
        if (in->nparts + 1 == (int)in->h.streams) { /* the last one: off the list */
            if (prev)
                prev->next_partial = in->next_partial;
            else
                ctx->partial = in->next_partial;
            in->next_partial = NULL;
        }
        return in;
    }
    return NULL;
}

void jt_dbcast_header_arrived(jt_dbcast_ctx *ctx, unsigned char *msg, size_t len, int from)
{
    jt_dbcast_hdr h;
    int rc = jt_dbcast_hdr_decode(msg, len, &h);
    if (rc)
        jt_dbcast_fatal(ctx, "malformed broadcast message (%zu bytes) from rank %d: %s", len, from,
                        jt_dbcast_hdr_strerror(rc));
    if (h.origin >= ctx->size || h.origin == ctx->rank)
        jt_dbcast_fatal(ctx, "broadcast message from rank %d names origin %d (communicator of %d)",
                        from, (int)h.origin, ctx->size);
    if (h.nhops > (uint32_t)ctx->size)
        jt_dbcast_fatal(ctx, "broadcast message from rank %d carries %u hops for %d ranks", from,
                        (unsigned)h.nhops, ctx->size);
    ctx->stats.headers_received++;
    int sag = h.routing == JT_ROUTE_SCATTER_ALLGATHER; /* ranges joined: dbcast_sag.c */
    jt_dbcast_inb *in = h.streams > 1 ? take_partial(ctx, &h, from)
                      : sag ? jt_dbcast_sag_find(ctx, &h) : NULL;
    if (in && sag) {
        jt_dbcast_sag_piece(ctx, in, msg, &h, from);
        free(msg);
        jt_dbcast_inb_check(ctx, in);
        return;
    }
    if (in) { /* the other half of a broadcast already here: same buffer, same receive */
        jt_dbcast_part *p = &in->part[in->nparts++];
        p->h = h;
        stream_start(ctx, in, p, msg, from);
        free(msg);
        jt_dbcast_inb_check(ctx, in);
        return;
    }
    in = jt_dbcast_xcalloc(ctx, 1, sizeof *in);
    ctx->live_inb++;
    in->h = h;
    in->part[0].h = h;
    in->nparts = 1;

    int matchable = h.seq == ctx->expect_seq[h.origin];
    jt_dbcast_req *r = matchable ? take_posted(ctx, in) : NULL;
    int inl = (h.flags & JT_DBCAST_HDR_INLINE) != 0 && !sag;
    if (inl) {
        in->internal = msg; /* keep the message: the payload is in it */
        in->data = msg + h.hdr_bytes;
    } else {
        if (r && h.total_bytes <= r->bytes) {
            in->data = r->buf;
            in->direct = 1;
        } else {
            in->internal = jt_dbcast_xmalloc(ctx, (size_t)h.total_bytes);
            in->data = in->internal;
        }
    }
    if (r)
        bind_recv(in, r);
    if (h.streams > 1 || sag) {
        in->next_partial = ctx->partial;
        ctx->partial = in;
    }
    if (sag)
        jt_dbcast_sag_piece(ctx, in, msg, &h, from);
    else
        stream_start(ctx, in, &in->part[0], msg, from);
    if (!inl)
        free(msg);

    if (matchable) {
        make_matchable(ctx, in);
        jt_dbcast_inb_check(ctx, in);
        release_held(ctx, h.origin);
    } else {
        ctx->stats.reordered++;
        in->next = ctx->hold;
        ctx->hold = in;
    }
}

void jt_dbcast_header_recv_post(jt_dbcast_ctx *ctx)
{
    MPI_Request r;
    MPICHECK(ctx, MPI_Irecv(ctx->hdr_buf, (int)ctx->hdr_cap, MPI_BYTE, MPI_ANY_SOURCE, TAG_HDR,
                            ctx->comm, &r));
    jt_dbcast_op_push(ctx, r, OP_HDR_RECV, NULL, 0, NULL);
    ctx->hdr_open = 1;
}

/* ------------------------------------------------------------ application */

int jt_dbcast_recv(jt_dbcast_ctx *ctx, void *buf, size_t bytes, int source, int tag,
                   jt_dbcast_req **reqp)
{
    const char *fn = "jt_dbcast_recv";
    int rc = jt_dbcast_check_call(ctx, fn, buf, bytes, reqp);
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
    jt_dbcast_inb *prev = NULL;
    jt_dbcast_inb *in = ctx->unexp_head;
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
        jt_dbcast_inb_check(ctx, in);
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
