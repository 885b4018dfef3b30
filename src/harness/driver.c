/* jt_harness_main, in stages: options (the common ones, then the benchmark's) → thread level
 * → MPI start-up and placement → the benchmark's setup → output (run file, meta line) → every
 * point in turn → a clean close of the run file. */
#include "harness/internal.h"

#include "core/errors.h"
#include "core/stats.h"
#include "core/timer.h"
#include "topo/bind.h"
#include "topo/nic_place.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const stat_names[] = {"auto", "median", "mean", NULL};
static const char *const clock_names[] = {"keep", "subtract", NULL};
static const char *const level_names[] = {"single", "funneled", "serialized", "multiple", NULL};

const jt_opt_spec jt_common_options[] = {
    {"sizes", "SPEC", NULL, "message sizes: list 4,64,1K; powers of two lo:hi; linear lo:hi:step", NULL},
    {"min-reps", "N", "100", "samples per point at least", NULL},
    {"max-reps", "N", "1000000", "samples per point at most", NULL},
    {"precision", "F", "0.01", "stop once the 95% CI half-width of the median (of --target) is "
                               "under F x its value, or the clock's tick keeps it wider", NULL},
    {"target", "STAT", "median", "what the stopping rule aims at: median, or a percentile pNN "
                                 "(p99: its 95% interval within --precision, the tail a "
                                 "bulk-synchronous code waits for)", NULL},
    {"max-time", "S", "2", "seconds per point after --min-reps (the interval may not be reached)", NULL},
    {"warmup", "N", "10", "untimed samples before each point", NULL},
    {"sample-reps", "N", "auto", "operations timed together in one sample, divided out: auto "
                                 "(where one lasts under --min-sample-ticks ticks of the clock, "
                                 "the power of two that makes a sample last that long, chosen "
                                 "from the warm-up), or N; 1: one operation a sample", NULL},
    {"min-sample-ticks", "N", "100", "--sample-reps auto: a sample lasts at least N ticks of the "
                                     "clock", NULL},
    {"clock-overhead", "HOW", "keep", "keep: every operation includes one clock reading, as each "
                                      "of OSU's iterations does (a sample of several operations "
                                      "is charged the readings it did not make); subtract: the "
                                      "cost of a reading, measured at start-up, is taken off "
                                      "every sample", clock_names},
    {"iterations", "N", NULL, "exactly N samples per point (OSU's -i): --min-reps and --max-reps N", NULL},
    {"output", "FILE", NULL, "JSON Lines run file (written as FILE.partial until complete)", NULL},
    {"skip-points", "N", "0", "measure from point N of the sweep on (jostle resumes an "
                              "interrupted run so: the first N are in its .partial)", NULL},
    {"comm-core", "LIST", NULL, "core of the communicating thread: N, one N per rank, near (the "
                                "NIC's node), far (the node farthest from it), or auto (the "
                                "NIC's node, then the nearest nodes for the next local ranks)", NULL},
    {"comm-mem", "LIST", NULL, "NUMA node of its buffers: N, one N per rank, near, far, auto, "
                               "interleave", NULL},
    {"pages", "KIND", "system", "pages of every buffer: system (what the kernel's transparent "
                                "huge pages setting gives a page-aligned buffer, as OSU's get), "
                                "base (huge pages refused), huge (2 MiB-aligned, huge pages "
                                "asked for: large intra-node messages, which the kernel copies "
                                "page by page, gain most)", jt_pages_names},
    {"nic", "NAME", NULL, "the NIC that near and far refer to [the first of known locality]", NULL},
    {"thread-level", "LEVEL", NULL, "MPI thread level to ask for: single, funneled, serialized or "
                                    "multiple, not below the benchmark's need [its need]", level_names},
    {"favor", "WHAT", "latency", "auto with NICs on different nodes: latency or bandwidth",
     jt_favor_names},
    {"topology", "FILE", NULL, "hwloc XML topology to use instead of this machine (no binding then)", NULL},
    {"progress", NULL, NULL, "rank 0 writes 'progress DONE TOTAL' lines to stderr", NULL},
    {"format", "FMT", "table", "stdout: table (every metric, samples, CI), osu (OSU's two "
                               "columns: '# Size  Latency (us)'), json (the record's point lines), "
                               "csv (a row per point and metric)", jt_format_names},
    {"statistic", "STAT", "auto", "what stdout prints of each point's samples: median, mean "
                                  "(OSU's: the metric of the mean time per iteration), or auto "
                                  "(mean with --format osu, else median); the record has both",
     stat_names},
    {"percentiles", "LIST", NULL, "percentiles to print and record, e.g. 50,90,99,99.9 "
                                  "(OSU's -z: 50,90,99), in the table and --format osu", NULL},
    {"keep-samples", NULL, NULL, "write every sample of every point beside the --output file, "
                                 "in FILE.samples (docs/records.md)", NULL},
    {"order", "ORDER", "increasing", "order of the sweep's points: increasing, decreasing, "
                                     "shuffled or shuffled:SEED (the seed is recorded)", NULL},
    {"quiet", NULL, NULL, "nothing on stdout", NULL},
    {"validate", NULL, NULL, "check the command line and exit, without starting MPI: options, "
                             "placement against the topology (--topology or this machine), the "
                             "output's directory; exit 0, or 2 with the usage message", NULL},
    {"validate-options", NULL, NULL, "--validate for a run on other hosts: the options and "
                                     "their combinations only, nothing of this machine (cores, "
                                     "NUMA nodes, NICs, CPU)", NULL},
    {"help", NULL, NULL, "this help", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* OSU's short flags, so that an osu_latency command line works as it is: -m [MIN:]MAX (powers
 * of two, MIN 0 when left out), -i ITER (--iterations), -x SKIP (--warmup), -z (OSU 7's
 * percentiles P50, P90, P99: --percentiles 50,90,99).  Fills args with
 * argv where they are spelled as jostle's options; option values point into it, so it lives
 * until the run ends (osu_args_free). */
typedef struct osu_args {
    char **argv;
    char *sizes; /* "0:MAX" for -m MAX */
} osu_args;

static void osu_flags(int argc, char **argv, osu_args *o)
{
    o->argv = calloc((size_t)argc + 1, sizeof *o->argv);
    o->sizes = NULL;
    for (int a = 0; a < argc; a++) {
        const char *f = argv[a];
        const char *name = strcmp(f, "-m") == 0   ? "--sizes"
                           : strcmp(f, "-i") == 0 ? "--iterations"
                           : strcmp(f, "-x") == 0 ? "--warmup"
                                                  : NULL;
        o->argv[a] = argv[a];
        if (strcmp(f, "-z") == 0)
            o->argv[a] = "--percentiles=50,90,99";
        if (!name)
            continue;
        if (a + 1 == argc || argv[a + 1][0] == '-')
            jt_usage_error("option %s needs a value (OSU's %s, jostle's %s)", f, f, name);
        o->argv[a++] = (char *)name;
        o->argv[a] = argv[a];
        if (f[1] == 'm' && !strchr(argv[a], ':') && !o->sizes) {
            size_t len = strlen(argv[a]) + 3;
            o->sizes = malloc(len);
            snprintf(o->sizes, len, "0:%s", argv[a]);
            o->argv[a] = o->sizes;
        }
    }
}

static void osu_args_free(osu_args *o)
{
    free(o->argv);
    free(o->sizes);
}

static void usage(const jt_bench *b, FILE *f)
{
    fprintf(f, "Usage: jostle-bench %s [options]   (under an MPI launcher, %d ranks at least)\n\n"
               "%s\n\nCommon options (OSU's -m [MIN:]MAX, -i ITER, -x SKIP and -z are read as "
               "--sizes, --iterations, --warmup and --percentiles 50,90,99):\n", b->name,
            b->min_ranks, b->summary);
    jt_opt_table_help(jt_common_options, f);
    if (b->options && b->options->name) {
        fprintf(f, "\nOptions of %s:\n", b->name);
        jt_opt_table_help(b->options, f);
    }
}

/* Stage 1, options.  Everything that can be judged from the command line alone is judged
 * before MPI starts, identically on every rank.  Returns 1 when --help was asked (printed by
 * the launcher's rank 0). */
static int read_options(jt_ctx *ctx, const jt_bench *b, int argc, char **argv, osu_args *args)
{
    jt_opts_add(&ctx->opts, jt_common_options);
    jt_opts_add(&ctx->opts, b->options);
    osu_flags(argc - 2, argv + 2, args);
    if (jt_opts_parse(&ctx->opts, argc - 2, args->argv)) {
        if (jt_launcher_rank() <= 0)
            usage(b, stdout);
        return 1;
    }
    ctx->cfg.min_reps = jt_opt_long(&ctx->opts, "min-reps", 1, 1000000000L);
    ctx->cfg.max_reps = jt_opt_long(&ctx->opts, "max-reps", 1, 1000000000L);
    if (ctx->cfg.max_reps < ctx->cfg.min_reps)
        jt_usage_error("--max-reps %ld is below --min-reps %ld", ctx->cfg.max_reps,
                       ctx->cfg.min_reps);
    ctx->cfg.precision = jt_opt_double(&ctx->opts, "precision", 1e-6, 1.0);
    ctx->cfg.max_time = jt_opt_double(&ctx->opts, "max-time", 0.0, 1e6);
    ctx->cfg.warmup = jt_opt_long(&ctx->opts, "warmup", 0, 1000000000L);
    ctx->cfg.skip_points = jt_opt_long(&ctx->opts, "skip-points", 0, 1000000000L);
    ctx->cfg.min_sample_ticks = (double)jt_opt_long(&ctx->opts, "min-sample-ticks", 1, 1000000L);
    char serr[256];
    if (jt_sample_reps_parse(jt_opt_str(&ctx->opts, "sample-reps"), 1000000L,
                             &ctx->cfg.sample_reps, serr, sizeof serr) ||
        jt_target_parse(jt_opt_str(&ctx->opts, "target"), &ctx->cfg.target, serr, sizeof serr))
        jt_usage_error("%s", serr);
    if (jt_opt_str(&ctx->opts, "iterations")) {
        if (jt_opt_given(&ctx->opts, "min-reps") || jt_opt_given(&ctx->opts, "max-reps"))
            jt_usage_error("--iterations (-i) fixes the samples per point: it is not allowed "
                           "with --min-reps or --max-reps");
        ctx->cfg.min_reps = ctx->cfg.max_reps =
            jt_opt_long(&ctx->opts, "iterations", 1, 1000000000L);
    }
    ctx->format = jt_opt_choice(&ctx->opts, "format");
    int stat = jt_opt_choice(&ctx->opts, "statistic");
    ctx->print_mean = stat == 2 || (stat == 0 && ctx->format == JT_FMT_OSU);
    ctx->cfg.clock_subtract = jt_opt_choice(&ctx->opts, "clock-overhead") == 1;
    ctx->cfg.pages = jt_opt_choice(&ctx->opts, "pages");
    jt_buffer_pages((jt_pages)ctx->cfg.pages);
    if (!b->default_sizes && jt_opt_given(&ctx->opts, "sizes"))
        jt_usage_error("--sizes does not apply to %s: it has no message sizes", b->name);
    if (jt_opt_str(&ctx->opts, "percentiles")) {
        char perr[256];
        ctx->cfg.npct = jt_percentiles_parse(jt_opt_str(&ctx->opts, "percentiles"), ctx->cfg.pct,
                                             perr, sizeof perr);
        if (ctx->cfg.npct < 0)
            jt_usage_error("%s", perr);
    }
    ctx->cfg.keep_samples = jt_opt_flag(&ctx->opts, "keep-samples");
    if (ctx->cfg.keep_samples && !jt_opt_str(&ctx->opts, "output"))
        jt_usage_error("--keep-samples writes beside the run file: it needs --output FILE");
    char oerr[256], err[1024];
    if (jt_order_parse(jt_opt_str(&ctx->opts, "order"), &ctx->cfg.order, oerr, sizeof oerr))
        jt_usage_error("%s", oerr);
    ctx->progress = jt_opt_flag(&ctx->opts, "progress");
    ctx->quiet = jt_opt_flag(&ctx->opts, "quiet");
    if (jt_topo_load(&ctx->topo, jt_opt_str(&ctx->opts, "topology"), err, sizeof err))
        jt_usage_error("%s", err);
    return 0;
}

/* Stage 2, the thread level to ask MPI for: the benchmark's need, or more for its options, or
 * --thread-level.  A higher level than needed is a measurement in itself: Open MPI 4.1 costs
 * tens of ns per message above single, so comparing benchmarks means comparing them at one
 * level. */
static int thread_level_wanted(const jt_ctx *ctx, const jt_bench *b)
{
    int wanted = b->thread_level;
    if (b->thread_level_for && b->thread_level_for(&ctx->opts) > wanted)
        wanted = b->thread_level_for(&ctx->opts);
    if (jt_opt_str(&ctx->opts, "thread-level")) {
        static const int levels[] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED,
                                     MPI_THREAD_MULTIPLE};
        int asked = levels[jt_opt_choice(&ctx->opts, "thread-level")];
        if (asked < wanted)
            jt_usage_error("--thread-level %s is below what %s needs here (%s): its threads "
                           "exist while MPI runs", jt_opt_str(&ctx->opts, "thread-level"), b->name,
                           jt_thread_level_name(wanted));
        wanted = asked;
    }
    return wanted;
}

/* The benchmark's own options, judged before MPI starts too: a usage error is printed once,
 * without an MPI abort around it.  Returns its state, or NULL after --validate or
 * --validate-options, which stop after the checks that need no ranks. */
static void *read_bench_options(jt_ctx *ctx, const jt_bench *b)
{
    void *st = calloc(1, b->state_size);
    if (!st)
        jt_fatal("out of memory");
    int elsewhere = jt_opt_flag(&ctx->opts, "validate-options");
    b->read(&ctx->opts, elsewhere ? NULL : &ctx->topo, st);
    if (!elsewhere && !jt_opt_flag(&ctx->opts, "validate"))
        return st;
    if (!elsewhere)
        jt_validate_placement(&ctx->opts, &ctx->topo);
    const char *out = jt_opt_str(&ctx->opts, "output");
    char err[1024];
    if (out && jt_record_check_path(out, err, sizeof err))
        jt_usage_error("--output: %s", err);
    free(st);
    return NULL;
}

/* Stage 3, MPI: start-up at the level wanted, then what the job's shape allows (the level
 * granted, the number of ranks) and where this rank is (host, rank among its host's). */
static void start_mpi(jt_ctx *ctx, const jt_bench *b, int *argc, char ***argv, int wanted)
{
    if (b->before_init)
        b->before_init(&ctx->opts);
    jt_transport_begin();
    MPI_Init_thread(argc, argv, wanted, &ctx->thread_level);
    ctx->comm = MPI_COMM_WORLD;
    MPI_Comm_rank(ctx->comm, &ctx->rank);
    MPI_Comm_size(ctx->comm, &ctx->size);
    jt_errors_mpi_ready(ctx->rank, ctx->size);
    if (ctx->thread_level < b->thread_level)
        jt_fatal("%s needs MPI thread level %s, the library granted only %s", b->name,
                 jt_thread_level_name(b->thread_level), jt_thread_level_name(ctx->thread_level));
    if (ctx->size < b->min_ranks)
        jt_usage_error("%s needs at least %d MPI ranks, the job has %d: launch it with "
                       "mpirun -np %d (or jostle %s)", b->name, b->min_ranks, ctx->size,
                       b->min_ranks, b->name);
    int hl = (int)sizeof ctx->host;
    MPI_Get_processor_name(ctx->host, &hl);
    MPI_Comm local;
    MPI_Comm_split_type(ctx->comm, MPI_COMM_TYPE_SHARED, ctx->rank, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &ctx->local_rank);
    MPI_Comm_size(local, &ctx->local_size);
    MPI_Comm_free(&local);
}

/* What needs the ranks: this rank's placement, the cost and the tick of a clock reading, and
 * the seed of a shuffled order without one.  Collective. */
static void settle_run(jt_ctx *ctx)
{
    jt_resolve_placement(ctx);
    ctx->timer_overhead = jt_timer_overhead();
    ctx->timer_tick = jt_timer_resolution(); /* the same value in the meta line and the points */
    if (ctx->cfg.order.kind == JT_ORDER_SHUFFLED && !ctx->cfg.order.seeded) {
        /* every rank must follow the same order: rank 0's seed, recorded in the meta line */
        unsigned long long seed = (unsigned long long)time(NULL) * 2654435761ULL ^
                                  (unsigned long long)getpid();
        MPI_Bcast(&seed, 1, MPI_UNSIGNED_LONG_LONG, 0, ctx->comm);
        ctx->cfg.order.seed = seed % 1000000007ULL; /* short enough to retype */
    }
}

/* The benchmark's setup, with the ranks and the placement known; returns its points. */
static size_t setup_bench(jt_ctx *ctx, const jt_bench *b, void *st)
{
    jt_json_init(&ctx->bind_comm);
    jt_json_init(&ctx->bind_compute);
    jt_json_init(&ctx->bind_roles);
    b->setup(ctx, st);
    size_t np = b->npoints(st);
    if ((size_t)ctx->cfg.skip_points > np) /* the same on every rank: judged by all */
        jt_usage_error("--skip-points %ld is more than the %zu points of this sweep",
                       ctx->cfg.skip_points, np);
    return np;
}

/* Stage 4, output.  The run file opens once every input has been judged (the benchmark's own
 * options in setup too): bad input never leaves a file behind.  Then the meta line, gathered
 * from every rank.  Collective. */
static void open_output(jt_ctx *ctx, const jt_bench *b, void *st)
{
    const char *out = jt_opt_str(&ctx->opts, "output");
    char err[1024];
    ctx->writing = ctx->rank == 0 && out;
    ctx->rec.fd = -1;
    jt_check_all(ctx, ctx->writing && (jt_record_open(&ctx->rec, out, err, sizeof err) ||
                                       (ctx->cfg.keep_samples &&
                                        jt_record_samples_open(&ctx->rec, err, sizeof err)))
                          ? err : NULL);
    char cores[8192] = "";
    for (int k = 0; k < ctx->nbound; k++)
        snprintf(cores + strlen(cores), sizeof cores - strlen(cores), "%s%d", k ? "," : "",
                 ctx->bound[k]);
    jt_gather_meta(ctx, b, st, cores);
    if (ctx->writing)
        jt_record_guard(&ctx->rec);
}

/* Stage 5, the points in the sweep's order (from --skip-points on): each measured, recorded
 * and shown; the table's heading again whenever a point's columns change. */
static void run_points(jt_ctx *ctx, const jt_bench *b, void *st, size_t np)
{
    FILE *screen = ctx->rank == 0 && !ctx->quiet ? stdout : NULL;
    if (screen)
        jt_print_preamble(ctx, b, st, screen);

    jt_series *ser = calloc((size_t)b->nseries, sizeof *ser);
    size_t *order = malloc((np ? np : 1) * sizeof *order);
    jt_order_permute(&ctx->cfg.order, np, order);
    const jt_metric *shown = NULL;
    int shown_n = -1;
    jt_json params;
    jt_json_init(&params);
    for (size_t k = (size_t)ctx->cfg.skip_points; k < np; k++) {
        size_t i = order[k];
        jt_point p;
        memset(&p, 0, sizeof p);
        jt_json_reset(&params);
        jt_json_object(&params);
        p.params = &params;
        b->point(st, i, &p);
        jt_json_end(&params);
        jt_check_declared(b, &p);
        /* A new set of columns (values follow metrics): the same table may show fewer. */
        if (screen && (p.metrics != shown || p.nmetrics != shown_n))
            jt_print_header(ctx, b, &p, screen);
        shown = p.metrics;
        shown_n = p.nmetrics;
        jt_point_result pr = jt_measure_point(ctx, b, st, i, &p, ser);
        jt_report_point(ctx, &p, ser, pr, screen);
        if (ctx->rank == 0 && ctx->progress) {
            fprintf(stderr, "progress %zu %zu\n", k + 1, np);
            fflush(stderr);
        }
    }
    free(order);
    jt_json_free(&params);
    for (int k = 0; k < b->nseries; k++)
        jt_series_free(&ser[k]);
    free(ser);
}

/* The benchmark's teardown, then the run file closed as complete once every rank is done. */
static void close_run(jt_ctx *ctx, const jt_bench *b, void *st)
{
    b->teardown(ctx, st);
    free(st);
    MPI_Barrier(ctx->comm);
    if (ctx->writing)
        jt_record_close(&ctx->rec, "ok", NULL);
    jt_json_free(&ctx->bind_comm);
    jt_json_free(&ctx->bind_compute);
    jt_json_free(&ctx->bind_roles);
    jt_topo_destroy(&ctx->topo);
    MPI_Finalize();
}

int jt_harness_main(const jt_bench *b, int argc, char **argv)
{
    jt_ctx ctx_, *ctx = &ctx_;
    memset(ctx, 0, sizeof *ctx);
    ctx->bench = b;
    ctx->argc = argc;
    ctx->argv = argv;
    osu_args args; /* the option values point into it: freed when the run ends */
    if (read_options(ctx, b, argc, argv, &args)) {
        osu_args_free(&args);
        return 0; /* --help */
    }
    int wanted = thread_level_wanted(ctx, b);
    void *st = read_bench_options(ctx, b);
    if (!st) {
        osu_args_free(&args);
        return 0; /* --validate: nothing was started, the process ends here */
    }
    start_mpi(ctx, b, &argc, &argv, wanted);
    settle_run(ctx);
    size_t np = setup_bench(ctx, b, st);
    open_output(ctx, b, st);
    run_points(ctx, b, st, np);
    close_run(ctx, b, st);
    osu_args_free(&args);
    return 0;
}
