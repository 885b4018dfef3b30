#include "core/harness.h"

#include "core/errors.h"
#include "core/simulated.h"
#include "core/stats.h"
#include "core/timer.h"
#include "jostle_buildinfo.h"
#include "topo/bind.h"
#include "topo/place.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const jt_opt_spec jt_common_options[] = {
    {"sizes", "SPEC", NULL, "message sizes: list 4,64,1K; powers of two lo:hi; linear lo:hi:step"},
    {"min-reps", "N", "100", "samples per point at least"},
    {"max-reps", "N", "1000000", "samples per point at most"},
    {"precision", "F", "0.01", "stop once the 95% CI half-width of the median is under F x median"},
    {"max-time", "S", "2", "seconds per point after --min-reps (the interval may not be reached)"},
    {"warmup", "N", "10", "untimed samples before each point"},
    {"output", "FILE", NULL, "JSON Lines run file (written as FILE.partial until complete)"},
    {"comm-core", "LIST", NULL, "core of the communicating thread: N, one N per rank, near (the "
                                "NIC's node), far (the node farthest from it), or auto (the "
                                "NIC's node, then the nearest nodes for the next local ranks)"},
    {"comm-mem", "LIST", NULL, "NUMA node of its buffers: N, one N per rank, near, far, auto, "
                               "interleave"},
    {"nic", "NAME", NULL, "the NIC that near and far refer to [the first of known locality]"},
    {"thread-level", "LEVEL", NULL, "MPI thread level to ask for: single, funneled, serialized or "
                                    "multiple, not below the benchmark's need [its need]"},
    {"favor", "WHAT", "latency", "auto with NICs on different nodes: latency or bandwidth"},
    {"topology", "FILE", NULL, "hwloc XML topology to use instead of this machine (no binding then)"},
    {"progress", NULL, NULL, "rank 0 writes 'progress DONE TOTAL' lines to stderr"},
    {"quiet", NULL, NULL, "no table on stdout"},
    {"help", NULL, NULL, "this help"},
    {NULL, NULL, NULL, NULL},
};

/* ---- series ---------------------------------------------------------------------------- */

void jt_series_push(jt_series *s, double x)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 1024;
        double *v = realloc(s->v, cap * sizeof *v);
        if (!v)
            jt_fatal("out of memory for samples");
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = x;
}

void jt_series_clear(jt_series *s) { s->n = 0; }

void jt_series_free(jt_series *s)
{
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* ---- messages and collective checks ---------------------------------------------------- */

void jt_warn(jt_ctx *ctx, const char *fmt, ...)
{
    if (ctx->nwarn == JT_WARN_MAX)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->warn[ctx->nwarn++], sizeof ctx->warn[0], fmt, ap);
    va_end(ap);
}

/* Input that only some ranks can judge (their host's topology, rank 0's output directory):
 * the lowest rank that found something wrong says it, and every rank leaves with status 2. */
void jt_check_all(jt_ctx *ctx, const char *err)
{
    int mine = err ? ctx->rank : INT_MAX, first;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, ctx->comm);
    if (first == INT_MAX)
        return;
    if (ctx->rank == first) {
        fprintf(stderr, "jostle-bench: error: %s\n", err);
        fflush(stderr);
    }
    MPI_Finalize();
    exit(JT_EXIT_USAGE);
}

/* Gathers one string per rank on rank 0 (out[r] malloc'ed there, NULL elsewhere). */
static char **gather_text(jt_ctx *ctx, const char *s)
{
    int len = (int)strlen(s) + 1;
    int *lens = NULL, *displs = NULL;
    char *all = NULL, **out = NULL;
    if (ctx->rank == 0)
        lens = calloc((size_t)ctx->size, sizeof *lens);
    MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, ctx->comm);
    if (ctx->rank == 0) {
        displs = calloc((size_t)ctx->size, sizeof *displs);
        long total = 0;
        for (int r = 0; r < ctx->size; r++) {
            displs[r] = (int)total;
            total += lens[r];
        }
        all = malloc((size_t)total);
    }
    MPI_Gatherv(s, len, MPI_CHAR, all, lens, displs, MPI_CHAR, 0, ctx->comm);
    if (ctx->rank == 0) {
        out = calloc((size_t)ctx->size, sizeof *out);
        for (int r = 0; r < ctx->size; r++)
            out[r] = strdup(all + displs[r]);
        free(all);
        free(lens);
        free(displs);
    }
    return out;
}

static void free_text(jt_ctx *ctx, char **t)
{
    if (!t)
        return;
    for (int r = 0; r < ctx->size; r++)
        free(t[r]);
    free(t);
}

/* ---- placement options ----------------------------------------------------------------- */

/* The rank's entry of a per-rank list: one value for all, or exactly one per rank. */
static int list_entry(jt_ctx *ctx, const char *name, const char *list, char *out, size_t len)
{
    int n = 1;
    for (const char *c = list; *c; c++)
        n += *c == ',';
    if (n != 1 && n < ctx->size) {
        snprintf(out, len, "--%s '%s' is not allowed: give one value for all ranks or one per "
                 "rank (%d ranks)", name, list, ctx->size);
        return -1;
    }
    int want = n == 1 ? 0 : ctx->rank;
    const char *p = list;
    for (int i = 0; i < want; i++)
        p = strchr(p, ',') + 1;
    size_t l = strcspn(p, ",");
    snprintf(out, len, "%.*s", (int)l, p);
    return 0;
}

static int parse_index(const char *s, int *v)
{
    char *end;
    long x = strtol(s, &end, 10);
    if (end == s || *end || x < 0 || x > INT_MAX)
        return -1;
    *v = (int)x;
    return 0;
}

/* A NUMA node option value: N, near/auto, far, interleave; -3 when not one of them. */
static int numa_value(jt_ctx *ctx, const char *v)
{
    int n;
    if (strcmp(v, "auto") == 0)
        return ctx->auto_numa;
    if (strcmp(v, "near") == 0)
        return ctx->nic_numa >= 0 ? ctx->nic_numa : JT_MEM_ANY;
    if (strcmp(v, "far") == 0)
        return ctx->nic_numa >= 0 ? ctx->far_numa : JT_MEM_ANY;
    if (strcmp(v, "interleave") == 0)
        return JT_MEM_INTERLEAVE;
    if (parse_index(v, &n) == 0 && n < jt_topo_nnuma(&ctx->topo))
        return n;
    return -3;
}

int jt_numa_option(jt_ctx *ctx, const char *name, const char *v)
{
    int n = numa_value(ctx, v);
    char err[512] = "";
    if (n == -3)
        snprintf(err, sizeof err, "--%s '%s' is not allowed on %s: NUMA nodes are 0 to %d, or "
                 "near, far, interleave", name, v, ctx->host, jt_topo_nnuma(&ctx->topo) - 1);
    jt_check_all(ctx, err[0] ? err : NULL);
    return n;
}

static void resolve_placement(jt_ctx *ctx)
{
    char err[512] = "", val[64], nicerr[256] = "";
    int ncores = jt_topo_ncores(&ctx->topo);
    const char *nicname = jt_opt_str(&ctx->opts, "nic");
    jt_nic nic;
    ctx->nic_numa = ctx->far_numa = -1;
    if (jt_place_nic(&ctx->topo, nicname, &nic, nicerr, sizeof nicerr) == 0) {
        ctx->nic_numa = nic.numa;
        ctx->far_numa = jt_place_far_numa(&ctx->topo, nic.numa);
    }
    jt_check_all(ctx, nicname && ctx->nic_numa < 0 ? nicerr : NULL);
    /* auto: the advice of jostle place --comm (which prints the reason kept in why here), local
     * rank k being comm thread k. */
    char why[1024];
    jt_favor favor = (jt_favor)jt_opt_choice(&ctx->opts, "favor", jt_favor_names);
    jt_place_comm(&ctx->topo, nicname, favor, ctx->local_rank, &ctx->auto_core, &ctx->auto_numa,
                  why, sizeof why);

    ctx->comm_core = ncores > 0 ? ctx->local_rank % ncores : 0;
    ctx->comm_mem = JT_MEM_ANY;
    const char *cc = jt_opt_str(&ctx->opts, "comm-core");
    const char *cm = jt_opt_str(&ctx->opts, "comm-mem");
    int relative = (cc && (strstr(cc, "near") || strstr(cc, "far") || strstr(cc, "auto"))) ||
                   (cm && (strstr(cm, "near") || strstr(cm, "far") || strstr(cm, "auto")));
    if (relative && ctx->nic_numa < 0)
        jt_warn(ctx, "rank %d: near/far/auto placement: %s; the default placement is used",
                ctx->rank, nicerr);
    else if (relative && ctx->rank == 0 && ctx->far_numa == ctx->nic_numa)
        jt_warn(ctx, "one NUMA node: near and far are the same node");
    if (cc && list_entry(ctx, "comm-core", cc, err, sizeof err) == 0) {
        snprintf(val, sizeof val, "%s", err);
        err[0] = '\0';
        if (strcmp(val, "auto") == 0) {
            ctx->comm_core = ctx->auto_core;
        } else if (strcmp(val, "near") == 0 || strcmp(val, "far") == 0) {
            /* Near: the first cores of the NIC's node; far: the last cores of the farthest node
             * (the seed binds the communication thread to the last core of another node). */
            int far = val[0] == 'f';
            if (ctx->nic_numa >= 0)
                ctx->comm_core = jt_place_core_of_numa(&ctx->topo, far ? ctx->far_numa
                                                       : ctx->nic_numa, ctx->local_rank, far);
        } else if (parse_index(val, &ctx->comm_core) != 0 || ctx->comm_core >= ncores) {
            snprintf(err, sizeof err, "--comm-core '%s' is not allowed on %s: expected a core from "
                     "0 to %d, a list of them, near, far or auto", val, ctx->host, ncores - 1);
        }
    }
    jt_check_all(ctx, err[0] ? err : NULL);
    if (cm && list_entry(ctx, "comm-mem", cm, err, sizeof err) == 0) {
        snprintf(val, sizeof val, "%s", err);
        err[0] = '\0';
        ctx->comm_mem = jt_numa_option(ctx, "comm-mem", val);
    }
    jt_check_all(ctx, err[0] ? err : NULL);
}

/* ---- bindings ------------------------------------------------------------------------- */

static void bound_entry(jt_ctx *ctx, jt_json *j, const jt_binding *b, const jt_buffer *buf)
{
    jt_json_object(j);
    jt_binding_json(b, j);
    if (buf)
        jt_buffer_json(buf, j);
    jt_json_end(j);
    if (b->ok && ctx->nbound < (int)(sizeof ctx->bound / sizeof ctx->bound[0]))
        ctx->bound[ctx->nbound++] = b->core;
    if (!b->ok && ctx->topo.this_system)
        jt_warn(ctx, "rank %d: %s", ctx->rank, b->note);
    if (buf && buf->note[0] && ctx->topo.this_system)
        jt_warn(ctx, "rank %d: %s", ctx->rank, buf->note);
}

void jt_ctx_bound_comm(jt_ctx *ctx, const jt_binding *b, const jt_buffer *buf)
{
    jt_json_reset(&ctx->bind_comm);
    bound_entry(ctx, &ctx->bind_comm, b, buf);
}

void jt_ctx_bound_compute(jt_ctx *ctx, const jt_binding *b, const jt_buffer *buf)
{
    /* An array whose closing bracket is added when the metadata is written. */
    if (!ctx->bind_compute.buf)
        jt_json_array(&ctx->bind_compute);
    bound_entry(ctx, &ctx->bind_compute, b, buf);
}

void jt_ctx_bound_role(jt_ctx *ctx, const char *role, const jt_binding *b)
{
    /* An object of roles whose members gather_meta splices into the rank's binding. */
    if (!ctx->bind_roles.buf)
        jt_json_object(&ctx->bind_roles);
    jt_json_key(&ctx->bind_roles, role);
    bound_entry(ctx, &ctx->bind_roles, b, NULL);
}

/* ---- metadata -------------------------------------------------------------------------- */

static const char *thread_level_name(int l)
{
    switch (l) {
    case MPI_THREAD_SINGLE: return "single";
    case MPI_THREAD_FUNNELED: return "funneled";
    case MPI_THREAD_SERIALIZED: return "serialized";
    default: return "multiple";
    }
}

/* Oversubscription: more bound threads than cores on a host, or a core bound twice. */
static void check_oversubscription(jt_ctx *ctx, char **hosts, char **cores)
{
    if (ctx->rank != 0)
        return;
    int ncores = jt_topo_ncores(&ctx->topo);
    for (int r = 0; r < ctx->size; r++) {
        int first = 1;
        for (int q = 0; q < r; q++)
            first &= strcmp(hosts[q], hosts[r]) != 0;
        if (!first)
            continue;
        int count[4096] = {0}, threads = 0, ranks = 0, twice = -1;
        for (int q = r; q < ctx->size; q++) {
            if (strcmp(hosts[q], hosts[r]) != 0)
                continue;
            ranks++;
            for (char *tok = cores[q]; tok && *tok;) {
                int c = atoi(tok);
                threads++;
                if (c >= 0 && c < 4096 && ++count[c] == 2 && twice < 0)
                    twice = c;
                tok = strchr(tok, ',');
                tok = tok ? tok + 1 : NULL;
            }
        }
        if (threads > ncores || ranks > ncores)
            jt_warn(ctx, "oversubscribed: %d bound threads of %d ranks on host %s, which has %d "
                    "cores", threads, ranks, hosts[r], ncores);
        else if (twice >= 0)
            jt_warn(ctx, "oversubscribed: core %d of host %s has more than one bound thread",
                    twice, hosts[r]);
    }
}

static void write_meta(jt_ctx *ctx, const jt_bench *b, void *st, char **hosts, char **binds)
{
    jt_json j;
    jt_json_init(&j);
    jt_json_object(&j);
    jt_json_kstr(&j, "type", "meta");
    jt_json_kint(&j, "schema", 1);
    jt_json_kstr(&j, "tool", "jostle");
    jt_json_kstr(&j, "version", JT_VERSION);
    jt_json_kstr(&j, "git", JT_GIT);
    jt_json_kstr(&j, "benchmark", b->name);
    jt_json_key(&j, "argv");
    jt_json_array(&j);
    for (int i = 0; i < ctx->argc; i++)
        jt_json_str(&j, ctx->argv[i]);
    jt_json_end(&j);
    char now[32];
    time_t t = time(NULL);
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    jt_json_kstr(&j, "start", now);
    jt_json_key(&j, "hosts");
    jt_json_array(&j);
    for (int r = 0; r < ctx->size; r++)
        jt_json_str(&j, hosts[r]);
    jt_json_end(&j);

    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0, ver, sub;
    MPI_Get_library_version(lib, &len);
    MPI_Get_version(&ver, &sub);
    char first_line[256], mpiver[16];
    snprintf(first_line, sizeof first_line, "%.*s", (int)strcspn(lib, "\n"), lib);
    snprintf(mpiver, sizeof mpiver, "%d.%d", ver, sub);
    jt_json_key(&j, "mpi");
    jt_json_object(&j);
    jt_json_kstr(&j, "library", first_line);
    jt_json_kstr(&j, "library_full", lib);
    jt_json_kstr(&j, "version", mpiver);
    jt_json_kint(&j, "ranks", ctx->size);
    jt_json_kstr(&j, "thread_level", thread_level_name(ctx->thread_level));
    jt_json_end(&j);

    jt_json_key(&j, "compiler");
    jt_json_object(&j);
    jt_json_kstr(&j, "id", JT_C_COMPILER);
    jt_json_kstr(&j, "flags", JT_CFLAGS);
    jt_json_end(&j);

    jt_json_key(&j, "machine");
    jt_topo_machine_json(&ctx->topo, &j);
    jt_simulated_json(&j);
    jt_json_key(&j, "options");
    jt_opts_json(&ctx->opts, &j);
    jt_json_key(&j, "harness");
    jt_json_object(&j);
    jt_json_kint(&j, "min_reps", ctx->cfg.min_reps);
    jt_json_kint(&j, "max_reps", ctx->cfg.max_reps);
    jt_json_knum(&j, "precision", ctx->cfg.precision);
    jt_json_knum(&j, "max_time_s", ctx->cfg.max_time);
    jt_json_kint(&j, "warmup", ctx->cfg.warmup);
    jt_json_knum(&j, "timer_resolution_s", jt_timer_resolution());
    jt_json_knum(&j, "timer_overhead_s", ctx->timer_overhead);
    jt_json_kstr(&j, "timer", "clock_gettime(CLOCK_MONOTONIC), overhead subtracted per sample");
    jt_json_kstr(&j, "ci", "median, distribution-free order statistics, 95%");
    jt_json_end(&j);
    jt_json_key(&j, "binding");
    jt_json_object(&j);
    for (int r = 0; r < ctx->size; r++) {
        char key[16];
        snprintf(key, sizeof key, "%d", r);
        jt_json_key(&j, key);
        jt_json_raw(&j, binds[r][0] ? binds[r] : "{}");
    }
    jt_json_end(&j);
    if (b->meta)
        b->meta(ctx, st, &j);
    jt_json_key(&j, "warnings");
    jt_json_array(&j);
    for (int i = 0; i < ctx->nwarn; i++)
        jt_json_str(&j, ctx->warn[i]);
    jt_json_end(&j);
    jt_json_end(&j);
    jt_record_line(&ctx->rec, &j);
    jt_json_free(&j);
}

/* Every rank's warnings, binding and bound cores reach rank 0 and the meta line. */
static void gather_meta(jt_ctx *ctx, const jt_bench *b, void *st, const char *cores)
{
    char **hosts = gather_text(ctx, ctx->host);
    jt_json bj;
    jt_json_init(&bj);
    jt_json_object(&bj);
    if (ctx->bind_comm.buf) {
        jt_json_key(&bj, "comm");
        jt_json_raw(&bj, ctx->bind_comm.buf);
    }
    if (ctx->bind_compute.buf) {
        jt_json_end(&ctx->bind_compute); /* close the array of compute threads */
        jt_json_key(&bj, "compute");
        jt_json_raw(&bj, ctx->bind_compute.buf);
    }
    jt_json_end(&bj);
    if (ctx->bind_roles.buf) { /* {"comm":…} + {"progress":…} = {"comm":…,"progress":…} */
        jt_json_end(&ctx->bind_roles);
        bj.buf[strlen(bj.buf) - 1] = '\0';
        char *all = malloc(strlen(bj.buf) + strlen(ctx->bind_roles.buf) + 2);
        sprintf(all, "%s%s%s", bj.buf, strlen(bj.buf) > 1 ? "," : "", ctx->bind_roles.buf + 1);
        jt_json_free(&bj);
        jt_json_init(&bj);
        jt_json_raw(&bj, all);
        free(all);
    }
    char **binds = gather_text(ctx, bj.buf);
    jt_json_free(&bj);
    char **corel = gather_text(ctx, cores);
    char mine[JT_WARN_MAX * 257] = "";
    for (int i = 0; i < ctx->nwarn; i++) {
        strcat(mine, ctx->warn[i]);
        strcat(mine, "\n");
    }
    char **warns = gather_text(ctx, ctx->rank == 0 ? "" : mine);
    if (ctx->rank == 0) {
        for (int r = 1; r < ctx->size; r++)
            for (char *l = warns[r], *nl; l && *l; l = nl + 1) {
                nl = strchr(l, '\n');
                *nl = '\0';
                jt_warn(ctx, "%s", l);
            }
        check_oversubscription(ctx, hosts, corel);
        if (!ctx->topo.this_system)
            jt_warn(ctx, "topology loaded from %s, which is not this system: threads and memory "
                    "were not bound", ctx->topo.source);
        if (!ctx->quiet)
            for (int i = 0; i < ctx->nwarn; i++)
                fprintf(stderr, "jostle-bench: warning: %s\n", ctx->warn[i]);
        write_meta(ctx, b, st, hosts, binds);
    }
    free_text(ctx, hosts);
    free_text(ctx, binds);
    free_text(ctx, corel);
    free_text(ctx, warns);
}

/* ---- one point ------------------------------------------------------------------------- */

typedef struct point_result {
    size_t reps;
    double elapsed;
} point_result;

/* Warm-up, then batches until the median's interval is narrow enough, the time is up or the
 * repetitions are exhausted.  Rank 0 decides; the others follow its broadcast. */
static point_result measure(jt_ctx *ctx, const jt_bench *b, void *st, size_t i,
                            const jt_point *p, jt_series *ser)
{
    for (int k = 0; k < b->nseries; k++)
        jt_series_clear(&ser[k]);
    if (ctx->cfg.warmup > 0) {
        b->run(ctx, st, i, ser, (size_t)ctx->cfg.warmup);
        for (int k = 0; k < b->nseries; k++)
            jt_series_clear(&ser[k]);
    }
    int conv_series = p->nmetrics > 0 ? p->metrics[0].series : 0;
    double t0 = jt_now();
    long decision[2] = {0, ctx->cfg.min_reps}; /* stop, next batch */
    size_t total = 0;
    double *tmp = NULL;
    size_t tmpcap = 0;
    size_t *done = calloc((size_t)b->nseries, sizeof *done);
    for (;;) {
        b->run(ctx, st, i, ser, (size_t)decision[1]);
        total += (size_t)decision[1];
        /* Each sample holds one clock reading's cost besides the work: take it out. */
        for (int k = 0; k < b->nseries; k++) {
            for (size_t q = done[k]; !(b->ratio_series >> k & 1) && q < ser[k].n; q++)
                ser[k].v[q] = fmax(ser[k].v[q] - ctx->timer_overhead, 1e-9);
            done[k] = ser[k].n;
        }
        if (ctx->rank == 0) {
            double el = jt_now() - t0;
            jt_series *s = &ser[conv_series];
            if (s->n > tmpcap) {
                tmpcap = s->cap;
                tmp = realloc(tmp, tmpcap * sizeof *tmp);
            }
            memcpy(tmp, s->v, s->n * sizeof *tmp);
            jt_stats st_;
            jt_stats_compute(tmp, s->n, &st_);
            int conv = s->n > 0 && jt_stats_rel_halfwidth(&st_) <= ctx->cfg.precision;
            decision[0] = el >= p->min_time &&
                          (conv || el >= fmax(ctx->cfg.max_time, p->min_time) ||
                           (long)total >= ctx->cfg.max_reps);
            /* Grow geometrically, within what the time left allows. */
            double per = el / (double)total;
            double left = (fmax(ctx->cfg.max_time, p->min_time) - el) / (per > 0 ? per : 1e-9);
            double next = fmin(fmax((double)total / 2.0, 1.0), fmax(left, 1.0));
            next = fmin(next, (double)(ctx->cfg.max_reps - (long)total));
            decision[1] = next < 1 ? 1 : (long)next;
        }
        MPI_Bcast(decision, 2, MPI_LONG, 0, ctx->comm);
        if (decision[0])
            break;
    }
    free(tmp);
    free(done);
    point_result r = {total, jt_now() - t0};
    return r;
}

static int column_width(const char *c) { return (int)(strlen(c) > 14 ? strlen(c) : 14); }

/* Opens a point line: what every point line starts with (docs/records.md). */
static void point_head(jt_json *j, const jt_point *p, const char *metric, const char *unit,
                       long long n)
{
    jt_json_init(j);
    jt_json_object(j);
    jt_json_kstr(j, "type", "point");
    jt_json_key(j, "params");
    jt_json_raw(j, p->params);
    jt_json_kstr(j, "metric", metric);
    jt_json_kstr(j, "unit", unit);
    jt_json_kint(j, "n", n);
}

/* The point's values computed from its metrics' statistics: n is the fewest samples any
 * metric had, median the value; no distribution is claimed. */
static void report_values(jt_ctx *ctx, const jt_point *p, const jt_stats *all, point_result pr,
                          FILE *table)
{
    size_t n = 0;
    for (int m = 0; m < p->nmetrics && m < JT_POINT_METRICS; m++)
        n = m == 0 || all[m].n < n ? all[m].n : n;
    for (int k = 0; k < p->nvalues; k++) {
        const jt_point_value *v = &p->values[k];
        double x = n > 0 ? v->compute(all, p) : NAN;
        if (table)
            fprintf(table, " %*.3f", column_width(v->column), x);
        if (n == 0 || isnan(x)) /* undefined (a zero time): no line */
            continue;
        jt_json j;
        point_head(&j, p, v->name, v->unit, (long long)n);
        jt_json_knum(&j, "median", x);
        jt_json_kstr(&j, "formula", v->formula);
        jt_json_knum(&j, "elapsed_s", pr.elapsed);
        jt_json_end(&j);
        jt_record_point(&ctx->rec, &j);
        jt_json_free(&j);
    }
}

static void report_point(jt_ctx *ctx, const jt_point *p, jt_series *ser, point_result pr,
                         FILE *table)
{
    if (ctx->rank != 0)
        return;
    if (table)
        fprintf(table, "%-12s", p->label);
    jt_stats first = {0}, all[JT_POINT_METRICS];
    for (int m = 0; m < p->nmetrics && m < JT_POINT_METRICS; m++) {
        const jt_metric *mt = &p->metrics[m];
        jt_series *s = &ser[mt->series];
        double *v = malloc((s->n ? s->n : 1) * sizeof *v);
        for (size_t k = 0; k < s->n; k++)
            v[k] = mt->derive(s->v[k], p);
        jt_stats st;
        jt_stats_compute(v, s->n, &st);
        free(v);
        if (m == 0)
            first = st;
        all[m] = st;
        if (table)
            fprintf(table, " %*.3f", column_width(mt->column), st.median);
        if (st.n == 0)
            continue;
        jt_json j;
        point_head(&j, p, mt->name, mt->unit, (long long)st.n);
        jt_stats_json(&st, &j);
        jt_json_kbool(&j, "converged", jt_stats_rel_halfwidth(&st) <= ctx->cfg.precision);
        jt_json_knum(&j, "elapsed_s", pr.elapsed);
        jt_json_end(&j);
        jt_record_point(&ctx->rec, &j);
        jt_json_free(&j);
    }
    report_values(ctx, p, all, pr, table);
    if (table) {
        fprintf(table, " %10zu %9.2f\n", first.n, 100.0 * jt_stats_rel_halfwidth(&first));
        fflush(table);
    }
}

static void print_header(jt_ctx *ctx, const jt_bench *b, const jt_point *p, FILE *table)
{
    fprintf(table, "# %-10s", b->label_head);
    for (int m = 0; m < p->nmetrics; m++) {
        fprintf(table, " %*s", column_width(p->metrics[m].column), p->metrics[m].column);
    }
    for (int k = 0; k < p->nvalues; k++)
        fprintf(table, " %*s", column_width(p->values[k].column), p->values[k].column);
    fprintf(table, " %10s %9s\n", "Samples", "CI95(+-%)");
    (void)ctx;
}

/* ---- the driver ------------------------------------------------------------------------ */

static void usage(const jt_bench *b, FILE *f)
{
    fprintf(f, "Usage: jostle-bench %s [options]   (under an MPI launcher, %d ranks at least)\n\n"
               "%s\n\nCommon options:\n", b->name, b->min_ranks, b->summary);
    jt_opt_table_help(jt_common_options, f);
    if (b->options && b->options->name) {
        fprintf(f, "\nOptions of %s:\n", b->name);
        jt_opt_table_help(b->options, f);
    }
}

int jt_harness_main(const jt_bench *b, int argc, char **argv)
{
    jt_ctx ctx_, *ctx = &ctx_;
    memset(ctx, 0, sizeof *ctx);
    ctx->argc = argc;
    ctx->argv = argv;
    jt_opts_add(&ctx->opts, jt_common_options);
    jt_opts_add(&ctx->opts, b->options);
    /* Everything that can be judged from the command line alone is judged before MPI starts,
     * identically on every rank. */
    if (jt_opts_parse(&ctx->opts, argc - 2, argv + 2)) {
        if (jt_launcher_rank() <= 0)
            usage(b, stdout);
        return 0;
    }
    ctx->cfg.min_reps = jt_opt_long(&ctx->opts, "min-reps", 1, 1000000000L);
    ctx->cfg.max_reps = jt_opt_long(&ctx->opts, "max-reps", 1, 1000000000L);
    if (ctx->cfg.max_reps < ctx->cfg.min_reps)
        jt_usage_error("--max-reps %ld is below --min-reps %ld", ctx->cfg.max_reps,
                       ctx->cfg.min_reps);
    ctx->cfg.precision = jt_opt_double(&ctx->opts, "precision", 1e-6, 1.0);
    ctx->cfg.max_time = jt_opt_double(&ctx->opts, "max-time", 0.0, 1e6);
    ctx->cfg.warmup = jt_opt_long(&ctx->opts, "warmup", 0, 1000000000L);
    ctx->progress = jt_opt_flag(&ctx->opts, "progress");
    ctx->quiet = jt_opt_flag(&ctx->opts, "quiet");
    char err[1024];
    if (jt_topo_load(&ctx->topo, jt_opt_str(&ctx->opts, "topology"), err, sizeof err))
        jt_usage_error("%s", err);

    int required = b->thread_level, wanted = required;
    if (b->thread_level_for && b->thread_level_for(&ctx->opts) > wanted)
        wanted = b->thread_level_for(&ctx->opts);
    /* A higher level than needed is a measurement in itself: Open MPI 4.1 costs tens of ns per
     * message above single, so comparing benchmarks means comparing them at one level. */
    if (jt_opt_str(&ctx->opts, "thread-level")) {
        static const char *const names[] = {"single", "funneled", "serialized", "multiple", NULL};
        static const int levels[] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED,
                                     MPI_THREAD_MULTIPLE};
        int asked = levels[jt_opt_choice(&ctx->opts, "thread-level", names)];
        if (asked < wanted)
            jt_usage_error("--thread-level %s is below what %s needs here (%s): its threads "
                           "exist while MPI runs", jt_opt_str(&ctx->opts, "thread-level"), b->name,
                           thread_level_name(wanted));
        wanted = asked;
    }
    if (b->before_init)
        b->before_init(&ctx->opts);
    MPI_Init_thread(&argc, &argv, wanted, &ctx->thread_level);
    ctx->comm = MPI_COMM_WORLD;
    MPI_Comm_rank(ctx->comm, &ctx->rank);
    MPI_Comm_size(ctx->comm, &ctx->size);
    jt_errors_mpi_ready(ctx->rank, ctx->size);
    if (ctx->thread_level < required)
        jt_fatal("%s needs MPI thread level %s, the library granted only %s", b->name,
                 thread_level_name(required), thread_level_name(ctx->thread_level));
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
    resolve_placement(ctx);
    ctx->timer_overhead = jt_timer_overhead();

    jt_json_init(&ctx->bind_comm);
    jt_json_init(&ctx->bind_compute);
    jt_json_init(&ctx->bind_roles);
    void *st = b->setup(ctx);
    /* The run file opens once every input has been judged (the benchmark's own options in
     * setup too): bad input never leaves a file behind. */
    const char *out = jt_opt_str(&ctx->opts, "output");
    ctx->writing = ctx->rank == 0 && out;
    ctx->rec.fd = -1;
    jt_check_all(ctx, ctx->writing && jt_record_open(&ctx->rec, out, err, sizeof err) ? err : NULL);
    char cores[8192] = "";
    for (int k = 0; k < ctx->nbound; k++)
        snprintf(cores + strlen(cores), sizeof cores - strlen(cores), "%s%d", k ? "," : "",
                 ctx->bound[k]);
    gather_meta(ctx, b, st, cores);
    if (ctx->writing)
        jt_record_guard(&ctx->rec);

    FILE *table = ctx->rank == 0 && !ctx->quiet ? stdout : NULL;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int ll;
    MPI_Get_library_version(lib, &ll);
    if (table)
        fprintf(table, "# jostle-bench %s %s (git %s), %.*s, %d ranks\n", b->name, JT_VERSION,
                JT_GIT, (int)strcspn(lib, "\n"), lib, ctx->size);
    if (table && b->heading)
        fprintf(table, "# %s\n", b->heading(st));

    jt_series *ser = calloc((size_t)b->nseries, sizeof *ser);
    size_t np = b->npoints(st);
    const jt_metric *shown = NULL;
    for (size_t i = 0; i < np; i++) {
        jt_point p;
        memset(&p, 0, sizeof p);
        b->point(st, i, &p);
        if (table && p.metrics != shown) /* a new set of columns (values follow metrics) */
            print_header(ctx, b, &p, table);
        shown = p.metrics;
        point_result pr = measure(ctx, b, st, i, &p, ser);
        report_point(ctx, &p, ser, pr, table);
        if (ctx->rank == 0 && ctx->progress) {
            fprintf(stderr, "progress %zu %zu\n", i + 1, np);
            fflush(stderr);
        }
    }
    for (int k = 0; k < b->nseries; k++)
        jt_series_free(&ser[k]);
    free(ser);
    b->teardown(ctx, st);
    MPI_Barrier(ctx->comm);
    if (ctx->writing)
        jt_record_close(&ctx->rec, "ok", NULL);
    jt_json_free(&ctx->bind_comm);
    jt_json_free(&ctx->bind_compute);
    jt_json_free(&ctx->bind_roles);
    jt_topo_destroy(&ctx->topo);
    MPI_Finalize();
    return 0;
}
