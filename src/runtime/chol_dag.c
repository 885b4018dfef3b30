#include "runtime/chol_dag.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

int jt_chol_owner(const jt_chol_grid *g, int m, int n) { return (m % g->P) * g->Q + n % g->Q; }

int jt_chol_tile_id(const jt_chol_grid *g, int m, int n)
{
    (void)g;
    return m * (m + 1) / 2 + n;
}

void jt_chol_foreach(const jt_chol_grid *g, void (*f)(const jt_chol_task *t, void *arg),
                     void *arg)
{
    int T = g->T;
    for (int k = 0; k < T; k++) {
        jt_chol_task t = {JT_CHOL_POTRF, k, k, k};
        f(&t, arg);
        for (int m = k + 1; m < T; m++) {
            t = (jt_chol_task){JT_CHOL_TRSM, m, k, k};
            f(&t, arg);
        }
        for (int m = k + 1; m < T; m++) {
            t = (jt_chol_task){JT_CHOL_SYRK, m, m, k};
            f(&t, arg);
            for (int n = k + 1; n < m; n++) {
                t = (jt_chol_task){JT_CHOL_GEMM, m, n, k};
                f(&t, arg);
            }
        }
    }
}

long jt_chol_ntasks(int T)
{
    long n = 0;
    for (long k = 0; k < T; k++) {
        long r = T - k - 1;
        n += 1 + r + r + r * (r - 1) / 2;
    }
    return n;
}

int jt_chol_priority(const jt_chol_grid *g, const jt_chol_task *t)
{
    int base = 2 * g->T - 2 * t->k;
    switch (t->kind) {
    case JT_CHOL_POTRF: return base;
    case JT_CHOL_TRSM: return base - t->m;
    /* SYRK(m,k) updates tile (m,m): 2T - 2k - 2m.  StarPU 1.3's mpi_cholesky (with unbounded
     * scheduler priorities) does the same: one update codelet for SYRK and GEMM, priority
     * 2T - 2k - m - n for every m >= n, the diagonal included. */
    default: return base - t->m - t->n;
    }
}

double jt_chol_task_flops(jt_chol_kind kind, int nb)
{
    double b = nb;
    switch (kind) {
    case JT_CHOL_POTRF: return b * b * b / 3 + b * b / 2 + b / 6;
    case JT_CHOL_TRSM: return b * b * b;
    case JT_CHOL_SYRK: return b * b * (b + 1);
    default: return 2 * b * b * b;
    }
}

double jt_chol_flops(double N) { return N * N * N / 3 + N * N / 2 + N / 6; }

const char *jt_chol_kind_name(jt_chol_kind kind)
{
    static const char *const names[] = {"POTRF", "TRSM", "SYRK", "GEMM"};
    return names[kind];
}

int jt_chol_inputs(const jt_chol_task *t, int im[2], int ik[2])
{
    switch (t->kind) {
    case JT_CHOL_POTRF: return 0;
    case JT_CHOL_TRSM: im[0] = t->k; ik[0] = t->k; return 1;
    case JT_CHOL_SYRK: im[0] = t->m; ik[0] = t->k; return 1;
    default:
        im[0] = t->m; ik[0] = t->k;
        im[1] = t->n; ik[1] = t->k;
        return 2;
    }
}

int jt_chol_recipients(const jt_chol_grid *g, int m, int k, int *out)
{
    int n = jt_chol_recipients_by_need(g, m, k, out, NULL);
    for (int i = 1; i < n; i++) /* back to increasing rank */
        for (int j = i; j > 0 && out[j - 1] > out[j]; j--) {
            int x = out[j];
            out[j] = out[j - 1], out[j - 1] = x;
        }
    return n;
}

void jt_chol_order_by_need(int *ranks, int *need, int n)
{
    for (int i = 1; i < n; i++) { /* insertion sort: at most P + Q - 2 recipients */
        int r = ranks[i], u = need[i], j = i;
        for (; j > 0 && (need[j - 1] < u || (need[j - 1] == u && ranks[j - 1] > r)); j--)
            ranks[j] = ranks[j - 1], need[j] = need[j - 1];
        ranks[j] = r, need[j] = u;
    }
}

static void need_of(const jt_chol_grid *g, jt_chol_kind kind, int m, int n, int k, int *best)
{
    jt_chol_task t = {kind, m, n, k};
    int r = jt_chol_owner(g, m, n), u = jt_chol_priority(g, &t);
    if (u > best[r])
        best[r] = u;
}

int jt_chol_recipients_by_need(const jt_chol_grid *g, int m, int k, int *out, int *need)
{
    int R = g->P * g->Q, n = 0;
    int *best = malloc((size_t)R * sizeof *best), *u = malloc((size_t)R * sizeof *u);
    if (!best || !u) {
        free(best), free(u);
        return -1;
    }
    for (int r = 0; r < R; r++)
        best[r] = INT_MIN;
    if (m == k) {
        for (int i = k + 1; i < g->T; i++)
            need_of(g, JT_CHOL_TRSM, i, k, k, best);
    } else {
        need_of(g, JT_CHOL_SYRK, m, m, k, best);
        for (int j = k + 1; j < m; j++)
            need_of(g, JT_CHOL_GEMM, m, j, k, best);
        for (int i = m + 1; i < g->T; i++)
            need_of(g, JT_CHOL_GEMM, i, m, k, best);
    }
    best[jt_chol_owner(g, m, k)] = INT_MIN;
    for (int r = 0; r < R; r++)
        if (best[r] != INT_MIN)
            out[n] = r, u[n++] = best[r];
    jt_chol_order_by_need(out, u, n);
    for (int i = 0; need && i < n; i++)
        need[i] = u[i];
    free(best), free(u);
    return n;
}

void jt_chol_grid_auto(int size, int *P, int *Q)
{
    int p = 1;
    for (int d = 1; (long)d * d <= size; d++)
        if (size % d == 0)
            p = d;
    *P = p;
    *Q = size / p;
}

int jt_chol_split_sends(int n, int tree, int *first)
{
    if (n <= 0)
        return 0;
    if (!tree) { /* one copy each */
        for (int i = 0; i < n; i++)
            first[i] = i;
        return n;
    }
    first[0] = 0; /* the most urgent alone, then one tree for the others */
    if (n == 1)
        return 1;
    first[1] = 1;
    return 2;
}
