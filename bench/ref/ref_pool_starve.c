/* Timing of what tests/c/test_pool_aggregate.c checks by counting: the compute throughput of a
 * phase is the pool's aggregate (sweeps of all threads / wall time), not a median over sweeps:
 * with a deliberately starved thread, "together" cannot exceed "alone" through it, while the
 * median over sweeps reads the starvation as a speed-up.  bench/pool_aggregate.py runs it and
 * holds the targets.
 *
 * Two threads share one core, each sweep 5 ms of arithmetic (CPU time).  Alone, both run all the
 * time and share the core.  Together, one thread naps 4x its last sweep's wall time inside each
 * sweep (starved), so the other has the core most of the time: its sweeps get faster and make
 * most of the samples, though the core does no more work.  On an idle core the median sweep rate
 * together/alone is ~2 and the aggregate's ~1; with k other busy threads on that core they are
 * (k+2)/(k+1) and less than 1.  Phases alternate, and ratios are medians over rounds, because
 * the machine's load changes from one second to the next.
 * Usage: ref_pool_starve [ROUNDS]; prints per round, then the medians over rounds:
 * "aggregate_ratio" (together / alone), "overstate_alone" and "overstate_together" (median
 * sweep rate x threads / aggregate). */

#include "core/series.h"
#include "core/stats.h"
#include "core/timer.h"
#include "kernels/stream_loops.h"
#include "kernels/workers.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static atomic_int starve;
static _Atomic(jt_kws *) victim;

static void spin_init(jt_kws *w, const jt_topo *tp, size_t bytes, int numa, int reps)
{
    (void)tp, (void)bytes, (void)numa, (void)reps;
    jt_kws *none = NULL;
    atomic_compare_exchange_strong(&victim, &none, w); /* the first thread is the starved one */
    w->n = 1;
    w->bytes = 1.0; /* one "byte" per sweep: throughputs are in sweeps per second */
}

/* 5 ms of dependent arithmetic (calibrated below); the starved thread naps first. */
static long iters = 1 << 20;

static void spin_sweep(jt_kws *w)
{
    double t0 = jt_now();
    if (atomic_load(&starve) && w == atomic_load(&victim)) {
        double nap = 4 * w->flops; /* the last sweep's wall time, kept in a field tests own */
        nanosleep(&(struct timespec){(time_t)nap, (long)((nap - (time_t)nap) * 1e9)}, NULL);
        t0 = jt_now();
    }
    double x = w->sink + 1.0;
    for (long i = 0; i < iters; i++)
        x = x * 0.999999 + 1e-6;
    w->sink = x;
    w->flops = jt_now() - t0;
}

static const jt_kernel spin = {"test: arithmetic only", 0, 0, spin_init, spin_sweep};

/* One phase of `secs`: (aggregate, median over sweeps) in sweeps per second. */
static void phase(jt_pool *p, double secs, double *agg, double *med)
{
    double since = jt_now();
    jt_pool_start(p);
    nanosleep(&(struct timespec){(time_t)secs, (long)((secs - (time_t)secs) * 1e9)}, NULL);
    double wall, sweeps = jt_pool_sweeps(p, &wall);
    jt_pool_stop(p);
    jt_series dur = {0};
    jt_pool_harvest(p, since, &dur, NULL);
    for (size_t k = 0; k < dur.n; k++)
        dur.v[k] = 1.0 / dur.v[k];
    jt_stats st;
    jt_stats_compute(dur.v, dur.n, &st);
    *agg = sweeps / wall;
    *med = st.median;
    jt_series_free(&dur);
}

#define MAX_ROUNDS 100

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 5;
    if (rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "usage: ref_pool_starve [ROUNDS from 1 to %d]\n", MAX_ROUNDS);
        return 2;
    }
    jt_topo tp;
    char err[1024];
    if (jt_topo_load(&tp, NULL, err, sizeof err)) {
        fprintf(stderr, "ref_pool_starve: %s\n", err);
        return 1;
    }

    /* In CPU time, which other processes on the machine do not stretch. */
    jt_kws cal = {0};
    struct timespec c0, c1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    spin_sweep(&cal);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    iters = (long)((double)iters * 0.005 /
                   ((double)(c1.tv_sec - c0.tv_sec) + 1e-9 * (double)(c1.tv_nsec - c0.tv_nsec)));

    jt_pool p;
    const int cores[2] = {0, 0};
    jt_pool_create(&p, &tp, &spin, 2, cores, 0, JT_MEM_ANY, 1, JT_STORES_NORMAL);
    /* agg: aggregate together / alone; over: median sweep rate x threads / aggregate, per phase */
    double agg[MAX_ROUNDS], over_a[MAX_ROUNDS], over_t[MAX_ROUNDS];
    for (int r = 0; r < rounds; r++) {
        double agg_a, med_a, agg_t, med_t;
        atomic_store(&starve, 0);
        phase(&p, 0.6, &agg_a, &med_a);
        atomic_store(&starve, 1);
        phase(&p, 0.6, &agg_t, &med_t);
        agg[r] = agg_t / agg_a;
        over_a[r] = 2 * med_a / agg_a;
        over_t[r] = 2 * med_t / agg_t;
        printf("round %d: alone %.1f sweeps/s (median sweep %.1f/s), together %.1f (%.1f)\n", r,
               agg_a, med_a, agg_t, med_t);
    }
    jt_pool_destroy(&p);
    jt_stats s_agg, s_a, s_t;
    jt_stats_compute(agg, (size_t)rounds, &s_agg);
    jt_stats_compute(over_a, (size_t)rounds, &s_a);
    jt_stats_compute(over_t, (size_t)rounds, &s_t);
    printf("aggregate_ratio %.6g\noverstate_alone %.6g\noverstate_together %.6g\n", s_agg.median,
           s_a.median, s_t.median);
    jt_topo_destroy(&tp);
    return 0;
}
