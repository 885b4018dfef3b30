/*
 * jt_dbcast, progress engine: the table of outstanding MPI requests, what the completion
 * of each kind does, the two ways to drive it (test everything; block on one), the
 * progress thread, and the application's test and wait. See comm/dbcast_internal.h.
 */
#define _POSIX_C_SOURCE 200809L
#include "comm/dbcast_internal.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HEADERS_PER_PROGRESS 64

/* ------------------------------------------------------------ op registry */

void jt_dbcast_op_push(jt_dbcast_ctx *ctx, MPI_Request r, int kind, void *owner, uint32_t seg,
                       void *freebuf)
{
    if (ctx->nops == ctx->capops) {
        int cap = ctx->capops ? 2 * ctx->capops : 64;
        MPI_Request *nr = realloc(ctx->reqs, (size_t)cap * sizeof *nr);
        jt_dbcast_op *no = realloc(ctx->ops, (size_t)cap * sizeof *no);
        int *ni = realloc(ctx->idx, (size_t)cap * sizeof *ni);
        MPI_Status *ns = realloc(ctx->sts, (size_t)cap * sizeof *ns);
        if (!nr || !no || !ni || !ns)
            jt_dbcast_fatal(ctx, "out of memory (request table of %d)", cap);
        ctx->sts = ns;
        ctx->reqs = nr;
        ctx->ops = no;
        ctx->idx = ni;
        ctx->capops = cap;
    }
    ctx->reqs[ctx->nops] = r;
    ctx->ops[ctx->nops] = (jt_dbcast_op){kind, owner, seg, freebuf};
    ctx->nops++;
}

static void handle_op(jt_dbcast_ctx *ctx, const jt_dbcast_op *op, const MPI_Status *st)
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
        unsigned char *msg = jt_dbcast_xmalloc(ctx, (size_t)count);
        memcpy(msg, ctx->hdr_buf, (size_t)count);
        jt_dbcast_header_recv_post(ctx);
        jt_dbcast_header_arrived(ctx, msg, (size_t)count, st->MPI_SOURCE);
        break;
    }
    case OP_BARRIER:
        ctx->barrier_done = 1;
        break;
    case OP_SEG_SEND_ROOT: {
        jt_dbcast_out *o = op->owner;
        free(op->freebuf); /* an inline message */
        o->q.inflight--;
        if (--o->req->pending == 0)
            o->req->done = 1;
        else
            jt_dbcast_sendq_pump(ctx, &o->q, &o->h, o->h.nseg, OP_SEG_SEND_ROOT, o);
        break;
    }
    case OP_SEG_SEND_FWD: {
        jt_dbcast_part *p = op->owner;
        free(op->freebuf); /* an inline message */
        p->in->fwd_pending--;
        p->q.inflight--;
        jt_dbcast_sendq_pump(ctx, &p->q, &p->h, p->next_fwd, OP_SEG_SEND_FWD, p);
        jt_dbcast_inb_check(ctx, p->in);
        break;
    }
    case OP_SAG_SEND:
        free(op->freebuf);
        jt_dbcast_sag_sent(ctx, op->owner);
        break;
    case OP_SEG_RECV: {
        jt_dbcast_part *p = op->owner;
        p->arrived++;
        p->in->arrived++;
        p->seg_done[op->seg] = 1;
        /* Forward in segment order: the child matches segments by order on the stream
         * tag, and receives may complete out of order. */
        while (p->next_fwd < p->h.nseg && p->seg_done[p->next_fwd]) {
            p->in->fwd_pending += p->nkids;
            ctx->stats.forwarded_bytes +=
                (uint64_t)p->nkids * jt_dbcast_seg_len(&p->h, p->next_fwd);
            p->next_fwd++;
        }
        jt_dbcast_sendq_pump(ctx, &p->q, &p->h, p->next_fwd, OP_SEG_SEND_FWD, p);
        jt_dbcast_inb_check(ctx, p->in);
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
        jt_dbcast_done *nd = realloc(ctx->done, (size_t)ctx->capops * sizeof *nd);
        if (!nd)
            jt_dbcast_fatal(ctx, "out of memory");
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
int jt_dbcast_progress_locked(jt_dbcast_ctx *ctx)
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
int jt_dbcast_progress_block(jt_dbcast_ctx *ctx)
{
    if (ctx->nops == 0)
        return 0;
    int i = MPI_UNDEFINED;
    MPI_Status st;
    MPICHECK(ctx, MPI_Waitany(ctx->nops, ctx->reqs, &i, &st));
    if (i == MPI_UNDEFINED)
        return 0;
    jt_dbcast_op op = ctx->ops[i];
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
        int ev = jt_dbcast_progress_locked(ctx);
        pthread_mutex_unlock(&ctx->lock);
        idle = ev ? 0 : idle + 1;
        if (!ev)
            idle_pause(idle);
    }
    return NULL;
}

void jt_dbcast_thread_start(jt_dbcast_ctx *ctx)
{
    if (pthread_create(&ctx->thread, NULL, progress_main, ctx) != 0)
        jt_dbcast_fatal(ctx, "cannot create the progress thread");
    ctx->thread_started = 1;
}

void jt_dbcast_thread_stop(jt_dbcast_ctx *ctx)
{
    if (ctx->thread_started) {
        atomic_store(&ctx->stop, 1);
        pthread_join(ctx->thread, NULL);
        ctx->thread_started = 0;
    }
}

/* ------------------------------------------------------------ test and wait */

int jt_dbcast_progress(jt_dbcast_ctx *ctx)
{
    if (!ctx)
        return jt_dbcast_complain(NULL, 0, JT_DBCAST_EINVAL, "jt_dbcast_progress",
                                  "context is NULL");
    pthread_mutex_lock(&ctx->lock);
    int ev = jt_dbcast_progress_locked(ctx);
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
    for (int i = 0; i < r->nout; i++)
        jt_dbcast_sendq_free(&r->out[i].q);
    jt_dbcast_sag_free(r->sag);
    free(r);
    ctx->live_reqs--;
    *reqp = NULL;
    return rc;
}

int jt_dbcast_test(jt_dbcast_ctx *ctx, jt_dbcast_req **reqp, int *flag, jt_dbcast_status *status)
{
    const char *fn = "jt_dbcast_test";
    if (!ctx)
        return jt_dbcast_complain(NULL, 0, JT_DBCAST_EINVAL, fn, "context is NULL");
    if (!reqp || !*reqp || !flag)
        return BAD(ctx, fn, "request or flag pointer is NULL");
    pthread_mutex_lock(&ctx->lock);
    jt_dbcast_progress_locked(ctx);
    int rc = finish_locked(ctx, reqp, flag, status);
    pthread_mutex_unlock(&ctx->lock);
    return rc;
}

/* Drives the engine until *flag (a field of a request or of the context) is set. */
void jt_dbcast_wait_flag_locked(jt_dbcast_ctx *ctx, const int *flag)
{
    int idle = 0;
    while (!*flag) {
        if (ctx->block) {
            jt_dbcast_progress_block(ctx);
            continue;
        }
        int ev = jt_dbcast_progress_locked(ctx);
        if (*flag)
            break;
        idle = ev ? 0 : idle + 1;
        pthread_mutex_unlock(&ctx->lock); /* let the progress thread and others in */
        if (!ev && !jt_dbcast_under_smpi())
            idle_pause(idle);
        pthread_mutex_lock(&ctx->lock);
    }
}

int jt_dbcast_wait(jt_dbcast_ctx *ctx, jt_dbcast_req **reqp, jt_dbcast_status *status)
{
    const char *fn = "jt_dbcast_wait";
    if (!ctx)
        return jt_dbcast_complain(NULL, 0, JT_DBCAST_EINVAL, fn, "context is NULL");
    if (!reqp || !*reqp)
        return BAD(ctx, fn, "request pointer is NULL");
    int flag = 0;
    pthread_mutex_lock(&ctx->lock);
    jt_dbcast_wait_flag_locked(ctx, &(*reqp)->done);
    int rc = finish_locked(ctx, reqp, &flag, status);
    pthread_mutex_unlock(&ctx->lock);
    return rc;
}

int jt_dbcast_test_arrived(jt_dbcast_ctx *ctx, jt_dbcast_req *req, int *flag)
{
    const char *fn = "jt_dbcast_test_arrived";
    if (!ctx)
        return jt_dbcast_complain(NULL, 0, JT_DBCAST_EINVAL, fn, "context is NULL");
    if (!req || !flag)
        return BAD(ctx, fn, "request or flag pointer is NULL");
    pthread_mutex_lock(&ctx->lock);
    jt_dbcast_progress_locked(ctx);
    *flag = req->is_recv ? req->arrived : req->done;
    pthread_mutex_unlock(&ctx->lock);
    return JT_DBCAST_OK;
}

int jt_dbcast_wait_arrived(jt_dbcast_ctx *ctx, jt_dbcast_req *req)
{
    const char *fn = "jt_dbcast_wait_arrived";
    if (!ctx)
        return jt_dbcast_complain(NULL, 0, JT_DBCAST_EINVAL, fn, "context is NULL");
    if (!req)
        return BAD(ctx, fn, "request pointer is NULL");
    pthread_mutex_lock(&ctx->lock);
    jt_dbcast_wait_flag_locked(ctx, req->is_recv ? &req->arrived : &req->done);
    pthread_mutex_unlock(&ctx->lock);
    return JT_DBCAST_OK;
}
