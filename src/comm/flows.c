#include "comm/flows.h"

#include "core/errors.h"

#include <stdlib.h>
#include <string.h>

void jt_flows_role(int rank, int size, int pairs, int *side, int *pair, int *peer)
{
    *side = -1;
    *pair = -1;
    *peer = -1;
    if (pairs < 1 || 2 * pairs > size)
        return;
    if (rank < pairs) {
        *side = 0;
        *pair = rank;
        *peer = rank + pairs;
    } else if (rank < 2 * pairs) {
        *side = 1;
        *pair = rank - pairs;
        *peer = rank - pairs;
    }
}

/* Run by the flow's own thread: the binding first, so that its arena is first touched there. */
static void flow_setup(jt_flow *w)
{
    jt_flows *f = w->owner;
    jt_bind_thread(f->topo, w->core, &w->bind);
    jt_buffer_alloc(f->topo, &w->buf, f->arena_bytes, w->numa);
    jt_p2p_init(&w->p2p, w->comm, f->side, f->peer, f->mode, f->buffers, f->window, f->check,
                w->buf.p, w->buf.bytes, f->frames);
    w->p2p.ack_bytes = JT_FLOWS_ACK_BYTES;
}

static void reserve(jt_flow *w, size_t n)
{
    if (n <= w->cap)
        return;
    w->cap = n > 2 * w->cap ? n : 2 * w->cap;
    w->times = realloc(w->times, w->cap * sizeof *w->times);
    if (!w->times)
        jt_fatal("out of memory for %zu samples", w->cap);
}

/* One flow's batch, without barriers (threads, or pingpong without threads after its one). */
static void samples(jt_flow *w, size_t bytes, size_t n, int touch)
{
    if (touch)
        jt_p2p_touch(&w->p2p, bytes);
    for (size_t k = 0; k < n; k++)
        w->times[k] = jt_p2p_sample(&w->p2p, bytes);
}

/* osu_latency_mt's barrier, with f->mu held: the last of the rank's threads to arrive takes it,
 * in the thread, and goes straight on to its samples; the others wait for it. */
static void batch_barrier(jt_flows *f)
{
    long g = f->gen;
    if (++f->arrived < f->nflow) {
        while (f->gen == g)
            pthread_cond_wait(&f->cv, &f->mu);
        return;
    }
    MPI_Barrier(f->world);
    f->arrived = 0;
    f->gen = g + 1;
    pthread_cond_broadcast(&f->cv);
}

static void *worker(void *arg)
{
    jt_flow *w = arg;
    jt_flows *f = w->owner;
    flow_setup(w);
    pthread_mutex_lock(&f->mu);
    f->done++;
    pthread_cond_broadcast(&f->cv);
    long seen = 0;
    for (;;) {
        while (f->job == seen)
            pthread_cond_wait(&f->cv, &f->mu);
        if (f->job < 0)
            break;
        seen = f->job;
        size_t bytes = f->job_bytes, n = f->job_n;
        int touch = f->job_touch;
        batch_barrier(f);
        pthread_mutex_unlock(&f->mu);
        samples(w, bytes, n, touch);
        pthread_mutex_lock(&f->mu);
        f->done++;
        pthread_cond_broadcast(&f->cv);
    }
    pthread_mutex_unlock(&f->mu);
    return NULL;
}

static void wait_done(jt_flows *f, int want)
{
    while (f->done < want)
        pthread_cond_wait(&f->cv, &f->mu);
}

void jt_flows_init(jt_flows *f, const jt_topo *topo, MPI_Comm world, int pairs, int threads,
                   jt_p2p_mode mode, jt_p2p_buffers buffers, int window, int check,
                   size_t arena_bytes, size_t frames, const int *cores, const int *numas)
{
    memset(f, 0, sizeof *f);
    int rank, size;
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    jt_flows_role(rank, size, pairs, &f->side, &f->pair, &f->peer);
    f->topo = topo;
    f->world = world;
    f->threads = threads;
    f->nflow = threads > 0 ? threads : 1;
    f->mode = mode;
    f->flow = calloc((size_t)f->nflow, sizeof *f->flow);
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
    f->buffers = buffers;
    f->window = window;
    f->check = check;
    f->arena_bytes = arena_bytes;
    f->frames = frames;
    for (int t = 0; t < f->nflow; t++) {
        jt_flow *w = &f->flow[t];
        w->owner = f;
        w->index = t;
        w->core = cores[t];
        w->numa = numas[t];
        /* Thread t of every rank on the t-th duplicate: the duplicates are made in the same
         * order everywhere, by the main thread, before any thread communicates. */
        w->comm = world;
        if (threads > 0)
            MPI_Comm_dup(world, &w->comm);
    }
    if (f->side < 0) { /* idle: no buffers, no threads; it joins the barriers */
        for (int t = 0; t < f->nflow; t++)
            jt_p2p_init(&f->flow[t].p2p, f->flow[t].comm, -1, -1, mode, buffers, window, 0,
                        NULL, 0, 1);
        return;
    }
    if (threads == 0) { /* the calling thread is the flow */
        flow_setup(&f->flow[0]);
        return;
    }
    /* One thread at a time sets itself up (hwloc's binding and allocation, one caller). */
    pthread_mutex_lock(&f->mu);
    for (int t = 0; t < f->nflow; t++) {
        pthread_mutex_unlock(&f->mu);
        if (pthread_create(&f->flow[t].th, NULL, worker, &f->flow[t]))
            jt_fatal("cannot start communicating thread %d", t);
        pthread_mutex_lock(&f->mu);
        wait_done(f, t + 1);
    }
    pthread_mutex_unlock(&f->mu);
}

void jt_flows_run(jt_flows *f, size_t bytes, size_t n, int touch)
{
    for (int t = 0; t < f->nflow; t++)
        reserve(&f->flow[t], n);
    if (f->threads == 0) {
        jt_flow *w = &f->flow[0];
        if (f->mode == JT_P2P_PINGPONG) { /* osu_multi_lat: one barrier, then the loop */
            MPI_Barrier(f->world);
            samples(w, bytes, n, touch);
            return;
        }
        if (touch)
            jt_p2p_touch(&w->p2p, bytes);
        for (size_t k = 0; k < n; k++) { /* osu_mbw_mr: two barriers before every window */
            MPI_Barrier(f->world);
            MPI_Barrier(f->world);
            w->times[k] = jt_p2p_sample(&w->p2p, bytes);
        }
        return;
    }
    if (f->side < 0) { /* no threads here: the barrier that the others' threads take */
        MPI_Barrier(f->world);
        return;
    }
    pthread_mutex_lock(&f->mu); /* the threads take the batch's barrier (worker) */
    f->done = 0;
    f->job_bytes = bytes;
    f->job_n = n;
    f->job_touch = touch;
    f->job++;
    pthread_cond_broadcast(&f->cv);
    wait_done(f, f->nflow);
    pthread_mutex_unlock(&f->mu);
}

void jt_flows_free(jt_flows *f)
{
    if (f->threads > 0 && f->side >= 0) {
        pthread_mutex_lock(&f->mu);
        f->job = -1;
        pthread_cond_broadcast(&f->cv);
        pthread_mutex_unlock(&f->mu);
        for (int t = 0; t < f->nflow; t++)
            pthread_join(f->flow[t].th, NULL);
    }
    for (int t = 0; f->flow && t < f->nflow; t++) {
        jt_flow *w = &f->flow[t];
        jt_p2p_free(&w->p2p);
        if (w->buf.p)
            jt_buffer_free(f->topo, &w->buf);
        if (f->threads > 0)
            MPI_Comm_free(&w->comm);
        free(w->times);
    }
    free(f->flow);
    f->flow = NULL;
    pthread_mutex_destroy(&f->mu);
    pthread_cond_destroy(&f->cv);
}
