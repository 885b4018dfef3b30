/* A pool of compute threads, each bound to its core, running one kernel on its own arrays.
 * Started and stopped by the communicating thread around the phases of the contention
 * benchmark; idle threads sleep on a condition variable, so "communication alone" really is
 * alone.  Every sweep is timed by the thread that runs it. */
#ifndef JT_WORKERS_H
#define JT_WORKERS_H

#include "core/counters.h"
#include "kernels/kernels.h"

#include <pthread.h>
#include <stdatomic.h>

struct jt_series;

typedef struct jt_worker {
    pthread_t th;
    struct jt_pool *pool;
    int core;
    jt_binding bind;
    jt_kws ws;
    jt_counters ctr;
    pthread_mutex_t mu;   /* guards the samples below */
    double *t0, *dt, *stall; /* start, duration, stalled fraction of each sweep */
    size_t n, cap;
} jt_worker;

typedef struct jt_pool {
    int n;
    jt_worker *w;
    const jt_kernel *kernel;
    const jt_topo *tp;
    size_t bytes;
    int numa, reps;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int ready, busy, quit;   /* threads initialized, threads sweeping, leave */
    atomic_int running;
    int counters;            /* every thread has its counters */
} jt_pool;

/* Creates n threads on cores[0..n-1]; each binds, allocates on numa and first-touches its
 * arrays, then sleeps.  Returns when all are ready. */
void jt_pool_create(jt_pool *p, const jt_topo *tp, const jt_kernel *k, int n, const int *cores,
                    size_t bytes, int numa, int reps);
void jt_pool_start(jt_pool *p);
/* Returns once every thread has finished its sweep and sleeps. */
void jt_pool_stop(jt_pool *p);
/* Moves the sweeps that started at or after `since` into dur (durations) and stall (stalled
 * fractions, when counters exist); drops older ones.  Returns how many were moved. */
size_t jt_pool_harvest(jt_pool *p, double since, struct jt_series *dur, struct jt_series *stall);
void jt_pool_destroy(jt_pool *p);

#endif
