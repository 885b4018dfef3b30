/*
 * jt_dbcast, sending side: the root's send (routing choice, recipient order, headers),
 * and the queue of segment sends that the root and every forwarder drain through a
 * window. See comm/dbcast_internal.h.
 */
#define _POSIX_C_SOURCE 200809L
#include "comm/dbcast_internal.h"

#include <stdlib.h>
#include <string.h>

int jt_dbcast_stream_tag(jt_dbcast_ctx *ctx, int dest)
{
    uint64_t k = ctx->stream_next[dest]++;
    return (int)(TAG_STREAM_MIN + (long long)(k % (uint64_t)ctx->stream_span));
}

/* Encodes the header for one child (and the inline payload) and posts it, or queues it
 * (inline: the window decides when, jt_dbcast_sendq_pump). */
void jt_dbcast_send_header(jt_dbcast_ctx *ctx, const jt_dbcast_hdr *base,
                           const jt_dbcast_hop *hops, const jt_dbcast_route_child *kid,
                           jt_dbcast_sendq *q, int c, const void *payload)
{
    jt_dbcast_hdr h = *base;
    const jt_dbcast_hop *me = &hops[kid->child];
    h.seq = me->seq;
    h.nhops = (uint32_t)kid->sub_len;
    h.stream_tag = (h.flags & JT_DBCAST_HDR_INLINE) ? 0 : q->tag[c];
    size_t hl = jt_dbcast_hdr_size(&h, hops + kid->sub_off);
    size_t pl = (h.flags & JT_DBCAST_HDR_INLINE) ? (size_t)h.total_bytes : 0;
    unsigned char *msg = jt_dbcast_xmalloc(ctx, hl + pl);
    long rc = jt_dbcast_hdr_encode(&h, hops + kid->sub_off, msg, hl);
    if (rc < 0)
        jt_dbcast_fatal(ctx, "cannot encode a header: %s", jt_dbcast_hdr_strerror((int)rc));
    if (pl)
        memcpy(msg + hl, payload, pl);
    if (q->msg) {
        q->msg[c] = msg;
        q->msglen[c] = hl + pl;
        return;
    }
    MPI_Request r;
    MPICHECK(ctx, MPI_Isend(msg, (int)(hl + pl), MPI_BYTE, me->rank, TAG_HDR, ctx->comm, &r));
    jt_dbcast_op_push(ctx, r, OP_HDR_SEND, NULL, 0, msg);
}

static void send_segment(jt_dbcast_ctx *ctx, const jt_dbcast_hdr *h, jt_dbcast_sendq *q,
                         uint32_t k, int c, int kind, void *owner)
{
    MPI_Request r;
    if (q->msg) { /* inline: the child's whole message, freed when sent */
        unsigned char *msg = q->msg[c];
        q->msg[c] = NULL;
        MPICHECK(ctx, MPI_Isend(msg, (int)q->msglen[c], MPI_BYTE, q->dest[c], TAG_HDR,
                                ctx->comm, &r));
        jt_dbcast_op_push(ctx, r, kind, owner, 0, msg);
        return;
    }
    size_t len = jt_dbcast_seg_len(h, k);
    MPICHECK(ctx, MPI_Isend(q->data + (size_t)k * h->seg_bytes, (int)len, MPI_BYTE, q->dest[c],
                            q->tag[c], ctx->comm, &r));
    jt_dbcast_op_push(ctx, r, kind, owner, k, NULL);
}

void jt_dbcast_sendq_init(jt_dbcast_ctx *ctx, jt_dbcast_sendq *q, const jt_dbcast_hdr *h,
                          const unsigned char *data, int nkids)
{
    q->data = data;
    q->nkids = nkids;
    q->dest = jt_dbcast_xcalloc(ctx, (size_t)nkids, sizeof *q->dest);
    q->tag = jt_dbcast_xcalloc(ctx, (size_t)nkids, sizeof *q->tag);
    q->msg = NULL;
    q->msglen = NULL;
    if (h->flags & JT_DBCAST_HDR_INLINE) {
        q->msg = jt_dbcast_xcalloc(ctx, (size_t)nkids, sizeof *q->msg);
        q->msglen = jt_dbcast_xcalloc(ctx, (size_t)nkids, sizeof *q->msglen);
    }
    q->next = 0;
    q->inflight = 0;
    int radix = jt_dbcast_route_radix((jt_dbcast_routing)h->routing); /* k-nomial: a round */
    q->window = h->routing == JT_ROUTE_FLAT ? nkids
              : jt_dbcast_route_is_pipelined((jt_dbcast_routing)h->routing) ? 2 * nkids
              : radix > 2 ? radix - 1 : 1;
}

void jt_dbcast_sendq_free(jt_dbcast_sendq *q)
{
    for (int c = 0; q->msg && c < q->nkids; c++)
        free(q->msg[c]);
    free(q->msg);
    free(q->msglen);
    free(q->dest);
    free(q->tag);
}

/* Posts queued segment sends while the window allows; segments below avail exist (inline:
 * the one message per child, all there). */
void jt_dbcast_sendq_pump(jt_dbcast_ctx *ctx, jt_dbcast_sendq *q, const jt_dbcast_hdr *h,
                          uint32_t avail, int kind, void *owner)
{
    if (q->nkids <= 0)
        return;
    if (q->msg)
        avail = 1;
    uint64_t end = (uint64_t)avail * (uint64_t)q->nkids;
    while (q->inflight < q->window && q->next < end) {
        uint32_t k = (uint32_t)(q->next / (uint64_t)q->nkids);
        int c = (int)(q->next % (uint64_t)q->nkids);
        send_segment(ctx, h, q, k, c, kind, owner);
        q->next++;
        q->inflight++;
    }
}

/* ------------------------------------------------------------ the root */

int jt_dbcast_send(jt_dbcast_ctx *ctx, const void *buf, size_t bytes, int tag,
                   const int *recipients, int nrecipients, jt_dbcast_req **req)
{
    return jt_dbcast_send_routed(ctx, buf, bytes, tag, recipients, nrecipients, JT_ROUTE_AUTO, req);
}

/* What can be judged without the context's state: everything but the recipients' ranks. */
static int check_args(jt_dbcast_ctx *ctx, const char *fn, const void *buf, size_t bytes, int tag,
                      const int *recipients, int nrecipients, jt_dbcast_routing routing,
                      jt_dbcast_req **reqp)
{
    int rc = jt_dbcast_check_call(ctx, fn, buf, bytes, reqp);
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
    return JT_DBCAST_OK;
}

/* Each recipient a rank of the communicator, not the root, listed once: ctx->mark[r] holds
 * this call's generation once r is seen, so that no call clears the marks of all ranks (but
 * once every 2^32 calls, when the generation wraps). */
static int check_recipients(jt_dbcast_ctx *ctx, const char *fn, const int *recipients,
                            int nrecipients)
{
    if (++ctx->mark_gen == 0) {
        memset(ctx->mark, 0, (size_t)ctx->size * sizeof *ctx->mark);
        ctx->mark_gen = 1;
    }
    for (int i = 0; i < nrecipients; i++) {
        int r = recipients[i];
        if (r < 0 || r >= ctx->size)
            return BAD(ctx, fn, "recipient %d (index %d) is out of range [0,%d)", r, i, ctx->size);
        if (r == ctx->rank)
            return BAD(ctx, fn, "recipient %d (index %d) is the root itself", r, i);
        if (ctx->mark[r] == ctx->mark_gen)
            return BAD(ctx, fn, "recipient %d is listed twice (index %d)", r, i);
        ctx->mark[r] = ctx->mark_gen;
    }
    return JT_DBCAST_OK;
}

/* The routing and its segment size (*seg): the call's, else the context's, else the cost
 * model's choice. */
static jt_dbcast_routing choose_routing(jt_dbcast_ctx *ctx, jt_dbcast_routing routing,
                                        size_t bytes, int n, size_t *seg)
{
    if (routing == JT_ROUTE_AUTO)
        routing = ctx->cfg.routing;
    if (routing == JT_ROUTE_AUTO)
        routing = jt_dbcast_route_choose(bytes, n, ctx->cfg.segment_bytes, &ctx->model, seg);
    else
        *seg = jt_dbcast_route_segment(routing, bytes, n, ctx->cfg.segment_bytes, &ctx->model);
    /* scatter-allgather sends each range inline: up to what a header receive holds */
    if (routing == JT_ROUTE_SCATTER_ALLGATHER &&
        jt_route_sag_largest(bytes, n + 1) > JT_DBCAST_SAG_MAX_MSG) {
        routing = JT_ROUTE_TWO_TREE;
        *seg = jt_dbcast_route_segment(routing, bytes, n, ctx->cfg.segment_bytes, &ctx->model);
    }
    return routing;
}

/* The hops of each of the ns streams, stream j's at [j * n, (j + 1) * n), each recipient
 * with its next seq.  The caller's order is its urgency: the k-th recipient takes the k-th
 * place the tree reaches (identity for flat and chains; binomial reaches its list's middle
 * first); each stream has its own order (the two-tree's lists, route_twotree.c).  malloc'd. */
static jt_dbcast_hop *root_hops(jt_dbcast_ctx *ctx, jt_dbcast_routing routing,
                                const int *recipients, int n, int ns)
{
    size_t n1 = (size_t)(n > 0 ? n : 1);
    int *pos = jt_dbcast_xmalloc(ctx, n1 * JT_DBCAST_MAX_STREAMS * sizeof *pos);
    if (jt_dbcast_route_layout(routing, n, pos) != n)
        for (int j = 0; j < (int)JT_DBCAST_MAX_STREAMS; j++)
            for (int i = 0; i < n; i++)
                pos[j * n + i] = i;
    jt_dbcast_hop *hops = jt_dbcast_xmalloc(ctx, n1 * ns * sizeof *hops);
    for (int i = 0; i < n; i++) {
        uint32_t seq = ctx->send_seq[recipients[i]]++;
        for (int j = 0; j < ns; j++)
            hops[j * n + pos[j * n + i]] = (jt_dbcast_hop){recipients[i], seq};
    }
    free(pos);
    return hops;
}

/* Stream j of r (of ns): its byte range of buf (the first (nseg + 1) / 2 segments, the rest;
 * or all of it), its queue of sends to the root's children, and their headers. */
static void start_stream(jt_dbcast_ctx *ctx, jt_dbcast_req *r, int j, int ns,
                         const jt_dbcast_hdr *h, const void *buf, size_t bytes, size_t seg,
                         const jt_dbcast_hop *hops, int n, const jt_dbcast_route_child *kids,
                         int nk)
{
    int inl = (h->flags & JT_DBCAST_HDR_INLINE) != 0;
    uint32_t nseg = h->nseg;
    uint32_t first = (nseg + 1) / 2; /* segments of stream 0 when there are two */
    jt_dbcast_out *o = &r->out[j];
    o->req = r;
    o->h = *h;
    o->h.nseg = ns == 1 ? nseg : j == 0 ? first : nseg - first;
    o->h.range_off = j == 0 ? 0 : (uint64_t)first * seg;
    o->h.range_bytes = ns == 1 ? bytes : j == 0 ? (uint64_t)first * seg : bytes - o->h.range_off;
    jt_dbcast_sendq_init(ctx, &o->q, &o->h, (const unsigned char *)buf + o->h.range_off, nk);
    for (int c = 0; c < nk; c++) {
        int dest = hops[j * n + kids[c].child].rank;
        o->q.dest[c] = dest;
        o->q.tag[c] = inl ? 0 : jt_dbcast_stream_tag(ctx, dest);
        jt_dbcast_send_header(ctx, &o->h, hops + j * n, &kids[c], &o->q, c, buf);
    }
    /* segment sends, or the inline messages (one per child) */
    r->pending += inl ? nk : (long)o->h.nseg * nk;
}

/* The root's broadcast by a tree routing (every one but scatter-allgather): the hops of each
 * stream, the root's children, the header they share (its nseg: the whole message's; each
 * stream's copy then says its own share), then the streams' first sends. */
static void send_tree(jt_dbcast_ctx *ctx, jt_dbcast_req *r, jt_dbcast_routing routing,
                      const void *buf, size_t bytes, int tag, const int *recipients, int n,
                      size_t seg, int inl)
{
    uint32_t nseg = inl ? 0 : (uint32_t)((bytes + seg - 1) / seg);
    /* Streams: two for the two-tree, each half the segments (one if there is one segment) */
    int ns = nseg >= 2 ? jt_dbcast_route_streams(routing) : 1;
    jt_dbcast_hop *hops = root_hops(ctx, routing, recipients, n, ns);
    int nk = jt_dbcast_route_max_children(routing, n);
    jt_dbcast_route_child *kids = jt_dbcast_xmalloc(ctx, (size_t)nk * sizeof *kids);
    nk = jt_dbcast_route_root_children(routing, n, kids);

    jt_dbcast_hdr h;
    memset(&h, 0, sizeof h);
    h.routing = (uint8_t)routing;
    h.flags = inl ? JT_DBCAST_HDR_INLINE : 0;
    h.origin = ctx->rank;
    h.tag = tag;
    h.bcast_id = ctx->next_id++;
    h.total_bytes = bytes;
    h.seg_bytes = inl ? 0 : seg;
    h.streams = (uint32_t)ns;
    h.nseg = nseg;
    r->nout = ns;
    for (int j = 0; j < ns; j++)
        start_stream(ctx, r, j, ns, &h, buf, bytes, seg, hops, n, kids, nk);
    for (int j = 0; j < ns; j++)
        jt_dbcast_sendq_pump(ctx, &r->out[j].q, &r->out[j].h, r->out[j].h.nseg, OP_SEG_SEND_ROOT,
                             &r->out[j]);
    free(hops);
    free(kids);
    if (r->pending == 0)
        r->done = 1; /* nothing to send */
}

int jt_dbcast_send_routed(jt_dbcast_ctx *ctx, const void *buf, size_t bytes, int tag,
                          const int *recipients, int nrecipients, jt_dbcast_routing routing,
                          jt_dbcast_req **reqp)
{
    const char *fn = "jt_dbcast_send";
    int rc = check_args(ctx, fn, buf, bytes, tag, recipients, nrecipients, routing, reqp);
    if (rc != JT_DBCAST_OK)
        return rc;

    pthread_mutex_lock(&ctx->lock);
    rc = check_recipients(ctx, fn, recipients, nrecipients);
    if (rc != JT_DBCAST_OK) {
        pthread_mutex_unlock(&ctx->lock);
        return rc;
    }
    size_t seg;
    routing = choose_routing(ctx, routing, bytes, nrecipients, &seg);
    int inl = bytes <= ctx->cfg.inline_bytes;
    if (!inl && (bytes + seg - 1) / seg > UINT32_MAX) {
        pthread_mutex_unlock(&ctx->lock);
        return BAD(ctx, fn, "%zu bytes in segments of %zu bytes are too many segments", bytes, seg);
    }

    jt_dbcast_req *r = jt_dbcast_xcalloc(ctx, 1, sizeof *r);
    ctx->live_reqs++;
    ctx->stats.sent_roots++;
    r->buf = (void *)buf;
    r->bytes = bytes;
    r->st.source = ctx->rank;
    r->st.tag = tag;
    r->st.bytes = bytes;
    r->st.routing = routing;
    if (routing == JT_ROUTE_SCATTER_ALLGATHER) /* dbcast_sag.c */
        jt_dbcast_sag_root(ctx, r, buf, bytes, tag, recipients, nrecipients);
    else
        send_tree(ctx, r, routing, buf, bytes, tag, recipients, nrecipients, seg, inl);
    *reqp = r;
    pthread_mutex_unlock(&ctx->lock);
    return JT_DBCAST_OK;
}
