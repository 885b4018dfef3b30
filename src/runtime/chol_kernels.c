#include "runtime/chol_kernels.h"

#include <stdlib.h>
#include <string.h>

#if !defined(JT_SMPI) && defined(JT_HAVE_OPENBLAS) && defined(JT_HAVE_LAPACKE)
#include <cblas.h>
#include <lapacke.h>

int jt_chol_kernels_available(void) { return 1; }

/* The four tile kernels in one precision: P is BLAS's prefix (s or d), T its type. One
 * definition for both, so that the single- and double-precision factorizations cannot drift. */
#define CHOL_KERNELS(P, T)                                                                      \
    static int kernel_##P(jt_chol_kind kind, int nb, T *c, const T *a, const T *b)            \
    {                                                                                          \
        switch (kind) {                                                                        \
        case JT_CHOL_POTRF: return (int)LAPACKE_##P##potrf(LAPACK_COL_MAJOR, 'L', nb, c, nb); \
        case JT_CHOL_TRSM:                                                                     \
            cblas_##P##trsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit,  \
                            nb, nb, (T)1, a, nb, c, nb);                                       \
            return 0;                                                                          \
        case JT_CHOL_SYRK:                                                                     \
            cblas_##P##syrk(CblasColMajor, CblasLower, CblasNoTrans, nb, nb, (T)-1, a, nb,     \
                            (T)1, c, nb);                                                      \
            return 0;                                                                          \
        default:                                                                               \
            cblas_##P##gemm(CblasColMajor, CblasNoTrans, CblasTrans, nb, nb, nb, (T)-1, a, nb, \
                            b, nb, (T)1, c, nb);                                               \
            return 0;                                                                          \
        }                                                                                      \
    }
CHOL_KERNELS(s, float)
CHOL_KERNELS(d, double)
#undef CHOL_KERNELS

int jt_chol_kernel(jt_chol_kind kind, int nb, int single, void *c, const void *a, const void *b)
{
    return single ? kernel_s(kind, nb, c, a, b) : kernel_d(kind, nb, c, a, b);
}

void jt_chol_kernel_tiles(int nb, double *spd, double *l)
{
    for (int j = 0; j < nb; j++)
        for (int i = 0; i < nb; i++)
            spd[(size_t)j * nb + i] = i == j ? nb : 1.0 / (1.0 + i + j);
    memcpy(l, spd, (size_t)nb * nb * sizeof *l);
    jt_chol_kernel(JT_CHOL_POTRF, nb, 0, l, NULL, NULL);
    openblas_set_num_threads(1); /* one worker's rate: the runtime runs one BLAS thread each */
}
#else
int jt_chol_kernels_available(void) { return 0; }

int jt_chol_kernel(jt_chol_kind kind, int nb, int single, void *c, const void *a, const void *b)
{
    (void)kind, (void)nb, (void)single, (void)c, (void)a, (void)b;
    return -1;
}

void jt_chol_kernel_tiles(int nb, double *spd, double *l)
{
    (void)nb, (void)spd, (void)l;
}
#endif
