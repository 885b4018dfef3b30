/* What the files of the harness share among themselves; benchmarks see only harness.h. */
#ifndef JT_HARNESS_INTERNAL_H
#define JT_HARNESS_INTERNAL_H

#include "harness/harness.h"

#include "core/levels.h"
#include "core/stats.h"

#include <stdio.h>

/* One string per rank gathered on rank 0 (out[r] malloc'ed there, NULL elsewhere). */
char **jt_gather_text(jt_ctx *ctx, const char *s);
void jt_free_text(jt_ctx *ctx, char **t);


/* A point whose metrics or values its benchmark does not declare is a bug: jt_fatal. */
void jt_check_declared(const jt_bench *b, const jt_point *p);

/* --comm-core, --comm-mem, --nic and --favor for this rank (placement_options.c).  Collective. */
void jt_resolve_placement(jt_ctx *ctx);

/* Every rank's warnings, binding and bound cores (cores: "3,5") reach rank 0, which writes
 * the meta line (meta.c).  Collective. */
void jt_gather_meta(jt_ctx *ctx, const jt_bench *b, void *st, const char *cores);

/* The transport's control variables (transport.c): _begin before MPI_Init spawns the query
 * beside it on the launcher's rank 0; _json writes "transport": {...} (rank 0). */
void jt_transport_begin(void);
void jt_transport_json(jt_json *j);

/* This host's environment as a JSON object (environment.c): the MPI-, UCX-, libfabric-,
 * OpenMP- and BLAS-related variables set, huge pages, NUMA balancing, CPU frequency, SMT,
 * NICs. */
void jt_environment_json(jt_json *j);

typedef struct jt_point_result {
    size_t reps;      /* samples */
    double elapsed;
    int sample_reps;  /* operations per sample */
    int stop;         /* why it stopped: JT_STOP_* (stopping.h) */
} jt_point_result;

#define JT_SAMPLE_REPS_MAX 4096 /* --sample-reps auto chooses at most this many */
#define JT_SAMPLE_PROBE 5       /* auto with --warmup 0: samples taken to choose, then dropped */

/* The clock's tick in seconds, measured once (the meta line records the same value). */
double jt_ctx_timer_tick(jt_ctx *ctx);

/* The tick of metric mt of point p in its own unit: the clock's tick over the operations per
 * sample, through the metric's derivation at the median of the raw samples raw[0..n-1] (half
 * for a half round trip; a rate's at its median); 0 for a series of ratios. */
double jt_metric_tick(jt_ctx *ctx, const jt_bench *b, const jt_point *p, const jt_metric *mt,
                      const double *raw, size_t n, int sample_reps);

/* The statistics of a metric's samples x[0..n-1] (in the order measured; tick in their unit):
 * the distribution (jt_summary; sorted receives them sorted), the modes, and where the
 * median's interval spans two levels, the levels, that interval widened to span them
 * (core/levels.h).  What the stopping rule and the record read alike. */
void jt_point_stats(const double *x, size_t n, double tick, double *sorted, jt_stats *st,
                    jt_modes *modes, jt_levels *levels);

/* The samples the interval of quantile q needs (those summarised in s): batches' when the
 * samples are correlated (core/summary.h). */
size_t jt_quantile_needs_n(const jt_stats *s, double q);

/* The interval the stopping rule aims at (--target) for metric samples x (in the order
 * measured) summarised in s (sorted, the same sorted): returns its relative half-width, NAN
 * when it does not exist yet, and sets *floor (half a tick over the value) and *need (the
 * samples it needs). */
double jt_target_halfwidth(const jt_ctx *ctx, const jt_stats *s, const double *x,
                           const double *sorted, double *floor, size_t *need);

/* Warm-up, then samples until the point's stopping rule says enough (measure.c).  Collective. */
jt_point_result jt_measure_point(jt_ctx *ctx, const jt_bench *b, void *st, size_t i,
                                 const jt_point *p, jt_series *ser);

/* What stdout shows (--format), report.c. */
typedef enum { JT_FMT_TABLE, JT_FMT_OSU, JT_FMT_JSON, JT_FMT_CSV } jt_format;
extern const char *const jt_format_names[]; /* in enum order, NULL-terminated */

/* The point's record lines (rank 0), and what stdout shows of it when out is not NULL. */
void jt_report_point(jt_ctx *ctx, const jt_point *p, jt_series *ser, jt_point_result pr,
                     FILE *out);
/* Once before the points; then before each new set of columns. */
void jt_print_preamble(jt_ctx *ctx, const jt_bench *b, void *st, FILE *out);
void jt_print_header(jt_ctx *ctx, const jt_bench *b, const jt_point *p, FILE *out);

#endif
