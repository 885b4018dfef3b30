/* The four tile kernels of the Cholesky (OpenBLAS/LAPACKE, column-major NB×NB tiles): run by
 * the cholesky workers and timed by the tile-kernels benchmark. */
#ifndef JT_CHOL_KERNELS_H
#define JT_CHOL_KERNELS_H

#include "runtime/chol_dag.h"

/* 1 when this build has the kernels (OpenBLAS and LAPACKE, not simulated). */
int jt_chol_kernels_available(void);

/* Runs kernel kind on tile c with inputs a (POTRF: none; TRSM: the diagonal L(k,k); SYRK:
 * L(m,k); GEMM: L(m,k)) and b (GEMM: L(n,k)), tiles of double, or of float when single (the
 * s-prefixed BLAS, as StarPU-MPI's mpi_cholesky).  Returns LAPACK's info for POTRF (> 0: not
 * positive definite at that row of the tile), else 0. */
int jt_chol_kernel(jt_chol_kind kind, int nb, int single, void *c, const void *a,
                   const void *b);

/* Inputs for timing the kernels: spd a diagonally dominant SPD tile (POTRF's input, and the
 * tile the others update), l its factor (their inputs); and one BLAS thread from now on. */
void jt_chol_kernel_tiles(int nb, double *spd, double *l);

#endif
