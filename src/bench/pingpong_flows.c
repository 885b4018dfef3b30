/* pingpong --pairs N / --comm-threads T: every flow at once (comm/flows.h), the aggregate as
 * osu_mbw_mr computes it and each flow's distribution beside it (docs/cli.md, "pairs and
 * threads"). */
#include "bench/pingpong_flows.h"

#include "core/errors.h"
#include "topo/nic_place.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int jt_pp_flows_wanted(const jt_opts *o)
{
    return jt_opt_given(o, "pairs") || jt_opt_given(o, "comm-threads");
}

int jt_pp_flows_thread_level(const jt_opts *o)
{
    return jt_opt_given(o, "comm-threads") ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE;
}

void jt_pp_metrics(const jt_bench *b, jt_p2p_mode mode, jt_metric *out)
{
    static const char *const rtt[] = {"latency", "bandwidth", "rtt"};
    static const char *const window[] = {"bandwidth", "message_rate", "window_time"};
    for (int k = 0; k < 3; k++)
        out[k] = *jt_metric_find(b, mode == JT_P2P_PINGPONG ? rtt[k] : window[k]);
}

/* Core and NUMA node of each of this rank's flows.  Without --comm-core, or with auto, the
 * NIC-aware placement (jt_place_comm) of communicating thread k = local rank x threads + t:
 * the NIC's node first, then the nearest nodes; with a core, thread t goes t cores further. */
static void place(jt_ctx *ctx, jt_pp_flows *m, int *cores, int *numas)
{
    const char *cc = jt_opt_str(&ctx->opts, "comm-core");
    int autop = !cc || strcmp(cc, "auto") == 0, ncores = jt_topo_ncores(&ctx->topo);
    char why[1024];
    for (int t = 0; t < m->per_rank; t++) {
        if (autop) {
            jt_place_comm(&ctx->topo, jt_opt_str(&ctx->opts, "nic"), (jt_favor)ctx->favor,
                          ctx->local_rank * m->per_rank + t, &cores[t], &numas[t], why,
                          sizeof why);
        } else {
            cores[t] = ncores > 0 ? (ctx->comm_core + t) % ncores : 0;
            numas[t] = ctx->comm_mem;
        }
        if (jt_opt_given(&ctx->opts, "comm-mem"))
            numas[t] = ctx->comm_mem;
    }
    snprintf(m->placement, sizeof m->placement, "%s",
             autop ? "auto: communicating thread k = local rank x threads + t by the NIC-aware "
                     "placement (jostle place --comm)"
                   : "--comm-core: thread t of a rank on its core + t");
}

void jt_pp_flows_options(const jt_opts *o, jt_p2p_mode mode, int *pairs, int *threads)
{
    *pairs = jt_opt_given(o, "pairs") ? (int)jt_opt_long(o, "pairs", 1, JT_FLOWS_MAX) : 1;
    *threads = jt_opt_given(o, "comm-threads")
                   ? (int)jt_opt_long(o, "comm-threads", 1, JT_FLOWS_MAX_THREADS)
                   : 0;
    if (jt_pp_flows_wanted(o) && (mode == JT_P2P_PUT || mode == JT_P2P_GET))
        jt_usage_error("--%s is not allowed with --mode %s: the one-sided modes run between "
                       "ranks 0 and 1 only; allowed: pingpong, stream, bidir",
                       jt_opt_given(o, "pairs") ? "pairs" : "comm-threads", jt_p2p_mode_names[mode]);
    int nflows = *pairs * (*threads > 0 ? *threads : 1);
    if (nflows > JT_FLOWS_MAX)
        jt_usage_error("--pairs %d with --comm-threads %d is not allowed: %d flows, at most %d",
                       *pairs, *threads, nflows, JT_FLOWS_MAX);
}

void jt_pp_flows_read(jt_ctx *ctx, jt_p2p_mode mode, int *pairs, int *threads)
{
    jt_pp_flows_options(&ctx->opts, mode, pairs, threads);
    if (2 * *pairs > ctx->size)
        jt_usage_error("--pairs %d is not allowed with %d ranks: pair i is rank i with rank "
                       "i+%d, so at most %d pairs", *pairs, ctx->size, *pairs, ctx->size / 2);
    if (*threads > 0 && ctx->thread_level < MPI_THREAD_MULTIPLE) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(lib, &len);
        jt_usage_error("--comm-threads %d is not allowed: its threads call MPI at once, which "
                       "needs MPI_THREAD_MULTIPLE, and %.*s granted %s", *threads,
                       (int)strcspn(lib, "\n"), lib, jt_thread_level_name(ctx->thread_level));
    }
}

jt_pp_flows *jt_pp_flows_setup(jt_ctx *ctx, jt_p2p_mode mode, jt_p2p_buffers buffers, int window,
                               int check, size_t arena, size_t frames)
{
    jt_pp_flows *m = calloc(1, sizeof *m);
    jt_pp_flows_read(ctx, mode, &m->pairs, &m->threads);
    m->per_rank = m->threads > 0 ? m->threads : 1;
    m->nflows = m->pairs * m->per_rank;
    m->mode = mode;
    m->buffers = buffers;
    m->window = window;
    if (ctx->rank == 0 && ctx->size > 2 * m->pairs)
        jt_warn(ctx, "ranks %d to %d take no part in pingpong --pairs %d and wait idle",
                2 * m->pairs, ctx->size - 1, m->pairs);
    int cores[JT_FLOWS_MAX_THREADS], numas[JT_FLOWS_MAX_THREADS];
    place(ctx, m, cores, numas);
    jt_flows_init(&m->f, &ctx->topo, ctx->comm, m->pairs, m->threads, mode, buffers, window,
                  check, arena, frames, cores, numas);
    /* On several hosts the pairs are meant to cross the network, as osu_mbw_mr's do with its
     * ranks placed by block; a launcher that places them round-robin pairs ranks of one host. */
    char partner[sizeof ctx->host] = "";
    if (m->f.side >= 0)
        MPI_Sendrecv(ctx->host, (int)sizeof ctx->host, MPI_CHAR, m->f.peer, 0, partner,
                     (int)sizeof partner, MPI_CHAR, m->f.peer, 0, ctx->comm, MPI_STATUS_IGNORE);
    if (m->f.side == 0 && ctx->local_size < ctx->size && strcmp(partner, ctx->host) == 0)
        jt_warn(ctx, "pair %d (ranks %d and %d) is on one host, %s, in a job over several hosts: "
                "place ranks by block (rank i and i+%d on different hosts) for pairs that cross "
                "the network", m->f.pair, ctx->rank, m->f.peer, ctx->host, m->pairs);
    for (int t = 0; m->f.side >= 0 && t < m->per_rank; t++) {
        char role[32];
        snprintf(role, sizeof role, "comm_thread_%d", t);
        if (t == 0)
            jt_ctx_bound_comm(ctx, &m->f.flow[0].bind, &m->f.flow[0].buf);
        else
            jt_ctx_bound_role(ctx, role, &m->f.flow[t].bind, &m->f.flow[t].buf);
    }
    m->bench = ctx->bench;
    for (int f = 0; f < m->nflows; f++) {
        snprintf(m->extra[f], sizeof m->extra[f], "\"pair\":%d,\"thread\":%d", f / m->per_rank,
                 f % m->per_rank);
        m->extras[3 + f] = m->extra[f];
    }
    return m;
}

/* The aggregate's metrics first (the harness judges convergence on it), then one line per
 * flow in the records (params gain its pair and thread), none in the table: entries of
 * pingpong's table, each flow's on its own series.  Made at the first point, as contention
 * runs flows but reports none of these. */
static void flow_metrics(jt_pp_flows *m)
{
    jt_pp_metrics(m->bench, m->mode, m->m);
    const jt_metric *pair =
        jt_metric_find(m->bench, m->mode != JT_P2P_PINGPONG ? "pair_bandwidth" : "pair_latency");
    for (int f = 0; f < m->nflows; f++) {
        m->m[3 + f] = *pair;
        m->m[3 + f].series = 1 + f;
    }
}

void jt_pp_flows_point(jt_pp_flows *m, uint64_t b, jt_point *p)
{
    int w = jt_p2p_window_for(m->mode, m->buffers, m->window, b);
    snprintf(p->label, sizeof p->label, "%llu", (unsigned long long)b);
    p->arg[0] = (double)b;
    p->arg[1] = m->mode == JT_P2P_PINGPONG ? 2 : (double)w * (m->mode == JT_P2P_BIDIR ? 2 : 1);
    p->arg[2] = m->nflows;
    if (!m->m[0].name)
        flow_metrics(m);
    p->metrics = m->m;
    p->nmetrics = 3 + m->nflows;
    static const char *const mbw_mr[] = {"MB/s", "Messages/s"}; /* osu_mbw_mr's columns */
    p->osu_columns = m->mode == JT_P2P_PINGPONG ? 1 : 2;
    p->osu_heads = m->mode == JT_P2P_PINGPONG ? NULL : mbw_mr;
    p->params_extra = m->extras;
    jt_json_kint(p->params, "size", (long long)b);
    jt_json_kstr(p->params, "mode", jt_p2p_mode_names[m->mode]);
    jt_json_kint(p->params, "window", m->mode == JT_P2P_PINGPONG ? 1 : w);
    jt_json_kstr(p->params, "buffers", jt_p2p_buffers_names[m->buffers]);
    jt_pp_flows_params(m, p->params);
}

void jt_pp_flows_run(jt_ctx *ctx, jt_pp_flows *m, uint64_t bytes, int touch, jt_series *agg,
                     jt_series *each, size_t n)
{
    jt_flows_run(&m->f, bytes, n, touch);
    /* Every rank's samples reach rank 0, outside the timed loops; the senders are ranks
     * 0 to pairs-1, so rank r's flow t is flow r x threads + t. */
    size_t per = (size_t)m->per_rank * n;
    double *mine = malloc(per * sizeof *mine);
    for (int t = 0; t < m->per_rank; t++)
        memcpy(mine + (size_t)t * n, m->f.flow[t].times, n * sizeof *mine);
    if (ctx->rank == 0 && m->gathered_cap < per * (size_t)ctx->size) {
        m->gathered_cap = per * (size_t)ctx->size;
        free(m->gathered);
        m->gathered = malloc(m->gathered_cap * sizeof *m->gathered);
    }
    MPI_Gather(mine, (int)per, MPI_DOUBLE, m->gathered, (int)per, MPI_DOUBLE, 0, ctx->comm);
    free(mine);
    if (ctx->rank != 0)
        return;
    for (size_t k = 0; k < n; k++) {
        double sum = 0.0;
        for (int f = 0; f < m->nflows; f++) {
            double v = m->gathered[(size_t)f * n + k]; /* rank f / per_rank, thread f % per_rank */
            if (each)
                jt_series_push(&each[f], v);
            sum += v;
        }
        jt_series_push(agg, sum / m->nflows);
    }
}

void jt_pp_flows_compute_cores(const jt_ctx *ctx, const jt_pp_flows *m, int n, int *cores)
{
    int extra = m->per_rank - 1, *all = calloc((size_t)(n + extra + 1), sizeof *all), k = 0;
    jt_place_compute_cores(jt_topo_ncores(&ctx->topo), ctx->local_rank, ctx->local_size,
                           m->f.flow[0].core, n + extra, all);
    for (int i = 0; i < n + extra && k < n; i++) {
        int taken = 0;
        for (int t = 1; t < m->per_rank; t++)
            taken |= all[i] == m->f.flow[t].core;
        if (!taken || n + extra - i <= n - k) /* past the free ones: pile on as the share does */
            cores[k++] = all[i];
    }
    free(all);
}

void jt_pp_flows_params(const jt_pp_flows *m, jt_json *j)
{
    jt_json_kint(j, "pairs", m->pairs);
    jt_json_kint(j, "comm_threads", m->threads);
}

void jt_pp_flows_meta(const jt_pp_flows *m, jt_json *j)
{
    jt_json_key(j, "flows");
    jt_json_object(j);
    jt_json_kint(j, "pairs", m->pairs);
    jt_json_kint(j, "comm_threads", m->threads);
    jt_json_kint(j, "flows", m->nflows);
    jt_json_kstr(j, "pairing", "pair i: rank i with rank i + pairs (osu_mbw_mr's); thread t with "
                               "thread t of the partner, on its own communicator");
    jt_json_kstr(j, "sync", m->threads > 0 ? "a barrier of every rank before each batch, then "
                                             "each thread's samples (osu_latency_mt)"
                            : m->mode == JT_P2P_PINGPONG
                                ? "a barrier of every rank before each batch (osu_multi_lat)"
                            : m->mode == JT_P2P_STREAM
                                ? "two barriers of every rank before each window, a 1-byte "
                                  "acknowledgement after it (osu_mbw_mr, OMB 2024)"
                                : "two barriers of every rank before each window (osu_mbw_mr, "
                                  "OMB 2024)");
    jt_json_kstr(j, "aggregate", "per sample, the mean over flows of side 0's time; bandwidth = "
                                 "flows x bytes x messages / it, message_rate = flows x messages "
                                 "/ it (osu_mbw_mr's, with --statistic mean)");
    jt_json_kstr(j, "placement", m->placement);
    jt_json_end(j);
}

void jt_pp_flows_free(jt_pp_flows *m)
{
    if (!m)
        return;
    jt_flows_free(&m->f);
    free(m->gathered);
    free(m);
}
