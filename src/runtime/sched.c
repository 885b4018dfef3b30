#include "runtime/sched.h"

#include <stdlib.h>

#if defined(JT_SMPI) || defined(SMPI_H)
#define SCHED_SIM 1
#include <simgrid/actor.h>
#include <simgrid/exec.h>
#include <simgrid/host.h>
#else
#define SCHED_SIM 0
#include <errno.h>
#include <pthread.h>
#include <time.h>
#endif

typedef struct item {
    int prio, task;
} item;

struct jt_sched {
    item *heap;        /* max-heap on (prio, -task) */
    int nheap;
    int *done;         /* completed, not yet taken */
    int ndone;
    int nworkers;
    jt_sched_ops ops;
#if SCHED_SIM
    int dispatching;   /* finish callbacks push from inside dispatch: no re-entry */
    sg_exec_t *run;    /* running executions, one per worker slot (NULL: free) */
    int *run_task;
#else
    pthread_mutex_t mu;
    pthread_cond_t work, finished;
    pthread_t *threads;
    const jt_topo *tp;
    int *cores;        /* per worker, or NULL: unbound */
    jt_binding *bind;  /* per worker, as obtained */
    int stop, started;
#endif
};

static int before(item a, item b) { return a.prio > b.prio || (a.prio == b.prio && a.task < b.task); }

static void heap_push(jt_sched *s, item x)
{
    int i = s->nheap++;
    while (i > 0 && before(x, s->heap[(i - 1) / 2])) {
        s->heap[i] = s->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    s->heap[i] = x;
}

static int heap_pop(jt_sched *s)
{
    int top = s->heap[0].task;
    item x = s->heap[--s->nheap];
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= s->nheap)
            break;
        if (c + 1 < s->nheap && before(s->heap[c + 1], s->heap[c]))
            c++;
        if (!before(s->heap[c], x))
            break;
        s->heap[i] = s->heap[c];
        i = c;
    }
    if (s->nheap)
        s->heap[i] = x;
    return top;
}

static int take(jt_sched *s, int *out, int max)
{
    int n = s->ndone < max ? s->ndone : max;
    for (int i = 0; i < n; i++)
        out[i] = s->done[i];
    for (int i = n; i < s->ndone; i++)
        s->done[i - n] = s->done[i];
    s->ndone -= n;
    return n;
}

/* What both builds allocate: the scheduler, its ready heap and done list.  NULL on failure. */
static jt_sched *sched_alloc(int nworkers, int cap, const jt_sched_ops *ops)
{
    jt_sched *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->nworkers = nworkers < 1 ? 1 : nworkers;
    s->ops = *ops;
    s->heap = malloc((size_t)cap * sizeof *s->heap);
    s->done = malloc((size_t)cap * sizeof *s->done);
    if (!s->heap || !s->done) {
        free(s->heap), free(s->done), free(s);
        return NULL;
    }
    return s;
}

#if SCHED_SIM

jt_sched *jt_sched_create(int nworkers, const jt_topo *tp, const int *cores, int cap,
                          const jt_sched_ops *ops)
{
    jt_sched *s = sched_alloc(nworkers, cap, ops);
    if (!s)
        return NULL;
    s->run = calloc((size_t)s->nworkers, sizeof *s->run);
    s->run_task = calloc((size_t)s->nworkers, sizeof *s->run_task);
    (void)tp, (void)cores; /* no threads: the node's executions run on the rank's host */
    if (!s->run || !s->run_task) {
        jt_sched_destroy(s);
        return NULL;
    }
    return s;
}

void jt_sched_destroy(jt_sched *s)
{
    if (!s)
        return;
    free(s->heap), free(s->done), free(s->run), free(s->run_task), free(s);
}

const jt_binding *jt_sched_binding(const jt_sched *s, int w)
{
    (void)s, (void)w;
    return NULL;
}

/* Finished executions become done (their finish callback first: it may push); then free
 * slots take the most urgent ready tasks. */
static void dispatch(jt_sched *s)
{
    if (s->dispatching)
        return;
    s->dispatching = 1;
    for (int w = 0; w < s->nworkers; w++)
        if (s->run[w] && sg_exec_test(s->run[w])) {
            s->run[w] = NULL;
            if (s->ops.finish)
                s->ops.finish(s->ops.arg, s, s->run_task[w]);
            s->done[s->ndone++] = s->run_task[w];
        }
    for (int w = 0; w < s->nworkers; w++)
        if (!s->run[w] && s->nheap) {
            int t = heap_pop(s);
            s->run_task[w] = t;
            s->run[w] = sg_actor_exec_init(s->ops.cost(s->ops.arg, t));
            sg_exec_start(s->run[w]);
        }
    s->dispatching = 0;
}

void jt_sched_push(jt_sched *s, int task, int prio)
{
    heap_push(s, (item){prio, task});
    dispatch(s);
}

int jt_sched_take_done(jt_sched *s, int *out, int max)
{
    dispatch(s);
    return take(s, out, max);
}

/* Sleep in simulated time, no later than the first running execution ends. */
void jt_sched_wait(jt_sched *s, double max_s)
{
    if (s->ndone)
        return;
    double speed = sg_host_get_speed(sg_host_self()), t = max_s;
    for (int w = 0; w < s->nworkers; w++)
        if (s->run[w]) {
            double left = sg_exec_get_remaining(s->run[w]) / speed;
            t = left < t ? left : t;
        }
    sg_actor_sleep_for(t > 1e-9 ? t : 1e-9);
}

#else

static void *worker(void *p)
{
    jt_sched *s = p;
    pthread_mutex_lock(&s->mu);
    int me = s->started;
    pthread_mutex_unlock(&s->mu);
    if (s->cores)
        jt_bind_thread(s->tp, s->cores[me], &s->bind[me]);
    pthread_mutex_lock(&s->mu);
    s->started++;
    pthread_cond_broadcast(&s->finished);
    for (;;) {
        while (!s->nheap && !s->stop)
            pthread_cond_wait(&s->work, &s->mu);
        if (s->stop)
            break;
        int t = heap_pop(s);
        pthread_mutex_unlock(&s->mu);
        s->ops.exec(s->ops.arg, t);
        if (s->ops.finish)
            s->ops.finish(s->ops.arg, s, t);
        pthread_mutex_lock(&s->mu);
        s->done[s->ndone++] = t;
        pthread_cond_signal(&s->finished);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

jt_sched *jt_sched_create(int nworkers, const jt_topo *tp, const int *cores, int cap,
                          const jt_sched_ops *ops)
{
    jt_sched *s = sched_alloc(nworkers, cap, ops);
    if (!s)
        return NULL;
    int n = s->nworkers;
    s->threads = calloc((size_t)n, sizeof *s->threads);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->work, NULL);
    pthread_cond_init(&s->finished, NULL);
    if (cores) {
        s->tp = tp;
        s->cores = malloc((size_t)n * sizeof *s->cores);
        s->bind = calloc((size_t)n, sizeof *s->bind);
    }
    if (!s->threads || (cores && (!s->cores || !s->bind))) {
        s->nworkers = 0; /* none started */
        jt_sched_destroy(s);
        return NULL;
    }
    for (int w = 0; cores && w < n; w++)
        s->cores[w] = cores[w];
    /* One at a time: each worker reads its index, binds itself and counts itself in. */
    pthread_mutex_lock(&s->mu);
    for (int w = 0; w < s->nworkers; w++) {
        if (pthread_create(&s->threads[w], NULL, worker, s)) {
            pthread_mutex_unlock(&s->mu);
            s->nworkers = w;
            jt_sched_destroy(s);
            return NULL;
        }
        while (s->started == w)
            pthread_cond_wait(&s->finished, &s->mu);
    }
    pthread_mutex_unlock(&s->mu);
    return s;
}

void jt_sched_destroy(jt_sched *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    s->stop = 1;
    pthread_cond_broadcast(&s->work);
    pthread_mutex_unlock(&s->mu);
    for (int w = 0; w < s->nworkers; w++)
        pthread_join(s->threads[w], NULL);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->work);
    pthread_cond_destroy(&s->finished);
    free(s->heap), free(s->done), free(s->threads), free(s->cores), free(s->bind), free(s);
}

const jt_binding *jt_sched_binding(const jt_sched *s, int w)
{
    return s->bind && w >= 0 && w < s->nworkers ? &s->bind[w] : NULL;
}

void jt_sched_push(jt_sched *s, int task, int prio)
{
    pthread_mutex_lock(&s->mu);
    heap_push(s, (item){prio, task});
    pthread_cond_signal(&s->work);
    pthread_mutex_unlock(&s->mu);
}

int jt_sched_take_done(jt_sched *s, int *out, int max)
{
    pthread_mutex_lock(&s->mu);
    int n = take(s, out, max);
    pthread_mutex_unlock(&s->mu);
    return n;
}

void jt_sched_wait(jt_sched *s, double max_s)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    long ns = ts.tv_nsec + (long)(max_s * 1e9);
    ts.tv_sec += ns / 1000000000L;
    ts.tv_nsec = ns % 1000000000L;
    pthread_mutex_lock(&s->mu);
    while (!s->ndone && pthread_cond_timedwait(&s->finished, &s->mu, &ts) != ETIMEDOUT)
        ;
    pthread_mutex_unlock(&s->mu);
}

#endif
