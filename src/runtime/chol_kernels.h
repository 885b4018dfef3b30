/* The four tile kernels of the Cholesky (OpenBLAS/LAPACKE, column-major NB×NB tiles), and
 * their measured rates, which the simulated runs can take as the kernels' speeds. */
#ifndef JT_CHOL_KERNELS_H
#define JT_CHOL_KERNELS_H

#include "runtime/chol_dag.h"

/* 1 when this build has the kernels (OpenBLAS and LAPACKE, not simulated). */
int jt_chol_kernels_available(void);

/* Runs kernel kind on tile c with inputs a (POTRF: none; TRSM: the diagonal L(k,k); SYRK:
 * L(m,k); GEMM: L(m,k)) and b (GEMM: L(n,k)).  Returns LAPACK's info for POTRF (> 0: not
 * positive definite at that row of the tile), else 0. */
int jt_chol_kernel(jt_chol_kind kind, int nb, double *c, const double *a, const double *b);

/* GFlop/s of each kernel (by jt_chol_kind) on NB×NB tiles, one BLAS thread, the median of
 * reps timed calls on fresh copies of well-conditioned tiles.  0 on success, -1 without
 * kernels or memory. */
int jt_chol_kernel_rates(int nb, int reps, double gflops[4]);

#endif
