/*
 * jt_dbcast: dynamic broadcasts in the communication layer (source routing).
 * See include/jostle/dbcast.h for the API and docs/dbcast.md for the design;
 * comm/dbcast_internal.h for the wire protocol and which file holds what.
 *
 * This file: a context's life (configuration, init, finalize), errors, statistics.
 */
#define _POSIX_C_SOURCE 200809L
#include "comm/dbcast_internal.h"

#include "core/errors.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ------------------------------------------------------------------ errors */

int jt_dbcast_complain(const jt_dbcast_ctx *ctx, int quiet, int code, const char *fn,
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

/* What every call taking a buffer and returning a request checks first. */
int jt_dbcast_check_call(jt_dbcast_ctx *ctx, const char *fn, const void *buf, size_t bytes,
                         jt_dbcast_req **reqp)
{
    if (!ctx)
        return jt_dbcast_complain(NULL, 0, JT_DBCAST_EINVAL, fn, "context is NULL");
    if (!reqp)
        return BAD(ctx, fn, "request pointer is NULL");
    *reqp = NULL;
    if (!buf && bytes)
        return BAD(ctx, fn, "buffer is NULL for %zu bytes", bytes);
    return JT_DBCAST_OK;
}

void jt_dbcast_fatal(jt_dbcast_ctx *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "jostle: dbcast: rank %d: fatal: ", ctx->rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    /* Not the user's input: the failure status, not the usage one (core/errors.h). */
    MPI_Abort(ctx->comm, JT_EXIT_FAIL);
    exit(JT_EXIT_FAIL);
}

const char *jt_dbcast_strerror(int err)
{
    switch (err) {
    case JT_DBCAST_OK: return "success";
    case JT_DBCAST_EINVAL: return "invalid argument";
    case JT_DBCAST_ETRUNC: return "broadcast larger than the receive buffer";
    case JT_DBCAST_ESTATE: return "requests still pending";
    default: return "unknown error";
    }
}

void *jt_dbcast_xmalloc(jt_dbcast_ctx *ctx, size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        jt_dbcast_fatal(ctx, "out of memory (%zu bytes)", n);
    return p;
}

void *jt_dbcast_xcalloc(jt_dbcast_ctx *ctx, size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz ? sz : 1);
    if (!p)
        jt_dbcast_fatal(ctx, "out of memory (%zu x %zu bytes)", n, sz);
    return p;
}

/* ------------------------------------------------------------ context */

void jt_dbcast_cfg_default(jt_dbcast_cfg *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->routing = JT_ROUTE_AUTO;
    cfg->segment_bytes = 0;
    cfg->inline_bytes = JT_DBCAST_DEFAULT_INLINE;
    cfg->progress = JT_PROGRESS_AUTO;
    cfg->quiet = 0;
    cfg->wait = JT_WAIT_AUTO;
    cfg->probe = 1;
    jt_dbcast_model_default(&cfg->model);
}

/* A configuration refused by jt_dbcast_init (no context yet): said unless cfg->quiet. */
#define REFUSE(...) jt_dbcast_complain(NULL, cfg->quiet, JT_DBCAST_EINVAL, fn, __VA_ARGS__)

/* What a context may start with: MPI initialized, a communicator, a configuration within
 * its bounds.  Returns JT_DBCAST_OK, or JT_DBCAST_EINVAL (said unless cfg->quiet). */
static int check_cfg(MPI_Comm comm, const jt_dbcast_cfg *cfg, const char *fn)
{
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited)
        return REFUSE("MPI is not initialized");
    if (comm == MPI_COMM_NULL)
        return REFUSE("communicator is MPI_COMM_NULL");
    if ((int)cfg->routing < 0 || cfg->routing >= JT_ROUTE_COUNT_)
        return REFUSE("unknown routing %d (expected auto, flat, binomial, chain, "
                      "pipeline-chain, pipeline-tree, two-tree, knomial-4, knomial-8, "
                      "knomial-16, scatter-allgather)", (int)cfg->routing);
    if (cfg->segment_bytes > JT_DBCAST_MAX_SEGMENT)
        return REFUSE("segment_bytes %zu exceeds the maximum %zu (1 GiB)", cfg->segment_bytes,
                      JT_DBCAST_MAX_SEGMENT);
    if (cfg->inline_bytes > MAX_INLINE)
        return REFUSE("inline_bytes %zu exceeds the maximum %zu (1 MiB)", cfg->inline_bytes,
                      MAX_INLINE);
    const char *why = NULL;
    const jt_dbcast_model *m = &cfg->model;
    if (jt_dbcast_model_check(m, &why))
        return REFUSE("cost model (latency %g s, overhead %g s, bandwidth %g B/s, "
                      "forward delay %g s, duplex %g, %d pieces) is not allowed: %s "
                      "(jt_dbcast_cfg_default fills it)", m->latency, m->overhead,
                      m->bandwidth, m->forward_delay, m->duplex, m->npieces, why);
    if (cfg->probe != 0 && cfg->probe != 1)
        return REFUSE("probe %d is not 0 or 1", cfg->probe);
    if ((int)cfg->wait < JT_WAIT_AUTO || cfg->wait > JT_WAIT_SPIN)
        return REFUSE("unknown wait mode %d", (int)cfg->wait);
    return JT_DBCAST_OK;
}

/* The progress mode of cfg at the thread level MPI granted: auto is the thread where threads
 * may call MPI (MPI_THREAD_MULTIPLE, and not SimGrid), else polling.  A thread asked for where
 * it cannot be is refused: JT_DBCAST_EINVAL (said unless cfg->quiet). */
static int progress_mode(const jt_dbcast_cfg *cfg, int level, const char *fn,
                         jt_dbcast_progress_mode *mode)
{
    *mode = cfg->progress;
    switch (*mode) {
    case JT_PROGRESS_AUTO:
        *mode = (level == MPI_THREAD_MULTIPLE && !jt_dbcast_under_smpi()) ? JT_PROGRESS_THREAD
                                                                           : JT_PROGRESS_POLL;
        return JT_DBCAST_OK;
    case JT_PROGRESS_THREAD:
        if (jt_dbcast_under_smpi())
            return REFUSE("progress thread requested, but SimGrid forbids MPI calls from "
                          "extra threads: use JT_PROGRESS_POLL");
        if (level != MPI_THREAD_MULTIPLE)
            return REFUSE("progress thread requested, but MPI granted thread level %d, "
                          "not MPI_THREAD_MULTIPLE (use MPI_Init_thread or "
                          "JT_PROGRESS_POLL)", level);
        return JT_DBCAST_OK;
    case JT_PROGRESS_POLL:
        return JT_DBCAST_OK;
    default:
        return REFUSE("unknown progress mode %d", (int)*mode);
    }
}
#undef REFUSE

/* Stream tags go from TAG_STREAM_MIN to the communicator's MPI_TAG_UB (at least the
 * standard's 32767): how many there are. */
static long long stream_span(MPI_Comm comm)
{
    void *attr = NULL;
    int flag = 0;
    MPI_Comm_get_attr(comm, MPI_TAG_UB, &attr, &flag);
    int tag_ub = (flag && attr) ? *(int *)attr : 32767;
    if (tag_ub < 32767)
        tag_ub = 32767; /* the standard's minimum */
    return (long long)tag_ub - TAG_STREAM_MIN + 1;
}

/* The context on its own duplicate of comm: the model fitted by the probe (collective), the
 * header receive posted, the per-rank counters, and the progress thread if mode has one. */
static void open_ctx(jt_dbcast_ctx *ctx, MPI_Comm comm)
{
    MPICHECK(ctx, MPI_Comm_dup(comm, &ctx->comm));
    MPI_Comm_rank(ctx->comm, &ctx->rank);
    MPI_Comm_size(ctx->comm, &ctx->size);
    ctx->hdr_cap = jt_dbcast_hdr_max((uint32_t)ctx->size) + MAX_INLINE;
    ctx->hdr_buf = jt_dbcast_xmalloc(ctx, ctx->hdr_cap);
    ctx->model.fitted = 0;
    if (ctx->cfg.probe)
        jt_dbcast_probe_fit(ctx); /* before any header can arrive */
    /* what the cost of small payloads depends on */
    ctx->model.inline_bytes = ctx->cfg.inline_bytes;
    jt_dbcast_header_recv_post(ctx);
    ctx->stream_span = stream_span(ctx->comm);
    ctx->send_seq = jt_dbcast_xcalloc(ctx, (size_t)ctx->size, sizeof *ctx->send_seq);
    ctx->expect_seq = jt_dbcast_xcalloc(ctx, (size_t)ctx->size, sizeof *ctx->expect_seq);
    ctx->stream_next = jt_dbcast_xcalloc(ctx, (size_t)ctx->size, sizeof *ctx->stream_next);
    ctx->mark = jt_dbcast_xcalloc(ctx, (size_t)ctx->size, sizeof *ctx->mark);
    pthread_mutex_init(&ctx->lock, NULL);
    atomic_init(&ctx->stop, 0);
    if (ctx->mode == JT_PROGRESS_THREAD)
        jt_dbcast_thread_start(ctx);
}

jt_dbcast_ctx *jt_dbcast_init(MPI_Comm comm, const jt_dbcast_cfg *cfgp)
{
    const char *fn = "jt_dbcast_init";
    jt_dbcast_cfg cfg;
    if (cfgp)
        cfg = *cfgp;
    else
        jt_dbcast_cfg_default(&cfg);
    if (check_cfg(comm, &cfg, fn) != JT_DBCAST_OK)
        return NULL;
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    jt_dbcast_progress_mode mode;
    if (progress_mode(&cfg, level, fn, &mode) != JT_DBCAST_OK)
        return NULL;

    jt_dbcast_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx) { /* the machine's failure, not the caller's: fatal, as in jt_dbcast_fatal */
        fprintf(stderr, "jostle: dbcast: %s: fatal: out of memory\n", fn);
        MPI_Abort(comm, JT_EXIT_FAIL);
        exit(JT_EXIT_FAIL);
    }
    ctx->cfg = cfg;
    ctx->mode = mode;
    ctx->model = cfg.model;
    /* Blocking with the lock held is safe only when no other thread may need the context
     * (or the MPI library) meanwhile: never beside the progress thread, and by default
     * only where threads cannot call MPI concurrently. */
    ctx->block = mode == JT_PROGRESS_POLL &&
                 (cfg.wait == JT_WAIT_BLOCK ||
                  (cfg.wait == JT_WAIT_AUTO &&
                   (level < MPI_THREAD_MULTIPLE || jt_dbcast_under_smpi())));
    open_ctx(ctx, comm);
    return ctx;
}

jt_dbcast_progress_mode jt_dbcast_progress_mode_used(const jt_dbcast_ctx *ctx)
{
    return ctx->mode;
}

void jt_dbcast_get_model(const jt_dbcast_ctx *ctx, jt_dbcast_model *model)
{
    *model = ctx->model;
}

void jt_dbcast_get_stats(jt_dbcast_ctx *ctx, jt_dbcast_stats *stats)
{
    pthread_mutex_lock(&ctx->lock);
    *stats = ctx->stats;
    pthread_mutex_unlock(&ctx->lock);
}

int jt_dbcast_finalize(jt_dbcast_ctx *ctx)
{
    if (!ctx)
        return JT_DBCAST_OK;
    int rc = JT_DBCAST_OK;
    jt_dbcast_thread_stop(ctx);
    pthread_mutex_lock(&ctx->lock);
    if (ctx->live_reqs > 0) {
        rc = jt_dbcast_complain(ctx, ctx->cfg.quiet, JT_DBCAST_ESTATE, "jt_dbcast_finalize",
                                "%ld request(s) not completed by jt_dbcast_wait/test",
                                ctx->live_reqs);
    }
    /* Drain: forwarding may still be needed by others even when our application is done.
     * No other thread uses the context now: waits may block. */
    ctx->block = 1;
    while (ctx->nops > 1) /* more than the header receive */
        jt_dbcast_progress_block(ctx);
    MPI_Request barrier;
    MPICHECK(ctx, MPI_Ibarrier(ctx->comm, &barrier));
    jt_dbcast_op_push(ctx, barrier, OP_BARRIER, NULL, 0, NULL);
    jt_dbcast_wait_flag_locked(ctx, &ctx->barrier_done);
    /* Everyone's transfers are done: close the header receive with an empty message to
     * ourselves (a header is never empty), handling any header that comes before it. */
    MPI_Request close;
    static const char nothing = 0;
    MPICHECK(ctx, MPI_Isend(&nothing, 0, MPI_BYTE, ctx->rank, TAG_HDR, ctx->comm, &close));
    jt_dbcast_op_push(ctx, close, OP_HDR_SEND, NULL, 0, NULL);
    while (ctx->hdr_open)
        jt_dbcast_progress_block(ctx);
    /* One more sweep for what may still be in transit to a rank that never receives
     * it (an application error). What is still pending is released, not waited for:
     * its peer may have left already. */
    jt_dbcast_progress_locked(ctx);
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
    for (jt_dbcast_inb *in = ctx->unexp_head; in;) {
        jt_dbcast_inb *n = in->next;
        if (unexp < 4 && !ctx->cfg.quiet)
            fprintf(stderr, "jostle: dbcast: rank %d: broadcast from rank %d tag %d (%llu bytes) "
                            "arrived but was never received\n",
                    ctx->rank, (int)in->h.origin, (int)in->h.tag,
                    (unsigned long long)in->h.total_bytes);
        unexp++;
        jt_dbcast_inb_free(ctx, in);
        in = n;
    }
    for (jt_dbcast_inb *in = ctx->hold; in;) {
        jt_dbcast_inb *n = in->next;
        unexp++;
        jt_dbcast_inb_free(ctx, in);
        in = n;
    }
    if (unexp > 0 && rc == JT_DBCAST_OK)
        rc = jt_dbcast_complain(ctx, ctx->cfg.quiet, JT_DBCAST_ESTATE, "jt_dbcast_finalize",
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
