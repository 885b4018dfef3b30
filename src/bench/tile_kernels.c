/* tile-kernels: GFlop/s of the Cholesky's four tile kernels (POTRF, TRSM, SYRK, GEMM) on NB×NB
 * tiles, one BLAS thread, each call timed on a fresh copy of a well-conditioned tile (the copy
 * outside the timing).  What one worker of `cholesky` computes at; `jostle cholesky --simulate
 * --kernel-rates measure` gives these rates to the simulated nodes.  Every rank measures; rank
 * 0's samples are reported (run it with one rank). */
#include "bench/bench.h"

#include "core/errors.h"
#include "core/timer.h"
#include "runtime/chol_kernels.h"
#include "topo/bind.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const jt_opt_spec options[] = {
    {"tile", "NB", "512", "tile order", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

typedef struct state {
    int nb;
    double *spd, *l, *c; /* POTRF's input, its factor (the other kernels' inputs), the output */
} state;

static double secs(double s, const jt_point *p) { (void)p; return s; }
static double gflops(double s, const jt_point *p) { return p->arg[0] / s / 1e9; }

static const jt_metric metrics[] = {
    {"gflops", "GFlop/s", "GFlop/s", JT_HIGHER_BETTER, 0, gflops},
    {"time", "s", "Time(s)", JT_LOWER_BETTER, 0, secs},
    {NULL, NULL, NULL, 0, 0, NULL},
};

static void read_options(const jt_opts *o, const jt_topo *tp, void *st)
{
    state *s = st;
    (void)tp;
    if (!jt_chol_kernels_available())
        jt_usage_error("tile-kernels needs OpenBLAS and LAPACKE, which this build did not find");
    s->nb = (int)jt_opt_long(o, "tile", 1, 8192);
}

static void setup(jt_ctx *ctx, void *st)
{
    state *s = st;
    size_t n = (size_t)s->nb * s->nb;
    s->spd = malloc(n * sizeof(double));
    s->l = malloc(n * sizeof(double));
    s->c = malloc(n * sizeof(double));
    if (!s->spd || !s->l || !s->c)
        jt_fatal("out of memory for three %d x %d tiles", s->nb, s->nb);
    jt_chol_kernel_tiles(s->nb, s->spd, s->l);
    jt_binding b;
    jt_bind_thread(&ctx->topo, ctx->comm_core, &b);
    jt_ctx_bound_compute(ctx, &b, NULL);
}

static size_t npoints(void *st) { (void)st; return 4; }

static void point(void *st, size_t i, jt_point *p)
{
    state *s = st;
    snprintf(p->label, sizeof p->label, "%s", jt_chol_kind_name((jt_chol_kind)i));
    jt_json_kstr(p->params, "kernel", jt_chol_kind_name((jt_chol_kind)i));
    jt_json_kint(p->params, "tile", s->nb);
    p->arg[0] = jt_chol_task_flops((jt_chol_kind)i, s->nb);
    p->metrics = metrics;
    p->nmetrics = 2;
}

static void run(jt_ctx *ctx, void *st, size_t i, jt_series *ser, size_t n)
{
    state *s = st;
    (void)ctx;
    for (size_t q = 0; q < n; q++) {
        memcpy(s->c, s->spd, (size_t)s->nb * s->nb * sizeof(double));
        double t0 = jt_now();
        jt_chol_kernel((jt_chol_kind)i, s->nb, 0, s->c, s->l, s->l);
        jt_series_push(&ser[0], jt_now() - t0);
    }
}

static void teardown(jt_ctx *ctx, void *st)
{
    state *s = st;
    (void)ctx;
    free(s->spd), free(s->l), free(s->c);
}

const jt_bench jt_bench_tile_kernels = {
    .name = "tile-kernels",
    .summary = "GFlop/s of the Cholesky's tile kernels (POTRF, TRSM, SYRK, GEMM), one BLAS "
               "thread: what a cholesky worker computes at, and the simulated kernels' rates.",
    .options = options,
    .metrics = metrics,
    .thread_level = MPI_THREAD_SINGLE,
    .min_ranks = 1,
    .nseries = 1,
    .label_head = "Kernel",
    .state_size = sizeof(state),
    .read = read_options,
    .setup = setup,
    .npoints = npoints,
    .point = point,
    .run = run,
    .teardown = teardown,
};
