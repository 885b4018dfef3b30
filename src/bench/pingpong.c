/* pingpong: latency and bandwidth between ranks 0 and 1 (Zahn 2021: RTT per message size,
 * latency RTT/2, bandwidth 2D/RTT), plus osu_bw-like streaming and bidirectional modes and
 * one-sided put and get; the state of the buffers is an option (comm/p2p.h). */
#include "bench/bench.h"
#include "bench/pingpong_flows.h"

#include "comm/p2p.h"
#include "comm/rma.h"
#include "core/errors.h"
#include "core/sizes.h"
#include "topo/bind.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

static const jt_opt_spec options[] = {
    {"mode", "MODE", "pingpong", "pingpong (round trips), stream (window of Isend, osu_bw), "
                                 "bidir (both ways at once, osu_bibw), put or get (window of "
                                 "MPI_Put into / MPI_Get from rank 1, then a flush)", jt_p2p_mode_names},
    {"window", "N", "64", "messages in flight per sample in stream, bidir, put, get (reduced "
                          "for sizes where window x size exceeds 256 MiB)", NULL},
    JT_BENCH_BUFFERS_OPTION,
    {"check", NULL, NULL, "verify every payload (filled and checked outside the timed interval); "
                          "with echo the round trip is checked as a whole", NULL},
    JT_BENCH_COLD_OPTION,
    JT_PP_FLOWS_OPTIONS,
    {NULL, NULL, NULL, NULL, NULL},
};

typedef struct state {
    uint64_t *sizes;
    size_t nsizes;
    jt_p2p_mode mode;
    jt_p2p_buffers buffers;
    int window;
    jt_buffer buf;
    jt_p2p p2p;
    jt_rma rma; /* put and get */
    jt_pp_flows *flows; /* --pairs, --comm-threads (pingpong_flows.h) */
    long touched; /* the point whose buffers were last set (jt_p2p_touch) */
    jt_metric m[3]; /* what the mode reports (jt_pp_metrics) */
    char heading[128];
} state;

/* arg[0] = bytes per message, arg[1] = messages per sample of one flow (both directions
 * counted), arg[2] = flows (1 without --pairs and --comm-threads).  With flows a sample of
 * series 0 is the mean over flows of one sample each: the aggregate is flows x what one flow
 * moves / that mean, which, with the mean over samples (--statistic mean), is osu_mbw_mr's
 * figure: pairs x size x window x iterations / (the pairs' summed loop times / pairs). */
static double agg_mbps(double s, const jt_point *p) { return p->arg[2] * p->arg[0] * p->arg[1] / s / 1e6; }
static double agg_rate(double s, const jt_point *p) { return p->arg[2] * p->arg[1] / s; }
static double flow_mbps(double s, const jt_point *p) { return p->arg[0] * p->arg[1] / s / 1e6; }

/* Everything pingpong reports, once: round trips report the first three, a window
 * bandwidth, message_rate and window_time (jt_pp_metrics), and with flows each flow adds a
 * pair_ line of its own series (pingpong_flows.c). */
static const jt_metric metrics[] = {
    {"latency", "us", "Latency(us)", JT_LOWER_BETTER, 0, jt_metric_half_us},
    {"bandwidth", "MB/s", "Bandwidth(MB/s)", JT_HIGHER_BETTER, 0, agg_mbps},
    {"rtt", "us", "RTT(us)", JT_LOWER_BETTER, 0, jt_metric_us},
    {"message_rate", "msg/s", "Rate(msg/s)", JT_HIGHER_BETTER, 0, agg_rate},
    {"window_time", "us", "Window(us)", JT_LOWER_BETTER, 0, jt_metric_us},
    {"pair_bandwidth", "MB/s", "", JT_HIGHER_BETTER, 1, flow_mbps},
    {"pair_latency", "us", "", JT_LOWER_BETTER, 1, jt_metric_half_us},
    {NULL, NULL, NULL, 0, 0, NULL},
};

static void read_options(const jt_opts *o, const jt_topo *tp, void *st)
{
    state *s = st;
    (void)tp;
    s->touched = -1;
    s->nsizes = jt_bench_sizes(o, &jt_bench_pingpong, &s->sizes);
    s->mode = (jt_p2p_mode)jt_opt_choice(o, "mode");
    s->window = (int)jt_opt_long(o, "window", 1, 4096);
    s->buffers = jt_bench_buffers(o, s->mode);
    if ((s->mode == JT_P2P_PUT || s->mode == JT_P2P_GET) && jt_opt_flag(o, "check"))
        jt_usage_error("--check is not allowed with --mode %s: the target takes no part in a "
                       "one-sided transfer, so nothing checks what arrived",
                       jt_p2p_mode_names[s->mode]);
    int pairs, threads;
    jt_pp_flows_options(o, s->mode, &pairs, &threads);
}

static void setup(jt_ctx *ctx, void *st)
{
    state *s = st;
    const char *spec = jt_opt_str(&ctx->opts, "sizes");
    int many = jt_pp_flows_wanted(&ctx->opts);
    int me = ctx->rank < 2 ? ctx->rank : -1;
    if (ctx->rank == 0 && ctx->size > 2 && !many)
        jt_warn(ctx, "ranks 2 to %d take no part in pingpong and wait idle", ctx->size - 1);
    jt_pp_metrics(ctx->bench, s->mode, s->m);

    size_t frames = 1;
    size_t arena = jt_p2p_arena_bytes(s->mode, s->buffers, s->window, s->sizes, s->nsizes,
                                      jt_topo_llc_bytes(&ctx->topo, NULL), &frames);
    size_t avail = jt_bench_memory_per_rank(ctx);
    char msg[512];
    snprintf(msg, sizeof msg, "--sizes '%s' is too large for host %s: the buffers of %s mode "
             "need %zu MiB per rank and the host has %zu MiB available per rank",
             spec ? spec : ctx->bench->default_sizes, ctx->host, jt_p2p_mode_names[s->mode], arena >> 20, avail >> 20);
    jt_check_all(ctx, me >= 0 && arena > avail * 8 / 10 ? msg : NULL);
    if (many) { /* every flow's buffers: the threads' arenas are checked as they are made */
        s->flows = jt_pp_flows_setup(ctx, s->mode, s->buffers, s->window,
                                     jt_opt_flag(&ctx->opts, "check"), arena, frames);
        snprintf(s->heading, sizeof s->heading, "mode %s, buffers %s, %d pair(s) x %d thread(s)",
                 jt_p2p_mode_names[s->mode], jt_p2p_buffers_names[s->buffers], s->flows->pairs,
                 s->flows->per_rank);
        return;
    }

    if (me >= 0) {
        jt_binding b;
        jt_bind_thread(&ctx->topo, ctx->comm_core, &b);
        jt_buffer_alloc(&ctx->topo, &s->buf, arena, ctx->comm_mem);
        jt_ctx_bound_comm(ctx, &b, &s->buf);
    }
    jt_p2p_init(&s->p2p, ctx->comm, me, me >= 0 ? 1 - me : -1, s->mode, s->buffers, s->window,
                jt_opt_flag(&ctx->opts, "check"), s->buf.p, s->buf.bytes, frames);
    if (s->mode == JT_P2P_PUT || s->mode == JT_P2P_GET)
        jt_rma_init(&s->rma, &s->p2p);
    snprintf(s->heading, sizeof s->heading, "mode %s, buffers %s%s", jt_p2p_mode_names[s->mode],
             jt_p2p_buffers_names[s->buffers], s->buffers == JT_P2P_OSU ? " (OSU's conventions)" : "");
}

static size_t npoints(void *st) { return ((state *)st)->nsizes; }

static void point(void *st, size_t i, jt_point *p)
{
    state *s = st;
    uint64_t b = s->sizes[i];
    if (s->flows) {
        jt_pp_flows_point(s->flows, b, p);
        return;
    }
    int w = jt_p2p_window_for(s->mode, s->buffers, s->window, b);
    const char *bufs = jt_p2p_buffers_names[s->buffers];
    snprintf(p->label, sizeof p->label, "%llu", (unsigned long long)b);
    p->arg[0] = (double)b;
    /* D each way per round trip (bandwidth 2D/RTT), or the window's messages */
    p->arg[1] = s->mode == JT_P2P_PINGPONG ? 2 : (double)w * (s->mode == JT_P2P_BIDIR ? 2 : 1);
    p->arg[2] = 1; /* one flow */
    p->metrics = s->m;
    p->nmetrics = 3;
    jt_json_kint(p->params, "size", (long long)b);
    jt_json_kstr(p->params, "mode", jt_p2p_mode_names[s->mode]);
    if (s->mode != JT_P2P_PINGPONG)
        jt_json_kint(p->params, "window", w);
    jt_json_kstr(p->params, "buffers", bufs);
    /* Several operations per sample where the clock cannot resolve one (the harness decides
     * how many); not with cold, whose every operation must find its buffers out of cache. */
    p->repeatable = s->buffers != JT_P2P_COLD;
}

static void run(jt_ctx *ctx, void *st, size_t i, jt_series *ser, size_t n)
{
    state *s = st;
    int rma = s->mode == JT_P2P_PUT || s->mode == JT_P2P_GET;
    if (s->flows) {
        jt_pp_flows_run(ctx, s->flows, s->sizes[i], s->touched != (long)i, &ser[0], &ser[1], n);
        s->touched = (long)i;
        return;
    }
    if (!rma && s->touched != (long)i) { /* a new size: its warm-up comes next */
        jt_p2p_touch(&s->p2p, s->sizes[i]);
        s->touched = (long)i;
    }
    s->p2p.reps = ctx->sample_reps > 0 ? ctx->sample_reps : 1; /* both sides: the same */
    for (size_t k = 0; k < n; k++) {
        double dt = rma ? jt_rma_sample(&s->rma, s->sizes[i]) : jt_p2p_sample(&s->p2p, s->sizes[i]);
        if (s->p2p.me == 0)
            jt_series_push(&ser[0], dt);
    }
}

static void teardown(jt_ctx *ctx, void *st)
{
    state *s = st;
    jt_pp_flows_free(s->flows);
    jt_rma_free(&s->rma);
    jt_p2p_free(&s->p2p);
    jt_buffer_free(&ctx->topo, &s->buf);
    free(s->sizes);
}

static void meta(jt_ctx *ctx, void *st, jt_json *j)
{
    state *s = st;
    (void)ctx;
    jt_bench_buffers_json(j, s->mode, s->buffers);
    if (s->flows)
        jt_pp_flows_meta(s->flows, j);
}

static const char *heading(void *st) { return ((state *)st)->heading; }

const jt_bench jt_bench_pingpong = {
    .name = "pingpong",
    .summary = "Point-to-point latency and bandwidth between ranks 0 and 1, per message size: "
               "round-trip time (latency = RTT/2, bandwidth = 2D/RTT), or a window of\n"
               "non-blocking sends one way (stream) or both ways (bidir); --pairs N runs N pairs\n"
               "at once (rank i with rank i+N), --comm-threads T as many threads per rank.",
    .options = options,
    .metrics = metrics,
    .default_sizes = "0:4M",
    .thread_level = MPI_THREAD_SINGLE,
    .thread_level_for = jt_pp_flows_thread_level,
    .min_ranks = 2,
    .nseries = JT_PP_SERIES,
    .label_head = "Size",
    .state_size = sizeof(state),
    .read = read_options,
    .setup = setup,
    .npoints = npoints,
    .point = point,
    .run = run,
    .teardown = teardown,
    .meta = meta,
    .heading = heading,
};
