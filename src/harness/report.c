/* A measured point becomes record lines (statistics per metric, values from them) and what
 * stdout shows of it in the chosen --format: jostle's table, OSU's two columns, the record's
 * JSON lines, or CSV. */
#include "harness/internal.h"

#include "core/errors.h"
#include "core/modes.h"
#include "core/stats.h"
#include "core/summary.h"
#include "harness/stopping.h"
#include "jostle_buildinfo.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const jt_format_names[] = {"table", "osu", "json", "csv", NULL};

static const char csv_head[] = "label,metric,unit,n,min,p25,median,p75,p99,max,mean,stddev,"
                               "ci95_lo,ci95_hi,converged,modes,params";

static int column_width(const char *c) { return (int)(strlen(c) > 14 ? strlen(c) : 14); }

/* Opens a point line: what every point line starts with (docs/records.md). */
static void point_head(jt_json *j, const jt_point *p, const char *metric, const char *unit,
                       long long n, const char *extra)
{
    jt_json_init(j);
    jt_json_object(j);
    jt_json_kstr(j, "type", "point");
    jt_json_key(j, "params");
    const char *params = p->params->buf;
    if (extra) { /* the params object, its closing brace moved after the metric's members */
        size_t l = strlen(params), len = l + strlen(extra) + 2;
        char *merged = malloc(len);
        if (!merged)
            jt_fatal("out of memory writing a point");
        snprintf(merged, len, "%.*s%s%s}", (int)(l - 1), params, l > 2 ? "," : "", extra);
        jt_json_raw(j, merged);
        free(merged);
    } else {
        jt_json_raw(j, params);
    }
    jt_json_kstr(j, "metric", metric);
    jt_json_kstr(j, "unit", unit);
    jt_json_kint(j, "n", n);
}

/* Closes a point line, writes it to the run file, and to stdout in --format json. */
static void emit(jt_ctx *ctx, jt_json *j, FILE *out)
{
    jt_json_end(j);
    jt_record_point(&ctx->rec, j);
    if (out && ctx->format == JT_FMT_JSON)
        fprintf(out, "%s\n", j->buf);
    jt_json_free(j);
}

/* params as one CSV field: quoted, inner quotes doubled. */
static void csv_params(FILE *out, const char *params)
{
    fputc('"', out);
    for (const char *c = params; *c; c++) {
        if (*c == '"')
            fputc('"', out);
        fputc(*c, out);
    }
    fputs("\"\n", out);
}

static void csv_row(FILE *out, const jt_point *p, const char *name, const char *unit,
                    const jt_stats *st, int converged, int modes)
{
    fprintf(out, "%s,%s,%s,%zu,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%s,%d,", p->label,
            name, unit, st->n, st->min, st->p25, st->median, st->p75, st->p99, st->max, st->mean,
            st->stddev, st->ci_lo, st->ci_hi, converged ? "true" : "false", modes);
    csv_params(out, p->params->buf);
}

/* The point's values computed from its metrics' statistics: n is the fewest samples any
 * metric had, median the value; no distribution is claimed. */
static void report_values(jt_ctx *ctx, const jt_point *p, const jt_stats *all, jt_point_result pr,
                          FILE *out)
{
    size_t n = 0;
    for (int m = 0; m < p->nmetrics && m < JT_POINT_METRICS; m++)
        n = m == 0 || all[m].n < n ? all[m].n : n;
    for (int k = 0; k < p->nvalues; k++) {
        const jt_point_value *v = &p->values[k];
        double x = n > 0 ? v->compute(all, p) : NAN;
        if (out && ctx->format == JT_FMT_TABLE)
            fprintf(out, " %*.3f", column_width(v->column), x);
        if (n == 0 || isnan(x)) /* undefined (a zero time): no line */
            continue;
        if (out && ctx->format == JT_FMT_CSV) {
            fprintf(out, "%s,%s,%s,%zu,,,%.9g,,,,,,,,,,", p->label, v->name, v->unit, n, x);
            csv_params(out, p->params->buf);
        }
        jt_json j;
        point_head(&j, p, v->name, v->unit, (long long)n, NULL);
        jt_json_knum(&j, "median", x);
        jt_json_kstr(&j, "formula", v->formula);
        jt_json_knum(&j, "elapsed_s", pr.elapsed);
        emit(ctx, &j, out);
    }
}

/* What a point's metric adds to its line beside the distribution: the operations per
 * sample, the tick, the modes when there are several, the percentiles asked for with their
 * intervals, where its samples are kept; and what the stopping rule's target reached. */
typedef struct metric_extra {
    jt_modes modes;
    jt_levels levels;                  /* n > 0: the median's interval spans two levels */
    int reps;                          /* operations per sample */
    double tick;                       /* the clock's, in the metric's unit (0: none) */
    double hw, floor;                  /* the target's relative half-width, the clock's */
    size_t need;                       /* the samples its 95% interval needs */
    double pct[JT_PERCENTILES_MAX];
    double pct_lo[JT_PERCENTILES_MAX], pct_hi[JT_PERCENTILES_MAX]; /* NAN: too few samples */
    size_t pct_need[JT_PERCENTILES_MAX]; /* the samples an interval needs */
    long long samples_at; /* -1: not kept */
    size_t count;
} metric_extra;

static void extra_json(const jt_ctx *ctx, const metric_extra *x, jt_json *j)
{
    jt_json_kint(j, "reps_per_sample", x->reps);
    if (x->tick > 0)
        jt_json_knum(j, "tick", x->tick);
    if (x->modes.n > 1) {
        jt_json_key(j, "modes");
        jt_json_array(j);
        for (int k = 0; k < x->modes.n; k++) {
            jt_json_object(j);
            jt_json_knum(j, "at", x->modes.m[k].at);
            jt_json_knum(j, "share", x->modes.m[k].share);
            jt_json_end(j);
        }
        jt_json_end(j);
    }
    if (x->levels.n > 0) {
        jt_json_key(j, "levels");
        jt_json_array(j);
        for (int k = 0; k < x->levels.n; k++) {
            const jt_level *l = &x->levels.l[k];
            jt_json_object(j);
            jt_json_knum(j, "median", l->median);
            jt_json_knum(j, "share", l->share);
            jt_json_kpair(j, "ci95", l->lo, l->hi);
            jt_json_end(j);
        }
        jt_json_end(j);
    }
    if (ctx->cfg.npct > 0) {
        char key[32];
        int missing = 0;
        jt_json_key(j, "percentiles");
        jt_json_object(j);
        for (int k = 0; k < ctx->cfg.npct; k++) {
            snprintf(key, sizeof key, "%g", ctx->cfg.pct[k]);
            jt_json_knum(j, key, x->pct[k]);
        }
        jt_json_end(j);
        jt_json_key(j, "percentiles_ci95");
        jt_json_object(j);
        for (int k = 0; k < ctx->cfg.npct; k++) {
            snprintf(key, sizeof key, "%g", ctx->cfg.pct[k]);
            jt_json_key(j, key);
            missing += isnan(x->pct_lo[k]);
            if (isnan(x->pct_lo[k])) {
                jt_json_null(j);
                continue;
            }
            jt_json_pair(j, x->pct_lo[k], x->pct_hi[k]);
        }
        jt_json_end(j);
        if (missing) {
            jt_json_key(j, "percentiles_ci95_needs_n");
            jt_json_object(j);
            for (int k = 0; k < ctx->cfg.npct; k++) {
                snprintf(key, sizeof key, "%g", ctx->cfg.pct[k]);
                if (isnan(x->pct_lo[k]))
                    jt_json_kint(j, key, (long long)x->pct_need[k]);
            }
            jt_json_end(j);
        }
    }
    if (x->samples_at >= 0) {
        jt_json_key(j, "samples");
        jt_json_object(j);
        jt_json_kint(j, "offset", x->samples_at);
        jt_json_kint(j, "count", (long long)x->count);
        jt_json_end(j);
    }
}

/* The metric's samples, kept (in the order measured) when asked, then summarised into st, x. */
static void analyse(jt_ctx *ctx, const jt_metric *mt, const jt_point *p, const jt_series *s,
                    jt_point_result pr, jt_stats *st, metric_extra *x, double *sum)
{
    size_t cap = s->n ? s->n : 1;
    double *v = malloc(cap * sizeof *v), *sorted = malloc(cap * sizeof *sorted);
    if (!v || !sorted)
        jt_fatal("out of memory summarising a point");
    *sum = 0.0;
    for (size_t k = 0; k < s->n; k++) {
        v[k] = mt->derive(s->v[k], p);
        *sum += s->v[k];
    }
    x->count = s->n;
    x->reps = pr.sample_reps > 0 ? pr.sample_reps : 1;
    x->samples_at = ctx->cfg.keep_samples && ctx->writing
                        ? jt_record_samples(&ctx->rec, v, s->n) : -1;
    x->tick = jt_metric_tick(ctx, ctx->bench, p, mt, s->v, s->n, x->reps);
    jt_point_stats(v, s->n, x->tick, sorted, st, &x->modes, &x->levels);
    x->hw = jt_target_halfwidth(ctx, st, v, sorted, &x->floor, &x->need);
    for (int k = 0; k < ctx->cfg.npct; k++) {
        double q = ctx->cfg.pct[k] / 100.0;
        x->pct[k] = jt_quantile_sorted(sorted, s->n, q);
        x->pct_need[k] = jt_quantile_needs_n(st, q);
        jt_quantile_ci95(v, sorted, s->n, q, st->lag1, &x->pct_lo[k], &x->pct_hi[k]);
        jt_widen_to_tick(x->pct[k], x->tick, &x->pct_lo[k], &x->pct_hi[k]);
    }
    free(sorted);
    free(v);
}

void jt_report_point(jt_ctx *ctx, const jt_point *p, jt_series *ser, jt_point_result pr,
                     FILE *out)
{
    if (ctx->rank != 0)
        return;
    jt_record_point_begin(&ctx->rec);
    int table = out && ctx->format == JT_FMT_TABLE;
    if (table)
        fprintf(out, "%-12s", p->label);
    jt_stats first = {0}, all[JT_POINT_METRICS];
    metric_extra first_x = {0};
    double osu_shown[4] = {0};
    int osu_n = p->osu_columns > 1 ? (p->osu_columns < 4 ? p->osu_columns : 4) : 1;
    for (int m = 0; m < p->nmetrics && m < JT_POINT_METRICS; m++) {
        const jt_metric *mt = &p->metrics[m];
        const char *extra = p->params_extra ? p->params_extra[m] : NULL;
        jt_series *s = &ser[mt->series];
        jt_stats st;
        metric_extra x;
        double sum;
        analyse(ctx, mt, p, s, pr, &st, &x, &sum);
        /* OSU's mean: the metric of the mean sample (a bandwidth is bytes over the mean time,
         * not the mean of the bandwidths), as osu_bw prints it. */
        double shown = ctx->print_mean && s->n ? mt->derive(sum / (double)s->n, p) : st.median;
        if (m == 0) {
            first = st;
            first_x = x;
        }
        all[m] = st;
        if (table && !extra)
            fprintf(out, " %*.3f", column_width(mt->column), shown);
        if (m < osu_n)
            osu_shown[m] = shown;
        if (st.n == 0)
            continue;
        /* A statement about the interval (the target's: the median's unless --target), the
         * modes are said on their own; an interval the clock keeps wide is said apart. */
        int converged = st.n >= x.need && x.hw <= ctx->cfg.precision;
        int limited = !converged && jt_resolution_limited(ctx->cfg.precision, x.floor);
        if (out && ctx->format == JT_FMT_CSV)
            csv_row(out, p, mt->name, mt->unit, &st, converged, x.modes.n);
        jt_json j;
        point_head(&j, p, mt->name, mt->unit, (long long)st.n, extra);
        jt_stats_json(&st, &j);
        jt_json_kbool(&j, "converged", converged);
        jt_json_kbool(&j, "resolution_limited", limited);
        extra_json(ctx, &x, &j);
        if (jt_stop_reason_name(pr.stop))
            jt_json_kstr(&j, "stop", jt_stop_reason_name(pr.stop));
        jt_json_knum(&j, "elapsed_s", pr.elapsed);
        emit(ctx, &j, out);
    }
    report_values(ctx, p, all, pr, out);
    jt_record_point_end(&ctx->rec);
    if (table && first.n == 0) /* nothing measured (no compute core): no interval either */
        fprintf(out, " %10s %9s %5s", "0", "-", "-");
    else if (table) {
        char modes[8] = "-"; /* too few samples to tell */
        if (first_x.modes.tested)
            snprintf(modes, sizeof modes, "%d", first_x.modes.n);
        fprintf(out, " %10zu %9.2f %5s", first.n, 100.0 * jt_stats_rel_halfwidth(&first), modes);
    }
    for (int k = 0; table && k < ctx->cfg.npct; k++)
        fprintf(out, " %11.3f", first.n ? first_x.pct[k] : NAN);
    if (table)
        fputc('\n', out);
    /* OSU's layout (osu_util.h: size left in 10 columns, the value in 20 with 2 decimals; the
     * percentiles of -z after it, 20 columns each). */
    if (out && ctx->format == JT_FMT_OSU && p->nmetrics > 0) {
        fprintf(out, "%-10s", p->label);
        for (int m = 0; m < osu_n && m < p->nmetrics; m++)
            fprintf(out, "%20.2f", osu_shown[m]);
        for (int k = 0; k < ctx->cfg.npct; k++)
            fprintf(out, "%20.2f", first.n ? first_x.pct[k] : NAN);
        fputc('\n', out);
    }
    if (out)
        fflush(out);
}

void jt_print_preamble(jt_ctx *ctx, const jt_bench *b, void *st, FILE *out)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    if (ctx->format == JT_FMT_TABLE || ctx->format == JT_FMT_OSU)
        fprintf(out, "# jostle-bench %s %s (git %s), %.*s, %d ranks\n", b->name, JT_VERSION,
                JT_GIT, (int)strcspn(lib, "\n"), lib, ctx->size);
    if ((ctx->format == JT_FMT_TABLE || ctx->format == JT_FMT_OSU) && b->heading)
        fprintf(out, "# %s\n", b->heading(st));
    if (ctx->format == JT_FMT_TABLE || ctx->format == JT_FMT_OSU)
        fprintf(out, "# %s\n", ctx->print_mean
                    ? "each value: the metric of the mean sample, as OSU prints it "
                      "(--statistic median: the median, robust to the outliers of a busy node)"
                    : "each value: the median of the point's samples (--statistic mean: OSU's "
                      "mean of its iterations)");
    if (ctx->format == JT_FMT_CSV)
        fprintf(out, "%s\n", csv_head);
}

void jt_print_header(jt_ctx *ctx, const jt_bench *b, const jt_point *p, FILE *out)
{
    if (ctx->format == JT_FMT_OSU && p->nmetrics > 0) {
        fprintf(out, "# %-8s", b->label_head);
        for (int m = 0; m < (p->osu_columns > 1 ? p->osu_columns : 1) && m < p->nmetrics; m++) {
            /* "Latency (us)", "Bandwidth (MB/s)": the metric's name as OSU heads its column,
             * or the metric's own heading (osu_mbw_mr's "MB/s", "Messages/s"). */
            char name[64], head[96];
            snprintf(name, sizeof name, "%s", p->metrics[m].name);
            name[0] = (char)toupper((unsigned char)name[0]);
            for (char *c = name; *c; c++)
                *c = *c == '_' ? ' ' : *c;
            snprintf(head, sizeof head, "%s (%s)", name, p->metrics[m].unit);
            fprintf(out, "%20s", p->osu_heads && p->osu_heads[m] ? p->osu_heads[m] : head);
        }
        /* OSU 7's -z headings: "P99 Tail Lat(us)", "P99 Tail BW(MB/s)" */
        const char *what = strcmp(p->metrics[0].name, "latency") == 0     ? "Lat"
                           : strcmp(p->metrics[0].name, "bandwidth") == 0 ? "BW"
                                                                          : p->metrics[0].name;
        for (int k = 0; k < ctx->cfg.npct; k++) {
            char head[96];
            snprintf(head, sizeof head, "P%g Tail %s(%s)", ctx->cfg.pct[k], what,
                     p->metrics[0].unit);
            fprintf(out, "%20s", head);
        }
        fputc('\n', out);
    }
    if (ctx->format != JT_FMT_TABLE)
        return;
    fprintf(out, "# %-10s", b->label_head);
    for (int m = 0; m < p->nmetrics; m++)
        if (!p->params_extra || !p->params_extra[m])
            fprintf(out, " %*s", column_width(p->metrics[m].column), p->metrics[m].column);
    for (int k = 0; k < p->nvalues; k++)
        fprintf(out, " %*s", column_width(p->values[k].column), p->values[k].column);
    fprintf(out, " %10s %9s %5s", "Samples", "CI95(+-%)", "Modes");
    for (int k = 0; k < ctx->cfg.npct; k++) {
        char head[32];
        snprintf(head, sizeof head, "P%g(%s)", ctx->cfg.pct[k],
                 p->nmetrics > 0 ? p->metrics[0].unit : "");
        fprintf(out, " %11s", head);
    }
    fputc('\n', out);
}

double jt_metric_us(double sample, const jt_point *p)
{
    (void)p;
    return sample * 1e6;
}

double jt_metric_half_us(double sample, const jt_point *p)
{
    (void)p;
    return sample * 0.5e6;
}

double jt_metric_mbps(double sample, const jt_point *p)
{
    return p->arg[0] / sample / 1e6;
}
