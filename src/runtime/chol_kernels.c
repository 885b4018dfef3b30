#include "runtime/chol_kernels.h"

#include "core/stats.h"
#include "core/timer.h"

#include <stdlib.h>
#include <string.h>

#if !defined(JT_SMPI) && defined(JT_HAVE_OPENBLAS) && defined(JT_HAVE_LAPACKE)
#include <cblas.h>
#include <lapacke.h>

int jt_chol_kernels_available(void) { return 1; }

int jt_chol_kernel(jt_chol_kind kind, int nb, double *c, const double *a, const double *b)
{
    switch (kind) {
    case JT_CHOL_POTRF: return (int)LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', nb, c, nb);
    case JT_CHOL_TRSM:
        cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, nb, nb, 1.0,
                    a, nb, c, nb);
        return 0;
    case JT_CHOL_SYRK:
        cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, nb, nb, -1.0, a, nb, 1.0, c, nb);
        return 0;
    default:
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, nb, nb, nb, -1.0, a, nb, b, nb, 1.0,
                    c, nb);
        return 0;
    }
}

int jt_chol_kernel_rates(int nb, int reps, double gflops[4])
{
    size_t n = (size_t)nb * nb;
    double *spd = malloc(n * sizeof *spd), *l = malloc(n * sizeof *l),
           *c = malloc(n * sizeof *c), *t = malloc((size_t)(reps > 0 ? reps : 1) * sizeof *t);
    if (!spd || !l || !c || !t || reps < 1) {
        free(spd), free(l), free(c), free(t);
        return -1;
    }
    openblas_set_num_threads(1); /* one worker's rate: the runtime runs one BLAS thread each */
    /* A diagonally dominant SPD tile (POTRF's input) and its factor (TRSM's diagonal). */
    for (int j = 0; j < nb; j++)
        for (int i = 0; i < nb; i++)
            spd[(size_t)j * nb + i] = i == j ? nb : 1.0 / (1.0 + i + j);
    memcpy(l, spd, n * sizeof *l);
    jt_chol_kernel(JT_CHOL_POTRF, nb, l, NULL, NULL);
    for (int k = JT_CHOL_POTRF; k <= JT_CHOL_GEMM; k++) {
        for (int r = -1; r < reps; r++) { /* r = -1: an untimed first call */
            memcpy(c, spd, n * sizeof *c);
            double t0 = jt_now();
            jt_chol_kernel((jt_chol_kind)k, nb, c, l, l);
            if (r >= 0)
                t[r] = jt_now() - t0;
        }
        jt_stats st;
        jt_stats_compute(t, (size_t)reps, &st);
        gflops[k] = jt_chol_task_flops((jt_chol_kind)k, nb) / st.median * 1e-9;
    }
    free(spd), free(l), free(c), free(t);
    return 0;
}
#else
int jt_chol_kernels_available(void) { return 0; }

int jt_chol_kernel(jt_chol_kind kind, int nb, double *c, const double *a, const double *b)
{
    (void)kind, (void)nb, (void)c, (void)a, (void)b;
    return -1;
}

int jt_chol_kernel_rates(int nb, int reps, double gflops[4])
{
    (void)nb, (void)reps, (void)gflops;
    return -1;
}
#endif
