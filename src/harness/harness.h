/* The harness: one driver for every benchmark.  A benchmark is a table entry (jt_bench) with
 * callbacks; the harness owns MPI start-up, options, topology, warm-up, repetition, timing
 * decisions, statistics, the run file and the stdout table.  Benchmarks never print or decide
 * when to stop. */
#ifndef JT_HARNESS_HARNESS_H
#define JT_HARNESS_HARNESS_H

#include "core/json.h"
#include "core/options.h"
#include "core/order.h"
#include "core/record.h"
#include "core/series.h"
#include "topo/topo.h"

#include <mpi.h>
#include <stddef.h>

struct jt_point;
struct jt_stats;

/* Which way is better, as --describe says it (and the Python side judges by it). */
typedef enum jt_better { JT_LOWER_BETTER, JT_HIGHER_BETTER } jt_better;

/* One reported quantity, derived sample by sample from one series.  A benchmark declares each
 * of its metrics once, in one table (jt_bench.metrics): --describe lists that table and every
 * point reports entries of it (a copy may change the series only: one flow, one link), so
 * that what is declared and what is measured cannot differ. */
typedef struct jt_metric {
    const char *name;   /* record key: "latency"; NULL ends a benchmark's table */
    const char *unit;   /* "us" */
    const char *column; /* table heading: "Latency(us)"; "": records and CSV only */
    jt_better better;
    int series;         /* which series of the point it is computed from */
    double (*derive)(double sample, const struct jt_point *p);
} jt_metric;

/* The derivations most metrics share: a sample in seconds as microseconds, half a sample (a
 * round trip's one-way latency) in microseconds, and arg[0] bytes moved one way as MB/s. */
double jt_metric_us(double sample, const struct jt_point *p);
double jt_metric_half_us(double sample, const struct jt_point *p);
double jt_metric_mbps(double sample, const struct jt_point *p);

/* One value computed once per point from the statistics of its metrics (an overlap ratio
 * from medians), not sample by sample: recorded with n and median only, and its formula.
 * Declared once too, in jt_bench.values. */
typedef struct jt_point_value {
    const char *name, *unit, *column; /* NULL name ends a benchmark's table */
    jt_better better;
    const char *formula;  /* how it is computed, for the record */
    /* stats[m] is metric m of the point; returns the value. */
    double (*compute)(const struct jt_stats *stats, const struct jt_point *p);
} jt_point_value;

#define JT_POINT_METRICS 80 /* metrics a point reports (values see them): 64 flows and more */

/* A point of a sweep, as the benchmark describes it to the harness. */
typedef struct jt_point {
    char label[32];                /* first column of the table */
    jt_json *params;               /* what identifies the point: an object the harness has
                                    * opened, the benchmark adds its keys (jt_json_k*) */
    double arg[4];                 /* values the derive functions need (bytes, messages, ...) */
    double min_time;               /* measure at least this long (a phase's duration), seconds */
    const jt_metric *metrics;
    int nmetrics;
    const jt_point_value *values; /* optional, reported after the metrics */
    int nvalues;
    int osu_columns;              /* metrics --format osu prints (0: the first only) */
    const char *const *osu_heads; /* optional: their headings there ("MB/s"), by metric */
    /* Optional, by metric: members added to the point's params on that metric's line only
     * (one flow of several: "\"pair\":1,\"thread\":0"); such a metric is in the records and
     * the CSV, not in the table. */
    const char *const *params_extra;
    /* Its run can time several operations per sample: each sample then times
     * ctx->sample_reps operations back to back, and the harness divides it by that many (it
     * chooses how many: --sample-reps, --min-sample-ticks). */
    int repeatable;
} jt_point;

#define JT_WARN_MAX 32

struct jt_bench;

typedef struct jt_ctx {
    const struct jt_bench *bench;
    MPI_Comm comm;
    int rank, size;
    int local_rank, local_size; /* among the ranks of this host */
    int thread_level;           /* granted */
    char host[256];
    int argc;
    char **argv;
    jt_opts opts;
    jt_topo topo;
    struct {
        long min_reps, max_reps, warmup;
        double precision, max_time;
        int clock_subtract;    /* --clock-overhead subtract */
        double pct[16];        /* --percentiles (JT_PERCENTILES_MAX) */
        int npct;
        int keep_samples;      /* --keep-samples */
        int pages;             /* --pages: a jt_pages (topo/bind.h) */
        jt_order order;        /* --order, with the seed drawn when shuffled had none */
        long skip_points;      /* --skip-points: the first points are not measured */
        long sample_reps;      /* --sample-reps: operations per sample, 0 auto */
        double min_sample_ticks; /* --min-sample-ticks: auto times at least this many ticks */
        double target;         /* --target: 0 the median, else the percentile (99) */
    } cfg;
    double timer_overhead;     /* of one clock reading (jt_timer_overhead), seconds */
    double timer_tick;         /* the clock's tick (jt_timer_resolution), seconds; 0: not yet
                                * measured (jt_ctx_timer_tick measures it once) */
    int sample_reps;           /* operations per sample of the point being measured (run reads
                                * it where the point is repeatable; 1 otherwise) */
    int comm_core;             /* resolved for this rank by --comm-core */
    int comm_mem;              /* resolved for this rank by --comm-mem (node or JT_MEM_*) */
    int nic_numa;              /* NUMA node of the NIC near/far refer to, -1 unknown */
    int far_numa;              /* the node farthest from it */
    int auto_core, auto_numa;  /* jt_place_comm's advice for this rank (auto) */
    int favor;                 /* --favor, a jt_favor (topo/nic_place.h) */
    jt_json bind_comm;         /* this rank's bindings, registered by the benchmark's setup */
    jt_json bind_compute;
    jt_json bind_roles;        /* other threads by role ("progress"), keys of the binding */
    int bound[1024];           /* cores bound by this rank's threads, for oversubscription */
    int nbound;
    char warn[JT_WARN_MAX][256];
    int nwarn;
    jt_record rec;             /* rank 0 writes it */
    int writing, progress, quiet;
    int format;                /* of stdout: jt_format (harness/internal.h) */
    int print_mean;            /* --statistic: stdout shows OSU's mean, not the median */
} jt_ctx;

typedef struct jt_bench {
    const char *name;
    const char *summary;
    const jt_opt_spec *options; /* the benchmark's own, after the common ones */
    /* Everything it may report, each declared once (NULL-name-terminated): the metrics, then
     * the point values (NULL: none).  --describe lists them in this order. */
    const jt_metric *metrics;
    const jt_point_value *values;
    const char *default_sizes;  /* --sizes when not given; NULL: --sizes is refused */
    int thread_level;           /* MPI_THREAD_* it needs */
    /* Optional: the level to ask for, from the options (a progress thread wants MULTIPLE);
     * setup then judges what was granted (ctx->thread_level).  At least thread_level. */
    int (*thread_level_for)(const jt_opts *opts);
    /* Optional: what the MPI library must find at MPI_Init (its environment), from the options. */
    void (*before_init)(const jt_opts *opts);
    int min_ranks;
    int nseries;
    unsigned ratio_series;      /* bit k: series k holds ratios, not durations (no clock correction) */
    const char *label_head;     /* heading of the first column: "Size" */
    size_t state_size;          /* bytes of its state: read fills it, setup completes it */
    /* Reads and checks its own options, pure: no MPI, no binding, no allocation but what the
     * state keeps of them (the sizes); tp is the topology in use, or NULL for
     * --validate-options (the run is for other hosts: judge no fact of this one).  A value not
     * allowed is a usage error (exit 2, the value named).  Runs before MPI_Init on every rank,
     * and alone for --validate. */
    void (*read)(const jt_opts *opts, const jt_topo *tp, void *state);
    /* Allocates and binds from what read kept, with the ranks and the placement now known;
     * registers what it obtained (jt_ctx_bound_*). */
    void (*setup)(jt_ctx *ctx, void *state);
    size_t (*npoints)(void *state);
    void (*point)(void *state, size_t i, jt_point *p);
    /* Measures n samples of point i, appending to series[0..nseries-1].  Called by every rank
     * with the same i and n; rank 0's series are the ones reported. */
    void (*run)(jt_ctx *ctx, void *state, size_t i, jt_series *series, size_t n);
    void (*teardown)(jt_ctx *ctx, void *state); /* frees what read and setup made, not state */
    /* Optional: adds benchmark keys to the meta object (rank 0), e.g. what a kernel counts. */
    void (*meta)(jt_ctx *ctx, void *state, jt_json *j);
    /* Optional: a line printed under the table's first heading line (after "# "): what the
     * options make this run measure, e.g. the state of the buffers. */
    const char *(*heading)(void *state);
} jt_bench;

/* Runs one benchmark from the command line (argv after the benchmark's name); returns the
 * exit status. */
int jt_harness_main(const jt_bench *b, int argc, char **argv);

/* Metric NAME of b's table (jt_fatal when b does not declare it), for a benchmark that builds
 * a point's metrics from several places of its table. */
const jt_metric *jt_metric_find(const jt_bench *b, const char *name);

/* `jostle-bench --transport`: the MPI library's transport settings as JSON, without MPI_Init. */
int jt_transport_print(void);

struct jt_binding;
struct jt_buffer;
/* What a benchmark's setup obtained, for the metadata: the communicating thread (once) and
 * each compute thread (in order), with the buffer each one uses (or NULL). */
void jt_ctx_bound_comm(jt_ctx *ctx, const struct jt_binding *b, const struct jt_buffer *buf);
void jt_ctx_bound_compute(jt_ctx *ctx, const struct jt_binding *b, const struct jt_buffer *buf);
/* Another thread of the rank under its role's name ("progress"), once per role. */
void jt_ctx_bound_role(jt_ctx *ctx, const char *role, const struct jt_binding *b,
                       const struct jt_buffer *buf);

/* "single", "funneled", "serialized", "multiple". */
const char *jt_thread_level_name(int level);

/* Input only some ranks can judge (their host): the lowest rank with an error message says it,
 * and every rank exits with status 2.  Collective. */
void jt_check_all(jt_ctx *ctx, const char *err);

/* --validate's checks of the placement options against the topology alone (no ranks): every
 * entry of --comm-core a core or near/far/auto, of --comm-mem a NUMA node or near/far/auto/
 * interleave, --nic a NIC of the topology.  A usage error names the value. */
void jt_validate_placement(const jt_opts *o, const jt_topo *tp);

/* A NUMA node option's value (N, near/auto, far, interleave) as a node or JT_MEM_*; a value
 * that is none of them is a usage error naming it.  Collective. */
int jt_numa_option(jt_ctx *ctx, const char *name, const char *value);

/* A warning for the run metadata (and stderr on rank 0), e.g. oversubscription. */
void jt_warn(jt_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The options every benchmark takes (documented in --help). */
extern const jt_opt_spec jt_common_options[];

/* jostle-bench --describe (harness/describe.c): the common options as {"options": [...]}, and
 * one benchmark as an object (simgrid: whether the SimGrid build has it). */
void jt_describe_common(jt_json *j);
void jt_describe_bench(const jt_bench *b, int simgrid, jt_json *j);

#endif
