/* cholesky: a tiled dense Cholesky (POTRF, TRSM, SYRK, GEMM tiles through OpenBLAS/LAPACKE)
 * on the small task runtime of src/runtime/: tiles 2D block-cyclic on a P×Q grid, each rank
 * unrolls the DAG and keeps its local view; owners send each final tile to the ranks that
 * need it, recipients in order of need.  Points, one per mode: flat (one jt_dbcast call with
 * routing FLAT: every copy posted at once), flat-ordered (one flat send per copy, one at a
 * time per rank, the most urgent first) and dbcast (--routing, default auto: trees and
 * pipelines for the broadcasts the DAG reveals); only the sending differs.
 *
 * One sample = one factorization: every rank refills its tiles (untimed), MPI_Barrier, then
 * the run; sample = the slowest rank's time (MPI_Allreduce MAX, untimed).  GFlop/s counts
 * N³/3 + N²/2 + N/6.  After each batch of samples the last factorization is checked on
 * rank 0: ‖A − L·Lᵀ‖_F / ‖A‖_F (series 1, "residual"); the run fails (jt_fatal: exit 1,
 * the run file left .partial) when that over N·ε exceeds RESIDUAL_BOUND.  Under SimGrid
 * (JT_SMPI) tiles are SMPI_SHARED_MALLOC and the kernels are SimGrid executions of their
 * flops at the host's speed (sched.c), so there is no residual. */
#include "bench/bench.h"

#include "comm/dbcast_route.h"
#include "core/errors.h"
#include "core/timer.h"
#include "jostle/dbcast.h"
#include "runtime/chol_kernels.h"
#include "runtime/chol_matrix.h"
#include "runtime/chol_plan.h"
#include "topo/nic_place.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#if defined(JT_SMPI) || defined(SMPI_H)
#define CH_SIM 1
#include <simgrid/host.h>
#else
#define CH_SIM 0
#endif
#if !CH_SIM && defined(JT_HAVE_OPENBLAS)
#include <cblas.h>
#endif

/* A factorization passes when ‖A − L·Lᵀ‖_F / (‖A‖_F · N · ε) <= RESIDUAL_BOUND, with
 * ε = DBL_EPSILON: the scaled residual of the LAPACK tests, which a backward-stable Cholesky
 * keeps of order 1 at most (about 1e-3 on this matrix), judged LAPACK-test style against a
 * threshold of 10.  A tile wrong by more than rounding is far above it. */
#define RESIDUAL_BOUND 10.0

static const char *const matrix_names[] = {"spd", "nonspd", NULL};
static const char *const datatype_names[] = {"double", "float", NULL};
/* The modes, in the order points are run: flat posts every copy of a tile at once (StarPU-MPI,
 * a linear broadcast), flat-ordered sends one copy at a time per rank, most urgent first,
 * dbcast a copy to the most urgent recipient and one jt_dbcast call to the others with
 * --routing (trees, pipelines), one send at a time per rank. */
enum { MODE_FLAT, MODE_FLAT_ORDERED, MODE_DBCAST, NMODES };
static const char *const mode_names[] = {"flat", "flat-ordered", "dbcast", NULL};

static const jt_opt_spec options[] = {
    {"n", "N", "2048", "matrix order", NULL},
    {"tile", "NB", "256", "tile order; must divide N", NULL},
    {"grid", "PxQ", "auto", "process grid, P*Q = ranks (auto: near-square, P <= Q)", NULL},
    {"modes", "LIST", "flat,flat-ordered,dbcast", "any of flat (every copy of a tile posted at "
                                                  "once), flat-ordered (one copy at a time, most "
                                                  "urgent first), dbcast (--routing)", NULL},
    {"routing", "R", "auto", "routing of dbcast mode (auto: the model's choice per broadcast)",
     jt_route_names},
    {"workers", "W", "0", "compute threads per rank (0: cores of the host / its ranks, at "
                          "least 1); simulated: concurrent executions per node", NULL},
    {"datatype", "T", "double", "double, or float (single-precision tiles and s-prefixed "
                                "kernels, as StarPU-MPI's mpi_cholesky)", datatype_names},
    {"matrix", "KIND", "spd", "spd, or nonspd (a negative pivot at row N/2: must be reported)",
     matrix_names},
    {"kernel-rates", "LIST", NULL, "simulated: each kernel's GFlop/s per core, potrf=R,trsm=R,"
                                   "syrk=R,gemm=R (jostle-bench tile-kernels measures them); "
                                   "default: every kernel at the host's speed", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

typedef struct state {
    jt_chol_grid g;
    long N;
    int workers, nmodes, modes[NMODES];
    jt_dbcast_routing routing;
    jt_chol_matrix kind;
    jt_chol_plan *plan;
    jt_sched *sched;
    jt_dbcast_ctx *db;
    int sent1, bcasts; /* over all ranks: tiles sent to one rank, broadcast to several */
    long msgs;
    int unchecked; /* batches whose residual rank 0 could not compute (no memory) */
    double rates[4];   /* --kernel-rates, GFlop/s by kind; 0: the host's speed */
    int single;        /* --datatype float */
} state;

static double secs(double s, const jt_point *p) { (void)p; return s; }
static double gflops(double s, const jt_point *p) { return p->arg[0] / s / 1e9; }
static double ident(double x, const jt_point *p) { (void)p; return x; }

static const jt_metric metrics[] = {
    {"gflops", "GFlop/s", "GFlop/s", JT_HIGHER_BETTER, 0, gflops},
    {"time", "s", "Time(s)", JT_LOWER_BETTER, 0, secs},
    {"residual", "", "Residual", JT_LOWER_BETTER, 1, ident},
    {NULL, NULL, NULL, 0, 0, NULL},
};

static void parse_modes(state *s, const char *spec)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *sv = NULL, *t = strtok_r(buf, ",", &sv); t; t = strtok_r(NULL, ",", &sv)) {
        int m = 0;
        while (mode_names[m] && strcmp(t, mode_names[m]) != 0)
            m++;
        if (!mode_names[m])
            jt_usage_error("--modes: '%s' is not a mode; expected a list of flat, flat-ordered "
                           "and dbcast", t);
        int seen = 0;
        for (int q = 0; q < s->nmodes; q++)
            seen |= s->modes[q] == m;
        if (!seen)
            s->modes[s->nmodes++] = m;
    }
    if (!s->nmodes)
        jt_usage_error("--modes '%s' names no mode", spec);
}

/* --grid's form (read: P and Q, 0 for auto), then its match with the job (setup). */
static void parse_grid(state *s, const char *spec)
{
    char x;
    if (strcmp(spec, "auto") != 0 &&
        (sscanf(spec, "%d%c%d", &s->g.P, &x, &s->g.Q) != 3 || x != 'x' || s->g.P < 1 ||
         s->g.Q < 1))
        jt_usage_error("--grid '%s' is not a process grid; expected PxQ, e.g. 2x2", spec);
}

static void match_grid(jt_ctx *ctx, state *s, const char *spec)
{
    if (s->g.P == 0) {
        jt_chol_grid_auto(ctx->size, &s->g.P, &s->g.Q);
        return;
    }
    if (s->g.P * s->g.Q != ctx->size)
        jt_usage_error("--grid %s does not match the job: %d x %d = %d ranks, the job has %d",
                       spec, s->g.P, s->g.Q, s->g.P * s->g.Q, ctx->size);
}

static void *tile_alloc(size_t bytes)
{
#if CH_SIM
    return SMPI_SHARED_MALLOC(bytes);
#else
    void *p = NULL;
    return posix_memalign(&p, 64, bytes) ? NULL : p;
#endif
}

static void tile_free(void *a)
{
#if CH_SIM
    SMPI_SHARED_FREE(a);
#else
    free(a);
#endif
}

/* --kernel-rates potrf=R,trsm=R,syrk=R,gemm=R (GFlop/s): simulated tasks then last their
 * flops at their kernel's rate, not at the host's speed (chol_plan.h, cost_scale). */
static void kernel_rates(state *s, const char *list, int validating)
{
    /* --validate judges the list in the native build too: a simulated dry run asks it there,
     * as the SimGrid build runs only under smpirun */
    if (!CH_SIM && !validating)
        jt_usage_error("--kernel-rates is for simulated runs: here the kernels run");
    char *copy = strdup(list), *save = NULL;
    int seen = 0;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '='), *end = NULL;
        int k = -1;
        for (int q = 0; eq && q < 4; q++)
            if ((size_t)(eq - t) == strlen(jt_chol_kind_name((jt_chol_kind)q)) &&
                strncasecmp(t, jt_chol_kind_name((jt_chol_kind)q), (size_t)(eq - t)) == 0)
                k = q;
        double r = eq ? strtod(eq + 1, &end) : 0;
        if (k < 0 || !end || *end || !(r > 0))
            jt_usage_error("--kernel-rates '%s' is not allowed: '%s' should be potrf, trsm, syrk "
                           "or gemm = GFlop/s > 0", list, t);
        s->rates[k] = r;
        seen |= 1 << k;
    }
    free(copy);
    if (seen != 15)
        jt_usage_error("--kernel-rates '%s' is not allowed: give all of potrf, trsm, syrk, gemm",
                       list);
}

static void read_options(const jt_opts *o, const jt_topo *tp, void *st)
{
    state *s = st;
    (void)tp;
    if (!CH_SIM && !jt_chol_kernels_available())
        jt_usage_error("cholesky needs OpenBLAS and LAPACKE, which this build did not find");
    s->N = jt_opt_long(o, "n", 1, 1L << 20);
    s->g.nb = (int)jt_opt_long(o, "tile", 1, 1 << 15);
    if (s->N % s->g.nb)
        jt_usage_error("--tile %d does not divide --n %ld (%ld = %ld x %d + %ld): choose a tile "
                       "order that divides the matrix order", s->g.nb, s->N, s->N,
                       s->N / s->g.nb, s->g.nb, s->N % s->g.nb);
    s->g.T = (int)(s->N / s->g.nb);
    parse_grid(s, jt_opt_str(o, "grid"));
    parse_modes(s, jt_opt_str(o, "modes"));
    s->routing = (jt_dbcast_routing)jt_opt_choice(o, "routing");
    s->kind = (jt_chol_matrix)jt_opt_choice(o, "matrix");
    s->workers = (int)jt_opt_long(o, "workers", 0, 1024);
    if (CH_SIM && s->kind == JT_MATRIX_NONSPD)
        jt_usage_error("--matrix nonspd is not allowed simulated: the kernels do not run");
    if (jt_opt_given(o, "kernel-rates"))
        kernel_rates(s, jt_opt_str(o, "kernel-rates"), jt_opt_flag(o, "validate"));
    s->single = jt_opt_choice(o, "datatype") == 1;
}

static void setup(jt_ctx *ctx, void *st)
{
    state *s = st;
    match_grid(ctx, s, jt_opt_str(&ctx->opts, "grid"));
    if (s->workers == 0) {
#if CH_SIM /* the simulated node's cores: one worker each */
        long cores = (long)sg_host_core_count(sg_host_self()) * ctx->local_size;
#else
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
#endif
        s->workers = cores / ctx->local_size > 1 ? (int)(cores / ctx->local_size) : 1;
    }
    s->plan = jt_chol_plan_build(&s->g, ctx->rank);
    if (!s->plan)
        jt_fatal("rank %d: cannot build the local view of %d x %d tiles", ctx->rank, s->g.T,
                 s->g.T);
#if CH_SIM
    for (int k = 0; s->rates[0] > 0 && k < 4; k++) /* --kernel-rates given */
        s->plan->cost_scale[k] = sg_host_get_speed(sg_host_self()) / (s->rates[k] * 1e9);
#endif
    s->plan->single = s->single;
    size_t bytes = jt_chol_tile_bytes(s->plan), ntile = 0;
    for (int i = 0; i < s->plan->ntiles; i++)
        ntile += s->plan->tiles[i].where != JT_TILE_NONE;
    if (!CH_SIM) {
        char msg[640];
        snprintf(msg, sizeof msg, "--n %ld --tile %d needs %zu MiB on rank %d (host %s has %zu "
                 "MiB per rank)", s->N, s->g.nb, (ntile * bytes) >> 20, ctx->rank, ctx->host,
                 jt_bench_memory_per_rank(ctx) >> 20);
        jt_check_all(ctx, ntile * bytes > jt_bench_memory_per_rank(ctx) * 8 / 10 ? msg : NULL);
    }
    for (int i = 0; i < s->plan->ntiles; i++)
        if (s->plan->tiles[i].where != JT_TILE_NONE &&
            !(s->plan->tiles[i].a = tile_alloc(bytes)))
            jt_fatal("rank %d: cannot allocate a %zu-byte tile", ctx->rank, bytes);
    int sent[2] = {s->plan->nsend1, s->plan->nbcast};
    MPI_Allreduce(sent, &s->sent1, 1, MPI_INT, MPI_SUM, ctx->comm);
    MPI_Allreduce(sent + 1, &s->bcasts, 1, MPI_INT, MPI_SUM, ctx->comm);
    MPI_Allreduce(&s->plan->nmsgs, &s->msgs, 1, MPI_LONG, MPI_SUM, ctx->comm);

#if !CH_SIM && defined(JT_HAVE_OPENBLAS)
    openblas_set_num_threads(1); /* the workers are the parallelism */
#endif
    /* The calling thread communicates, on the rank's communication core; the workers take the
     * other cores of the rank's share, then wrap over it (as contention's compute threads). */
    int *cores = NULL;
#if !CH_SIM
    jt_binding cb;
    jt_bind_thread(&ctx->topo, ctx->comm_core, &cb);
    jt_ctx_bound_comm(ctx, &cb, NULL);
    cores = calloc((size_t)s->workers, sizeof *cores);
    if (!cores)
        jt_fatal("out of memory");
    jt_place_compute_cores(jt_topo_ncores(&ctx->topo), ctx->local_rank, ctx->local_size,
                           ctx->comm_core, s->workers, cores);
#endif
    jt_sched_ops ops = {jt_chol_exec, jt_chol_cost, jt_chol_finish, s->plan};
    s->sched = jt_sched_create(s->workers, &ctx->topo, cores, s->plan->ntasks + 1, &ops);
    free(cores);
    if (!s->sched)
        jt_fatal("rank %d: cannot start %d workers", ctx->rank, s->workers);
    for (int w = 0; w < s->workers; w++)
        if (jt_sched_binding(s->sched, w))
            jt_ctx_bound_compute(ctx, jt_sched_binding(s->sched, w), NULL);
    jt_dbcast_cfg cfg;
    jt_dbcast_cfg_default(&cfg);
    cfg.progress = JT_PROGRESS_POLL; /* the runtime's communication thread drives it */
    s->db = jt_dbcast_init(ctx->comm, &cfg);
    jt_check_all(ctx, s->db ? NULL : "jt_dbcast_init refused the configuration (see above)");
}

static size_t npoints(void *st) { return (size_t)((state *)st)->nmodes; }

static jt_chol_send send_of(const state *s, size_t i)
{
    jt_chol_send how = {s->modes[i] != MODE_FLAT,
                        s->modes[i] == MODE_DBCAST ? s->routing : JT_ROUTE_FLAT};
    return how;
}

static void point(void *st, size_t i, jt_point *p)
{
    state *s = st;
    snprintf(p->label, sizeof p->label, "%s", mode_names[s->modes[i]]);
    char grid[32];
    snprintf(grid, sizeof grid, "%dx%d", s->g.P, s->g.Q);
    jt_json *j = p->params;
    jt_json_kstr(j, "mode", mode_names[s->modes[i]]);
    jt_json_kstr(j, "routing", jt_dbcast_route_name(send_of(s, i).routing));
    jt_json_kint(j, "order", s->N);
    jt_json_kint(j, "tile", s->g.nb);
    jt_json_kstr(j, "grid", grid);
    jt_json_kint(j, "workers", s->workers);
    jt_json_kstr(j, "matrix", matrix_names[s->kind]);
    jt_json_kstr(j, "datatype", datatype_names[s->plan->single]);
    p->arg[0] = jt_chol_flops((double)s->N);
    p->metrics = metrics;
    p->nmetrics = CH_SIM ? 2 : 3;
}

static void fill(state *s)
{
    if (CH_SIM)
        return;
    for (int i = 0; i < s->plan->ntiles; i++)
        if (s->plan->tiles[i].where == JT_TILE_OWNED)
            jt_chol_fill(&s->g, s->kind, s->plan->single, s->plan->tiles[i].m,
                         s->plan->tiles[i].n, s->plan->tiles[i].a);
}

static void run(jt_ctx *ctx, void *st, size_t i, jt_series *ser, size_t n)
{
    state *s = st;
    for (size_t q = 0; q < n; q++) {
        fill(s);
        atomic_store(&s->plan->fail_row, INT_MAX);
        MPI_Barrier(ctx->comm);
        double t0 = jt_now();
        int rc = jt_chol_run(s->plan, s->sched, s->db, send_of(s, i));
        double el = jt_now() - t0, worst;
        if (rc != JT_DBCAST_OK)
            jt_fatal("rank %d: communication failed: %s", ctx->rank, jt_dbcast_strerror(rc));
        int fail = atomic_load(&s->plan->fail_row), first;
        MPI_Allreduce(&el, &worst, 1, MPI_DOUBLE, MPI_MAX, ctx->comm);
        MPI_Allreduce(&fail, &first, 1, MPI_INT, MPI_MIN, ctx->comm);
        if (first != INT_MAX) {
            int k = first / s->g.nb;
            jt_usage_error("the matrix is not positive definite: POTRF of diagonal tile (%d,%d) "
                           "(rank %d) found a non-positive pivot at row %d (leading minor of "
                           "order %d)", k, k, jt_chol_owner(&s->g, k, k), first, first + 1);
        }
        if (ctx->rank == 0)
            jt_series_push(&ser[0], worst);
    }
    if (!CH_SIM) {
        double res;
        if (jt_chol_residual(s->plan, s->kind, ctx->comm, &res) != 0) {
            /* Every rank skipped the gather together; the run metadata is already written, so
             * say it on stderr (the point then has no residual line). */
            if (ctx->rank == 0 && s->unchecked++ == 0) {
                fprintf(stderr, "jostle-bench: warning: the residual is not checked: rank 0 cannot "
                        "allocate A and L (2 x %ld^2 doubles, %zu MiB)\n", s->N,
                        ((size_t)s->N * (size_t)s->N * 2 * sizeof(double)) >> 20);
                fflush(stderr);
            }
        } else if (ctx->rank == 0) {
            double eps = s->plan->single ? FLT_EPSILON : DBL_EPSILON;
            double scaled = res / ((double)s->N * eps);
            if (!(scaled <= RESIDUAL_BOUND)) /* NaN fails too */
                jt_fatal("the factorization is wrong (mode %s): ||A - L L^T||_F / ||A||_F = %.3e, "
                         "scaled by N eps = %.3g, above the bound %g (N %ld, tile %d, grid %dx%d)",
                         mode_names[s->modes[i]], res, scaled, RESIDUAL_BOUND, s->N, s->g.nb,
                         s->g.P, s->g.Q);
            jt_series_push(&ser[1], res);
        }
    }
}

static void teardown(jt_ctx *ctx, void *st)
{
    state *s = st;
    jt_sched_destroy(s->sched);
    if (jt_dbcast_finalize(s->db) != JT_DBCAST_OK)
        jt_fatal("rank %d: jt_dbcast_finalize failed", ctx->rank);
    for (int i = 0; i < s->plan->ntiles; i++)
        if (s->plan->tiles[i].a)
            tile_free(s->plan->tiles[i].a);
    jt_chol_plan_free(s->plan);
}

static void meta(jt_ctx *ctx, void *st, jt_json *j)
{
    state *s = st;
    (void)ctx;
    jt_json_key(j, "cholesky");
    jt_json_object(j);
    jt_json_kint(j, "n", s->N);
    jt_json_kint(j, "tile", s->g.nb);
    jt_json_kint(j, "tiles", s->g.T);
    jt_json_kint(j, "grid_p", s->g.P);
    jt_json_kint(j, "grid_q", s->g.Q);
    jt_json_kint(j, "workers", s->workers);
    jt_json_kstr(j, "datatype", datatype_names[s->plan->single]);
    jt_json_kstr(j, "distribution", "2D block-cyclic: tile (m,n) on rank (m % P) * Q + n % Q");
    jt_json_kstr(j, "flops", "N^3/3 + N^2/2 + N/6");
    jt_json_kstr(j, "residual", CH_SIM ? "not computed (simulated: no data)"
                                       : "||A - L L^T||_F / ||A||_F after each batch");
    if (!CH_SIM) {
        jt_json_knum(j, "residual_bound", RESIDUAL_BOUND);
        jt_json_kstr(j, "residual_check", "the run fails (exit 1) when ||A - L L^T||_F / "
                     "(||A||_F N eps) > residual_bound, eps = DBL_EPSILON (FLT_EPSILON "
                     "for float)");
    }
    jt_json_kstr(j, "communication", "one thread (jt_dbcast poll mode); workers compute only");
    jt_json_kint(j, "tiles_sent_to_one", s->sent1);
    jt_json_kint(j, "tiles_broadcast", s->bcasts);
    jt_json_kint(j, "messages_if_flat", s->msgs);
    jt_json_kbool(j, "simulated", CH_SIM);
    jt_json_kstr(j, "kernels", !CH_SIM ? "OpenBLAS/LAPACKE, one BLAS thread per worker"
                               : s->rates[0] > 0 ? "SimGrid executions lasting each kernel's "
                                                   "flops at its rate (kernel_rates_gflops)"
                                                 : "SimGrid executions of the tile flops at the "
                                                   "host speed");
    if (s->rates[0] > 0) {
        jt_json_key(j, "kernel_rates_gflops");
        jt_json_object(j);
        for (int k = 0; k < 4; k++)
            jt_json_knum(j, jt_chol_kind_name((jt_chol_kind)k), s->rates[k]);
        jt_json_end(j);
    }
    jt_json_end(j);
}

const jt_bench jt_bench_cholesky = {
    .name = "cholesky",
    .summary = "Tiled Cholesky on a small task runtime: GFlop/s with flat sends against dynamic "
               "broadcasts (jt_dbcast) of the tiles the DAG says several ranks need.",
    .options = options,
    .metrics = metrics,
    .thread_level = CH_SIM ? MPI_THREAD_SINGLE : MPI_THREAD_FUNNELED,
    .min_ranks = 1,
    .nseries = 2,
    .ratio_series = 1u << 1,
    .label_head = "Mode",
    .state_size = sizeof(state),
    .read = read_options,
    .setup = setup,
    .npoints = npoints,
    .point = point,
    .run = run,
    .teardown = teardown,
    .meta = meta,
};
