/* Execution of a local view (chol_plan.h): the communication loop and the tile kernels. */
#include "runtime/chol_plan.h"
#include "runtime/chol_kernels.h"
#include "runtime/chol_trace.h"

#include "core/errors.h"

#include <stdio.h>
#include <stdlib.h>

#if defined(JT_SMPI) || defined(SMPI_H)
#define CHOL_SIM 1
#else
#define CHOL_SIM 0
#endif

/* Receives posted ahead of need: enough to overlap, few enough that testing them on every
 * turn stays cheap (each test drives the dbcast engine).  Later ones arrive unexpected. */
#define RECV_WINDOW 8
/* Idle waits grow from WAIT_MIN to WAIT_MAX: the forwarding delay of a broadcast through
 * this rank is at most WAIT_MAX while its workers are busy.  Simulated, every wake-up of
 * every node costs real time: 200 µs is ~10% of a 512² tile's transfer at 10 Gb/s. */
#define WAIT_MIN 2e-6
#define WAIT_MAX (CHOL_SIM ? 200e-6 : 50e-6)
/* While sends are in flight the layer posts the next one only when driven: a longer wait
 * would add its length to every send, flat mode paying it once per recipient and trees once
 * per hop.  10 µs is 0.6% of a 512² tile at 10 Gb/s. */
#define WAIT_SEND 10e-6

/* Ordered sending (flat-ordered, dbcast): sends a rank has posted at once as a root.  One:
 * each gets the whole link, the most urgent first; the next is posted when the engine sees
 * the last one complete. */
#define ORDERED_INFLIGHT 1

typedef struct pending {
    int tile;
    jt_dbcast_req *req;
} pending;

typedef struct queued { /* ordered: a send not yet posted, to recip[first .. first+count) */
    int need, seq, tile, first, count;
} queued;

typedef struct loop {
    jt_chol_plan *p;
    jt_sched *s;
    jt_dbcast_ctx *db;
    jt_chol_send how;
    int *done;
    pending *recv;  /* posted, data not yet arrived */
    int nrecv;
    pending *held;  /* arrived, forwarding through here not yet finished; then sends */
    int nheld;
    queued *queue;  /* ordered: sends to post, most urgent first */
    int nqueue, seq;
    pending *out;   /* ordered: posted sends not yet complete */
    int nout;
    int *first;     /* ordered: jt_chol_split_sends' slices of one tile */
} loop;

static void trace_task(jt_chol_plan *p, int kind, int task)
{
    const jt_chol_task *t = &p->tasks[task].t;
    jt_chol_trace_ev(p->trace, kind, (int)t->kind, t->m, t->n, t->k);
}

static void release(jt_chol_plan *p, jt_sched *s, int task)
{
    if (atomic_fetch_sub(&p->left[task], 1) == 1)
        jt_sched_push(s, task, p->tasks[task].prio);
}

static void tile_ready(jt_chol_plan *p, jt_sched *s, int tile)
{
    const jt_chol_tile *t = &p->tiles[tile];
    for (int i = 0; i < t->ncons; i++)
        release(p, s, t->cons[i]);
}

/* A worker (natively) or the rank's actor (simulated) saw the task end: its successor on the
 * same tile and, for a final tile, its local readers become ready without waiting for the
 * communication thread. */
void jt_chol_finish(void *arg, jt_sched *s, int task)
{
    jt_chol_plan *p = arg;
    const jt_chol_ltask *t = &p->tasks[task];
    trace_task(p, JT_TR_END, task);
    if (t->next >= 0)
        release(p, s, t->next);
    if (t->final >= 0)
        tile_ready(p, s, t->final);
}

/* A finished task that produced a final tile with recipients: one jt_dbcast call whatever
 * their number (the routing decides the rest), posted now or, ordered, queued; flat-ordered
 * queues one copy per recipient. */
static int finished(loop *L, int task)
{
    const jt_chol_ltask *t = &L->p->tasks[task];
    if (t->final < 0)
        return 0;
    const jt_chol_tile *f = &L->p->tiles[t->final];
    if (f->nrecip == 0)
        return 0;
    if (L->how.ordered) {
        int ns = jt_chol_split_sends(f->nrecip, L->how.routing != JT_ROUTE_FLAT, L->first);
        for (int i = 0; i < ns; i++) {
            int a = L->first[i], b = i + 1 < ns ? L->first[i + 1] : f->nrecip;
            L->queue[L->nqueue++] = (queued){f->need[a], L->seq++, t->final, a, b - a};
        }
        return 0;
    }
    pending *h = &L->held[L->nheld++];
    h->tile = t->final;
    jt_chol_trace_ev(L->p->trace, JT_TR_POST, t->final, f->recip[0], f->nrecip, 0);
    return jt_dbcast_send_routed(L->db, f->a, jt_chol_tile_bytes(L->p), t->final, f->recip, f->nrecip,
                                 L->how.routing, &h->req);
}

/* Ordered: while the root's link is free, the most urgent queued send (highest need of its
 * first recipient, then the first queued) is posted. */
static int post_ordered(loop *L)
{
    while (L->nout < ORDERED_INFLIGHT && L->nqueue) {
        int b = 0;
        for (int i = 1; i < L->nqueue; i++)
            if (L->queue[i].need > L->queue[b].need ||
                (L->queue[i].need == L->queue[b].need && L->queue[i].seq < L->queue[b].seq))
                b = i;
        queued c = L->queue[b];
        L->queue[b] = L->queue[--L->nqueue];
        pending *o = &L->out[L->nout++];
        o->tile = c.tile;
        const jt_chol_tile *f = &L->p->tiles[c.tile];
        jt_chol_trace_ev(L->p->trace, JT_TR_POST, c.tile, f->recip[c.first], c.count, 0);
        int rc = jt_dbcast_send_routed(L->db, f->a, jt_chol_tile_bytes(L->p), c.tile,
                                       f->recip + c.first, c.count, L->how.routing, &o->req);
        if (rc != JT_DBCAST_OK)
            return rc;
    }
    return JT_DBCAST_OK;
}

/* Tests a list; removes completed (or arrived) entries, calling on_arrival for each. */
static int sweep(loop *L, pending *v, int *n, int arrival, int *events)
{
    int k = 0;
    for (int i = 0; i < *n; i++) {
        int flag = 0, rc = arrival ? jt_dbcast_test_arrived(L->db, v[i].req, &flag)
                                   : jt_dbcast_test(L->db, &v[i].req, &flag, NULL);
        if (rc != JT_DBCAST_OK)
            return rc;
        if (flag)
            jt_chol_trace_ev(L->p->trace, arrival ? JT_TR_ARRIVED
                                          : L->p->tiles[v[i].tile].where == JT_TILE_OWNED ? JT_TR_SENT
                                                                                          : JT_TR_FWDONE,
                             v[i].tile, 0, 0, 0);
        if (flag && arrival) {
            tile_ready(L->p, L->s, v[i].tile);
            L->held[L->nheld++] = v[i];
        }
        if (flag)
            (*events)++;
        else
            v[k++] = v[i];
    }
    *n = k;
    return JT_DBCAST_OK;
}

int jt_chol_run(jt_chol_plan *p, jt_sched *s, jt_dbcast_ctx *db, jt_chol_send how)
{
    size_t nt = (size_t)p->ntasks + 1;
    loop L = {p, s, db, how, malloc(nt * sizeof(int)), malloc(RECV_WINDOW * sizeof(pending)), 0,
              malloc((size_t)(p->ntiles + 1) * sizeof(pending)), 0,
              malloc((size_t)(p->nmsgs + 1) * sizeof(queued)), 0, 0,
              malloc(ORDERED_INFLIGHT * sizeof(pending)), 0,
              malloc((size_t)(p->g.P + p->g.Q + 1) * sizeof(int))};
    int rc = JT_DBCAST_OK;
    if (CHOL_SIM) {
        char mode[64];
        snprintf(mode, sizeof mode, "%s%s", how.routing == JT_ROUTE_FLAT ? "flat" : "dbcast-",
                 how.routing == JT_ROUTE_FLAT ? (how.ordered ? "-ordered" : "")
                                              : jt_dbcast_route_name(how.routing));
        p->trace = jt_chol_trace_open(p->rank, mode);
    }
    if (!L.done || !L.recv || !L.held || !L.queue || !L.out || !L.first)
        jt_fatal("rank %d: out of memory for the queues of %d tasks", p->rank, p->ntasks);
    /* Every count is set before the first push: a worker may finish a task and release
     * others at once. */
    for (int i = 0; i < p->ntasks; i++)
        atomic_store(&p->left[i], p->tasks[i].ndeps);
    for (int i = 0; i < p->ntasks; i++)
        if (p->tasks[i].ndeps == 0)
            jt_sched_push(s, i, p->tasks[i].prio);
    int ndone = 0, next_recv = 0;
    double wait = WAIT_MIN, busy = 0, slept = 0;
    long iters = 0;
    while (rc == JT_DBCAST_OK && (ndone < p->ntasks || next_recv < p->nrecv || L.nrecv ||
                                  L.nheld || L.nqueue || L.nout)) {
        int events = 0;
        double tw0 = p->trace ? MPI_Wtime() : 0;
        while (L.nrecv < RECV_WINDOW && next_recv < p->nrecv && rc == JT_DBCAST_OK) {
            pending *r = &L.recv[L.nrecv++];
            r->tile = p->recv_order[next_recv++];
            const jt_chol_tile *t = &p->tiles[r->tile];
            rc = jt_dbcast_recv(db, t->a, jt_chol_tile_bytes(p), jt_chol_owner(&p->g, t->m, t->n),
                                r->tile, &r->req);
        }
        int n = jt_sched_take_done(s, L.done, p->ntasks);
        for (int i = 0; i < n && rc == JT_DBCAST_OK; i++)
            rc = finished(&L, L.done[i]);
        ndone += n;
        events += n;
        if (rc == JT_DBCAST_OK)
            rc = post_ordered(&L);
        if (rc == JT_DBCAST_OK && (L.nrecv || L.nheld || L.nout)) {
            int got = jt_dbcast_progress(db); /* events handled, or an error */
            rc = got < 0 ? got : JT_DBCAST_OK;
        }
        if (rc == JT_DBCAST_OK)
            rc = sweep(&L, L.recv, &L.nrecv, 1, &events);
        if (rc == JT_DBCAST_OK)
            rc = sweep(&L, L.held, &L.nheld, 0, &events);
        if (rc == JT_DBCAST_OK)
            rc = sweep(&L, L.out, &L.nout, 0, &events);
        double tw1 = p->trace ? MPI_Wtime() : 0;
        busy += tw1 - tw0, iters++;
        if (events) {
            wait = WAIT_MIN;
        } else {
            int sending = L.nheld || L.nout;
            jt_sched_wait(s, sending && wait > WAIT_SEND ? WAIT_SEND : wait);
            slept += p->trace ? MPI_Wtime() - tw1 : 0;
            wait = wait * 2 < WAIT_MAX ? wait * 2 : WAIT_MAX;
        }
    }
    jt_chol_trace_ev(p->trace, JT_TR_LOOP, (int)(busy * 1e6), (int)(slept * 1e6), (int)iters, 0);
    jt_chol_trace_close(p->trace);
    p->trace = NULL;
    free(L.done), free(L.recv), free(L.held), free(L.queue), free(L.out), free(L.first);
    return rc;
}

double jt_chol_cost(void *arg, int task)
{
    jt_chol_plan *p = arg;
    jt_chol_kind k = p->tasks[task].t.kind;
    trace_task(p, JT_TR_START, task); /* simulated: called as the task starts */
    return jt_chol_task_flops(k, p->g.nb) * p->cost_scale[k];
}

/* Natively a task is its kernel (chol_kernels.c); simulated, sched.c runs jt_chol_cost's
 * flops instead and this is never called (nor natively without BLAS: cholesky.c refuses). */
void jt_chol_exec(void *arg, int task)
{
    jt_chol_plan *p = arg;
    const jt_chol_task *t = &p->tasks[task].t;
    const jt_chol_tile *tl = p->tiles;
    const jt_chol_grid *g = &p->g;
    void *c = tl[jt_chol_tile_id(g, t->m, t->n)].a;
    const void *a = t->kind == JT_CHOL_POTRF ? NULL
                    : t->kind == JT_CHOL_TRSM  ? tl[jt_chol_tile_id(g, t->k, t->k)].a
                                               : tl[jt_chol_tile_id(g, t->m, t->k)].a;
    const void *b = t->kind == JT_CHOL_GEMM ? tl[jt_chol_tile_id(g, t->n, t->k)].a : NULL;
    int info = jt_chol_kernel(t->kind, g->nb, p->single, c, a, b);
    if (info < 0)
        abort();
    int row = t->k * g->nb + info - 1, cur = atomic_load(&p->fail_row);
    /* Keep the first failing row; the factorization goes on (with garbage) so that every rank
     * finishes and the failure is reported collectively. */
    while (info > 0 && row < cur && !atomic_compare_exchange_weak(&p->fail_row, &cur, row))
        ;
}
