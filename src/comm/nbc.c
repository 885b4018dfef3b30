#include "comm/nbc.h"

#include "core/errors.h"
#include "core/timer.h"

#include <limits.h>
#include <math.h>
#include <sched.h>
#include <string.h>

const char *const jt_nbc_names[] = {"ialltoall", "igather", "iscatter", "ibcast", "iallgather",
                                    "ireduce", "iallreduce", "isendrecv", NULL};

int jt_nbc_find(const char *name)
{
    for (int i = 0; jt_nbc_names[i]; i++)
        if (name && strcmp(jt_nbc_names[i], name) == 0)
            return i;
    return -1;
}

void jt_nbc_buffers(jt_nbc_op op, size_t size, int n, size_t *send, size_t *recv)
{
    size_t all = size * (size_t)n;
    switch (op) {
    case JT_NBC_IALLTOALL: *send = all, *recv = all; break;
    case JT_NBC_IGATHER: *send = size, *recv = all; break;    /* the root's */
    case JT_NBC_ISCATTER: *send = all, *recv = size; break;
    case JT_NBC_IALLGATHER: *send = size, *recv = all; break;
    default: *send = size, *recv = size; break;
    }
}

int jt_nbc_post(jt_nbc_op op, size_t size, MPI_Comm comm, int root, void *s, void *r,
                MPI_Request req[2])
{
    int c = (int)size, fc = (int)(size / sizeof(float));
    switch (op) { /* nothing else inside the timed region: t_pure is the collective's */
    case JT_NBC_IALLTOALL: MPI_Ialltoall(s, c, MPI_BYTE, r, c, MPI_BYTE, comm, req); return 1;
    case JT_NBC_IGATHER: MPI_Igather(s, c, MPI_BYTE, r, c, MPI_BYTE, root, comm, req); return 1;
    case JT_NBC_ISCATTER: MPI_Iscatter(s, c, MPI_BYTE, r, c, MPI_BYTE, root, comm, req); return 1;
    case JT_NBC_IBCAST: MPI_Ibcast(s, c, MPI_BYTE, root, comm, req); return 1;
    case JT_NBC_IALLGATHER: MPI_Iallgather(s, c, MPI_BYTE, r, c, MPI_BYTE, comm, req); return 1;
    case JT_NBC_IREDUCE: MPI_Ireduce(s, r, fc, MPI_FLOAT, MPI_SUM, root, comm, req); return 1;
    case JT_NBC_IALLREDUCE: MPI_Iallreduce(s, r, fc, MPI_FLOAT, MPI_SUM, comm, req); return 1;
    case JT_NBC_ISENDRECV: {
        int me, n;
        MPI_Comm_rank(comm, &me);
        MPI_Comm_size(comm, &n);
        int peer = me ^ 1;
        if (peer >= n)
            return 0;
        MPI_Irecv(r, c, MPI_BYTE, peer, 7, comm, &req[0]);
        MPI_Isend(s, c, MPI_BYTE, peer, 7, comm, &req[1]);
        return 2;
    }
    default: return 0;
    }
}

void jt_nbc_wait(MPI_Request req[2], int nreq)
{
    MPI_Status st[2];
    if (nreq == 1) /* a collective: what a bare loop calls (Waitall costs more per call) */
        MPI_Wait(req, st);
    else
        MPI_Waitall(nreq, req, st);
}

int jt_nbc_test(MPI_Request req[2], int nreq)
{
    MPI_Status st[2];
    int flag = 0;
    MPI_Testall(nreq, req, &flag, st);
    return flag;
}

/* ---- progress thread ------------------------------------------------------------------- */

/* Waits for requests or the end: spinning (a yield per turn, so a thread that shares its core
 * lets the other run) or asleep on the condition variable (a wake-up costs microseconds). */
static int progress_idle(jt_progress_thread *p)
{
    if (p->spin) {
        while (!atomic_load(&p->pending) && !atomic_load(&p->quit))
            sched_yield();
    } else {
        pthread_mutex_lock(&p->mu);
        while (!atomic_load(&p->pending) && !atomic_load(&p->quit))
            pthread_cond_wait(&p->cv, &p->mu);
        pthread_mutex_unlock(&p->mu);
    }
    return !atomic_load(&p->quit);
}

static void *progress_main(void *arg)
{
    jt_progress_thread *p = arg;
    jt_bind_thread(p->tp, p->core, &p->bind);
    pthread_mutex_lock(&p->mu);
    p->ready = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    while (progress_idle(p)) {
        while (!jt_nbc_test(p->req, p->nreq))
            ;
        atomic_store(&p->pending, 0);
        atomic_store(&p->done, 1);
    }
    return NULL;
}

void jt_progress_thread_start(jt_progress_thread *p, const jt_topo *tp, int core, int spin)
{
    memset(p, 0, sizeof *p);
    p->tp = tp;
    p->core = core;
    p->spin = spin;
    atomic_init(&p->done, 1);
    atomic_init(&p->pending, 0);
    atomic_init(&p->quit, 0);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    if (pthread_create(&p->th, NULL, progress_main, p) != 0)
        jt_fatal("cannot create the progress thread");
    pthread_mutex_lock(&p->mu);
    while (!p->ready)
        pthread_cond_wait(&p->cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

/* The flag is raised under the mutex so that a sleeping thread cannot miss the signal. */
static void progress_raise(jt_progress_thread *p, atomic_int *flag)
{
    pthread_mutex_lock(&p->mu);
    atomic_store(flag, 1);
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

void jt_progress_thread_hand(jt_progress_thread *p, MPI_Request *req, int nreq)
{
    p->req = req;
    p->nreq = nreq;
    atomic_store(&p->done, 0);
    if (p->spin)
        atomic_store(&p->pending, 1);
    else
        progress_raise(p, &p->pending);
}

void jt_progress_thread_wait(jt_progress_thread *p)
{
    while (!atomic_load(&p->done))
        sched_yield();
}

void jt_progress_thread_stop(jt_progress_thread *p)
{
    progress_raise(p, &p->quit);
    pthread_join(p->th, NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
}

void jt_nbc_pure_batch(jt_nbc_op op, size_t size, MPI_Comm comm, int root, void *sbuf,
                       void *rbuf, int n, double *t)
{
    MPI_Barrier(comm);
    double prev = jt_now();
    for (int k = 0; k < n; k++) { /* one clock read per sample, as the harness subtracts */
        MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        int nr = jt_nbc_post(op, size, comm, root, sbuf, rbuf, req);
        jt_nbc_wait(req, nr);
        double now = jt_now();
        t[k] = now - prev;
        prev = now;
    }
}

void jt_nbc_slowest(const double *all, int nranks, size_t stride, size_t step, size_t b,
                    double *out)
{
    const double *slow = all;
    double worst = -1;
    for (int r = 0; r < nranks; r++) {
        const double *v = all + (size_t)r * stride;
        double sum = 0;
        for (size_t i = 0; i < b; i++)
            sum += v[i * step];
        if (sum > worst) {
            worst = sum;
            slow = v;
        }
    }
    for (size_t i = 0; i < b; i++)
        out[i] = slow[i * step];
}

double jt_nbc_overlap(double t_pure, double t_cpu, double t_ovrl, int use_max)
{
    double d = use_max ? fmax(t_pure, t_cpu) : fmin(t_pure, t_cpu);
    return d > 0 ? fmax(0.0, fmin(1.0, (t_pure + t_cpu - t_ovrl) / d)) : NAN;
}
