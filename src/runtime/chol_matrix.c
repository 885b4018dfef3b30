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

void jt_chol_fill(const jt_chol_grid *g, jt_chol_matrix kind, int single, int m, int n, void *a)
{
    long N = (long)g->T * g->nb;
    for (int c = 0; c < g->nb; c++)
        for (int r = 0; r < g->nb; r++) {
            size_t i = (size_t)c * g->nb + r;
            double v = jt_chol_entry(N, kind, (long)m * g->nb + r, (long)n * g->nb + c);
            if (single)
                ((float *)a)[i] = (float)v;
            else
                ((double *)a)[i] = v;
        }
}

/* The gather's one tag.  Tile ids reach T(T+1)/2, past 32767 (the MPI_TAG_UB an MPI library
 * must at least offer) from T = 256: the tag cannot be the tile.  It need not be: MPI does not
 * let two messages between one pair of ranks on one communicator and tag overtake each other,
 * and every sender sends its owned tiles in increasing id while rank 0 receives each tile from
 * its owner in increasing id, so the j-th message from a rank is the j-th tile rank 0 expects
 * from it.  (The factorization's own messages travel on jt_dbcast's duplicate of comm.) */
#define RESIDUAL_TAG 0

int jt_chol_residual(const jt_chol_plan *p, jt_chol_matrix kind, MPI_Comm comm, double *res)
{
    const jt_chol_grid *g = &p->g;
    int nb = g->nb, cnt = nb * nb;
    size_t N = (size_t)g->T * nb;
    *res = 0;
#ifndef HAVE_BLAS
    (void)kind, (void)comm, (void)cnt, (void)N;
    return -1; /* the same on every rank: nothing is sent */
#else
    /* Rank 0 allocates before anyone sends and says whether it could: without that, a rank 0
     * short of memory would skip its receives while the others block in MPI_Send. */
    double *L = NULL, *A = NULL;
    void *t = NULL;
    MPI_Datatype type = p->single ? MPI_FLOAT : MPI_DOUBLE;
    int ok = 1;
    if (p->rank == 0) {
        L = calloc(N * N, sizeof *L);
        A = malloc(N * N * sizeof *A);
        t = malloc(jt_chol_tile_bytes(p));
        ok = L && A && t;
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
    if (!ok) {
        free(L), free(A), free(t);
        return -1;
    }
    if (p->rank != 0) {
        for (int i = 0; i < p->ntiles; i++)
            if (p->tiles[i].where == JT_TILE_OWNED)
                MPI_Send(p->tiles[i].a, cnt, type, 0, RESIDUAL_TAG, comm);
        return 0;
    }
    for (int i = 0; i < p->ntiles; i++) {
        const jt_chol_tile *x = &p->tiles[i];
        const void *src = x->a;
        if (x->where != JT_TILE_OWNED) {
            MPI_Recv(t, cnt, type, jt_chol_owner(g, x->m, x->n), RESIDUAL_TAG, comm,
                     MPI_STATUS_IGNORE);
            src = t;
        }
        for (int c = 0; c < nb; c++) /* diagonal tiles: only their lower part is L */
            for (int r = x->m == x->n ? c : 0; r < nb; r++) {
                size_t i = (size_t)c * nb + r;
                L[((size_t)x->n * nb + c) * N + (size_t)x->m * nb + r] =
                    p->single ? (double)((const float *)src)[i] : ((const double *)src)[i];
            }
    }
    double na = 0, nr = 0;
    for (size_t c = 0; c < N; c++)
        for (size_t r = c; r < N; r++)
            A[c * N + r] = jt_chol_entry((long)N, kind, (long)r, (long)c);
    for (size_t c = 0; c < N; c++)
        for (size_t r = c; r < N; r++)
            na += (r == c ? 1 : 2) * A[c * N + r] * A[c * N + r];
    /* A := A - L Lᵀ, lower triangle. */
    cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, (int)N, (int)N, -1.0, L, (int)N, 1.0,
                A, (int)N);
    for (size_t c = 0; c < N; c++)
        for (size_t r = c; r < N; r++)
            nr += (r == c ? 1 : 2) * A[c * N + r] * A[c * N + r];
    *res = sqrt(nr) / sqrt(na);
    free(L), free(A), free(t);
    return 0;
#endif
}
