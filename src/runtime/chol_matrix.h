/* The test matrix of the Cholesky benchmark, generated tile by tile where it lives (no
 * communication), and the check of a factorization. */
#ifndef JT_CHOL_MATRIX_H
#define JT_CHOL_MATRIX_H

#include "runtime/chol_plan.h"

#include <mpi.h>

typedef enum { JT_MATRIX_SPD = 0, JT_MATRIX_NONSPD } jt_chol_matrix;

/* A(i,j) = A(j,i) = u(i,j) in [-0.5, 0.5) from a hash of (min, max); A(i,i) += N, which makes
 * it diagonally dominant, hence SPD.  NONSPD: A(r,r) = -N at r = N/2, so that the leading
 * minor of order r+1 is negative and POTRF fails in tile r / nb. */
double jt_chol_entry(long N, jt_chol_matrix kind, long i, long j);
int jt_chol_bad_row(long N); /* r of NONSPD */
/* Fills tile (m,n) (nb×nb, column-major, double or, single, float) of A. */
void jt_chol_fill(const jt_chol_grid *g, jt_chol_matrix kind, int single, int m, int n, void *a);

/* ‖A − L·Lᵀ‖_F / ‖A‖_F over the whole matrix (in double, whatever p->single), for the L now
 * in the owned final tiles:
 * every rank sends them to rank 0, which rebuilds A and L and puts the residual in *res
 * (other ranks: 0; NaN if L holds NaN).  Collective; needs 2 N² doubles on rank 0, which it
 * allocates first and broadcasts whether it could.  Returns 0, or -1 on every rank (nothing
 * sent, *res = 0) when rank 0 could not allocate them or the build has no BLAS. */
int jt_chol_residual(const jt_chol_plan *p, jt_chol_matrix kind, MPI_Comm comm, double *res);

#endif
