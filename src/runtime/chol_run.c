/* Execution of a local view (chol_plan.h): the communication loop and the tile kernels. */
#include "runtime/chol_plan.h"
#include "runtime/chol_kernels.h"

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

typedef struct pending {
    int tile;
    jt_dbcast_req *req;
} pending;

typedef struct loop {
    jt_chol_plan *p;
    jt_sched *s;
    int *left;      /* per task: inputs not yet available */
    int *done;
    pending *recv;  /* posted, data not yet arrived */
    int nrecv;
    pending *held;  /* arrived, forwarding through here not yet finished; then sends */
    int nheld;
} loop;

static void release(loop *L, int task)
{
    if (--L->left[task] == 0)
        jt_sched_push(L->s, task, L->p->tasks[task].prio);
}

static void tile_ready(loop *L, int tile)
{
    const jt_chol_tile *t = &L->p->tiles[tile];
    for (int i = 0; i < t->ncons; i++)
        release(L, t->cons[i]);
}

static size_t tile_bytes(const jt_chol_plan *p) { return (size_t)p->g.nb * p->g.nb * sizeof(double); }

/* A finished task: its successor on the same tile, and for a final tile its local readers
 * and its recipients (one call whatever their number: the routing decides the rest). */
static int finished(loop *L, int task, jt_dbcast_ctx *db, jt_dbcast_routing routing)
{
    const jt_chol_ltask *t = &L->p->tasks[task];
    if (t->next >= 0)
        release(L, t->next);
    if (t->final < 0)
        return 0;
    tile_ready(L, t->final);
    const jt_chol_tile *f = &L->p->tiles[t->final];
    if (f->nrecip == 0)
        return 0;
    pending *h = &L->held[L->nheld++];
    h->tile = t->final;
    return jt_dbcast_send_routed(db, f->a, tile_bytes(L->p), t->final, f->recip, f->nrecip,
                                 routing, &h->req);
}

/* Tests a list; removes completed (or arrived) entries, calling on_arrival for each. */
static int sweep(loop *L, jt_dbcast_ctx *db, pending *v, int *n, int arrival, int *events)
{
    int k = 0;
    for (int i = 0; i < *n; i++) {
        int flag = 0, rc = arrival ? jt_dbcast_test_arrived(db, v[i].req, &flag)
                                   : jt_dbcast_test(db, &v[i].req, &flag, NULL);
        if (rc != JT_DBCAST_OK)
            return rc;
        if (flag && arrival) {
            tile_ready(L, v[i].tile);
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

int jt_chol_run(jt_chol_plan *p, jt_sched *s, jt_dbcast_ctx *db, jt_dbcast_routing routing)
{
    loop L = {p, s, malloc((size_t)p->ntasks * sizeof(int) + 1),
              malloc((size_t)p->ntasks * sizeof(int) + 1),
              malloc(RECV_WINDOW * sizeof(pending)), 0,
              malloc((size_t)(p->ntiles + 1) * sizeof(pending)), 0};
    int rc = JT_DBCAST_ENOMEM;
    if (!L.left || !L.done || !L.recv || !L.held)
        goto out;
    rc = JT_DBCAST_OK;
    for (int i = 0; i < p->ntasks; i++)
        if ((L.left[i] = p->tasks[i].ndeps) == 0)
            jt_sched_push(s, i, p->tasks[i].prio);
    int ndone = 0, next_recv = 0;
    double wait = WAIT_MIN;
    while (rc == JT_DBCAST_OK &&
           (ndone < p->ntasks || next_recv < p->nrecv || L.nrecv || L.nheld)) {
        int events = 0;
        while (L.nrecv < RECV_WINDOW && next_recv < p->nrecv && rc == JT_DBCAST_OK) {
            pending *r = &L.recv[L.nrecv++];
            r->tile = p->recv_order[next_recv++];
            const jt_chol_tile *t = &p->tiles[r->tile];
            rc = jt_dbcast_recv(db, t->a, tile_bytes(p), jt_chol_owner(&p->g, t->m, t->n),
                                r->tile, &r->req);
        }
        int n = jt_sched_take_done(s, L.done, p->ntasks);
        for (int i = 0; i < n && rc == JT_DBCAST_OK; i++)
            rc = finished(&L, L.done[i], db, routing);
        ndone += n;
        events += n;
        if (rc == JT_DBCAST_OK && (L.nrecv || L.nheld))
            rc = jt_dbcast_progress(db) < 0 ? JT_DBCAST_EMPI : JT_DBCAST_OK;
        if (rc == JT_DBCAST_OK)
            rc = sweep(&L, db, L.recv, &L.nrecv, 1, &events);
        if (rc == JT_DBCAST_OK)
            rc = sweep(&L, db, L.held, &L.nheld, 0, &events);
        if (events) {
            wait = WAIT_MIN;
        } else {
            jt_sched_wait(s, L.nheld && wait > WAIT_SEND ? WAIT_SEND : wait);
            wait = wait * 2 < WAIT_MAX ? wait * 2 : WAIT_MAX;
        }
    }
out:
    free(L.left), free(L.done), free(L.recv), free(L.held);
    return rc;
}

double jt_chol_cost(void *arg, int task)
{
    const jt_chol_plan *p = arg;
    jt_chol_kind k = p->tasks[task].t.kind;
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
    double *c = tl[jt_chol_tile_id(g, t->m, t->n)].a;
    const double *a = t->kind == JT_CHOL_POTRF ? NULL
                    : t->kind == JT_CHOL_TRSM  ? tl[jt_chol_tile_id(g, t->k, t->k)].a
                                               : tl[jt_chol_tile_id(g, t->m, t->k)].a;
    const double *b = t->kind == JT_CHOL_GEMM ? tl[jt_chol_tile_id(g, t->n, t->k)].a : NULL;
    int info = jt_chol_kernel(t->kind, g->nb, c, a, b);
    if (info < 0)
        abort();
    int row = t->k * g->nb + info - 1, cur = atomic_load(&p->fail_row);
    /* Keep the first failing row; the factorization goes on (with garbage) so that every rank
     * finishes and the failure is reported collectively. */
    while (info > 0 && row < cur && !atomic_compare_exchange_weak(&p->fail_row, &cur, row))
        ;
}
