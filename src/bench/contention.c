/* contention: one communicating thread doing ping-pongs while compute threads run a kernel,
 * in phases (compute alone, communication alone, both together), as in Swartvagher, COMPAS
 * 2021 (figures 1-4) and SIAM PP22 (CG and GEMM).  One run is one configuration; the sweeps
 * over cores, sizes, intensity and placement are campaigns of runs (jostle contention). */
#include "bench/contention.h"

#include "comm/p2p.h"
#include "core/errors.h"
#include "core/sizes.h"
#include "core/timer.h"
#include "kernels/setup_time.h"
#include "kernels/stream_loops.h"
#include "kernels/workers.h"
#include "topo/nic_place.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef JT_HAVE_OPENBLAS
void openblas_set_num_threads(int);
#endif


static double mbps(double s, const jt_point *p) { return 2.0 * p->arg[0] / s / 1e6; }
/* arg[1] = bytes per sweep with write-allocate, arg[2] = without (STREAM), arg[3] = flops */
static double gbps(double s, const jt_point *p) { return p->arg[2] / s / 1e9; }
static double traffic(double gb, const jt_point *p) { return gb * p->arg[1] / p->arg[2]; }
static double gflops(double s, const jt_point *p) { return p->arg[3] / s / 1e9; }
static double as_is(double s, const jt_point *p) { (void)p; return s; }

/* Every last-level cache of the host together (32 MiB when hwloc knows none). */
static size_t llc_total(const jt_topo *tp)
{
    int n;
    size_t one = jt_topo_llc_bytes(tp, &n);
    return one ? one * (size_t)n : (size_t)32 << 20;
}

/* Everything contention reports, once: the communication's three, then what the kernel and
 * the counters allow of the computation's (choose_metrics). */
enum { M_LATENCY, M_BANDWIDTH, M_RTT, M_SWEEP, M_THROUGHPUT, M_TRAFFIC, M_FLOPS, M_STALLED };
static const jt_metric metrics[] = {
    [M_LATENCY] = {"latency", "us", "Latency(us)", JT_LOWER_BETTER, S_COMM, jt_metric_half_us},
    [M_BANDWIDTH] = {"bandwidth", "MB/s", "Bandwidth(MB/s)", JT_HIGHER_BETTER, S_COMM, mbps},
    [M_RTT] = {"rtt", "us", "RTT(us)", JT_LOWER_BETTER, S_COMM, jt_metric_us},
    [M_SWEEP] = {"compute_bandwidth", "GB/s", "Sweep(GB/s/thr)", JT_HIGHER_BETTER, S_COMPUTE, gbps},
    [M_THROUGHPUT] = {"compute_throughput", "GB/s", "Compute(GB/s)", JT_HIGHER_BETTER, S_AGG, as_is},
    [M_TRAFFIC] = {"compute_traffic", "GB/s", "Traffic(GB/s)", JT_HIGHER_BETTER, S_AGG, traffic},
    [M_FLOPS] = {"compute_flops", "GFlop/s", "Compute(GF/s/core)", JT_HIGHER_BETTER, S_COMPUTE,
                 gflops},
    [M_STALLED] = {"stalled_fraction", "1", "Stalled", JT_LOWER_BETTER, S_STALL, as_is},
    {NULL, NULL, NULL, 0, 0, NULL},
};

static void choose_metrics(state *s)
{
    memcpy(s->comm_m, metrics, sizeof s->comm_m);
    int k = 0;
    /* The per-sweep metric comes first: the harness judges convergence on it. */
    if (s->kernel != jt_kernel_find("cpu")) {
        s->comp_m[k++] = metrics[M_SWEEP];
        s->comp_m[k++] = metrics[M_THROUGHPUT];
        s->comp_m[k++] = metrics[M_TRAFFIC];
    }
    if (s->kernel != jt_kernel_find("copy"))
        s->comp_m[k++] = metrics[M_FLOPS];
    if (s->pool.counters && s->computing)
        s->comp_m[k++] = metrics[M_STALLED];
    s->ncomp_m = k;
    memcpy(s->both_m, s->comm_m, sizeof s->comm_m);
    memcpy(s->both_m + 3, s->comp_m, (size_t)k * sizeof *s->comp_m);
}

/* The arrays cut so that every compute thread of the host makes its pages within the setup
 * time (at this thread's touch rate, the threads taken one after another: page faults scale
 * poorly), and, sized from the caches, so that --min-reps sweeps fit in a phase (a sweep is
 * no slower than a first touch; --array-bytes given was sized so already, and a neighbour
 * that halves the touch rate for a moment must not halve it); the least of the ranks' cuts,
 * so that every rank measures the same arrays. */
static void cap_to_time(jt_ctx *ctx, state *s, int given)
{
    s->touch_rate = jt_touch_rate(&ctx->topo, s->compute_mem);
    double threads = (double)ctx->local_size * s->ncompute;
    size_t floor = (size_t)4 << 20;
    unsigned long long b = jt_cap_to_time(s->array_bytes, s->touch_rate,
                                          s->setup_time / threads, floor);
    if (s->phase_time > 0 && !given)
        b = jt_cap_to_time(b, s->touch_rate, s->phase_time / (double)ctx->cfg.min_reps, floor);
    MPI_Allreduce(MPI_IN_PLACE, &b, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, ctx->comm);
    s->array_bytes = (size_t)b;
}

static void setup(jt_ctx *ctx, void *st)
{
    state *s = st;
    char err[512];
    int on = s->compute_on;
    jt_pp_flows_read(ctx, JT_P2P_PINGPONG, &s->pairs, &s->threads);
    int many = jt_pp_flows_wanted(&ctx->opts), talking = 2 * s->pairs; /* ranks that talk */
    s->computing = ctx->rank < talking && (on == 0 || (on == 1 && ctx->rank < s->pairs));

    /* This rank's share of its host: the communicating thread and the compute threads. */
    int ncores = jt_topo_ncores(&ctx->topo);
    int others = s->threads > 1 ? s->threads - 1 : 0; /* the other comm threads' cores */
    int free_cores = jt_place_compute_cores(ncores, ctx->local_rank, ctx->local_size,
                                            ctx->comm_core, 0, NULL) - others;
    free_cores = free_cores > 0 ? free_cores : 0;
    if (s->ncompute < 0)
        s->ncompute = free_cores;
    if (!s->computing)
        s->ncompute = 0;
    int oversub = jt_opt_flag(&ctx->opts, "oversubscribe");
    snprintf(err, sizeof err, "--compute-cores %d is not allowed without --oversubscribe: rank %d "
             "has %d free core(s) on %s (its share of %d cores for %d ranks, less the "
             "communicating thread's)", s->ncompute, ctx->rank, free_cores, ctx->host, ncores,
             ctx->local_size);
    jt_check_all(ctx, s->ncompute > free_cores && !oversub ? err : NULL);
    const char *cm = jt_opt_str(&ctx->opts, "compute-mem");
    s->compute_mem = strcmp(cm, "local") == 0 ? JT_MEM_ANY : jt_numa_option(ctx, "compute-mem", cm);

    size_t threads_host = (size_t)ctx->local_size * (size_t)(s->ncompute > 0 ? s->ncompute : 1);
    size_t dflt = 12 * llc_total(&ctx->topo) / threads_host;
    if (dflt < ((size_t)24 << 20))
        dflt = (size_t)24 << 20;
    int given = s->array_bytes != 0;
    if (!given)
        s->array_bytes = dflt;
    s->array_bytes_wanted = s->array_bytes;
    if (s->setup_time > 0 && s->ncompute > 0)
        cap_to_time(ctx, s, given);

    size_t frames;
    size_t arena = jt_p2p_arena_bytes(JT_P2P_PINGPONG, s->buffers, 1, s->sizes, s->nsizes,
                                      jt_topo_llc_bytes(&ctx->topo, NULL), &frames);
    size_t need = arena + s->array_bytes * (size_t)s->ncompute;
    size_t avail = jt_bench_memory_per_rank(ctx);
    snprintf(err, sizeof err, "arrays and buffers need %zu MiB per rank on %s, which has %zu MiB "
             "available per rank: lower --array-bytes, --compute-cores or --sizes", need >> 20,
             ctx->host, avail >> 20);
    jt_check_all(ctx, need > avail * 8 / 10 ? err : NULL);

    int me = ctx->rank < 2 && !many ? ctx->rank : -1;
    if (ctx->rank == 0 && ctx->size > talking && !many)
        jt_warn(ctx, "ranks 2 to %d take no part in contention and wait idle", ctx->size - 1);
    s->flows = many ? jt_pp_flows_setup(ctx, JT_P2P_PINGPONG, s->buffers, 1, 0, arena, frames) : 0;
    if (me >= 0) {
        jt_binding b;
        jt_bind_thread(&ctx->topo, ctx->comm_core, &b);
        jt_buffer_alloc(&ctx->topo, &s->buf, arena, ctx->comm_mem);
        jt_ctx_bound_comm(ctx, &b, &s->buf);
    }
    jt_p2p_init(&s->p2p, ctx->comm, me, me >= 0 ? 1 - me : -1, JT_P2P_PINGPONG, s->buffers, 1, 0,
                s->buf.p, s->buf.bytes, frames);

    int *cores = calloc((size_t)(s->ncompute > 0 ? s->ncompute : 1), sizeof *cores);
    if (s->flows)
        jt_pp_flows_compute_cores(ctx, s->flows, s->ncompute, cores);
    else
        jt_place_compute_cores(ncores, ctx->local_rank, ctx->local_size, ctx->comm_core,
                               s->ncompute, cores);
#ifdef JT_HAVE_OPENBLAS
    openblas_set_num_threads(1); /* one BLAS thread per compute thread */
#endif
    jt_pool_create(&s->pool, &ctx->topo, s->kernel, s->ncompute, cores, s->array_bytes,
                   s->compute_mem, s->reps, s->stores);
    free(cores);
    for (int t = 0; t < s->ncompute; t++)
        jt_ctx_bound_compute(ctx, &s->pool.w[t].bind, &s->pool.w[t].ws.buf[0]);
    if (s->ncompute > 0 && !s->pool.counters)
        snprintf(s->counters_reason, sizeof s->counters_reason, "%s", s->pool.w[0].ctr.reason);
    else if (s->ncompute == 0)
        snprintf(s->counters_reason, sizeof s->counters_reason, "no compute thread on this rank");
    choose_metrics(s);
    s->active = -1;
}

static size_t npoints(void *st)
{
    state *s = st;
    return (size_t)s->repeat * s->nsizes * (size_t)s->nphases;
}

static void decode(const state *s, size_t i, int *rep, size_t *size, int *phase)
{
    *phase = s->phases[i % (size_t)s->nphases];
    *size = (i / (size_t)s->nphases) % s->nsizes;
    *rep = (int)(i / ((size_t)s->nphases * s->nsizes));
}

/* What one sweep of one compute thread counts (the first thread's workspace: all are alike). */
static void sweep_counts(const state *s, double *bytes, double *bytes_wa, double *flops)
{
    *bytes = s->ncompute > 0 ? s->pool.w[0].ws.bytes : 0;
    *bytes_wa = s->ncompute > 0 ? s->pool.w[0].ws.bytes_wa : 0;
    *flops = s->ncompute > 0 ? s->pool.w[0].ws.flops : 0;
}

static void point(void *st, size_t i, jt_point *p)
{
    state *s = st;
    int rep, phase;
    size_t k;
    decode(s, i, &rep, &k, &phase);
    snprintf(p->label, sizeof p->label, "%s/%llu", jt_contention_phase_names[phase],
             (unsigned long long)s->sizes[k]);
    p->arg[0] = (double)s->sizes[k];
    sweep_counts(s, &p->arg[2], &p->arg[1], &p->arg[3]);
    p->min_time = s->phase_time;
    jt_json *j = p->params;
    jt_json_kstr(j, "phase", jt_contention_phase_names[phase]);
    jt_json_kint(j, "size", (long long)s->sizes[k]);
    jt_json_kstr(j, "kernel", jt_kernel_name(s->kernel));
    jt_json_kint(j, "compute_cores", s->ncompute);
    jt_json_knum(j, "ai", p->arg[2] > 0 ? p->arg[3] / p->arg[2] : 0.0); /* as executed */
    jt_json_kstr(j, "stores", jt_stores_names[s->stores]);
    jt_json_kint(j, "rep", rep);
    jt_json_kstr(j, "buffers", jt_p2p_buffers_names[s->buffers]);
    if (s->flows)
        jt_pp_flows_params(s->flows, j);
    if (phase == PH_COMM || s->ncomp_m == 0 || s->ncompute == 0) {
        p->metrics = s->comm_m;
        p->nmetrics = phase == PH_COMPUTE ? 0 : 3;
    } else if (phase == PH_COMPUTE) {
        p->metrics = s->comp_m;
        p->nmetrics = s->ncomp_m;
    } else {
        p->metrics = s->both_m;
        p->nmetrics = 3 + s->ncomp_m;
    }
}

/* The phase's aggregate throughput so far, in place of the last one (GB/s, STREAM bytes). */
static void aggregate(state *s, jt_series *ser)
{
    double wall, sweeps = jt_pool_sweeps(&s->pool, &wall);
    jt_series_clear(&ser[S_AGG]);
    jt_series_push(&ser[S_AGG], wall > 0 ? sweeps * s->pool.w[0].ws.bytes / wall / 1e9 : 0);
}

/* 2 ms asleep: while compute threads run alone, a communicating thread that spun would take a
 * core from them (an oversubscribed rank shares it); a wake-up this rare costs well under 1%. */
static void nap(void) { nanosleep(&(struct timespec){0, 2000000}, NULL); }

/* A barrier that sleeps instead of polling. */
static void sleeping_barrier(MPI_Comm comm)
{
    MPI_Request req;
    int done = 0;
    MPI_Ibarrier(comm, &req);
    for (MPI_Test(&req, &done, MPI_STATUS_IGNORE); !done;
         MPI_Test(&req, &done, MPI_STATUS_IGNORE))
        nap();
}

static void run(jt_ctx *ctx, void *st, size_t i, jt_series *ser, size_t n)
{
    state *s = st;
    int rep, phase;
    size_t k;
    decode(s, i, &rep, &k, &phase);
    if (s->active != (long)i) { /* a new phase: compute threads run only where they belong */
        if (s->ncompute > 0)
            jt_pool_stop(&s->pool);
        s->active = (long)i;
        s->since = jt_now();
        if (phase != PH_COMPUTE && s->flows) /* before the phase's warm-up, as pingpong's sizes */
            jt_pp_flows_run(ctx, s->flows, s->sizes[k], 1, &ser[S_COMM], NULL, 0);
        else if (phase != PH_COMPUTE)
            jt_p2p_touch(&s->p2p, s->sizes[k]);
        if (s->ncompute > 0 && phase != PH_COMM)
            jt_pool_start(&s->pool);
    }
    int sampling = ctx->rank == 0 && s->ncompute > 0;
    if (phase == PH_COMPUTE) {
        /* Rank 0 waits for n more sweeps, the other ranks for rank 0, all asleep. */
        size_t got = 0;
        while (sampling && got < n) {
            got += jt_pool_harvest(&s->pool, s->since, &ser[S_COMPUTE], &ser[S_STALL]);
            if (got < n)
                nap();
        }
        if (sampling)
            aggregate(s, ser);
        sleeping_barrier(ctx->comm);
        return;
    }
    if (s->flows) /* the mean over flows of each sample (bandwidth: of one flow) */
        jt_pp_flows_run(ctx, s->flows, s->sizes[k], 0, &ser[S_COMM], NULL, n);
    for (size_t q = 0; q < n && !s->flows; q++) {
        double dt = jt_p2p_sample(&s->p2p, s->sizes[k]);
        if (s->p2p.me == 0)
            jt_series_push(&ser[S_COMM], dt);
    }
    if (sampling && phase == PH_TOGETHER) {
        jt_pool_harvest(&s->pool, s->since, &ser[S_COMPUTE], &ser[S_STALL]);
        aggregate(s, ser);
    }
}

static void teardown(jt_ctx *ctx, void *st)
{
    state *s = st;
    if (s->ncompute > 0)
        jt_pool_stop(&s->pool);
    jt_pool_destroy(&s->pool);
    jt_pp_flows_free(s->flows);
    jt_p2p_free(&s->p2p);
    jt_buffer_free(&ctx->topo, &s->buf);
    free(s->sizes);
}

static void meta(jt_ctx *ctx, void *st, jt_json *j)
{
    state *s = st;
    (void)ctx;
    double bytes = 0, bytes_wa = 0, flops = 0;
    sweep_counts(s, &bytes, &bytes_wa, &flops);
    jt_json_key(j, "kernel");
    jt_json_object(j);
    jt_json_kstr(j, "name", jt_kernel_name(s->kernel));
    jt_json_kstr(j, "what", s->kernel->what);
    jt_json_knum(j, "bytes_per_sweep", bytes);
    jt_json_knum(j, "bytes_per_sweep_write_allocate", bytes_wa);
    jt_json_knum(j, "flops_per_sweep", flops);
    jt_json_knum(j, "ai", bytes > 0 ? flops / bytes : 0);
    jt_json_kint(j, "reps_per_element", s->reps);
    jt_json_kint(j, "array_bytes", (long long)s->array_bytes);
    jt_json_kint(j, "array_bytes_wanted", (long long)s->array_bytes_wanted);
    jt_json_knum(j, "setup_time_s", s->setup_time);
    if (s->touch_rate > 0)
        jt_json_knum(j, "touch_rate_gbs", s->touch_rate / 1e9);
    jt_json_kstr(j, "array_capped_by", s->array_bytes < s->array_bytes_wanted ? "setup-time" : NULL);
    jt_json_kint(j, "threads", s->ncompute);
    jt_json_kstr(j, "stores", jt_stores_names[s->stores]);
    jt_json_kstr(j, "isa", jt_streams_isa());
    jt_json_kbool(j, "write_allocate_counted", 0);
    jt_json_kstr(j, "throughput", "compute_throughput: bytes_per_sweep x the sweeps of all compute "
                                  "threads / the phase's wall time (STREAM counting); "
                                  "compute_traffic: the same with bytes_per_sweep_write_allocate");
    jt_json_kstr(j, "bandwidth", "compute_bandwidth: bytes_per_sweep / sweep time, per compute "
                                 "thread, one sample per sweep (STREAM counting)");
    jt_json_end(j);
    jt_json_key(j, "counters");
    jt_json_object(j);
    int have = s->ncompute > 0 && s->pool.counters;
    jt_json_kstr(j, "backend", have ? "perf" : "unavailable");
    if (have) {
        jt_json_key(j, "events");
        jt_json_array(j);
        jt_json_str(j, "cpu-cycles");
        jt_json_str(j, "stalled-cycles-backend");
        jt_json_end(j);
    } else {
        jt_json_kstr(j, "reason", s->counters_reason);
    }
    jt_json_end(j);
    jt_json_key(j, "phases");
    jt_json_array(j);
    for (int k = 0; k < s->nphases; k++)
        jt_json_str(j, jt_contention_phase_names[s->phases[k]]);
    jt_json_end(j);
    jt_json_knum(j, "phase_time_s", s->phase_time);
    jt_bench_buffers_json(j, JT_P2P_PINGPONG, s->buffers);
    if (s->flows)
        jt_pp_flows_meta(s->flows, j);
}

static const char *heading(void *st)
{
    static const char *const lines[] = {
        "communicating thread: buffers osu (OSU's conventions)",
        "communicating thread: buffers distinct", "communicating thread: buffers echo",
        "communicating thread: buffers cold"};
    return lines[((state *)st)->buffers];
}

const jt_bench jt_bench_contention = {
    .name = "contention",
    .summary = "Communication and computation, alone and together: ping-pongs of a communicating "
               "thread while compute threads run a kernel (Swartvagher 2021).",
    .options = jt_contention_options,
    .metrics = metrics,
    .default_sizes = "4",
    .thread_level = MPI_THREAD_FUNNELED,
    .thread_level_for = jt_pp_flows_thread_level,
    .min_ranks = 2,
    .nseries = 4,
    .ratio_series = 1u << S_STALL | 1u << S_AGG,
    .label_head = "Phase/Size",
    .state_size = sizeof(state),
    .read = jt_contention_read,
    .setup = setup,
    .npoints = npoints,
    .point = point,
    .run = run,
    .teardown = teardown,
    .meta = meta,
    .heading = heading,
};
