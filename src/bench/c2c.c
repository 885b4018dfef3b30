/* c2c: the core-to-core latency of pairs of cores, one cache line bounced between a thread on
 * each (kernels/c2c.h), as core-to-core latency tools measure it: the least an intra-node
 * message between those two cores can take, since its flag or its data must make the same trip
 * between their caches.  `jostle run`'s bounds step measures the pairs the ping-pong binds its
 * ranks to, and the report sets the intra-node latency against it.  A point is a pair; a sample
 * times --bounces round trips (the harness repeats and stops); latency is one way (half a round
 * trip).  One rank: run it alone (`jostle-bench c2c` without a launcher is an MPI singleton). */
#include "bench/bench.h"

#include "core/errors.h"
#include "core/timer.h"
#include "kernels/c2c.h"
#include "topo/bind.h"
#include "topo/nic_place.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define C2C_MAX_PAIRS 256

static const jt_opt_spec options[] = {
    {"pairs", "A:B,...", "auto",
     "pairs of cores (logical indices): the caller on A, the answering thread on B (auto: the "
     "ping-pong's default pair 0:1, and core 0 with the first core of every other NUMA node)",
     NULL},
    {"bounces", "N", "1000", "round trips of the cache line per sample", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

typedef struct state {
    int a[C2C_MAX_PAIRS], b[C2C_MAX_PAIRS];
    int npairs; /* 0: auto, chosen in setup from the topology */
    long bounces;
    jt_c2c c2c;
} state;

static double one_way_ns(double s, const jt_point *p) { return s * 1e9 / (2 * p->arg[0]); }
static double round_trip_ns(double s, const jt_point *p) { return s * 1e9 / p->arg[0]; }

static const jt_metric metrics[] = {
    {"latency", "ns", "Latency(ns)", JT_LOWER_BETTER, 0, one_way_ns},
    {"rtt", "ns", "RTT(ns)", JT_LOWER_BETTER, 0, round_trip_ns},
    {NULL, NULL, NULL, 0, 0, NULL},
};

/* "A:B,C:D" into s; a message in err (and -1) when a pair is not two cores of tp (unchecked
 * without one: --validate-options judges no fact of this host). */
static int parse_pairs(state *s, const char *text, const jt_topo *tp, char *err, size_t len)
{
    int ncores = tp ? jt_topo_ncores(tp) : -1;
    const char *p = text;
    s->npairs = 0;
    while (*p) {
        char *end;
        long a = strtol(p, &end, 10);
        if (end == p || *end != ':')
            goto bad;
        p = end + 1;
        long b = strtol(p, &end, 10);
        if (end == p || (*end && *end != ',') || a < 0 || b < 0 || a == b ||
            (ncores >= 0 && (a >= ncores || b >= ncores)) || s->npairs == C2C_MAX_PAIRS)
            goto bad;
        s->a[s->npairs] = (int)a;
        s->b[s->npairs++] = (int)b;
        p = *end ? end + 1 : end;
    }
    if (s->npairs)
        return 0;
bad:
    snprintf(err, len, "--pairs '%s' is not allowed: expected auto or pairs A:B of two different "
             "cores%s, comma-separated (at most %d)", text,
             ncores >= 0 ? " of this host" : "", C2C_MAX_PAIRS);
    if (ncores >= 0)
        snprintf(err + strlen(err), len - strlen(err), ", from 0 to %d", ncores - 1);
    return -1;
}

static void read_options(const jt_opts *o, const jt_topo *tp, void *st)
{
    state *s = st;
    const char *pairs = jt_opt_str(o, "pairs");
    char err[512];
    s->npairs = 0;
    if (pairs && strcmp(pairs, "auto") != 0 && parse_pairs(s, pairs, tp, err, sizeof err))
        jt_usage_error("%s", err);
    s->bounces = jt_opt_long(o, "bounces", 1, 100000000L);
}

static void add_pair(state *s, int a, int b)
{
    for (int i = 0; i < s->npairs; i++)
        if (s->a[i] == a && s->b[i] == b)
            return;
    if (a != b && a >= 0 && b >= 0 && s->npairs < C2C_MAX_PAIRS) {
        s->a[s->npairs] = a;
        s->b[s->npairs++] = b;
    }
}

static void setup(jt_ctx *ctx, void *st)
{
    state *s = st;
    int ncores = jt_topo_ncores(&ctx->topo);
    if (ncores < 2)
        jt_usage_error("c2c needs two cores; this host has %d", ncores);
    if (!s->npairs) {
        add_pair(s, 0, 1);
        for (int node = 1; node < jt_topo_nnuma(&ctx->topo); node++)
            add_pair(s, 0, jt_place_core_of_numa(&ctx->topo, node, 0, 0));
    }
    jt_binding b;
    jt_bind_thread(&ctx->topo, s->a[0], &b);
    jt_ctx_bound_comm(ctx, &b, NULL);
}

static size_t npoints(void *st) { return (size_t)((state *)st)->npairs; }

static void point(void *st, size_t i, jt_point *p)
{
    state *s = st;
    snprintf(p->label, sizeof p->label, "%d:%d", s->a[i], s->b[i]);
    jt_json_kint(p->params, "core_a", s->a[i]);
    jt_json_kint(p->params, "core_b", s->b[i]);
    jt_json_kint(p->params, "bounces", s->bounces);
    p->arg[0] = (double)s->bounces;
    p->metrics = metrics;
    p->nmetrics = 2;
}

static void run(jt_ctx *ctx, void *st, size_t i, jt_series *ser, size_t n)
{
    state *s = st;
    jt_binding b;
    jt_bind_thread(&ctx->topo, s->a[i], &b);
    jt_c2c_start(&s->c2c, &ctx->topo, s->b[i]);
    if (!b.ok || !s->c2c.helper_bind.ok)
        jt_warn(ctx, "c2c %d:%d: a thread could not be bound (%s%s): the latency is of "
                "wherever the system ran them", s->a[i], s->b[i], b.ok ? "" : b.note,
                s->c2c.helper_bind.ok ? "" : s->c2c.helper_bind.note);
    jt_c2c_bounce(&s->c2c, 100); /* both lines warm, both threads running */
    for (size_t q = 0; q < n; q++) {
        double t0 = jt_now();
        jt_c2c_bounce(&s->c2c, s->bounces);
        jt_series_push(&ser[0], jt_now() - t0);
    }
    jt_c2c_stop(&s->c2c);
}

static void teardown(jt_ctx *ctx, void *st) { (void)ctx, (void)st; }

/* One point per pair of cores: the harness's driver does the rest (warm-up, repetition, the
 * record), as for every benchmark. */
const jt_bench jt_bench_c2c = {
    .name = "c2c",
    .summary = "Core-to-core latency: one cache line bounced between threads on two cores, "
               "ns one way, per pair of cores (the bound of an intra-node message).",
    .options = options, .metrics = metrics, .label_head = "Cores",
    .thread_level = MPI_THREAD_SINGLE, .min_ranks = 1, .nseries = 1,
    .state_size = sizeof(state), .read = read_options, .setup = setup, .teardown = teardown,
    .npoints = npoints, .point = point, .run = run,
};
