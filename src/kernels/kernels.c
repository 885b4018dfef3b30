#include "kernels/kernels.h"

#include "core/errors.h"
#include "kernels/stream_loops.h"

#include <math.h>
#include <string.h>

#ifdef JT_HAVE_OPENBLAS
#include <cblas.h>
#endif

#define SCALAR 3.0

/* Arrays start k x 17 cache lines into page-aligned buffers: at identical alignment a[i], b[i]
 * and c[i] would share cache sets and alias in the 4 KiB store-forwarding check, which costs a
 * third of triad's bandwidth here.  Returns the array. */
#define SKEW (17 * 64)

static void *alloc(jt_kws *w, const jt_topo *tp, int k, size_t bytes, int numa)
{
    jt_buffer_alloc(tp, &w->buf[k], bytes + (size_t)k * SKEW, numa);
    return (char *)w->buf[k].p + (size_t)k * SKEW;
}

/* ---- copy: b[i] = a[i] (STREAM) ------------------------------------------------------ */

static void copy_init(jt_kws *w, const jt_topo *tp, size_t bytes, int numa, int reps)
{
    (void)reps;
    w->n = bytes / 2 / sizeof(double);
    w->a = alloc(w, tp, 0, w->n * sizeof(double), numa);
    w->b = alloc(w, tp, 1, w->n * sizeof(double), numa);
    /* Every array is touched here, so that no sweep pays for page faults. */
    for (size_t i = 0; i < w->n; i++) {
        w->a[i] = 1.0;
        w->b[i] = 0.0;
    }
    w->bytes = 16.0 * (double)w->n; /* read a, write b */
    /* + the read of b's lines before writing them, which non-temporal stores skip */
    w->bytes_wa = (w->stores == JT_STORES_NT ? 16.0 : 24.0) * (double)w->n;
    w->flops = 0;
}

static void copy_sweep(jt_kws *w)
{
    jt_stream_copy(w->b, w->a, w->n, w->stores);
    w->sink += w->b[w->n / 2];
}

/* ---- triad: c[i] = a[i] + s*b[i], or `reps` dependent operations per element --------- */

static void triad_init(jt_kws *w, const jt_topo *tp, size_t bytes, int numa, int reps)
{
    w->n = bytes / 3 / sizeof(double);
    w->a = alloc(w, tp, 0, w->n * sizeof(double), numa);
    w->b = alloc(w, tp, 1, w->n * sizeof(double), numa);
    w->c = alloc(w, tp, 2, w->n * sizeof(double), numa);
    for (size_t i = 0; i < w->n; i++) {
        w->a[i] = 1.0;
        w->b[i] = 2.0;
        w->c[i] = 0.0;
    }
    w->reps = reps < 1 ? 1 : reps;
    w->bytes = 24.0 * (double)w->n;
    w->bytes_wa = (w->stores == JT_STORES_NT ? 24.0 : 32.0) * (double)w->n;
    w->flops = 2.0 * w->reps * (double)w->n;
}

static void triad_sweep(jt_kws *w)
{
    double *restrict a = w->a, *restrict b = w->b, *restrict c = w->c;
    size_t n = w->n;
    if (w->reps == 1) { /* the STREAM loop itself */
        jt_stream_triad(c, a, b, SCALAR, n, w->stores);
    } else { /* normal stores only (the option is refused with --ai) */
        /* Each repetition depends on the last, so none can be removed or hoisted; the factor
         * below 1 keeps values bounded and away from denormals. */
        const int r = w->reps;
        for (size_t i = 0; i < n; i++) {
            double x = a[i], y = b[i];
            for (int k = 0; k < r; k++)
                x = x * 0.999 + y;
            c[i] = x;
        }
    }
    w->sink += c[n / 2];
}

int jt_triad_reps_for_ai(double ai)
{
    double r = floor(ai * 12.0 + 0.5);
    return r < 1 ? 1 : (int)r;
}


/* ---- cg: conjugate-gradient iterations on a dense SPD matrix (memory-bound) ------------ */

static void cg_restart(jt_kws *w)
{
    size_t n = w->n;
    double *x = w->v[0], *r = w->v[1], *p = w->v[2];
    for (size_t i = 0; i < n; i++) {
        x[i] = 0.0;
        r[i] = 1.0; /* b = 1, x = 0: r = b */
        p[i] = 1.0;
    }
    w->iter = 0;
}

static void cg_init(jt_kws *w, const jt_topo *tp, size_t bytes, int numa, int reps)
{
    (void)reps;
    w->n = (size_t)sqrt((double)bytes / sizeof(double));
    size_t n = w->n;
    w->a = alloc(w, tp, 0, n * n * sizeof(double), numa);
    double *vec = alloc(w, tp, 1, 4 * n * sizeof(double), numa);
    for (int k = 0; k < 4; k++)
        w->v[k] = vec + (size_t)k * n;
    /* Diagonally dominant and symmetric: positive definite. */
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            w->a[i * n + j] = i == j ? (double)n : 1.0 / (1.0 + (double)(i > j ? i - j : j - i));
    cg_restart(w);
    w->bytes = 8.0 * (double)n * (double)n + 8.0 * 10.0 * (double)n; /* matrix + vector passes */
    w->bytes_wa = w->bytes + 8.0 * 3.0 * (double)n;
    w->flops = 2.0 * (double)n * (double)n + 10.0 * (double)n;
}

/* One iteration: q = A p, alpha, x += alpha p, r -= alpha q, beta, p = r + beta p. */
static void cg_sweep(jt_kws *w)
{
    size_t n = w->n;
    double *restrict A = w->a, *restrict x = w->v[0], *restrict r = w->v[1], *restrict p = w->v[2],
                     *restrict q = w->v[3];
    double rr = 0, pq = 0, rr2 = 0;
    for (size_t i = 0; i < n; i++) {
        double s = 0;
        for (size_t j = 0; j < n; j++)
            s += A[i * n + j] * p[j];
        q[i] = s;
    }
    for (size_t i = 0; i < n; i++) {
        rr += r[i] * r[i];
        pq += p[i] * q[i];
    }
    double alpha = pq != 0 ? rr / pq : 0;
    for (size_t i = 0; i < n; i++) {
        x[i] += alpha * p[i];
        r[i] -= alpha * q[i];
        rr2 += r[i] * r[i];
    }
    double beta = rr != 0 ? rr2 / rr : 0;
    for (size_t i = 0; i < n; i++)
        p[i] = r[i] + beta * p[i];
    w->sink += x[0];
    /* Restart before the residual underflows: every sweep must do the same work. */
    if (++w->iter == 50 || rr2 < 1e-200)
        cg_restart(w);
}

/* ---- gemm: C = A B through OpenBLAS, one BLAS thread (compute-bound) ------------------- */

static void gemm_init(jt_kws *w, const jt_topo *tp, size_t bytes, int numa, int reps)
{
    (void)reps;
    size_t n = (size_t)sqrt((double)bytes / 3.0 / sizeof(double));
    if (n > 2048)
        n = 2048; /* a sweep stays under a second on any core */
    w->n = n;
    w->a = alloc(w, tp, 0, n * n * sizeof(double), numa);
    w->b = alloc(w, tp, 1, n * n * sizeof(double), numa);
    w->c = alloc(w, tp, 2, n * n * sizeof(double), numa);
    for (size_t i = 0; i < n * n; i++) {
        w->a[i] = 1.0 / (double)(1 + i % 7);
        w->b[i] = 1.0 / (double)(1 + i % 5);
    }
    w->bytes = 24.0 * (double)n * (double)n; /* compulsory traffic: read A, B, write C */
    w->bytes_wa = 32.0 * (double)n * (double)n;
    w->flops = 2.0 * (double)n * (double)n * (double)n;
}

static void gemm_sweep(jt_kws *w)
{
#ifdef JT_HAVE_OPENBLAS
    int n = (int)w->n;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, w->a, n, w->b, n, 0.0,
                w->c, n);
    w->sink += w->c[0];
#else
    (void)w;
#endif
}

/* ---- cpu: arithmetic on registers only (a control without memory traffic) ------------- */

static void cpu_init(jt_kws *w, const jt_topo *tp, size_t bytes, int numa, int reps)
{
    (void)tp, (void)bytes, (void)numa, (void)reps;
    w->n = 1 << 20;
    w->bytes = w->bytes_wa = 0;
    w->flops = 2.0 * 8.0 * (double)w->n;
}

static void cpu_sweep(jt_kws *w)
{
    /* Eight independent chains keep the FMA units busy; the sink keeps them alive. */
    double x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    for (size_t i = 0; i < w->n; i++)
        for (int k = 0; k < 8; k++)
            x[k] = x[k] * 0.999 + 0.5;
    for (int k = 0; k < 8; k++)
        w->sink += x[k];
}

const char *const jt_kernel_names[] = {"copy", "triad", "cg", "gemm", "cpu", NULL};

const jt_kernel jt_kernels[] = {
    {"b[i] = a[i] (STREAM COPY, memory-bound)", 0, 1, copy_init, copy_sweep},
    {"c[i] = a[i] + s*b[i] (STREAM TRIAD; --ai raises the flops per element)", 0, 1, triad_init,
     triad_sweep},
    {"conjugate-gradient iterations on a dense SPD matrix (memory-bound)", 0, 0, cg_init,
     cg_sweep},
    {"dense matrix product through OpenBLAS, one BLAS thread (compute-bound)", 1, 0, gemm_init,
     gemm_sweep},
    {"arithmetic on registers only, no memory traffic (control)", 0, 0, cpu_init, cpu_sweep},
};

const jt_kernel *jt_kernel_find(const char *name)
{
    for (int i = 0; name && jt_kernel_names[i]; i++)
        if (strcmp(jt_kernel_names[i], name) == 0)
            return &jt_kernels[i];
    return NULL;
}

const char *jt_kernel_name(const jt_kernel *k) { return jt_kernel_names[k - jt_kernels]; }

void jt_kws_free(jt_kws *w, const jt_topo *tp)
{
    for (int k = 0; k < 3; k++)
        jt_buffer_free(tp, &w->buf[k]);
}
