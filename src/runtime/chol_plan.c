#include "runtime/chol_plan.h"

#include <limits.h>
#include <stdlib.h>

typedef struct builder {
    jt_chol_plan *p;
    int *last;   /* per tile: the last local task writing it, or -1 */
    int cap;
    int err;
} builder;

static int add_int(int **v, int *n, int x)
{
    if ((*n & (*n - 1)) == 0) { /* grow at powers of two */
        int *q = realloc(*v, (size_t)(*n ? 2 * *n : 1) * sizeof *q);
        if (!q)
            return -1;
        *v = q;
    }
    (*v)[(*n)++] = x;
    return 0;
}

/* A remote task reading tiles this rank owns: its rank joins their recipients, once each,
 * with the highest priority among its tasks reading the tile (as a runtime learns it when a
 * remote task is inserted); the lists are put in order of need once the DAG is walked. */
static void remote_reader(builder *b, const jt_chol_task *t, int owner)
{
    jt_chol_plan *p = b->p;
    int im[2], ik[2], nin = jt_chol_inputs(t, im, ik), prio = jt_chol_priority(&p->g, t);
    for (int i = 0; i < nin; i++) {
        jt_chol_tile *in = &p->tiles[jt_chol_tile_id(&p->g, im[i], ik[i])];
        if (in->where != JT_TILE_OWNED || !in->recip)
            continue;
        int q = 0;
        while (q < in->nrecip && in->recip[q] != owner)
            q++;
        if (q == in->nrecip)
            in->recip[in->nrecip++] = owner, in->need[q] = prio;
        else if (prio > in->need[q])
            in->need[q] = prio;
    }
}

static void visit(const jt_chol_task *t, void *arg)
{
    builder *b = arg;
    jt_chol_plan *p = b->p;
    int owner = jt_chol_owner(&p->g, t->m, t->n);
    if (b->err)
        return;
    if (owner != p->rank) {
        remote_reader(b, t, owner);
        return;
    }
    if (p->ntasks == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 64;
        jt_chol_ltask *q = realloc(p->tasks, (size_t)b->cap * sizeof *q);
        if (!q) {
            b->err = 1;
            return;
        }
        p->tasks = q;
    }
    int id = p->ntasks++, out = jt_chol_tile_id(&p->g, t->m, t->n);
    jt_chol_ltask *lt = &p->tasks[id];
    *lt = (jt_chol_ltask){*t, jt_chol_priority(&p->g, t), 0, -1, -1};
    if (b->last[out] >= 0) {
        p->tasks[b->last[out]].next = id;
        lt->ndeps++;
    }
    b->last[out] = id;
    int im[2], ik[2], nin = jt_chol_inputs(t, im, ik);
    for (int i = 0; i < nin; i++) {
        jt_chol_tile *in = &p->tiles[jt_chol_tile_id(&p->g, im[i], ik[i])];
        if (in->where == JT_TILE_NONE) { /* first use of a remote tile: receive it */
            in->where = JT_TILE_REMOTE;
            b->err |= add_int(&p->recv_order, &p->nrecv, jt_chol_tile_id(&p->g, im[i], ik[i]));
        }
        b->err |= add_int(&in->cons, &in->ncons, id);
        lt->ndeps++;
    }
    if (t->kind == JT_CHOL_POTRF || t->kind == JT_CHOL_TRSM) {
        jt_chol_tile *f = &p->tiles[out];
        lt->final = out;
        f->recip = malloc((size_t)(p->g.P * p->g.Q) * sizeof *f->recip);
        f->need = malloc((size_t)(p->g.P * p->g.Q) * sizeof *f->need);
        f->nrecip = 0;     /* filled by the remote readers visited later */
        b->err |= !f->recip || !f->need;
    }
}

jt_chol_plan *jt_chol_plan_build(const jt_chol_grid *g, int rank)
{
    jt_chol_plan *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->g = *g;
    p->rank = rank;
    p->ntiles = g->T * (g->T + 1) / 2;
    p->tiles = calloc((size_t)p->ntiles, sizeof *p->tiles);
    builder b = {p, malloc((size_t)p->ntiles * sizeof(int)), 0, 0};
    atomic_init(&p->fail_row, INT_MAX);
    for (int k = 0; k < 4; k++)
        p->cost_scale[k] = 1.0;
    if (!p->tiles || !b.last) {
        free(b.last);
        jt_chol_plan_free(p);
        return NULL;
    }
    for (int m = 0; m < g->T; m++)
        for (int n = 0; n <= m; n++) {
            jt_chol_tile *t = &p->tiles[jt_chol_tile_id(g, m, n)];
            t->m = m, t->n = n;
            t->where = jt_chol_owner(g, m, n) == rank ? JT_TILE_OWNED : JT_TILE_NONE;
            b.last[jt_chol_tile_id(g, m, n)] = -1;
        }
    jt_chol_foreach(g, visit, &b);
    free(b.last);
    p->left = malloc((size_t)(p->ntasks + 1) * sizeof *p->left);
    b.err |= !p->left;
    /* Broadcast detection: a final tile with several recipients. */
    for (int i = 0; !b.err && i < p->ntiles; i++) {
        int n = p->tiles[i].recip ? p->tiles[i].nrecip : 0;
        if (n > 1)
            jt_chol_order_by_need(p->tiles[i].recip, p->tiles[i].need, n);
        p->nsend1 += n == 1;
        p->nbcast += n > 1;
        p->nmsgs += n;
    }
    if (b.err) {
        jt_chol_plan_free(p);
        return NULL;
    }
    return p;
}

size_t jt_chol_tile_bytes(const jt_chol_plan *p)
{
    return (size_t)p->g.nb * p->g.nb * (p->single ? sizeof(float) : sizeof(double));
}

void jt_chol_plan_free(jt_chol_plan *p)
{
    if (!p)
        return;
    for (int i = 0; p->tiles && i < p->ntiles; i++)
        free(p->tiles[i].cons), free(p->tiles[i].recip), free(p->tiles[i].need);
    free(p->tiles), free(p->tasks), free(p->recv_order), free(p->left), free(p);
}
