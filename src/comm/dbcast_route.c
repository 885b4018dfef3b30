/* jt_dbcast routing trees and automatic choice; see dbcast_route.h, docs/dbcast.md. */
#include "comm/dbcast_route.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int ceil_log2(long long x) /* smallest d with 2^d >= x, x >= 1 */
{
    int d = 0;
    while ((1LL << d) < x)
        d++;
    return d;
}

static int floor_log2(long long x) /* x >= 1 */
{
    int d = 0;
    while ((1LL << (d + 1)) <= x)
        d++;
    return d;
}

int jt_dbcast_route_is_pipelined(jt_dbcast_routing r)
{
    return r == JT_ROUTE_PIPELINE_CHAIN || r == JT_ROUTE_PIPELINE_TREE;
}

int jt_dbcast_route_max_children(jt_dbcast_routing r, int n)
{
    if (n <= 0)
        return 0;
    switch (r) {
    case JT_ROUTE_FLAT: return n;
    case JT_ROUTE_CHAIN:
    case JT_ROUTE_PIPELINE_CHAIN: return 1;
    case JT_ROUTE_PIPELINE_TREE: return n < 2 ? n : 2;
    case JT_ROUTE_BINOMIAL: return ceil_log2((long long)n + 1);
    default: return 0;
    }
}

int jt_dbcast_route_children(jt_dbcast_routing r, int n, jt_dbcast_route_child *out)
{
    if (n < 0)
        return -1;
    switch (r) {
    case JT_ROUTE_FLAT:
        for (int i = 0; i < n; i++) {
            out[i].child = i;
            out[i].sub_off = i + 1;
            out[i].sub_len = 0;
        }
        return n;
    case JT_ROUTE_CHAIN:
    case JT_ROUTE_PIPELINE_CHAIN:
        if (n == 0)
            return 0;
        out[0].child = 0;
        out[0].sub_off = 1;
        out[0].sub_len = n - 1;
        return 1;
    case JT_ROUTE_BINOMIAL: {
        /* Nodes: the caller (virtual 0) and list[i] (virtual i+1), N = n + 1. The
         * caller keeps the lower ceil(N/2) nodes and hands the upper half to its
         * first node, then repeats on what it kept: the largest subtree goes first. */
        int k = 0;
        int N = n + 1;
        while (N > 1) {
            int keep = (N + 1) / 2;
            out[k].child = keep - 1;
            out[k].sub_off = keep;
            out[k].sub_len = N - 1 - keep;
            k++;
            N = keep;
        }
        return k;
    }
    case JT_ROUTE_PIPELINE_TREE: {
        /* Binary tree: each node sends every segment to at most two children, so
         * its outgoing link carries twice the data, never log(n) times. */
        if (n == 0)
            return 0;
        int left = (n + 1) / 2; /* child 0 and left-1 below it */
        out[0].child = 0;
        out[0].sub_off = 1;
        out[0].sub_len = left - 1;
        if (n - left == 0)
            return 1;
        out[1].child = left;
        out[1].sub_off = left + 1;
        out[1].sub_len = n - left - 1;
        return 2;
    }
    default:
        return -1;
    }
}

int jt_dbcast_route_depth(jt_dbcast_routing r, int n)
{
    if (n <= 0)
        return 0;
    switch (r) {
    case JT_ROUTE_FLAT: return 1;
    case JT_ROUTE_CHAIN:
    case JT_ROUTE_PIPELINE_CHAIN: return n;
    case JT_ROUTE_BINOMIAL: /* hops; the ROUNDS of sends are ceil(log2(n+1)) */
    case JT_ROUTE_PIPELINE_TREE: return floor_log2((long long)n + 1);
    default: return -1;
    }
}

void jt_dbcast_model_default(jt_dbcast_model *m)
{
    /* Fitted (least squares on log time, docs/dbcast.md) to 1 MiB broadcasts of every
     * routing and segment size on jostle's simulated cluster (SimGrid SMPI, 10 Gbps and
     * 1 us links), where the large latency stands for SMPI's latency factors (x3.5 to
     * x11.6 on two links) and the bandwidth for its bandwidth factors (0.70 to 0.94).
     * Forwarding is immediate there (F fits to 0); 1 us stands for a real engine.
     * Only the ratios matter for the choice: set jt_dbcast_cfg.model elsewhere. */
    m->latency = 40e-6;
    m->overhead = 3e-6;
    m->bandwidth = 0.93e9;
    m->forward_delay = 1.0e-6;
}

static size_t clamp_seg(size_t s)
{
    if (s < JT_DBCAST_MIN_AUTO_SEGMENT)
        s = JT_DBCAST_MIN_AUTO_SEGMENT;
    if (s > JT_DBCAST_MAX_AUTO_SEGMENT)
        s = JT_DBCAST_MAX_AUTO_SEGMENT;
    return (s + 4095) / 4096 * 4096;
}

size_t jt_dbcast_route_segment(jt_dbcast_routing r, size_t bytes, int n, size_t seg_cfg,
                               const jt_dbcast_model *m)
{
    if (seg_cfg)
        return seg_cfg > JT_DBCAST_MAX_SEGMENT ? JT_DBCAST_MAX_SEGMENT : seg_cfg;
    if (!jt_dbcast_route_is_pipelined(r))
        return bytes < JT_DBCAST_MAX_SEGMENT ? (bytes ? bytes : 1) : JT_DBCAST_MAX_SEGMENT;
    /* T(s) ~ k*m*o/s + hops*k*s/B + const (k = 1 for a chain, 2 for a binary tree):
     * optimum s = sqrt(m * o * B / hops). */
    double hops = r == JT_ROUTE_PIPELINE_CHAIN ? (n > 1 ? n - 1 : 1)
                                               : jt_dbcast_route_depth(r, n);
    if (hops < 1)
        hops = 1;
    double s = sqrt((double)bytes * m->overhead * m->bandwidth / hops);
    return clamp_seg((size_t)s);
}

double jt_dbcast_route_cost(jt_dbcast_routing r, size_t bytes, int n, size_t seg,
                            const jt_dbcast_model *m)
{
    if (n <= 0)
        return 0.0;
    double beta = 1.0 / m->bandwidth;
    double msg = m->overhead + beta * (double)bytes;       /* injection of the whole message */
    double hop = m->latency + msg;                          /* one hop, whole message */
    double F = m->forward_delay;
    switch (r) {
    case JT_ROUTE_FLAT:
        return m->latency + n * msg;
    case JT_ROUTE_BINOMIAL: {
        /* ceil(log2(n+1)) rounds of sends; at most depth forwarding hops */
        int rounds = ceil_log2((long long)n + 1);
        int d = jt_dbcast_route_depth(r, n);
        return rounds * hop + (d - 1) * F;
    }
    case JT_ROUTE_CHAIN:
        return n * hop + (n - 1) * F;
    case JT_ROUTE_PIPELINE_CHAIN:
    case JT_ROUTE_PIPELINE_TREE: {
        if (seg == 0)
            seg = 1;
        double S = bytes ? ceil((double)bytes / (double)seg) : 1.0;
        double s = bytes < seg ? (double)bytes : (double)seg;
        double k = r == JT_ROUTE_PIPELINE_CHAIN ? 1.0 : 2.0;  /* sends per segment per node */
        double stage = k * (m->overhead + beta * s);
        int d = jt_dbcast_route_depth(r, n);
        return (S - 1.0) * stage + d * (m->latency + stage) + (d - 1) * F;
    }
    default:
        return INFINITY;
    }
}

jt_dbcast_routing jt_dbcast_route_choose(size_t bytes, int n, size_t seg_cfg,
                                         const jt_dbcast_model *m, size_t *seg_out)
{
    jt_dbcast_model def;
    if (!m) {
        jt_dbcast_model_default(&def);
        m = &def;
    }
    static const jt_dbcast_routing cand[] = {JT_ROUTE_FLAT, JT_ROUTE_BINOMIAL,
                                             JT_ROUTE_PIPELINE_CHAIN, JT_ROUTE_PIPELINE_TREE};
    jt_dbcast_routing best = JT_ROUTE_FLAT;
    size_t best_seg = jt_dbcast_route_segment(JT_ROUTE_FLAT, bytes, n, 0, m);
    if (n > 1) {
        double best_cost = INFINITY;
        for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++) {
            size_t seg = jt_dbcast_route_segment(cand[i], bytes, n,
                                                 jt_dbcast_route_is_pipelined(cand[i]) ? seg_cfg : 0, m);
            double c = jt_dbcast_route_cost(cand[i], bytes, n, seg, m);
            if (c < best_cost * (1.0 - 1e-9)) {
                best_cost = c;
                best = cand[i];
                best_seg = seg;
            }
        }
    }
    if (seg_out)
        *seg_out = best_seg;
    return best;
}

static const char *const route_names[JT_ROUTE_COUNT_] = {
    "auto", "flat", "binomial", "chain", "pipeline-chain", "pipeline-tree"};

const char *jt_dbcast_route_name(jt_dbcast_routing r)
{
    if ((int)r < 0 || r >= JT_ROUTE_COUNT_)
        return "invalid";
    return route_names[r];
}

int jt_dbcast_route_parse(const char *name, jt_dbcast_routing *out)
{
    if (!name)
        return -1;
    for (int i = 0; i < JT_ROUTE_COUNT_; i++) {
        if (strcmp(name, route_names[i]) == 0) {
            *out = (jt_dbcast_routing)i;
            return 0;
        }
    }
    return -1;
}

/* Arrival of each list position: the caller's k-th child (in send order) gets the data k + 1
 * steps after the caller had it, and forwards to its slice the same way. */
typedef struct { int pos; long t; } arrival;

static int by_time(const void *a, const void *b)
{
    const arrival *x = a, *y = b;
    return x->t != y->t ? (x->t < y->t ? -1 : 1) : x->pos - y->pos;
}

int jt_dbcast_route_arrival(jt_dbcast_routing r, int n, int *out)
{
    if (n <= 0)
        return n == 0 ? 0 : -1;
    arrival *a = malloc((size_t)n * sizeof *a);
    int *stk = malloc((size_t)(3 * n + 3) * sizeof *stk), cap = jt_dbcast_route_max_children(r, n);
    jt_dbcast_route_child *kids = malloc((size_t)(cap > 0 ? cap : 1) * sizeof *kids);
    if (!a || !stk || !kids) {
        free(a), free(stk), free(kids);
        return -1;
    }
    int top = 0; /* slices to route: offset, length, arrival time of their head's parent */
    stk[top++] = 0, stk[top++] = n, stk[top++] = 0;
    while (top > 0) {
        int t0 = stk[--top], len = stk[--top], off = stk[--top];
        int k = jt_dbcast_route_children(r, len, kids);
        for (int c = 0; c < k; c++) {
            a[off + kids[c].child] = (arrival){off + kids[c].child, (long)t0 + c + 1};
            if (kids[c].sub_len > 0) {
                stk[top++] = off + kids[c].sub_off, stk[top++] = kids[c].sub_len;
                stk[top++] = t0 + c + 1;
            }
        }
    }
    qsort(a, (size_t)n, sizeof *a, by_time);
    for (int k = 0; k < n; k++)
        out[k] = a[k].pos;
    free(a), free(stk), free(kids);
    return n;
}
