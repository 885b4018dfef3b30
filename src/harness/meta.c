/* The meta line of a run: build, MPI library, machine, options, harness settings, every
 * rank's binding and warnings, and the oversubscription check over all of them. */
#include "harness/internal.h"
#include "topo/bind.h"

#include "core/simulated.h"
#include "core/timer.h"
#include "jostle_buildinfo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *jt_thread_level_name(int l)
{
    switch (l) {
    case MPI_THREAD_SINGLE: return "single";
    case MPI_THREAD_FUNNELED: return "funneled";
    case MPI_THREAD_SERIALIZED: return "serialized";
    default: return "multiple";
    }
}

/* The launch as jostle made it ($JOSTLE_LAUNCH_LINE) and, inside a SLURM job, the job's facts
 * from srun's environment: a figure then names the allocation it was measured in. */
static void launch_json(jt_json *j)
{
    const char *line = getenv("JOSTLE_LAUNCH_LINE");
    if (line)
        jt_json_kstr(j, "launch_line", line);
    if (!getenv("SLURM_JOB_ID"))
        return;
    static const char *const facts[][2] = {
        {"job_id", "SLURM_JOB_ID"},         {"step_id", "SLURM_STEP_ID"},
        {"nodelist", "SLURM_JOB_NODELIST"}, {"partition", "SLURM_JOB_PARTITION"},
        {"ntasks", "SLURM_NTASKS"},         {"mpi_plugin", "SLURM_MPI_TYPE"},
    };
    jt_json_key(j, "slurm");
    jt_json_object(j);
    for (size_t i = 0; i < sizeof facts / sizeof facts[0]; i++)
        jt_json_kstr(j, facts[i][0], getenv(facts[i][1])); /* null when srun did not set it */
    jt_json_end(j);
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

/* "environment": rank 0's host's; "environment_hosts": each other host whose environment
 * differs from it (the same variables are usually exported to every rank). */
static void environment_json(jt_ctx *ctx, jt_json *j, char **hosts, char **envs)
{
    jt_json_key(j, "environment");
    jt_json_raw(j, envs[0]);
    int open_ = 0;
    for (int r = 1; r < ctx->size; r++) {
        int seen = strcmp(envs[r], envs[0]) == 0;
        for (int q = 1; q < r && !seen; q++)
            seen = strcmp(hosts[q], hosts[r]) == 0 && strcmp(envs[q], envs[r]) == 0;
        if (seen)
            continue;
        if (!open_++) {
            jt_json_key(j, "environment_hosts");
            jt_json_object(j);
        }
        char key[300];
        snprintf(key, sizeof key, "%s (rank %d)", hosts[r], r);
        jt_json_key(j, key);
        jt_json_raw(j, envs[r]);
    }
    if (open_)
        jt_json_end(j);
}

static void harness_json(jt_ctx *ctx, jt_json *j)
{
    jt_json_key(j, "harness");
    jt_json_object(j);
    jt_json_kint(j, "min_reps", ctx->cfg.min_reps);
    jt_json_kint(j, "max_reps", ctx->cfg.max_reps);
    jt_json_knum(j, "precision", ctx->cfg.precision);
    jt_json_knum(j, "max_time_s", ctx->cfg.max_time);
    jt_json_kint(j, "warmup", ctx->cfg.warmup);
    jt_json_kint(j, "skip_points", ctx->cfg.skip_points);
    jt_json_knum(j, "timer_resolution_s", jt_ctx_timer_tick(ctx));
    jt_json_knum(j, "timer_overhead_s", ctx->timer_overhead);
    jt_json_kstr(j, "clock_overhead", ctx->cfg.clock_subtract ? "subtract" : "keep");
    jt_json_kstr(j, "pages", jt_pages_names[ctx->cfg.pages]);
    jt_json_kstr(j, "timer", ctx->cfg.clock_subtract
                                 ? "clock_gettime(CLOCK_MONOTONIC), overhead subtracted per sample"
                                 : "clock_gettime(CLOCK_MONOTONIC), one reading per sample kept");
    jt_json_kstr(j, "ci", "median, distribution-free order statistics, 95%; batch medians "
                          "where the samples' lag-1 autocorrelation is significant; spanning "
                          "both levels where the median lies between two; never narrower "
                          "than half a tick each side");
    jt_json_kstr(j, "stop", "at precision, the clock's limit, or when more samples cannot "
                            "help: not narrowing as 1/sqrt(n), or two levels; else max-time, "
                            "max-reps (docs/statistics.md, \"Stopping\")");
    jt_json_kstr(j, "modes", "Gaussian kernel density of log samples, Silverman's bandwidth, "
                             "at least the tick; a mode when its valley is 4 standard errors "
                             "and 20% below it, it holds 5% of the samples and is 3 ticks from "
                             "the next (docs/statistics.md)");
    if (ctx->cfg.sample_reps > 0)
        jt_json_kint(j, "sample_reps", ctx->cfg.sample_reps);
    else
        jt_json_kstr(j, "sample_reps", "auto");
    jt_json_knum(j, "min_sample_ticks", ctx->cfg.min_sample_ticks);
    if (ctx->cfg.target > 0) {
        char t[32];
        snprintf(t, sizeof t, "p%g", ctx->cfg.target);
        jt_json_kstr(j, "target", t);
    } else {
        jt_json_kstr(j, "target", "median");
    }
    jt_json_key(j, "order");
    jt_json_object(j);
    jt_json_kstr(j, "kind", jt_order_names[ctx->cfg.order.kind]);
    if (ctx->cfg.order.kind == JT_ORDER_SHUFFLED)
        jt_json_kint(j, "seed", (long long)ctx->cfg.order.seed);
    jt_json_end(j);
    if (ctx->cfg.npct > 0) {
        jt_json_key(j, "percentiles");
        jt_json_array(j);
        for (int k = 0; k < ctx->cfg.npct; k++)
            jt_json_num(j, ctx->cfg.pct[k]);
        jt_json_end(j);
    }
    if (ctx->cfg.keep_samples && ctx->writing) {
        jt_json_key(j, "samples");
        jt_json_object(j);
        jt_json_kstr(j, "file", jt_record_samples_name(&ctx->rec));
        jt_json_kstr(j, "format", "float64 little-endian, each point line's samples at its "
                                  "offset, in the order measured");
        jt_json_end(j);
    }
    jt_json_end(j);
}

static void write_meta(jt_ctx *ctx, const jt_bench *b, void *st, char **hosts, char **binds,
                       char **envs)
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
    jt_json_kstr(&j, "thread_level", jt_thread_level_name(ctx->thread_level));
    jt_transport_json(&j);
    jt_json_end(&j);

    launch_json(&j);
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
    harness_json(ctx, &j);
    environment_json(ctx, &j, hosts, envs);
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
void jt_gather_meta(jt_ctx *ctx, const jt_bench *b, void *st, const char *cores)
{
    char **hosts = jt_gather_text(ctx, ctx->host);
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
    char **binds = jt_gather_text(ctx, bj.buf);
    jt_json_free(&bj);
    char **corel = jt_gather_text(ctx, cores);
    jt_json ej;
    jt_json_init(&ej);
    jt_environment_json(&ej);
    char **envs = jt_gather_text(ctx, ej.buf);
    jt_json_free(&ej);
    char mine[JT_WARN_MAX * 257] = "";
    for (int i = 0; i < ctx->nwarn; i++) {
        strcat(mine, ctx->warn[i]);
        strcat(mine, "\n");
    }
    char **warns = jt_gather_text(ctx, ctx->rank == 0 ? "" : mine);
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
        write_meta(ctx, b, st, hosts, binds, envs);
    }
    jt_free_text(ctx, hosts);
    jt_free_text(ctx, binds);
    jt_free_text(ctx, corel);
    jt_free_text(ctx, envs);
    jt_free_text(ctx, warns);
}
