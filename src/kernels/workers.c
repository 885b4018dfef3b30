#include "kernels/workers.h"

#include "core/errors.h"
#include "core/series.h"
#include "core/timer.h"

#include <stdlib.h>
#include <string.h>

static void push(jt_worker *w, double t0, double dt, double stall)
{
    pthread_mutex_lock(&w->mu);
    if (w->n == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 256;
        w->t0 = realloc(w->t0, w->cap * sizeof *w->t0);
        w->dt = realloc(w->dt, w->cap * sizeof *w->dt);
        w->stall = realloc(w->stall, w->cap * sizeof *w->stall);
        if (!w->t0 || !w->dt || !w->stall)
            jt_fatal("out of memory for compute samples");
    }
    w->t0[w->n] = t0;
    w->dt[w->n] = dt;
    w->stall[w->n] = stall;
    w->n++;
    w->done++;
    w->last_end = t0 + dt;
    w->last_dt = dt;
    pthread_mutex_unlock(&w->mu);
}

static void *worker_main(void *arg)
{
    jt_worker *w = arg;
    jt_pool *p = w->pool;
    jt_bind_thread(p->tp, w->core, &w->bind);
    w->ws.stores = p->stores;
    p->kernel->init(&w->ws, p->tp, p->bytes, p->numa, p->reps);
    int have_ctr = jt_counters_open(&w->ctr) == 0;
    pthread_mutex_lock(&p->mu);
    p->ready++;
    if (!have_ctr)
        p->counters = 0;
    pthread_cond_broadcast(&p->cv);
    for (;;) {
        while (!atomic_load(&p->running) && !p->quit)
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->quit)
            break;
        p->busy++;
        pthread_mutex_unlock(&p->mu);
        while (atomic_load_explicit(&p->running, memory_order_relaxed)) {
            double c0 = 0, s0 = 0, c1 = 0, s1 = 0;
            if (have_ctr)
                jt_counters_read(&w->ctr, &c0, &s0);
            double t0 = jt_now();
            p->kernel->sweep(&w->ws);
            double t1 = jt_now();
            if (have_ctr)
                jt_counters_read(&w->ctr, &c1, &s1);
            push(w, t0, t1 - t0, c1 > c0 ? (s1 - s0) / (c1 - c0) : 0.0);
        }
        pthread_mutex_lock(&p->mu);
        p->busy--;
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    jt_counters_close(&w->ctr);
    return NULL;
}

void jt_pool_create(jt_pool *p, const jt_topo *tp, const jt_kernel *k, int n, const int *cores,
                    size_t bytes, int numa, int reps, int stores)
{
    memset(p, 0, sizeof *p);
    p->stores = stores;
    p->n = n;
    p->kernel = k;
    p->tp = tp;
    p->bytes = bytes;
    p->numa = numa;
    p->reps = reps;
    p->counters = n > 0;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    atomic_init(&p->running, 0);
    p->w = calloc((size_t)(n > 0 ? n : 1), sizeof *p->w);
    for (int i = 0; i < n; i++) {
        p->w[i].pool = p;
        p->w[i].core = cores[i];
        pthread_mutex_init(&p->w[i].mu, NULL);
        if (pthread_create(&p->w[i].th, NULL, worker_main, &p->w[i]) != 0)
            jt_fatal("cannot start compute thread %d", i);
    }
    pthread_mutex_lock(&p->mu);
    while (p->ready < n)
        pthread_cond_wait(&p->cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

void jt_pool_start(jt_pool *p)
{
    pthread_mutex_lock(&p->mu);
    p->t_start = jt_now();
    for (int i = 0; i < p->n; i++) {
        pthread_mutex_lock(&p->w[i].mu);
        p->w[i].done = 0;
        p->w[i].last_end = p->t_start; /* the first sweep starts now */
        pthread_mutex_unlock(&p->w[i].mu);
    }
    atomic_store(&p->running, 1);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

void jt_pool_stop(jt_pool *p)
{
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->running, 0);
    while (p->busy > 0)
        pthread_cond_wait(&p->cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

size_t jt_pool_harvest(jt_pool *p, double since, jt_series *dur, jt_series *stall)
{
    size_t moved = 0;
    for (int i = 0; i < p->n; i++) {
        jt_worker *w = &p->w[i];
        pthread_mutex_lock(&w->mu);
        for (size_t k = 0; k < w->n; k++) {
            if (w->t0[k] < since)
                continue;
            jt_series_push(dur, w->dt[k]);
            if (stall && p->counters)
                jt_series_push(stall, w->stall[k]);
            moved++;
        }
        w->n = 0;
        pthread_mutex_unlock(&w->mu);
    }
    return moved;
}

double jt_pool_sweeps(jt_pool *p, double *wall)
{
    double now = jt_now(), sweeps = 0;
    int running = atomic_load(&p->running);
    for (int i = 0; i < p->n; i++) {
        jt_worker *w = &p->w[i];
        pthread_mutex_lock(&w->mu);
        double part = running && w->last_dt > 0 ? (now - w->last_end) / w->last_dt : 0;
        sweeps += (double)w->done + (part < 1 ? part : 1);
        pthread_mutex_unlock(&w->mu);
    }
    *wall = now - p->t_start;
    return sweeps;
}

void jt_pool_destroy(jt_pool *p)
{
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    atomic_store(&p->running, 0);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->n; i++) {
        pthread_join(p->w[i].th, NULL);
        jt_kws_free(&p->w[i].ws, p->tp);
        free(p->w[i].t0);
        free(p->w[i].dt);
        free(p->w[i].stall);
        pthread_mutex_destroy(&p->w[i].mu);
    }
    free(p->w);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
}
