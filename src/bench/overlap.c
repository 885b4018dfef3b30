/* overlap: how much of a non-blocking collective hides behind computation (IMB-NBC, as used
 * by Taboada, COMPAS 2016).  Per collective and size, three times: t_pure (post, wait),
 * t_CPU (the calibrated work alone) and t_ovrl (post, work, wait), then the overlap ratio from
 * their medians, with both denominators in use (min: IMB's user guide and the seed; max:
 * what IMB's code prints for NBC).  Ranks and progress threads are placed by the policies of
 * include/jostle/placement.h. */
#include "bench/overlap.h"

#include "core/errors.h"
#include "core/sizes.h"
#include "core/stats.h"
#include "core/timer.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef jt_overlap_state state;


static double overlap(const jt_stats *st, int use_max)
{
    return jt_nbc_overlap(st[M_PURE].median, st[M_CPU].median, st[M_OVRL].median, use_max);
}
static double overlap_min(const jt_stats *st, const jt_point *p) { (void)p; return overlap(st, 0); }
static double overlap_max(const jt_stats *st, const jt_point *p) { (void)p; return overlap(st, 1); }

static const jt_metric metrics[] = {
    {"t_ovrl", "us", "t_ovrl(us)", JT_LOWER_BETTER, S_OVRL, jt_metric_us},
    {"t_pure", "us", "t_pure(us)", JT_LOWER_BETTER, S_PURE, jt_metric_us},
    {"t_cpu", "us", "t_CPU(us)", JT_LOWER_BETTER, S_CPU, jt_metric_us},
    {NULL, NULL, NULL, 0, 0, NULL},
};
static const jt_point_value values[] = {
    {"overlap_min", "1", "Overlap(min)", JT_HIGHER_BETTER,
     "max(0, min(1, (t_pure + t_cpu - t_ovrl) / min(t_pure, t_cpu))) of the medians (IMB user "
     "guide; Taboada 2016)", overlap_min},
    {"overlap_max", "1", "Overlap(max)", JT_HIGHER_BETTER,
     "max(0, min(1, (t_pure + t_cpu - t_ovrl) / max(t_pure, t_cpu))) of the medians (what "
     "IMB-NBC's code prints: IMB_output.c, IMB_display_times, with the times of the rank of "
     "largest t_ovrl)", overlap_max},
    {NULL, NULL, NULL, 0, NULL, NULL},
};

static int thread_level_for(const jt_opts *o)
{
    const char *m = jt_opt_str(o, "progress-mode");
    return m && (strcmp(m, "thread") == 0 || strcmp(m, "async") == 0) ? MPI_THREAD_MULTIPLE
                                                                        : MPI_THREAD_SINGLE;
}

static void before_init(const jt_opts *o)
{
    const char *m = jt_opt_str(o, "progress-mode");
    if (m && strcmp(m, "async") == 0)
        setenv(ASYNC_CVAR, "1", 1);
}


static void setup(jt_ctx *ctx, void *st)
{
    state *s = st;
    char err[512];
    int kind = s->kind, idle = s->idle;
    if (s->root >= ctx->size)
        jt_usage_error("--root %d is not allowed: the job has ranks 0 to %d", s->root,
                       ctx->size - 1);
    size_t sbytes = 1, rbytes = 1;
    for (size_t i = 0; i < s->nsizes; i++) {
        for (int k = 0; k < s->nops; k++) {
            if ((s->ops[k] == JT_NBC_IREDUCE || s->ops[k] == JT_NBC_IALLREDUCE) &&
                s->sizes[i] < sizeof(float))
                jt_usage_error("--sizes: %llu B is not allowed with %s: its buffers are "
                               "MPI_FLOATs, so sizes start at 4 B",
                               (unsigned long long)s->sizes[i], jt_nbc_names[s->ops[k]]);
            size_t sb, rb;
            jt_nbc_buffers(s->ops[k], s->sizes[i], ctx->size, &sb, &rb);
            sbytes = sb > sbytes ? sb : sbytes;
            rbytes = rb > rbytes ? rb : rbytes;
        }
    }
    if ((s->mode == MODE_THREAD || s->mode == MODE_ASYNC) &&
        ctx->thread_level < MPI_THREAD_MULTIPLE) {
        if (!jt_opt_flag(&ctx->opts, "fallback"))
            jt_usage_error("--progress-mode %s needs MPI_THREAD_MULTIPLE and this MPI library "
                           "granted less: use --progress-mode polling, or add --fallback to poll "
                           "instead", jt_overlap_mode_names[s->mode]);
        s->mode = MODE_POLLING;
        if (ctx->rank == 0)
            jt_warn(ctx, "MPI_THREAD_MULTIPLE not granted: polling instead of a progress thread "
                    "(--fallback)");
    }
    size_t array = 3 * jt_topo_llc_bytes(&ctx->topo, NULL) / (size_t)ctx->local_size;
    array = array < ((size_t)24 << 20) ? (size_t)24 << 20 : array;
    if (s->array) /* --array-bytes */
        array = s->array;
    size_t need = sbytes + rbytes + (kind == JT_WORK_TRIAD ? array : 0);
    size_t avail = jt_bench_memory_per_rank(ctx);
    snprintf(err, sizeof err, "buffers and arrays need %zu MiB per rank on %s, which has %zu MiB "
             "available per rank: lower --sizes or --array-bytes", need >> 20, ctx->host,
             avail >> 20);
    jt_check_all(ctx, need > avail * 8 / 10 ? err : NULL);

    jt_overlap_place(ctx, s);
    jt_binding b;
    jt_bind_thread(&ctx->topo, s->rank_core, &b);
    jt_buffer_alloc(&ctx->topo, &s->sbuf, sbytes, ctx->comm_mem);
    jt_buffer_alloc(&ctx->topo, &s->rbuf, rbytes, ctx->comm_mem);
    jt_ctx_bound_comm(ctx, &b, &s->sbuf);
    jt_work_init(&s->work, &ctx->topo, kind, array, JT_MEM_ANY);
    if (s->mode == MODE_THREAD) {
        jt_progress_thread_start(&s->pt, &ctx->topo, s->thread_core, idle == 0);
        jt_ctx_bound_role(ctx, "progress", &s->pt.bind, NULL);
    }
    /* Every rank calibrates at once, as they will compute: a shared memory bus counts. */
    MPI_Barrier(ctx->comm);
    jt_work_calibrate(&s->work, 0.02);
    s->cur = -1;
}

static size_t npoints(void *st)
{
    state *s = st;
    return (size_t)s->nops * s->nsizes;
}

static void point(void *st, size_t i, jt_point *p)
{
    state *s = st;
    int op = s->ops[i / s->nsizes];
    unsigned long long size = (unsigned long long)s->sizes[i % s->nsizes];
    snprintf(p->label, sizeof p->label, "%s/%llu", jt_nbc_names[op], size);
    p->arg[0] = (double)size;
    p->metrics = metrics;
    p->nmetrics = 3;
    p->values = values;
    p->nvalues = 2;
    jt_json_kstr(p->params, "collective", jt_nbc_names[op]);
    jt_json_kint(p->params, "size", (long long)size);
    jt_json_kstr(p->params, "kernel", jt_work_names[s->work.kind]);
    jt_json_kstr(p->params, "policy", jt_rank_policy_names[s->policy]);
    jt_json_kstr(p->params, "progress", jt_overlap_mode_names[s->mode]);
    const char *tc = s->mode != MODE_THREAD ? "none"
                     : s->thread_pol >= 0   ? jt_progress_policy_names[s->thread_pol] : "explicit";
    jt_json_kstr(p->params, "thread_core", tc);
}

static void poll_test(void *arg)
{
    jt_nbc_test(arg, 2);
}

/* b samples of each time, this rank's view, into out[3 * q + series]: per series one barrier,
 * then b samples back to back (IMB-NBC's loops; --batch 1 is OSU's barrier before each). */
static void sample_batch(jt_ctx *ctx, state *s, int op, size_t size, int b, double *out)
{
    double t[MAX_BATCH];
    jt_nbc_pure_batch(op, size, ctx->comm, s->root, s->sbuf.p, s->rbuf.p, b, t);
    for (int q = 0; q < b; q++)
        out[3 * q + S_PURE] = t[q];

    /* Back to back, a sample ends where the next starts: one clock read each. */
    MPI_Barrier(ctx->comm);
    double prev = jt_now();
    for (int q = 0; q < b; q++) {
        jt_work_run(&s->work, s->units, 0, NULL, NULL);
        double now = jt_now();
        out[3 * q + S_CPU] = now - prev;
        prev = now;
    }

    MPI_Barrier(ctx->comm);
    prev = jt_now();
    for (int q = 0; q < b; q++) {
        MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        int nr = jt_nbc_post(op, size, ctx->comm, s->root, s->sbuf.p, s->rbuf.p, req);
        if (s->mode == MODE_THREAD) {
            jt_progress_thread_hand(&s->pt, req, nr);
            jt_work_run(&s->work, s->units, 0, NULL, NULL);
            jt_progress_thread_wait(&s->pt);
        } else {
            jt_work_run(&s->work, s->units, s->poll_s,
                        s->mode == MODE_POLLING ? poll_test : NULL, req);
            jt_nbc_wait(req, nr);
        }
        double now = jt_now();
        out[3 * q + S_OVRL] = now - prev;
        prev = now;
    }
}

/* The median over CALIB_SAMPLES, run back to back after one barrier, of post+wait (work < 0)
 * or of the work alone; the slowest rank's. */
static double calib_time(jt_ctx *ctx, state *s, int op, size_t size, long work)
{
    double t[CALIB_SAMPLES], mine, all;
    if (work >= 0) {
        MPI_Barrier(ctx->comm);
        for (int k = 0; k < CALIB_SAMPLES; k++) {
            double t0 = jt_now();
            jt_work_run(&s->work, work, 0, NULL, NULL);
            t[k] = jt_now() - t0;
        }
    } else {
        jt_nbc_pure_batch(op, size, ctx->comm, s->root, s->sbuf.p, s->rbuf.p, CALIB_SAMPLES, t);
    }
    jt_stats st;
    jt_stats_compute(t, CALIB_SAMPLES, &st);
    mine = st.median;
    MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_MAX, ctx->comm);
    return all;
}

/* IMB's calibration: the work is sized to t_pure, then corrected once by its own time under
 * the same conditions (every rank computing at once), so that t_CPU ~ t_pure. */
static void calibrate(jt_ctx *ctx, state *s, int op, size_t size)
{
    /* t_pure from the 4th batch on, once two batches agree within 10% (at most 12): the
     * first operations of a size can be slow for a while (MPICH 4.0, Ialltoall of 1 KiB:
     * 6.0 and 4.9 µs for the first two batches of 32, then 0.78), and work sized to them
     * made t_CPU 4 times t_pure. */
    double target = calib_time(ctx, s, op, size, -1); /* seconds */
    for (int k = 2; k <= 12; k++) {
        double t = calib_time(ctx, s, op, size, -1);
        int stable = k >= 4 && fabs(t - target) <= 0.1 * t;
        target = t;
        if (stable)
            break;
    }
    s->units = jt_work_units_for(&s->work, target);
    double got = calib_time(ctx, s, op, size, s->units);
    if (got > 0)
        s->units = (long)fmax(1.0, round((double)s->units * target / got));
}

static void run(jt_ctx *ctx, void *st, size_t i, jt_series *ser, size_t n)
{
    state *s = st;
    int op = s->ops[i / s->nsizes];
    size_t size = (size_t)s->sizes[i % s->nsizes];
    if (s->cur != (long)i) {
        calibrate(ctx, s, op, size);
        s->cur = (long)i;
    }
    if (3 * n > s->cap) {
        s->cap = 3 * n;
        s->local = realloc(s->local, s->cap * sizeof *s->local);
        s->all = realloc(s->all, s->cap * (size_t)ctx->size * sizeof *s->all);
        if (!s->local || !s->all)
            jt_fatal("out of memory for samples");
    }
    for (size_t q = 0; q < n; q += (size_t)s->batch) {
        int b = n - q < (size_t)s->batch ? (int)(n - q) : s->batch;
        sample_batch(ctx, s, op, size, b, s->local + 3 * q);
    }
    MPI_Gather(s->local, (int)(3 * n), MPI_DOUBLE, s->all, (int)(3 * n), MPI_DOUBLE, 0,
               ctx->comm);
    for (size_t q = 0; ctx->rank == 0 && q < n; q += (size_t)s->batch) {
        size_t b = n - q < (size_t)s->batch ? n - q : (size_t)s->batch;
        for (int k = 0; k < NSERIES; k++) {
            double t[MAX_BATCH];
            jt_nbc_slowest(s->all + 3 * q + (size_t)k, ctx->size, 3 * n, 3, b, t);
            for (size_t i = 0; i < b; i++)
                jt_series_push(&ser[k], t[i]);
        }
    }
}

static void teardown(jt_ctx *ctx, void *st)
{
    state *s = st;
    if (s->mode == MODE_THREAD)
        jt_progress_thread_stop(&s->pt);
    jt_work_free(&s->work, &ctx->topo);
    jt_buffer_free(&ctx->topo, &s->sbuf);
    jt_buffer_free(&ctx->topo, &s->rbuf);
    free(s->local);
    free(s->all);
    free(s->sizes);
}

static void meta(jt_ctx *ctx, void *st, jt_json *j)
{
    state *s = st;
    int L = ctx->local_size, *rp = calloc((size_t)L, sizeof *rp), *pp = calloc((size_t)L, sizeof *pp);
    jt_json_key(j, "overlap");
    jt_json_object(j);
    jt_json_kstr(j, "figures_show", "overlap_min");
    jt_json_kstr(j, "overlap_min", values[0].formula);
    jt_json_kstr(j, "overlap_max", values[1].formula);
    jt_json_kstr(j, "t_pure", "post, then MPI_Wait(all)");
    jt_json_kstr(j, "t_cpu", "the work alone, sized to t_pure (IMB's calibration: the median of "
                 "32 t_pure samples, the slowest rank's, once two such batches agree within 10%; "
                 "corrected once by 32 timed runs of the work)");
    jt_json_kstr(j, "t_ovrl", "post, the same work, then wait (or the progress thread's end)");
    jt_json_kint(j, "batch", s->batch);
    jt_json_kstr(j, "sample", "per time, one barrier then `batch` samples back to back, each "
                 "timed by every rank; a batch's samples are its slowest rank's (largest total)");
    jt_json_kstr(j, "size", "bytes per rank block (alltoall, gather, scatter, allgather), of "
                 "the buffer (bcast, reduce, allreduce: MPI_FLOAT), per direction (isendrecv)");
    jt_json_kstr(j, "progress_mode", jt_overlap_mode_names[s->mode]);
    jt_json_knum(j, "poll_us", s->mode == MODE_POLLING ? s->poll_s * 1e6 : 0);
    if (s->mode == MODE_THREAD)
        jt_json_kstr(j, "thread_idle", s->pt.spin ? "spin" : "sleep");
    if (s->mode == MODE_ASYNC)
        jt_json_kstr(j, "library_progress", "MPICH's progress thread (" ASYNC_CVAR "=1, set "
                     "before MPI_Init; placed by MPICH, not by jostle)");
    jt_json_end(j);
    jt_json_key(j, "kernel");
    jt_json_object(j);
    jt_json_kstr(j, "name", jt_work_names[s->work.kind]);
    jt_json_kstr(j, "what", jt_work_what[s->work.kind]);
    jt_json_knum(j, "unit_s", s->work.unit_s);
    jt_json_knum(j, "bytes_per_unit", s->work.bytes_per_unit);
    jt_json_knum(j, "flops_per_unit", s->work.flops_per_unit);
    jt_json_kint(j, "array_bytes", (long long)(s->work.n * 3 * sizeof(double)));
    jt_json_end(j);
    jt_json_key(j, "placement");
    jt_json_object(j);
    jt_json_kstr(j, "policy", jt_rank_policy_names[s->policy]);
    jt_json_kstr(j, "thread_core", s->thread_pol >= 0 ? jt_progress_policy_names[s->thread_pol]
                                                      : "explicit");
    jt_json_kint(j, "ranks_per_host", L);
    /* The policies' map; with --comm-core or an explicit thread core only "binding" says. */
    if (jt_opt_given(&ctx->opts, "comm-core") || s->thread_pol < 0)
        jt_json_kstr(j, "planned", "overridden by --comm-core or --thread-core N: see binding");
    else if (jt_placement_map(&s->layout, s->policy, s->thread_pol, L, rp, pp) == 0) {
        jt_json_key(j, "planned");
        jt_json_array(j);
        for (int r = 0; r < L; r++) {
            jt_json_object(j);
            jt_json_kint(j, "core", s->layout.core[rp[r]]);
            jt_json_kint(j, "progress_core", s->layout.core[pp[r]]);
            jt_json_end(j);
        }
        jt_json_end(j);
    }
    jt_json_end(j);
    free(rp);
    free(pp);
}

const jt_bench jt_bench_overlap = {
    .name = "overlap",
    .summary = "Overlap of non-blocking collectives with computation (IMB-NBC; Taboada 2016): "
               "t_pure, t_CPU, t_ovrl per collective and size, and the overlap ratio,\nwith "
               "ranks and progress threads placed by policy (packed, scatter, numa).",
    .options = jt_overlap_options,
    .metrics = metrics,
    .values = values,
    .default_sizes = "4:1M",
    .thread_level = MPI_THREAD_SINGLE,
    .thread_level_for = thread_level_for,
    .before_init = before_init,
    .min_ranks = 2,
    .nseries = NSERIES,
    .label_head = "Coll/Size",
    .state_size = sizeof(state),
    .read = jt_overlap_read,
    .setup = setup,
    .npoints = npoints,
    .point = point,
    .run = run,
    .teardown = teardown,
    .meta = meta,
};
