/* What the files of the harness share among themselves; benchmarks see only harness.h. */
#ifndef JT_HARNESS_INTERNAL_H
#define JT_HARNESS_INTERNAL_H

#include "harness/harness.h"

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
    size_t reps;
    double elapsed;
} jt_point_result;

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
