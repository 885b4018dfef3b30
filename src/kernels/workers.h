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
    long done;               /* sweeps finished since jt_pool_start */
    double last_end, last_dt; /* of the latest sweep */
} jt_worker;

typedef struct jt_pool {
    int n;
    jt_worker *w;
    const jt_kernel *kernel;
    const jt_topo *tp;
    size_t bytes;
    int numa, reps, stores;
    double t_start;          /* of the latest jt_pool_start */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int ready, busy, quit;   /* threads initialized, threads sweeping, leave */
    atomic_int running;
    int counters;            /* every thread has its counters */
} jt_pool;

/* Creates n threads on cores[0..n-1]; each binds, allocates on numa and first-touches its
 * arrays, then sleeps.  Returns when all are ready.  stores: JT_STORES_* for copy and triad. */
void jt_pool_create(jt_pool *p, const jt_topo *tp, const jt_kernel *k, int n, const int *cores,
                    size_t bytes, int numa, int reps, int stores);
void jt_pool_start(jt_pool *p);
/* Returns once every thread has finished its sweep and sleeps. */
void jt_pool_stop(jt_pool *p);
/* Moves the sweeps that started at or after `since` into dur (durations) and stall (stalled
 * fractions, when counters exist); drops older ones.  Returns how many were moved. */
size_t jt_pool_harvest(jt_pool *p, double since, struct jt_series *dur, struct jt_series *stall);
/* Sweeps all threads together did since jt_pool_start, sets *wall to the seconds since then:
 * the throughput of the phase is sweeps x bytes per sweep / wall, which a thread that could not
 * run (preempted, starved) lowers instead of merely contributing fewer samples.  The sweep in
 * flight on each thread counts by the part of the thread's previous sweep time it has run (at
 * most one), so the value does not depend on when it is read.  Read it while the pool runs. */
double jt_pool_sweeps(jt_pool *p, double *wall);
void jt_pool_destroy(jt_pool *p);

#endif
