/* Placement resolution: the per-rank values of --comm-core and --comm-mem, near/far/auto
 * read against the NIC's NUMA node (topo/nic_place.h gives the advice; the harness applies
 * it). */
#include "harness/internal.h"

#include "core/errors.h"
#include "topo/bind.h"
#include "topo/nic_place.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The rank's entry of a per-rank list: one value for all, or exactly one per rank. */
static int list_entry(jt_ctx *ctx, const char *name, const char *list, char *out, size_t len)
{
    int n = 1;
    for (const char *c = list; *c; c++)
        n += *c == ',';
    if (n != 1 && n != ctx->size) { /* extra entries would never be used, nor checked */
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

void jt_validate_placement(const jt_opts *o, const jt_topo *tp)
{
    const char *nic = jt_opt_str(o, "nic");
    char err[256], val[64];
    jt_nic found;
    if (nic && jt_place_nic(tp, nic, &found, err, sizeof err))
        jt_usage_error("%s", err);
    static const char *const names[] = {"comm-core", "comm-mem"};
    for (int k = 0; k < 2; k++) {
        const char *list = jt_opt_str(o, names[k]);
        int max = k == 0 ? jt_topo_ncores(tp) : jt_topo_nnuma(tp), v;
        for (const char *p = list; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
            snprintf(val, sizeof val, "%.*s", (int)strcspn(p, ","), p);
            if (strcmp(val, "near") == 0 || strcmp(val, "far") == 0 || strcmp(val, "auto") == 0 ||
                (k == 1 && strcmp(val, "interleave") == 0) ||
                (parse_index(val, &v) == 0 && v < max))
                continue;
            jt_usage_error("--%s '%s' is not allowed: '%s' is not %s from 0 to %d%s", names[k],
                           list, val, k == 0 ? "a core" : "a NUMA node", max - 1,
                           k == 0 ? ", near, far or auto" : ", near, far, auto or interleave");
        }
    }
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

void jt_resolve_placement(jt_ctx *ctx)
{
    char err[512] = "", val[64], nicerr[256] = "";
    int ncores = jt_topo_ncores(&ctx->topo);
    const char *nicname = jt_opt_str(&ctx->opts, "nic");
    jt_nic nic;
    ctx->nic_numa = ctx->far_numa = -1;
    if (jt_place_nic(&ctx->topo, nicname, &nic, nicerr, sizeof nicerr) == 0) {
        ctx->nic_numa = nic.numa;
        ctx->far_numa = jt_place_far_numa(&ctx->topo, nic.numa_set);
    }
    jt_check_all(ctx, nicname && ctx->nic_numa < 0 ? nicerr : NULL);
    /* auto: the advice of jostle place --comm (which prints the reason kept in why here), local
     * rank k being comm thread k. */
    char why[1024];
    jt_favor favor = (jt_favor)jt_opt_choice(&ctx->opts, "favor");
    ctx->favor = (int)favor;
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
        jt_warn(ctx, "every NUMA node is near the NIC: near and far are the same node");
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
