/* memlat: the memory latency of one core, ns per dependent access, by the pointer chase of the
 * memory-latency probe (kernels/latency.h; Moreaud 2007, sec. 3.3.2): a random cycle of cache
 * lines in a buffer far larger than the last-level cache, so almost every access misses it.
 * A sample is one walk of --accesses loads; the thread is the rank's communicating one
 * (--comm-core) and the buffer on --comm-mem (default: its own NUMA node).  What `jostle scan`
 * puts in each node's fingerprint, as a run of the campaign (bounded by --max-time like the
 * others).  Every rank measures; rank 0's samples are reported (run it with one rank). */
#include "bench/bench.h"

#include "core/errors.h"
#include "core/sizes.h"
#include "core/timer.h"
#include "kernels/latency.h"
#include "topo/bind.h"

#include <stdio.h>
#include <string.h>

static const jt_opt_spec options[] = {
    {"bytes", "B", "auto", "buffer chased (auto: 4 x the largest cache, at least 64 MiB)", NULL},
    {"accesses", "N", "1000000", "dependent loads per sample", NULL},
    JT_BENCH_SETUP_TIME_OPTION,
    {NULL, NULL, NULL, NULL, NULL},
};

typedef struct state {
    size_t bytes; /* 0: auto, from the topology in setup */
    long accesses;
    double setup_time;
    jt_chase chase;
} state;

static double ns(double s, const jt_point *p) { return s * 1e9 / p->arg[0]; }

static const jt_metric metrics[] = {
    {"latency", "ns", "Latency(ns)", JT_LOWER_BETTER, 0, ns},
    {NULL, NULL, NULL, 0, 0, NULL},
};

static void read_options(const jt_opts *o, const jt_topo *tp, void *st)
{
    state *s = st;
    (void)tp;
    const char *b = jt_opt_str(o, "bytes");
    uint64_t bytes = 0;
    char err[256];
    if (b && strcmp(b, "auto") != 0 &&
        (jt_parse_bytes(b, &bytes, err, sizeof err) || bytes < 4096 || bytes > ((uint64_t)1 << 40)))
        jt_usage_error("--bytes '%s' is not allowed: expected auto or a byte count from 4K to 1T",
                       b);
    s->bytes = (size_t)bytes;
    s->accesses = jt_opt_long(o, "accesses", 1000, 1000000000L);
    s->setup_time = jt_opt_double(o, "setup-time", 0.0, 3600.0);
}

static void setup(jt_ctx *ctx, void *st)
{
    state *s = st;
    jt_binding b;
    jt_bind_thread(&ctx->topo, ctx->comm_core, &b);
    if (!s->bytes)
        s->bytes = jt_latency_default_bytes(&ctx->topo);
    jt_chase_init(&ctx->topo, &s->chase, s->bytes, ctx->comm_mem, s->setup_time);
    s->bytes = s->chase.lines * 64;
    jt_ctx_bound_comm(ctx, &b, &s->chase.buf);
}

static size_t npoints(void *st) { (void)st; return 1; }

static void point(void *st, size_t i, jt_point *p)
{
    state *s = st;
    (void)i;
    snprintf(p->label, sizeof p->label, "%zu", s->bytes);
    jt_json_kint(p->params, "bytes", (long long)s->bytes);
    jt_json_kint(p->params, "accesses", s->accesses);
    p->arg[0] = (double)s->accesses;
    p->metrics = metrics;
    p->nmetrics = 1;
}

static void run(jt_ctx *ctx, void *st, size_t i, jt_series *ser, size_t n)
{
    state *s = st;
    (void)ctx, (void)i;
    for (size_t q = 0; q < n; q++) {
        double t0 = jt_now();
        jt_chase_walk(&s->chase, s->accesses);
        jt_series_push(&ser[0], jt_now() - t0);
    }
}

static void teardown(jt_ctx *ctx, void *st)
{
    state *s = st;
    jt_chase_free(&ctx->topo, &s->chase);
}

static void meta(jt_ctx *ctx, void *st, jt_json *j)
{
    const state *s = st;
    (void)ctx;
    jt_json_key(j, "chain");
    jt_json_object(j);
    jt_json_kint(j, "bytes", (long long)(s->chase.lines * 64));
    jt_json_kint(j, "bytes_wanted", (long long)(s->chase.wanted * 64));
    jt_json_knum(j, "setup_time_s", s->setup_time);
    jt_json_knum(j, "build_s", s->chase.build_s);
    jt_json_kstr(j, "capped_by", s->chase.capped ? "setup-time" : NULL);
    /* what the kernel gave of the pages asked for: a chain half on huge pages walks another
     * page table than one wholly on them (-1: /proc/self/smaps unreadable) */
    jt_json_kint(j, "huge_bytes", s->chase.buf.huge);
    jt_json_end(j);
}

/* One point, one rank's chase: the harness's driver does the rest (warm-up, repetition, the
 * record), as for every benchmark. */
const jt_bench jt_bench_memlat = {
    .name = "memlat",
    .summary = "Memory latency of one core: ns per dependent access of a pointer chase through "
               "a buffer far larger than the last-level cache (the probe of jostle topo "
               "--measure, as a run).",
    .options = options, .metrics = metrics, .label_head = "Bytes",
    .thread_level = MPI_THREAD_SINGLE, .min_ranks = 1, .nseries = 1,
    .state_size = sizeof(state), .read = read_options, .setup = setup, .teardown = teardown,
    .meta = meta,
    .npoints = npoints, .point = point, .run = run,
};
