/* overlap's options: the table, their reading and checking (pure: no MPI, no allocation but
 * the sizes), and the placement of the rank and its progress thread once the ranks are known. */
#include "bench/overlap.h"

#include "core/errors.h"
#include "core/sizes.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef jt_overlap_state state;

static const char *const idle_names[] = {"spin", "sleep", NULL};
const char *const jt_overlap_mode_names[] = {"none", "polling", "thread", "async", NULL};

const jt_opt_spec jt_overlap_options[] = {
    {"collectives", "LIST", "ialltoall", "any of ialltoall, igather, iscatter, ibcast, "
                                         "iallgather, ireduce, iallreduce, isendrecv", NULL},
    {"kernel", "NAME", "cpu", "work during the overlap: cpu (cache-resident, like IMB and OSU) "
                              "or triad (memory-bound)", jt_work_names},
    {"policy", "NAME", "scatter", "rank placement on its host: packed, scatter (NUMA-blind) or "
                                  "numa (Taboada's algorithm 1); --comm-core overrides it",
     jt_rank_policy_names},
    {"progress-mode", "MODE", "none", "none (the library's own progress), polling (MPI_Test "
                                      "every --poll-us during the work), thread (a progress "
                                      "thread per rank, MPI_THREAD_MULTIPLE) or async (MPICH's "
                                      "own progress thread)", jt_overlap_mode_names},
    {"thread-core", "WHERE", "numa", "progress thread's core: bind (the rank's), next, numa "
                                     "(algorithm 2: a free core of the rank's node) or N", NULL},
    {"thread-idle", "HOW", "spin", "an idle progress thread spins, yielding, or sleeps (a wake-up "
                                   "costs microseconds, a time slice when its core is busy)",
     idle_names},
    {"poll-us", "F", "10", "microseconds between MPI_Test calls in polling mode", NULL},
    {"batch", "N", "16", "samples of each time run back to back after one barrier (IMB-NBC); 1 "
                         "puts a barrier before every sample (OSU)", NULL},
    {"root", "R", "0", "root of igather, iscatter, ibcast, ireduce", NULL},
    {"array-bytes", "B", NULL, "triad's arrays per rank [3 x last-level cache / ranks of the "
                               "host, at least 24M]", NULL},
    {"oversubscribe", NULL, NULL, "allow more ranks than cores (marked in the records)", NULL},
    {"fallback", NULL, NULL, "without MPI_THREAD_MULTIPLE, poll instead of a progress thread", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static void parse_ops(state *s, const char *list)
{
    char *copy = strdup(list), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int k = jt_nbc_find(t);
        if (k < 0 || s->nops == JT_NBC_COUNT_)
            jt_usage_error("--collectives '%s' is not allowed: '%s' is not one of ialltoall, "
                           "igather, iscatter, ibcast, iallgather, ireduce, iallreduce, "
                           "isendrecv", list, t);
        s->ops[s->nops++] = k;
    }
    free(copy);
    if (s->nops == 0)
        jt_usage_error("--collectives is empty");
}

void jt_overlap_place(jt_ctx *ctx, state *s)
{
    char err[512] = "";
    if (jt_layout_from_hwloc(&s->layout, ctx->topo.t, err, sizeof err))
        jt_usage_error("%s", err);
    int L = ctx->local_size, l = ctx->local_rank, ncores = s->layout.ncores;
    snprintf(err, sizeof err, "%d ranks on host %s, which has %d cores: allowed only with "
             "--oversubscribe", L, ctx->host, ncores);
    jt_check_all(ctx, L > ncores && !jt_opt_flag(&ctx->opts, "oversubscribe") ? err : NULL);
    s->rank_core = jt_opt_given(&ctx->opts, "comm-core")
                       ? ctx->comm_core
                       : s->layout.core[jt_placement_rank(&s->layout, s->policy, l, L)];
    const char *tc = jt_opt_str(&ctx->opts, "thread-core");
    s->thread_pol = jt_progress_policy_find(tc);
    char *end;
    long n = strtol(tc, &end, 10);
    err[0] = '\0';
    int moved = jt_opt_given(&ctx->opts, "comm-core");
    if (moved && s->thread_pol == JT_PROG_NUMA && s->mode != MODE_THREAD)
        s->thread_core = s->rank_core; /* no thread */
    else if (moved && s->thread_pol == JT_PROG_NUMA)
        snprintf(err, sizeof err, "--thread-core numa is not allowed with --comm-core: "
                 "algorithm 2 places threads by the policy's rank map; use bind, next or a core");
    else if (moved && s->thread_pol >= 0) /* bind, next: relative to the core given */
        s->thread_core = s->thread_pol == JT_PROG_BIND ? s->rank_core
                                                           : (s->rank_core + 1) % ncores;
    else if (s->thread_pol >= 0)
        s->thread_core = s->layout.core[jt_placement_progress(&s->layout, s->policy,
                                                              s->thread_pol, l, L)];
    else if (end != tc && !*end && n >= 0 && n < ncores)
        s->thread_core = (int)n;
    else
        snprintf(err, sizeof err, "--thread-core '%s' is not allowed on %s: expected bind, next, "
                 "numa or a core from 0 to %d", tc, ctx->host, ncores - 1);
    jt_check_all(ctx, err[0] ? err : NULL);
}

void jt_overlap_read(const jt_opts *o, const jt_topo *tp, void *st)
{
    state *s = st;
    char err[256];
    s->nsizes = jt_bench_sizes(o, &jt_bench_overlap, &s->sizes);
    parse_ops(s, jt_opt_str(o, "collectives"));
    s->kind = jt_opt_choice(o, "kernel");
    s->policy = jt_opt_choice(o, "policy");
    s->mode = jt_opt_choice(o, "progress-mode");
    s->idle = jt_opt_choice(o, "thread-idle");
    s->poll_s = jt_opt_double(o, "poll-us", 0.0, 1e6) * 1e-6;
    s->root = (int)jt_opt_long(o, "root", 0, INT_MAX);
    s->batch = (int)jt_opt_long(o, "batch", 1, MAX_BATCH);
    const char *tc = jt_opt_str(o, "thread-core");
    char *end;
    long n = strtol(tc, &end, 10);
    if (jt_progress_policy_find(tc) < 0 && (end == tc || *end || n < 0 || (tp && n >= jt_topo_ncores(tp))))
        jt_usage_error(tp ? "--thread-core '%s' is not allowed: expected bind, next, numa or a "
                            "core from 0 to %d"
                          : "--thread-core '%s' is not allowed: expected bind, next, numa or a "
                            "core number", tc, tp ? jt_topo_ncores(tp) - 1 : 0);
    if (s->mode == MODE_ASYNC) { /* allowed before MPI_Init (MPI-3.0, 8.1.1) */
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(lib, &len);
        if (!strstr(lib, "MPICH"))
            jt_usage_error("--progress-mode async is MPICH's own progress thread (%s=1) and "
                           "this library is %.*s: use none, polling or thread", ASYNC_CVAR,
                           (int)strcspn(lib, ",\n"), lib);
    }
    if (jt_opt_given(o, "array-bytes")) {
        uint64_t v;
        if (jt_parse_bytes(jt_opt_str(o, "array-bytes"), &v, err, sizeof err) || v < 4096)
            jt_usage_error("--array-bytes '%s' is not allowed: expected a byte count of at least "
                           "4K", jt_opt_str(o, "array-bytes"));
        s->array = (size_t)v;
    }
}
