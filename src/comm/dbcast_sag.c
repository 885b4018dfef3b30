/*
 * jt_dbcast, scatter-allgather (routing in route_scatter_allgather.c): a broadcast reaches a
 * recipient as several messages from several senders, each one byte range (inline, after
 * its header); they are joined into one incoming broadcast by (origin, id), the ranges
 * tracked as a set of intervals. One of them, the scatter message, carries the node's plan:
 * its place and its view (ranks). The node's sends (its scatter children's messages with
 * their plans, then one per allgather level) are posted one at a time, in order, each as soon
 * as its range is complete in this node's buffer, whichever messages brought it.
 * See comm/dbcast_internal.h and docs/dbcast.md.
 */
#define _POSIX_C_SOURCE 200809L
#include "comm/dbcast_internal.h"

#include <stdlib.h>
#include <string.h>

#define SAG_WINDOW 1 /* one send in flight: a level's message, then the next (as MPICH) */

jt_dbcast_inb *jt_dbcast_sag_find(jt_dbcast_ctx *ctx, const jt_dbcast_hdr *h)
{
    for (jt_dbcast_inb *in = ctx->partial; in; in = in->next_partial)
        if (in->is_sag && in->h.origin == h->origin && in->h.bcast_id == h->bcast_id)
            return in;
    return NULL;
}

static void unlink_partial(jt_dbcast_ctx *ctx, jt_dbcast_inb *in)
{
    jt_dbcast_inb *prev = NULL;
    for (jt_dbcast_inb *x = ctx->partial; x; prev = x, x = x->next_partial) {
        if (x == in) {
            if (prev)
                prev->next_partial = x->next_partial;
            else
                ctx->partial = x->next_partial;
            x->next_partial = NULL;
            return;
        }
    }
}

int jt_dbcast_sag_all(const jt_dbcast_inb *in)
{
    return in->sag != NULL && in->covered == in->h.total_bytes;
}

/* [off, off + len) is within one arrived interval (an empty range always is). */
static int covered(const jt_dbcast_sag *s, uint64_t off, uint64_t len)
{
    if (!s->in || len == 0)
        return 1; /* the root has it all */
    const jt_dbcast_inb *in = s->in;
    for (int i = 0; i < in->ncov; i++)
        if (in->cov[2 * i] <= off && off + len <= in->cov[2 * i + 1])
            return 1;
    return 0;
}

/* Adds [off, end) to the intervals (sorted, disjoint, merged); -1 if it overlaps one. */
static int cover_add(jt_dbcast_ctx *ctx, jt_dbcast_inb *in, uint64_t off, uint64_t end)
{
    int i = 0;
    while (i < in->ncov && in->cov[2 * i + 1] <= off)
        i++; /* intervals ending before off */
    if (i < in->ncov && in->cov[2 * i] < end)
        return -1;
    if (in->ncov == in->capcov) {
        int cap = in->capcov ? 2 * in->capcov : 8;
        uint64_t *c = realloc(in->cov, (size_t)cap * 2 * sizeof *c);
        if (!c)
            jt_dbcast_fatal(ctx, "out of memory");
        in->cov = c, in->capcov = cap;
    }
    memmove(in->cov + 2 * i + 2, in->cov + 2 * i, (size_t)(in->ncov - i) * 2 * sizeof *in->cov);
    in->cov[2 * i] = off, in->cov[2 * i + 1] = end;
    in->ncov++;
    /* merge with the next, then with the previous */
    if (i + 1 < in->ncov && in->cov[2 * i + 1] == in->cov[2 * i + 2]) {
        in->cov[2 * i + 1] = in->cov[2 * i + 3];
        memmove(in->cov + 2 * i + 2, in->cov + 2 * i + 4,
                (size_t)(in->ncov - i - 2) * 2 * sizeof *in->cov);
        in->ncov--;
    }
    if (i > 0 && in->cov[2 * i - 1] == in->cov[2 * i]) {
        in->cov[2 * i - 1] = in->cov[2 * i + 1];
        memmove(in->cov + 2 * i, in->cov + 2 * i + 2,
                (size_t)(in->ncov - i - 1) * 2 * sizeof *in->cov);
        in->ncov--;
    }
    in->covered += end - off;
    return 0;
}

/* The rank and seq of node w in s's view (the root: its list); NULL if w is not in it. */
static const jt_dbcast_hop *node_hop(const jt_dbcast_sag *s, int w)
{
    int base = 0;
    for (int i = 0; i < s->nspans; i++) {
        if (w >= s->span[i].off && w < s->span[i].off + s->span[i].len)
            return &s->hops[base + (w - s->span[i].off)];
        base += s->span[i].len;
    }
    return NULL;
}

static void post(jt_dbcast_ctx *ctx, jt_dbcast_sag *s, const jt_route_sag_send *x, uint64_t off,
                 uint64_t len)
{
    const jt_dbcast_hop *to = node_hop(s, x->dest);
    if (!to)
        jt_dbcast_fatal(ctx, "scatter-allgather: node %d is not in the plan of node %d of %d",
                        x->dest, s->place, s->nodes);
    jt_dbcast_hdr h = s->base;
    h.seq = to->seq;
    h.range_off = off;
    h.range_bytes = len;
    h.nodes = h.place = h.nhops = 0;
    jt_dbcast_hop *hops = NULL;
    if (x->plan) { /* dest's view, from this node's */
        jt_route_span sp[JT_ROUTE_SAG_MAX_SPANS];
        int ns = jt_route_sag_view(s->nodes, x->dest, sp), k = 0;
        for (int i = 0; i < ns; i++)
            h.nhops += (uint32_t)sp[i].len;
        hops = jt_dbcast_xmalloc(ctx, (size_t)h.nhops * sizeof *hops);
        for (int i = 0; i < ns; i++) {
            for (int w = sp[i].off; w < sp[i].off + sp[i].len; w++) {
                const jt_dbcast_hop *hp = node_hop(s, w);
                if (!hp)
                    jt_dbcast_fatal(ctx, "scatter-allgather: node %d is not in the plan of "
                                    "node %d of %d", w, s->place, s->nodes);
                hops[k++] = *hp;
            }
        }
        h.nodes = (uint32_t)s->nodes;
        h.place = (uint32_t)x->dest;
    }
    size_t hl = jt_dbcast_hdr_size(&h, hops);
    unsigned char *msg = jt_dbcast_xmalloc(ctx, hl + len);
    long rc = jt_dbcast_hdr_encode(&h, hops, msg, hl);
    if (rc < 0)
        jt_dbcast_fatal(ctx, "cannot encode a header: %s", jt_dbcast_hdr_strerror((int)rc));
    free(hops);
    if (len)
        memcpy(msg + hl, s->data + off, (size_t)len);
    MPI_Request r;
    MPICHECK(ctx, MPI_Isend(msg, (int)(hl + len), MPI_BYTE, to->rank, TAG_HDR, ctx->comm, &r));
    jt_dbcast_op_push(ctx, r, OP_SAG_SEND, s, 0, msg);
    if (s->in) {
        ctx->stats.forwarded_msgs++;
        ctx->stats.forwarded_bytes += len;
    }
}

/* Posts the next sends while the window allows and their ranges are complete. */
static void pump(jt_dbcast_ctx *ctx, jt_dbcast_sag *s)
{
    while (s->inflight < SAG_WINDOW && s->next < s->nsends) {
        const jt_route_sag_send *x = &s->send[s->next];
        uint64_t off, len;
        jt_route_sag_bytes(s->base.total_bytes, s->nodes, x->c0, x->c1, &off, &len);
        if (!covered(s, off, len))
            return;
        post(ctx, s, x, off, len);
        s->next++;
        s->inflight++;
    }
}

/* The node's sends: empty ranges left out but for a plan (the node needs it all the same). */
static void plan_sends(jt_dbcast_sag *s)
{
    jt_route_sag_send all[JT_ROUTE_SAG_MAX_SENDS];
    int n = jt_route_sag_sends(s->nodes, s->place, all);
    s->nsends = 0;
    for (int i = 0; i < n; i++) {
        uint64_t off, len;
        jt_route_sag_bytes(s->base.total_bytes, s->nodes, all[i].c0, all[i].c1, &off, &len);
        if (len || all[i].plan)
            s->send[s->nsends++] = all[i];
    }
}

void jt_dbcast_sag_sent(jt_dbcast_ctx *ctx, jt_dbcast_sag *s)
{
    s->inflight--;
    if (s->req) {
        if (--s->req->pending == 0)
            s->req->done = 1;
        else
            pump(ctx, s);
        return;
    }
    jt_dbcast_inb *in = s->in;
    in->fwd_pending--;
    pump(ctx, s);
    jt_dbcast_inb_check(ctx, in);
}

void jt_dbcast_sag_free(jt_dbcast_sag *s)
{
    if (s)
        free(s->hops);
    free(s);
}

/* The plan in a scatter message: checks its hops and that they are the view of its place. */
static void take_plan(jt_dbcast_ctx *ctx, jt_dbcast_inb *in, const unsigned char *msg,
                      const jt_dbcast_hdr *h, int from)
{
    if (in->sag)
        jt_dbcast_fatal(ctx, "broadcast message from rank %d: a second plan for broadcast %llu "
                        "of rank %d", from, (unsigned long long)h->bcast_id, (int)h->origin);
    if (h->nodes > (uint32_t)ctx->size)
        jt_dbcast_fatal(ctx, "broadcast message from rank %d: %u nodes for %d ranks", from,
                        (unsigned)h->nodes, ctx->size);
    jt_dbcast_sag *s = jt_dbcast_xcalloc(ctx, 1, sizeof *s);
    s->nodes = (int)h->nodes;
    s->place = (int)h->place;
    s->nspans = jt_route_sag_view(s->nodes, s->place, s->span);
    long expect = 0;
    for (int i = 0; i < s->nspans; i++)
        expect += s->span[i].len;
    if (s->nspans < 0 || expect != (long)h->nhops)
        jt_dbcast_fatal(ctx, "broadcast message from rank %d: %u hops where node %u of %u has "
                        "%ld", from, (unsigned)h->nhops, (unsigned)h->place, (unsigned)h->nodes,
                        expect);
    s->hops = jt_dbcast_take_hops(ctx, msg, h, from);
    s->base = in->h;
    s->data = in->data;
    s->in = in;
    plan_sends(s);
    in->fwd_pending += s->nsends;
    in->sag = s;
}

void jt_dbcast_sag_piece(jt_dbcast_ctx *ctx, jt_dbcast_inb *in, const unsigned char *msg,
                         const jt_dbcast_hdr *h, int from)
{
    in->is_sag = 1;
    in->nparts = 0;
    const jt_dbcast_hdr *f = &in->h;
    if (f->tag != h->tag || f->seq != h->seq || f->total_bytes != h->total_bytes)
        jt_dbcast_fatal(ctx, "broadcast message from rank %d disagrees with another of "
                        "broadcast %llu of rank %d", from, (unsigned long long)h->bcast_id,
                        (int)h->origin);
    if (h->range_bytes) {
        if (cover_add(ctx, in, h->range_off, h->range_off + h->range_bytes))
            jt_dbcast_fatal(ctx, "broadcast message from rank %d: bytes [%llu, %llu) of "
                            "broadcast %llu of rank %d came twice", from,
                            (unsigned long long)h->range_off,
                            (unsigned long long)(h->range_off + h->range_bytes),
                            (unsigned long long)h->bcast_id, (int)h->origin);
        memcpy(in->data + h->range_off, msg + h->hdr_bytes, (size_t)h->range_bytes);
    }
    if (h->nodes)
        take_plan(ctx, in, msg, h, from);
    if (jt_dbcast_sag_all(in))
        unlink_partial(ctx, in); /* no more messages of it */
    if (in->sag)
        pump(ctx, in->sag);
}

void jt_dbcast_sag_root(jt_dbcast_ctx *ctx, jt_dbcast_req *r, const void *buf, size_t bytes,
                        int tag, const int *recipients, int n)
{
    jt_dbcast_sag *s = jt_dbcast_xcalloc(ctx, 1, sizeof *s);
    s->nodes = n + 1;
    s->place = 0;
    s->hops = jt_dbcast_xmalloc(ctx, (size_t)(n > 0 ? n : 1) * sizeof *s->hops);
    for (int i = 0; i < n; i++) /* node i + 1 is the list's i-th */
        s->hops[i] = (jt_dbcast_hop){recipients[i], ctx->send_seq[recipients[i]]++};
    s->span[0] = (jt_route_span){1, n};
    s->nspans = 1;
    memset(&s->base, 0, sizeof s->base);
    s->base.routing = JT_ROUTE_SCATTER_ALLGATHER;
    s->base.flags = JT_DBCAST_HDR_INLINE;
    s->base.origin = ctx->rank;
    s->base.tag = tag;
    s->base.bcast_id = ctx->next_id++;
    s->base.total_bytes = bytes;
    s->base.streams = 1;
    s->data = buf;
    s->req = r;
    plan_sends(s);
    r->sag = s;
    r->pending = s->nsends;
    pump(ctx, s);
    if (r->pending == 0)
        r->done = 1;
}
