#include "bench/topo_query.h"

#include "core/errors.h"
#include "core/json.h"
#include "core/sizes.h"
#include "topo/describe.h"
#include "jostle/placement.h"
#include "kernels/latency.h"
#include "kernels/setup_time.h"
#include "kernels/stream_probe.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The options of a query: argv[1] is the query, then --name VALUE pairs from allowed. */
typedef struct qopts {
    const char *topology, *export_path, *nic, *favor, *threads, *bytes, *accesses, *rounds;
    const char *ranks, *policy, *progress, *seconds;
    int no_bandwidth;
} qopts;

static void parse(int argc, char **argv, const char *allowed, qopts *q)
{
    memset(q, 0, sizeof *q);
    struct { const char *name; const char **slot; } opts[] = {
        {"--topology", &q->topology}, {"--export", &q->export_path}, {"--nic", &q->nic},
        {"--favor", &q->favor}, {"--threads", &q->threads}, {"--bytes", &q->bytes},
        {"--accesses", &q->accesses}, {"--rounds", &q->rounds}, {"--ranks", &q->ranks},
        {"--policy", &q->policy}, {"--progress", &q->progress}, {"--seconds", &q->seconds},
    };
    for (int i = 2; i < argc; i++) {
        int found = 0;
        if (strcmp(argv[i], "--no-bandwidth") == 0 && strstr(allowed, "--no-bandwidth")) {
            q->no_bandwidth = found = 1;
        }
        for (size_t k = 0; !found && k < sizeof opts / sizeof opts[0]; k++)
            if (strcmp(argv[i], opts[k].name) == 0 && strstr(allowed, opts[k].name)) {
                if (i + 1 >= argc)
                    jt_usage_error("%s %s needs a value", argv[1], argv[i]);
                *opts[k].slot = argv[++i];
                found = 1;
            }
        if (!found)
            jt_usage_error("%s takes %s, not '%s'", argv[1], allowed, argv[i]);
    }
}

static long count(const char *name, const char *v, long dflt, long lo, long hi)
{
    if (!v)
        return dflt;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (end == v || *end || errno || x < lo || x > hi)
        jt_usage_error("%s '%s' is not allowed: expected a whole number from %ld to %ld", name, v,
                       lo, hi);
    return x;
}

static void load(jt_topo *tp, const char *xml)
{
    char err[1024];
    if (jt_topo_load(tp, xml, err, sizeof err))
        jt_usage_error("%s", err);
}

static int print(jt_json *j)
{
    puts(j->buf);
    jt_json_free(j);
    return 0;
}

int jt_query_topo(int argc, char **argv)
{
    qopts q;
    parse(argc, argv, "--topology, --export", &q);
    jt_topo tp;
    load(&tp, q.topology);
    if (q.export_path && hwloc_topology_export_xml(tp.t, q.export_path, 0) != 0)
        jt_usage_error("--export '%s': cannot write it: %s", q.export_path, strerror(errno));
    jt_json j;
    jt_json_init(&j);
    jt_topo_describe_json(&tp, &j);
    jt_topo_destroy(&tp);
    return print(&j);
}

int jt_query_place(int argc, char **argv)
{
    qopts q;
    parse(argc, argv, "--topology, --nic, --favor, --threads", &q);
    int favor = JT_FAVOR_LATENCY;
    if (q.favor) {
        for (favor = 0; jt_favor_names[favor] && strcmp(jt_favor_names[favor], q.favor); favor++)
            ;
        if (!jt_favor_names[favor])
            jt_usage_error("--favor '%s' is not allowed: expected latency or bandwidth", q.favor);
    }
    int threads = (int)count("--threads", q.threads, 1, 1, 4096);
    jt_topo tp;
    load(&tp, q.topology);
    jt_nic nic;
    char err[1024];
    if (q.nic && jt_place_nic(&tp, q.nic, &nic, err, sizeof err) != 0)
        jt_usage_error("%s", err);
    jt_json j;
    jt_json_init(&j);
    jt_place_advice_json(&tp, q.nic, (jt_favor)favor, threads, &j);
    jt_topo_destroy(&tp);
    return print(&j);
}

static void probe_json(jt_json *j, const char *key, const jt_probe *p, int n)
{
    jt_json_key(j, key);
    jt_json_array(j);
    for (int a = 0; a < n; a++) {
        jt_json_array(j);
        for (int b = 0; b < n; b++)
            jt_json_num(j, p[a * n + b].ns);
        jt_json_end(j);
    }
    jt_json_end(j);
}

/* A query that measures: its options parsed, the topology loaded and refused unless it is
 * this system (nothing else can be bound or measured). */
static void measuring(int argc, char **argv, const char *allowed, qopts *q, jt_topo *tp)
{
    parse(argc, argv, allowed, q);
    load(tp, q->topology);
    if (!tp->this_system)
        jt_usage_error("%s measures the running machine: topology '%s' is not this system, so "
                       "nothing can be bound or measured", argv[1], tp->source);
}

/* --bytes, from 4K to 1T, else DFLT. */
static uint64_t bytes_option(const qopts *q, uint64_t dflt)
{
    char err[256];
    if (q->bytes && (jt_parse_bytes(q->bytes, &dflt, err, sizeof err) || dflt < 4096 ||
                     dflt > ((uint64_t)1 << 40)))
        jt_usage_error("--bytes '%s' is not allowed: expected a byte count from 4K to 1T",
                       q->bytes);
    return dflt;
}

int jt_query_latency(int argc, char **argv)
{
    qopts q;
    jt_topo tp;
    measuring(argc, argv, "--topology, --bytes, --accesses, --rounds, --no-bandwidth", &q, &tp);
    uint64_t bytes = bytes_option(&q, jt_latency_default_bytes(&tp));
    long accesses = count("--accesses", q.accesses, 2000000, 1000, 1000000000L);
    int rounds = (int)count("--rounds", q.rounds, 5, 1, 64);

    int n = jt_topo_nnuma(&tp);
    jt_probe *lat = calloc((size_t)n * (size_t)n, sizeof *lat);
    jt_probe *bw = calloc((size_t)n * (size_t)n, sizeof *bw);
    jt_json j;
    jt_json_init(&j);
    jt_json_object(&j);
    jt_json_kstr(&j, "topology", tp.source);
    jt_json_kint(&j, "numa_nodes", n);
    jt_json_kint(&j, "bytes", (long long)bytes);
    jt_json_kint(&j, "accesses", accesses);
    jt_json_kint(&j, "rounds", rounds);
    jt_json_key(&j, "cores");
    jt_json_array(&j);
    /* Row a: a thread on the last core of node a (the first is often busy with interrupts). */
    for (int a = 0; a < n; a++) {
        int core = jt_place_core_of_numa(&tp, a, 0, 1);
        jt_json_int(&j, core);
        for (int b = 0; b < n; b++) {
            jt_latency_probe(&tp, core, b, (size_t)bytes, accesses, rounds, &lat[a * n + b]);
            if (!q.no_bandwidth)
                jt_bandwidth_probe(&tp, core, b, (size_t)bytes, rounds, &bw[a * n + b]);
        }
    }
    jt_json_end(&j);
    probe_json(&j, "latency_ns", lat, n);
    if (!q.no_bandwidth)
        probe_json(&j, "bandwidth_gbs", bw, n);
    jt_json_key(&j, "notes");
    jt_json_array(&j);
    for (int k = 0; k < n * n; k++) {
        char line[320];
        if (lat[k].mem != k % n && lat[k].mem != -1) {
            snprintf(line, sizeof line, "row %d column %d: the pages landed on node %d", k / n,
                     k % n, lat[k].mem);
            jt_json_str(&j, line);
        }
        if (lat[k].note[0]) {
            snprintf(line, sizeof line, "row %d column %d: %s", k / n, k % n, lat[k].note);
            jt_json_str(&j, line);
        }
    }
    if (n == 1)
        jt_json_str(&j, "one NUMA node: the matrix is 1 x 1 (local latency only), no link can be "
                        "inferred");
    jt_json_end(&j);
    jt_json_end(&j);
    free(lat);
    free(bw);
    jt_topo_destroy(&tp);
    return print(&j);
}

/* The node's STREAM triad on all cores (kernels/stream_probe.h): the bound of compute
 * throughput. */
int jt_query_stream(int argc, char **argv)
{
    qopts q;
    jt_topo tp;
    measuring(argc, argv, "--topology, --bytes, --rounds, --seconds", &q, &tp);
    int rounds = (int)count("--rounds", q.rounds, 5, 1, 64);
    double seconds = 0.3;
    if (q.seconds) {
        char *end;
        errno = 0;
        seconds = strtod(q.seconds, &end);
        if (end == q.seconds || *end || errno || !(seconds >= 0.01 && seconds <= 60))
            jt_usage_error("--seconds '%s' is not allowed: expected a number of seconds from "
                           "0.01 to 60 per round", q.seconds);
    }
    /* The arrays from the caches, cut to what every core makes in one round's time (a guest
     * whose hwloc reports a 480 MiB L3 asked for 960 MiB a thread); --bytes is taken as given. */
    uint64_t want = jt_stream_default_bytes(&tp), bytes = bytes_option(&q, want);
    if (!q.bytes && tp.this_system)
        bytes = jt_cap_to_time((size_t)want, jt_touch_rate(&tp, JT_MEM_ANY),
                               seconds / jt_topo_ncores(&tp), (size_t)24 << 20);
    jt_stream_result r;
    jt_stream_probe(&tp, (size_t)bytes, rounds, seconds, &r);
    jt_json j;
    jt_json_init(&j);
    jt_json_object(&j);
    jt_json_kstr(&j, "topology", tp.source);
    jt_json_kstr(&j, "kernel", "triad");
    jt_json_kstr(&j, "counting", "STREAM: 24 bytes per element, no write-allocate");
    jt_json_kint(&j, "threads", r.threads);
    jt_json_kint(&j, "bytes_per_thread", (long long)r.bytes);
    jt_json_kint(&j, "bytes_per_thread_wanted", (long long)want);
    jt_json_kstr(&j, "capped_by", bytes < want ? "seconds: the arrays one round's time makes" : NULL);
    jt_json_kint(&j, "rounds", r.rounds);
    jt_json_knum(&j, "seconds", seconds);
    jt_json_knum(&j, "GBps", r.best);
    jt_json_knum(&j, "GBps_median", r.median);
    jt_json_knum(&j, "GBps_worst", r.worst);
    jt_json_kint(&j, "unbound_threads", r.unbound);
    jt_json_kstr(&j, "note", r.note);
    jt_json_end(&j);
    jt_topo_destroy(&tp);
    return print(&j);
}

/* Ranks and progress threads of one host (include/jostle/placement.h), one row per rank count
 * of --ranks N or A:B, positions as hwloc logical cores. */
int jt_query_place_ranks(int argc, char **argv)
{
    qopts q;
    parse(argc, argv, "--topology, --ranks, --policy, --progress", &q);
    int rp = jt_rank_policy_find(q.policy ? q.policy : "numa");
    int pp = jt_progress_policy_find(q.progress ? q.progress : "numa");
    if (rp < 0)
        jt_usage_error("--policy '%s' is not allowed: expected packed, scatter or numa", q.policy);
    if (pp < 0)
        jt_usage_error("--progress '%s' is not allowed: expected bind, next or numa", q.progress);
    const char *colon = q.ranks ? strchr(q.ranks, ':') : NULL;
    char lo_text[32] = "";
    if (colon)
        snprintf(lo_text, sizeof lo_text, "%.*s", (int)(colon - q.ranks), q.ranks);
    long lo = count("--ranks", colon ? lo_text : q.ranks, 1, 1, JT_LAYOUT_MAX_CORES * 4);
    long hi = colon ? count("--ranks", colon + 1, 1, lo, JT_LAYOUT_MAX_CORES * 4) : lo;
    jt_topo tp;
    load(&tp, q.topology);
    jt_layout *l = malloc(sizeof *l);
    char err[256];
    if (jt_layout_from_hwloc(l, tp.t, err, sizeof err))
        jt_usage_error("%s", err);
    int *rpos = calloc((size_t)hi, sizeof *rpos), *ppos = calloc((size_t)hi, sizeof *ppos);
    jt_json j;
    jt_json_init(&j);
    jt_json_object(&j);
    jt_json_kstr(&j, "topology", tp.source);
    jt_json_kint(&j, "cores", l->ncores);
    jt_json_kstr(&j, "policy", jt_rank_policy_names[rp]);
    jt_json_kstr(&j, "progress", jt_progress_policy_names[pp]);
    jt_json_key(&j, "pu_os"); /* OS index of each logical core's first PU (SLURM, MPICH) */
    jt_json_array(&j);
    for (int c = 0; c < l->ncores; c++)
        jt_json_int(&j, hwloc_bitmap_first(jt_topo_core(&tp, c)->cpuset));
    jt_json_end(&j);
    jt_json_key(&j, "numa_cores"); /* the cores of each node, in the engine's order */
    jt_json_array(&j);
    for (int k = 0; k < l->nnuma; k++) {
        jt_json_array(&j);
        for (int p = l->first[k]; p < l->first[k + 1]; p++)
            jt_json_int(&j, l->core[p]);
        jt_json_end(&j);
    }
    jt_json_end(&j);
    jt_json_key(&j, "rows");
    jt_json_array(&j);
    for (long n = lo; n <= hi; n++) {
        jt_placement_map(l, rp, pp, (int)n, rpos, ppos);
        jt_json_object(&j);
        jt_json_kint(&j, "ranks", n);
        const char *keys[2] = {"rank_cores", "progress_cores"};
        for (int w = 0; w < 2; w++) {
            jt_json_key(&j, keys[w]);
            jt_json_array(&j);
            for (long r = 0; r < n; r++)
                jt_json_int(&j, l->core[(w ? ppos : rpos)[r]]);
            jt_json_end(&j);
        }
        jt_json_end(&j);
    }
    jt_json_end(&j);
    jt_json_end(&j);
    free(rpos);
    free(ppos);
    free(l);
    jt_topo_destroy(&tp);
    return print(&j);
}
