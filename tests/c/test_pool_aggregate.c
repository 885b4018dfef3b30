/* What the phase's compute throughput must do when a thread is starved (kernels/workers.h):
 * jt_pool_sweeps counts the sweeps each thread did, so a thread that could not run lowers the
 * aggregate instead of being credited with the pace of the others, as a median over the
 * sweeps that were timed would credit it (every sample would come from the threads that ran).
 * Checked by counting, with no clock in any assertion: each sweep of this kernel waits for a
 * permit the test hands out, so "starved" is exact (the victim gets none) and the counts are
 * known.  The same effect in time, on a shared core, is bench/pool_aggregate.py's target. */
#include "check.h"

#include "core/series.h"
#include "kernels/stream_loops.h"
#include "kernels/workers.h"

#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>

#define K 20 /* sweeps granted per running thread in a phase */

static atomic_int permits[2];

static void gate_init(jt_kws *w, const jt_topo *tp, size_t bytes, int numa, int reps)
{
    (void)tp, (void)bytes, (void)numa, (void)reps;
    jt_worker *me = (jt_worker *)((char *)w - offsetof(jt_worker, ws));
    w->n = (size_t)(me - me->pool->w); /* which thread of the pool: 0 or 1 */
    w->bytes = 1.0;
}

/* One sweep = one permit of this thread, or the sweep in flight when the pool stops (released
 * by the stop itself, so that no other sweep can start between a release and the stop). */
static void gate_sweep(jt_kws *w)
{
    atomic_int *mine = &permits[w->n];
    jt_worker *me = (jt_worker *)((char *)w - offsetof(jt_worker, ws));
    for (;;) {
        if (!atomic_load(&me->pool->running))
            return;
        int k = atomic_load(mine);
        if (k > 0 && atomic_compare_exchange_weak(mine, &k, k - 1))
            return;
        sched_yield();
    }
}

static const jt_kernel gate = {"test: one sweep per permit", 0, 0, gate_init, gate_sweep};

static long done(jt_pool *p, int t)
{
    pthread_mutex_lock(&p->w[t].mu);
    long d = p->w[t].done;
    pthread_mutex_unlock(&p->w[t].mu);
    return d;
}

/* A phase: thread t gets grant[t] permits; once they are used, the aggregate's sweeps are read
 * while the pool runs, then the pool is stopped (which releases the sweeps waiting for a
 * permit).  Returns the sweeps read; *samples the sweeps harvested, *after the sweeps counted
 * once stopped. */
static double phase(jt_pool *p, const int grant[2], size_t *samples, double *after)
{
    double since = 0, wall;
    jt_pool_start(p);
    since = p->t_start;
    atomic_store(&permits[0], grant[0]);
    atomic_store(&permits[1], grant[1]);
    while (done(p, 0) < grant[0] || done(p, 1) < grant[1])
        sched_yield();
    double sweeps = jt_pool_sweeps(p, &wall);
    jt_pool_stop(p);
    *after = jt_pool_sweeps(p, &wall);
    jt_series dur = {0};
    *samples = jt_pool_harvest(p, since, &dur, NULL);
    CHECK(dur.n == *samples);
    jt_series_free(&dur);
    return sweeps;
}

int main(void)
{
    jt_topo tp;
    char err[1024];
    CHECK(jt_topo_load(&tp, NULL, err, sizeof err) == 0);
    jt_pool p;
    const int cores[2] = {0, 0};
    jt_pool_create(&p, &tp, &gate, 2, cores, 0, JT_MEM_ANY, 1, JT_STORES_NORMAL);

    /* Both threads run: 2K sweeps, plus at most one in flight per thread. */
    size_t n_alone, n_starved;
    double after;
    double alone = phase(&p, (const int[]){K, K}, &n_alone, &after);
    CHECKF(alone >= 2 * K && alone <= 2 * K + 2, "alone: %g sweeps, expected 2K=%d to 2K+2", alone,
           2 * K);
    /* Stopped, the count is the sweeps finished (no part in flight), and each is one sample. */
    CHECKF(after == (double)(done(&p, 0) + done(&p, 1)) && (double)n_alone == after,
           "alone, stopped: %g sweeps counted, %zu samples, %ld + %ld done", after, n_alone,
           done(&p, 0), done(&p, 1));

    /* Thread 1 starved (no permit): K sweeps of thread 0, the victim adds at most the part of
     * one in flight; so the aggregate is about half of alone's, not alone's. */
    double starved = phase(&p, (const int[]){K, 0}, &n_starved, &after);
    CHECKF(starved >= K && starved <= K + 2, "starved: %g sweeps, expected K=%d to K+2", starved,
           K);
    CHECKF(starved <= alone / 2 + 2, "starved %g sweeps against %g alone", starved, alone);
    /* The samples come from the thread that ran (plus the victim's sweep released at the end):
     * threads x their median rate would count 2K where K were done. */
    CHECKF(n_starved <= (size_t)K + 2 && (double)n_starved == after,
           "starved: %zu samples, %g sweeps once stopped", n_starved, after);
    CHECK(done(&p, 1) <= 1);

    jt_pool_destroy(&p);
    jt_topo_destroy(&tp);
    TEST_END();
}
