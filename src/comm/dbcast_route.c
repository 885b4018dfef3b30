/*
 * jt_dbcast routing: the dispatcher. One routing is one file (route_flat.c,
 * route_binomial.c, route_chain.c, route_tree.c, route_twotree.c,
 * route_knomial.c, route_scatter_allgather.c); this file maps a
 * routing to its functions and holds what every routing shares: depth, names, the order in
 * which a tree reaches its list, the root's lists. The cost model and the automatic choice
 * are in dbcast_model.c. Pure; see dbcast_route.h, docs/dbcast.md.
 */
#include "comm/dbcast_route.h"

#include <stdlib.h>
#include <string.h>

int jt_route_ceil_log2(long long x) /* smallest d with 2^d >= x, x >= 1 */
{
    int d = 0;
    while ((1LL << d) < x)
        d++;
    return d;
}

int jt_route_floor_log2(long long x) /* x >= 1 */
{
    int d = 0;
    while ((1LL << (d + 1)) <= x)
        d++;
    return d;
}

int jt_dbcast_route_radix(jt_dbcast_routing r)
{
    switch (r) {
    case JT_ROUTE_BINOMIAL: return 2;
    case JT_ROUTE_KNOMIAL4: return 4;
    case JT_ROUTE_KNOMIAL8: return 8;
    case JT_ROUTE_KNOMIAL16: return 16;
    default: return 0;
    }
}

int jt_dbcast_route_is_pipelined(jt_dbcast_routing r)
{
    return r == JT_ROUTE_PIPELINE_CHAIN || r == JT_ROUTE_PIPELINE_TREE || r == JT_ROUTE_TWO_TREE;
}

int jt_dbcast_route_max_children(jt_dbcast_routing r, int n)
{
    if (n <= 0)
        return 0;
    switch (r) {
    case JT_ROUTE_FLAT: return n;
    case JT_ROUTE_CHAIN:
    case JT_ROUTE_PIPELINE_CHAIN: return 1;
    case JT_ROUTE_PIPELINE_TREE:
    case JT_ROUTE_TWO_TREE: return n < 2 ? n : 2;
    case JT_ROUTE_BINOMIAL: return jt_route_ceil_log2((long long)n + 1);
    case JT_ROUTE_KNOMIAL4:
    case JT_ROUTE_KNOMIAL8:
    case JT_ROUTE_KNOMIAL16: {
        int k = jt_dbcast_route_radix(r), c = (k - 1) * jt_route_knomial_rounds(k, n);
        return c < n ? c : n;
    }
    default: return 0;
    }
}

int jt_dbcast_route_children(jt_dbcast_routing r, int n, jt_dbcast_route_child *out)
{
    if (n < 0)
        return -1;
    switch (r) {
    case JT_ROUTE_FLAT: return jt_route_flat_children(n, out);
    case JT_ROUTE_CHAIN:
    case JT_ROUTE_PIPELINE_CHAIN: return jt_route_chain_children(n, out);
    case JT_ROUTE_BINOMIAL: return jt_route_binomial_children(n, out);
    case JT_ROUTE_PIPELINE_TREE: return jt_route_tree_children(n, out);
    case JT_ROUTE_TWO_TREE: return jt_route_twotree_children(n, out);
    case JT_ROUTE_KNOMIAL4:
    case JT_ROUTE_KNOMIAL8:
    case JT_ROUTE_KNOMIAL16: return jt_route_knomial_children(jt_dbcast_route_radix(r), n, out);
    default: return -1;
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
    case JT_ROUTE_PIPELINE_TREE: return jt_route_floor_log2((long long)n + 1);
    /* the root's hop to each tree's top, then a complete binary tree of n nodes */
    case JT_ROUTE_TWO_TREE: return 1 + jt_route_floor_log2((long long)n);
    case JT_ROUTE_KNOMIAL4:
    case JT_ROUTE_KNOMIAL8:
    case JT_ROUTE_KNOMIAL16: return jt_route_knomial_depth(jt_dbcast_route_radix(r), n);
    case JT_ROUTE_SCATTER_ALLGATHER: { /* the root's messages, one after the other */
        jt_route_sag_send s[JT_ROUTE_SAG_MAX_SENDS];
        return jt_route_sag_sends(n + 1, 0, s);
    }
    default: return -1;
    }
}

int jt_dbcast_route_streams(jt_dbcast_routing r)
{
    return r == JT_ROUTE_TWO_TREE ? 2 : 1;
}

int jt_dbcast_route_root_children(jt_dbcast_routing r, int n, jt_dbcast_route_child *out)
{
    if (r != JT_ROUTE_TWO_TREE)
        return jt_dbcast_route_children(r, n, out);
    if (n < 0)
        return -1;
    if (n == 0)
        return 0;
    out[0] = (jt_dbcast_route_child){0, 1, n - 1}; /* the top of the tree, the rest below */
    return 1;
}

int jt_dbcast_route_layout(jt_dbcast_routing r, int n, int *pos)
{
    if (r == JT_ROUTE_TWO_TREE)
        return jt_route_twotree_layout(n, pos);
    if (r == JT_ROUTE_SCATTER_ALLGATHER) { /* no tree: the list's order is the nodes' */
        for (int i = 0; i < n; i++)
            pos[i] = i;
        return n < 0 ? -1 : n;
    }
    return jt_dbcast_route_arrival(r, n, pos);
}

const char *const jt_route_names[JT_ROUTE_COUNT_ + 1] = {
    "auto", "flat", "binomial", "chain", "pipeline-chain", "pipeline-tree", "two-tree",
    "knomial-4", "knomial-8", "knomial-16", "scatter-allgather", NULL};

const char *jt_dbcast_route_name(jt_dbcast_routing r)
{
    if ((int)r < 0 || r >= JT_ROUTE_COUNT_)
        return "invalid";
    return jt_route_names[r];
}

int jt_dbcast_route_parse(const char *name, jt_dbcast_routing *out)
{
    if (!name)
        return -1;
    for (int i = 0; i < JT_ROUTE_COUNT_; i++) {
        if (strcmp(name, jt_route_names[i]) == 0) {
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
