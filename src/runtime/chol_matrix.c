#include "runtime/chol_matrix.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if !defined(JT_SMPI) && !defined(SMPI_H) && defined(JT_HAVE_OPENBLAS)
#include <cblas.h>
#define HAVE_BLAS 1
#endif

static uint64_t mix(uint64_t x) /* splitmix64 */
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

int jt_chol_bad_row(long N) { return (int)(N / 2); }

double jt_chol_entry(long N, jt_chol_matrix kind, long i, long j)
{
    long lo = i < j ? i : j, hi = i < j ? j : i;
    double v = (double)(mix((uint64_t)hi * (uint64_t)N + (uint64_t)lo) >> 11) * 0x1p-53 - 0.5;
    if (i != j)
        return v;
    if (kind == JT_MATRIX_NONSPD && i == jt_chol_bad_row(N))
        return -(double)N;
    return v + (double)N;
}

void jt_chol_fill(const jt_chol_grid *g, jt_chol_matrix kind, int m, int n, double *a)
{
    long N = (long)g->T * g->nb;
    for (int c = 0; c < g->nb; c++)
        for (int r = 0; r < g->nb; r++)
            a[(size_t)c * g->nb + r] = jt_chol_entry(N, kind, (long)m * g->nb + r,
                                                     (long)n * g->nb + c);
}

double jt_chol_residual(const jt_chol_plan *p, jt_chol_matrix kind, MPI_Comm comm)
{
    const jt_chol_grid *g = &p->g;
    int nb = g->nb, cnt = nb * nb;
    (void)kind; /* unused without BLAS */
    size_t N = (size_t)g->T * nb;
    if (p->rank != 0) {
        for (int i = 0; i < p->ntiles; i++)
            if (p->tiles[i].where == JT_TILE_OWNED)
                MPI_Send(p->tiles[i].a, cnt, MPI_DOUBLE, 0, i, comm);
        return 0;
    }
    double *L = calloc(N * N, sizeof *L), *A = malloc(N * N * sizeof *A);
    double *t = malloc((size_t)cnt * sizeof *t), res = NAN;
    for (int i = 0; L && A && t && i < p->ntiles; i++) {
        const jt_chol_tile *x = &p->tiles[i];
        const double *src = x->a;
        if (x->where != JT_TILE_OWNED) {
            MPI_Recv(t, cnt, MPI_DOUBLE, jt_chol_owner(g, x->m, x->n), i, comm,
                     MPI_STATUS_IGNORE);
            src = t;
        }
        for (int c = 0; c < nb; c++) /* diagonal tiles: only their lower part is L */
            for (int r = x->m == x->n ? c : 0; r < nb; r++)
                L[((size_t)x->n * nb + c) * N + (size_t)x->m * nb + r] = src[(size_t)c * nb + r];
    }
#ifdef HAVE_BLAS
    if (L && A && t) {
        double na = 0, nr = 0;
        for (size_t c = 0; c < N; c++)
            for (size_t r = c; r < N; r++)
                A[c * N + r] = jt_chol_entry((long)N, kind, (long)r, (long)c);
        for (size_t c = 0; c < N; c++)
            for (size_t r = c; r < N; r++)
                na += (r == c ? 1 : 2) * A[c * N + r] * A[c * N + r];
        /* A := A - L Lᵀ, lower triangle. */
        cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, (int)N, (int)N, -1.0, L, (int)N,
                    1.0, A, (int)N);
        for (size_t c = 0; c < N; c++)
            for (size_t r = c; r < N; r++)
                nr += (r == c ? 1 : 2) * A[c * N + r] * A[c * N + r];
        res = sqrt(nr) / sqrt(na);
    }
#endif
    free(L), free(A), free(t);
    return res;
}
