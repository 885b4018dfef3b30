/* Serial unit test of the jt_dbcast routing trees and of the automatic choice. */
#include "comm/dbcast_route.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

typedef struct {
    int *reached;    /* per recipient index: times reached */
    int *depth_of;   /* per recipient index: hops from the root */
    int max_depth;
    int max_fanout;
    int max_round;   /* a node sends to its children one per round, in order */
    int *round_of;   /* per recipient index: the round it is reached in */
} walk_t;

/* Walks the tree exactly as the layer does: every node routes its own sub-list. */
static void walk(jt_dbcast_routing r, const int *list, int n, int depth, int round, walk_t *w)
{
    int cap = jt_dbcast_route_max_children(r, n);
    jt_dbcast_route_child *kids = malloc((size_t)(cap > 0 ? cap : 1) * sizeof *kids);
    /* the root applies its own rule (the two-tree's root sends to the top of each tree) */
    int k = depth == 0 ? jt_dbcast_route_root_children(r, n, kids)
                       : jt_dbcast_route_children(r, n, kids);
    CHECKF(k >= 0 && k <= cap, "%s n=%d: %d children for a bound of %d", jt_dbcast_route_name(r), n, k, cap);
    if (n > 0)
        CHECKF(k > 0, "%s n=%d: no child", jt_dbcast_route_name(r), n);
    if (k > w->max_fanout)
        w->max_fanout = k;
    /* children and their subtrees tile the list: no overlap, nothing left out */
    char *cover = calloc((size_t)n + 1, 1);
    for (int c = 0; c < k; c++) {
        CHECKF(kids[c].child >= 0 && kids[c].child < n, "child index %d out of [0,%d)", kids[c].child, n);
        CHECKF(kids[c].sub_len >= 0 && kids[c].sub_off >= 0 && kids[c].sub_off + kids[c].sub_len <= n,
              "%s n=%d: subtree [%d,+%d) outside the list", jt_dbcast_route_name(r), n,
              kids[c].sub_off, kids[c].sub_len);
        if (kids[c].child < 0 || kids[c].child >= n || kids[c].sub_off < 0 ||
            kids[c].sub_off + kids[c].sub_len > n)
            continue;
        cover[kids[c].child]++;
        for (int i = 0; i < kids[c].sub_len; i++)
            cover[kids[c].sub_off + i]++;
    }
    for (int i = 0; i < n; i++)
        CHECKF(cover[i] == 1, "%s n=%d: list index %d covered %d times at one node",
              jt_dbcast_route_name(r), n, i, cover[i]);
    free(cover);
    for (int c = 0; c < k; c++) {
        if (kids[c].child < 0 || kids[c].child >= n)
            continue;
        int who = list[kids[c].child];
        w->reached[who]++;
        w->depth_of[who] = depth + 1;
        if (depth + 1 > w->max_depth)
            w->max_depth = depth + 1;
        if (round + c + 1 > w->max_round)
            w->max_round = round + c + 1;
        w->round_of[who] = round + c + 1;
        walk(r, list + kids[c].sub_off, kids[c].sub_len, depth + 1, round + c + 1, w);
    }
    free(kids);
}

static int ilog2_ceil(int x)
{
    int d = 0;
    while ((1 << d) < x)
        d++;
    return d;
}

static int ilogk_ceil(int k, long long x) /* smallest d with k^d >= x */
{
    int d = 0;
    for (long long p = 1; p < x; p *= k)
        d++;
    return d;
}

/* K-nomial specifics at the root: rounds of at most k-1 children, found from the shape alone
 * (a round starts where a subtree grows again or the child index falls back); the rounds'
 * number, the largest subtree first in each round, every child count. */
static void check_knomial(jt_dbcast_routing r, int n)
{
    int k = jt_dbcast_route_radix(r), cap = jt_dbcast_route_max_children(r, n);
    jt_dbcast_route_child *kids = malloc((size_t)(cap > 0 ? cap : 1) * sizeof *kids);
    int c = jt_dbcast_route_children(r, n, kids), rounds = 0, in_round = 0;
    for (int i = 0; i < c; i++) {
        int fresh = i == 0 || kids[i].child < kids[i - 1].child;
        if (fresh)
            rounds++, in_round = 0;
        in_round++;
        CHECKF(in_round <= k - 1, "%s n=%d: %d children in round %d", jt_dbcast_route_name(r), n,
               in_round, rounds);
        if (!fresh)
            CHECKF(kids[i].sub_len <= kids[i - 1].sub_len, "%s n=%d: child %d's subtree larger "
                   "than its predecessor's in a round", jt_dbcast_route_name(r), n, i);
        else if (i > 0)
            CHECKF(kids[i].sub_len < kids[0].sub_len || kids[0].sub_len == 0,
                   "%s n=%d: round %d's subtree not smaller", jt_dbcast_route_name(r), n, rounds);
    }
    CHECKF(rounds == ilogk_ceil(k, (long long)n + 1), "%s n=%d: %d rounds, expected %d",
           jt_dbcast_route_name(r), n, rounds, ilogk_ceil(k, (long long)n + 1));
    CHECKF(c >= rounds && c <= (k - 1) * rounds, "%s n=%d: %d children", jt_dbcast_route_name(r), n, c);
    free(kids);
}

static void check_tree(jt_dbcast_routing r, int n)
{
    int *list = calloc((size_t)n + 1, sizeof *list);
    /* the list holds arbitrary "ranks": a permutation, to catch index/rank mix-ups */
    for (int i = 0; i < n; i++)
        list[i] = (int)(((long long)i * 7919 + 13) % (n ? n : 1));
    walk_t w = {calloc((size_t)n + 1, sizeof(int)), calloc((size_t)n + 1, sizeof(int)), 0, 0, 0,
                calloc((size_t)n + 1, sizeof(int))};
    walk(r, list, n, 0, 0, &w);
    /* arrival order: a permutation of the positions, along which the rounds never go down */
    int *order = calloc((size_t)n + 1, sizeof *order);
    char *seen = calloc((size_t)n + 1, 1);
    CHECKF(jt_dbcast_route_arrival(r, n, order) == n, "%s n=%d: arrival failed",
           jt_dbcast_route_name(r), n);
    for (int k = 0; k < n && r != JT_ROUTE_TWO_TREE; k++) { /* two-tree: check_twotree */
        CHECKF(order[k] >= 0 && order[k] < n && !seen[order[k]], "%s n=%d: arrival %d is not a "
               "permutation", jt_dbcast_route_name(r), n, k);
        if (order[k] < 0 || order[k] >= n)
            break;
        seen[order[k]] = 1;
        if (k > 0)
            CHECKF(w.round_of[list[order[k]]] >= w.round_of[list[order[k - 1]]],
                   "%s n=%d: arrival %d in round %d after round %d", jt_dbcast_route_name(r), n,
                   k, w.round_of[list[order[k]]], w.round_of[list[order[k - 1]]]);
    }
    if (n > 0 && r != JT_ROUTE_TWO_TREE)
        CHECKF(w.round_of[list[order[0]]] == 1, "%s n=%d: first arrival not in round 1",
               jt_dbcast_route_name(r), n);
    if (r == JT_ROUTE_FLAT || r == JT_ROUTE_CHAIN)
        for (int k = 0; k < n; k++)
            CHECKF(order[k] == k, "%s n=%d: arrival is not the list order", jt_dbcast_route_name(r), n);
    free(order);
    free(seen);
    free(w.round_of);
    for (int i = 0; i < n; i++)
        CHECKF(w.reached[i] == 1, "%s n=%d: recipient %d reached %d times", jt_dbcast_route_name(r),
              n, i, w.reached[i]);
    int expect = jt_dbcast_route_depth(r, n);
    CHECKF(w.max_depth == expect, "%s n=%d: depth %d, expected %d", jt_dbcast_route_name(r), n,
          w.max_depth, expect);
    /* closed forms, written independently of the implementation */
    int closed = n == 0 ? 0
               : r == JT_ROUTE_FLAT ? 1
               : (r == JT_ROUTE_CHAIN || r == JT_ROUTE_PIPELINE_CHAIN) ? n
               : r == JT_ROUTE_TWO_TREE ? 1 + (int)floor(log2((double)n)) /* top, then complete */
               : jt_dbcast_route_radix(r) > 2 ? ilogk_ceil(jt_dbcast_route_radix(r), n + 1)
               : (int)floor(log2((double)n + 1.0)); /* binomial and binary trees */
    CHECKF(expect == closed, "%s n=%d: route_depth %d, closed form %d", jt_dbcast_route_name(r), n,
          expect, closed);
    if (r == JT_ROUTE_PIPELINE_TREE || r == JT_ROUTE_TWO_TREE)
        CHECKF(w.max_fanout <= 2, "pipeline-tree n=%d: fan-out %d", n, w.max_fanout);
    if (r == JT_ROUTE_CHAIN || r == JT_ROUTE_PIPELINE_CHAIN)
        CHECKF(w.max_fanout <= 1, "chain n=%d: fan-out %d", n, w.max_fanout);
    if (r == JT_ROUTE_FLAT)
        CHECKF(w.max_fanout == n, "flat n=%d: root fan-out %d", n, w.max_fanout);
    if (jt_dbcast_route_radix(r) > 2)
        check_knomial(r, n);
    if (r == JT_ROUTE_BINOMIAL && n > 0) {
        /* the root of a binomial tree of N nodes has ceil(log2 N) children; the first
         * child gets the largest subtree (it is on the critical path) */
        jt_dbcast_route_child kids[64];
        int k = jt_dbcast_route_children(r, n, kids);
        CHECKF(k == ilog2_ceil(n + 1), "binomial n=%d: root has %d children", n, k);
        CHECKF(w.max_round == ilog2_ceil(n + 1), "binomial n=%d: %d rounds, expected %d", n,
              w.max_round, ilog2_ceil(n + 1));
        for (int c = 1; c < k; c++)
            CHECKF(kids[c].sub_len <= kids[c - 1].sub_len, "binomial n=%d: subtree %d larger than %d",
                  n, c, c - 1);
    }
    free(w.reached);
    free(w.depth_of);
    free(list);
}

/* Walks one stream of the two-tree as the layer does (root rule, then forwarders' rule),
 * counting for each recipient how often it is reached and how many children it has. */
static int tt_walk(const int *list, int n, int depth, int *reached, int *kids_of, int who)
{
    jt_dbcast_route_child kids[2];
    int k = depth == 0 ? jt_dbcast_route_root_children(JT_ROUTE_TWO_TREE, n, kids)
                       : jt_dbcast_route_children(JT_ROUTE_TWO_TREE, n, kids);
    if (who >= 0)
        kids_of[who] += k;
    int deepest = depth;
    for (int c = 0; c < k; c++) {
        int r = list[kids[c].child];
        reached[r]++;
        int d = tt_walk(list + kids[c].sub_off, kids[c].sub_len, depth + 1, reached, kids_of, r);
        deepest = d > deepest ? d : deepest;
    }
    return deepest;
}

/* The two-tree's lists: each a permutation of the recipients; each tree reaches everyone
 * once, has depth 1 + floor(log2 n) and floor(n/2) interior nodes; no recipient is
 * interior in both trees (so none sends more than the message once); the first
 * recipients (most urgent) are interior in tree A, near its top. */
static void check_twotree(int n)
{
    int *pos = malloc((size_t)(2 * n + 1) * sizeof *pos);
    CHECKF(jt_dbcast_route_layout(JT_ROUTE_TWO_TREE, n, pos) == n, "two-tree n=%d: layout", n);
    int *reached = calloc((size_t)n + 1, sizeof(int)), *kids_of[2];
    for (int j = 0; j < 2; j++) {
        int *list = malloc((size_t)(n + 1) * sizeof *list);
        char *seen = calloc((size_t)n + 1, 1);
        for (int i = 0; i < n; i++) {
            CHECKF(pos[j * n + i] >= 0 && pos[j * n + i] < n && !seen[pos[j * n + i]],
                   "two-tree n=%d: stream %d is not a permutation at %d", n, j, i);
            if (pos[j * n + i] < 0 || pos[j * n + i] >= n)
                continue;
            seen[pos[j * n + i]] = 1;
            list[pos[j * n + i]] = i;
        }
        kids_of[j] = calloc((size_t)n + 1, sizeof(int));
        memset(reached, 0, (size_t)(n + 1) * sizeof(int));
        int depth = tt_walk(list, n, 0, reached, kids_of[j], -1);
        CHECKF(depth == (n ? 1 + (int)floor(log2((double)n)) : 0) &&
               depth == jt_dbcast_route_depth(JT_ROUTE_TWO_TREE, n),
               "two-tree n=%d: stream %d depth %d", n, j, depth);
        int interior = 0;
        for (int i = 0; i < n; i++) {
            CHECKF(reached[i] == 1, "two-tree n=%d: stream %d reaches %d %d times", n, j, i,
                   reached[i]);
            CHECKF(kids_of[j][i] <= 2, "two-tree n=%d: fan-out %d", n, kids_of[j][i]);
            interior += kids_of[j][i] > 0;
        }
        CHECKF(interior == n / 2, "two-tree n=%d: stream %d has %d interior nodes", n, j, interior);
        free(list), free(seen);
    }
    for (int i = 0; i < n; i++)
        CHECKF(!(kids_of[0][i] && kids_of[1][i]), "two-tree n=%d: %d interior in both trees", n, i);
    for (int i = 0; i < n / 2; i++)
        CHECKF(kids_of[0][i] > 0, "two-tree n=%d: urgent recipient %d is a leaf of tree A", n, i);
    if (n > 0)
        CHECKF(pos[0] == 0, "two-tree n=%d: the first recipient is not the top of tree A", n);
    free(kids_of[0]), free(kids_of[1]), free(reached), free(pos);
}

/* Scatter-allgather among N nodes: every view holds its sends' destinations and its scatter
 * children's views (partners consistent), spans are in range and distinct, every non-root
 * node gets one plan, ranges are contiguous and non-empty, and a synchronous run (each round,
 * every node posts its next send if its range is complete; delivered at the round's end)
 * brings every chunk to every node exactly once, with no send left, in 2 log2 N - 1 rounds
 * for N a power of two. */
static void check_sag(int N)
{
    int *nv = calloc((size_t)N, sizeof *nv), *ns = calloc((size_t)N, sizeof *ns);
    jt_route_span (*views)[JT_ROUTE_SAG_MAX_SPANS] = calloc((size_t)N, sizeof *views);
    jt_route_sag_send (*sends)[JT_ROUTE_SAG_MAX_SENDS] = calloc((size_t)N, sizeof *sends);
    char *in_view = calloc((size_t)N, 1), *have = calloc((size_t)N * (size_t)N, 1);
    int *plans = calloc((size_t)N, sizeof *plans), *next = calloc((size_t)N, sizeof *next);
    for (int v = 0; v < N; v++) {
        nv[v] = jt_route_sag_view(N, v, views[v]);
        ns[v] = jt_route_sag_sends(N, v, sends[v]);
        CHECKF(nv[v] >= 0 && nv[v] <= JT_ROUTE_SAG_MAX_SPANS && ns[v] >= 0 &&
               ns[v] <= JT_ROUTE_SAG_MAX_SENDS, "sag N=%d v=%d: %d spans, %d sends", N, v, nv[v], ns[v]);
    }
    int xa, xb;
    jt_route_sag_held(N, 0, &xa, &xb);
    CHECKF(xa == 0 && xb == N && nv[0] == (N > 1) && (N == 1 || (views[0][0].off == 1 &&
           views[0][0].len == N - 1)), "sag N=%d: the root's view is not its list", N);
    for (int v = 0; v < N; v++) {
        memset(in_view, 0, (size_t)N);
        int total = 0;
        for (int i = 0; i < nv[v]; i++) {
            jt_route_span sp = views[v][i];
            CHECKF(sp.len > 0 && sp.off >= 1 && sp.off + sp.len <= N, "sag N=%d v=%d: span "
                   "[%d,+%d) out of [1,N)", N, v, sp.off, sp.len);
            for (int w = sp.off; w < sp.off + sp.len && w < N && w >= 0; w++) {
                CHECKF(!in_view[w] && w != v, "sag N=%d v=%d: node %d twice or itself", N, v, w);
                in_view[w] = 1;
                total++;
            }
        }
        CHECKF(total < N, "sag N=%d v=%d: view of %d", N, v, total);
        for (int k = 0; k < ns[v]; k++) {
            jt_route_sag_send x = sends[v][k];
            CHECKF(x.dest > 0 && x.dest < N && x.dest != v && in_view[x.dest], "sag N=%d v=%d: "
                   "send to %d, not in its view", N, v, x.dest);
            CHECKF(x.c0 >= 0 && x.c0 < x.c1 && x.c1 <= N, "sag N=%d v=%d: chunks [%d,%d)", N, v,
                   x.c0, x.c1);
            if (!x.plan || x.dest <= 0 || x.dest >= N)
                continue;
            plans[x.dest]++;
            for (int i = 0; i < nv[x.dest]; i++) /* the child's view, from the sender's */
                for (int w = views[x.dest][i].off; w < views[x.dest][i].off + views[x.dest][i].len; w++)
                    CHECKF(w >= 0 && w < N && in_view[w], "sag N=%d: node %d's plan names %d, "
                           "not in its sender %d's view", N, x.dest, w, v);
        }
    }
    for (int v = 1; v < N; v++)
        CHECKF(plans[v] == 1, "sag N=%d: node %d gets %d plans", N, v, plans[v]);
    /* the synchronous run: plans[v] now says whether v has its plan */
    memset(plans, 0, (size_t)N * sizeof *plans);
    plans[0] = 1;
    memset(have, 1, (size_t)N);
    int rounds = 0, progress = 1;
    jt_route_sag_send *post = calloc((size_t)N, sizeof *post);
    char *posted = calloc((size_t)N, 1);
    while (progress) {
        progress = 0;
        for (int v = 0; v < N; v++) {
            posted[v] = 0;
            if (!plans[v] || next[v] >= ns[v])
                continue;
            jt_route_sag_send x = sends[v][next[v]];
            int ready = 1;
            for (int c = x.c0; c < x.c1; c++)
                ready &= have[(size_t)v * N + c];
            if (ready)
                post[v] = x, posted[v] = 1, next[v]++, progress = 1;
        }
        for (int v = 0; v < N; v++) {
            if (!posted[v])
                continue;
            for (int c = post[v].c0; c < post[v].c1; c++) {
                CHECKF(!have[(size_t)post[v].dest * N + c], "sag N=%d: node %d gets chunk %d twice",
                       N, post[v].dest, c);
                have[(size_t)post[v].dest * N + c] = 1;
            }
            plans[post[v].dest] |= post[v].plan;
        }
        rounds += progress;
    }
    for (int v = 0; v < N; v++) {
        CHECKF(next[v] == ns[v], "sag N=%d: node %d posted %d of its %d sends", N, v, next[v], ns[v]);
        for (int c = 0; c < N; c++)
            CHECKF(have[(size_t)v * N + c], "sag N=%d: node %d lacks chunk %d", N, v, c);
    }
    int lg = jt_route_ceil_log2(N);
    if (N > 1 && (N & (N - 1)) == 0)
        CHECKF(rounds == 2 * lg - 1, "sag N=%d: %d rounds, expected %d", N, rounds, 2 * lg - 1);
    CHECKF(rounds <= (N > 1 ? 2 * lg + 1 : 0), "sag N=%d: %d rounds", N, rounds);
    CHECKF(jt_dbcast_route_depth(JT_ROUTE_SCATTER_ALLGATHER, N - 1) == ns[0],
           "sag N=%d: depth %d, the root has %d sends", N, jt_dbcast_route_depth(JT_ROUTE_SCATTER_ALLGATHER, N - 1), ns[0]);
    /* bytes: chunks tile the message */
    const uint64_t ms[] = {0, 1, (uint64_t)N - 1, (uint64_t)N, 16384, 1000003};
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
        uint64_t end = 0, off, len;
        for (int c = 0; c < N; c++) {
            jt_route_sag_bytes(ms[i], N, c, c + 1, &off, &len);
            CHECKF(off == end, "sag N=%d m=%llu: chunk %d at %llu", N, (unsigned long long)ms[i], c,
                   (unsigned long long)off);
            end = off + len;
        }
        CHECKF(end == ms[i], "sag N=%d m=%llu: chunks end at %llu", N, (unsigned long long)ms[i],
               (unsigned long long)end);
    }
    free(post), free(posted), free(nv), free(ns), free(views), free(sends), free(in_view);
    free(have), free(plans), free(next);
}

int main(void)
{
    const jt_dbcast_routing all[] = {JT_ROUTE_FLAT, JT_ROUTE_BINOMIAL, JT_ROUTE_CHAIN,
                                     JT_ROUTE_PIPELINE_CHAIN, JT_ROUTE_PIPELINE_TREE,
                                     JT_ROUTE_TWO_TREE, JT_ROUTE_KNOMIAL4, JT_ROUTE_KNOMIAL8,
                                     JT_ROUTE_KNOMIAL16};
    for (size_t a = 0; a < sizeof all / sizeof all[0]; a++) {
        for (int n = 0; n <= 300; n++)
            check_tree(all[a], n);
        const int big[] = {511, 512, 513, 1023, 1024, 4095, 4096};
        for (size_t b = 0; b < sizeof big / sizeof big[0]; b++)
            if (all[a] != JT_ROUTE_CHAIN && all[a] != JT_ROUTE_PIPELINE_CHAIN)
                check_tree(all[a], big[b]);
    }
    for (int n = 0; n <= 600; n++)
        check_twotree(n);
    for (int N = 1; N <= 301; N++)
        check_sag(N);
    check_sag(511), check_sag(512), check_sag(513), check_sag(1024), check_sag(3000);
    check_twotree(4095), check_twotree(4096), check_twotree(10000);
    /* exact small shapes */
    {
        jt_dbcast_route_child k[8];
        int c = jt_dbcast_route_children(JT_ROUTE_BINOMIAL, 7, k); /* 8 nodes */
        CHECKF(c == 3, "binomial 7: %d children", c);
        CHECKF(k[0].child == 3 && k[0].sub_off == 4 && k[0].sub_len == 3, "binomial 7: first child");
        CHECKF(k[1].child == 1 && k[1].sub_off == 2 && k[1].sub_len == 1, "binomial 7: second child");
        CHECKF(k[2].child == 0 && k[2].sub_len == 0, "binomial 7: third child");
        jt_dbcast_route_child q[8];
        c = jt_dbcast_route_children(JT_ROUTE_KNOMIAL4, 15, q); /* 16 nodes: 4 blocks of 4, then 1s */
        CHECKF(c == 6 && q[0].child == 3 && q[0].sub_off == 4 && q[0].sub_len == 3 && q[1].child == 7 &&
               q[1].sub_len == 3 && q[2].child == 11 && q[2].sub_off == 12 && q[2].sub_len == 3 &&
               q[3].child == 0 && q[4].child == 1 && q[5].child == 2 && q[5].sub_len == 0,
               "knomial-4 15: shape");
        c = jt_dbcast_route_children(JT_ROUTE_KNOMIAL4, 5, q); /* 6 nodes: blocks of 2, then 1 */
        CHECKF(c == 3 && q[0].child == 1 && q[0].sub_len == 1 && q[1].child == 3 && q[1].sub_len == 1 &&
               q[2].child == 0 && q[2].sub_len == 0, "knomial-4 5: shape");
        /* 256 nodes: 15 children heading 16 each, then 15 leaves */
        CHECKF(jt_dbcast_route_max_children(JT_ROUTE_KNOMIAL16, 255) == 30, "knomial-16 255: bound");
        CHECKF(jt_dbcast_route_depth(JT_ROUTE_KNOMIAL16, 255) == 2, "knomial-16 255: depth 2");
        c = jt_dbcast_route_children(JT_ROUTE_PIPELINE_TREE, 6, k);
        CHECKF(c == 2 && k[0].child == 0 && k[0].sub_len == 2 && k[1].child == 3 && k[1].sub_len == 2,
              "pipeline-tree 6: shape");
    }
    /* invalid input */
    {
        jt_dbcast_route_child k[2];
        CHECKF(jt_dbcast_route_children(JT_ROUTE_AUTO, 3, k) == -1, "AUTO must not route");
        CHECKF(jt_dbcast_route_children((jt_dbcast_routing)99, 3, k) == -1, "unknown routing");
        CHECKF(jt_dbcast_route_children(JT_ROUTE_FLAT, -1, k) == -1, "negative n");
    }
    /* names */
    for (int r = 0; r < JT_ROUTE_COUNT_; r++) {
        jt_dbcast_routing back;
        CHECKF(jt_dbcast_route_parse(jt_dbcast_route_name((jt_dbcast_routing)r), &back) == 0 && (int)back == r,
              "name round trip %d", r);
    }
    {
        jt_dbcast_routing back;
        CHECKF(jt_dbcast_route_parse("binary", &back) == -1, "unknown name accepted");
        CHECKF(jt_dbcast_route_parse(NULL, &back) == -1, "NULL name accepted");
        CHECKF(strcmp(jt_dbcast_route_name((jt_dbcast_routing)42), "invalid") == 0, "bad name");
    }
    /* automatic choice */
    jt_dbcast_model m;
    jt_dbcast_model_default(&m);
    size_t seg = 0;
    CHECKF(jt_dbcast_route_choose(1 << 20, 1, 0, &m, &seg) == JT_ROUTE_FLAT, "one recipient: flat");
    CHECKF(jt_dbcast_route_choose(8, 3, 0, &m, NULL) == JT_ROUTE_FLAT, "8 B to 3: flat");
    CHECKF(jt_dbcast_route_radix(jt_dbcast_route_choose(8, 255, 0, &m, NULL)) > 0, "8 B to 255: a k-nomial tree");
    CHECKF(jt_dbcast_route_radix(jt_dbcast_route_choose(4096, 63, 0, &m, NULL)) > 0, "4 KiB to 63: a k-nomial tree");
    CHECKF(jt_dbcast_route_is_pipelined(jt_dbcast_route_choose((size_t)64 << 20, 7, 0, &m, &seg)),
          "64 MiB to 7: pipelined");
    CHECKF(seg >= JT_DBCAST_MIN_AUTO_SEGMENT && seg <= JT_DBCAST_MAX_AUTO_SEGMENT && seg % 2048 == 0,
          "auto segment %zu", seg);
    CHECKF(jt_dbcast_route_choose((size_t)1 << 20, 1023, 0, &m, NULL) == JT_ROUTE_TWO_TREE,
          "1 MiB to 1023: two-tree");
    /* the choice is never worse than any candidate under the model */
    const size_t sizes[] = {0, 1, 64, 1024, 8192, 65536, 1 << 20, (size_t)16 << 20, (size_t)256 << 20};
    const int ns[] = {1, 2, 3, 4, 7, 8, 15, 16, 63, 100, 255, 1000, 4095};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        for (size_t j = 0; j < sizeof ns / sizeof ns[0]; j++) {
            size_t s = 0;
            jt_dbcast_routing c = jt_dbcast_route_choose(sizes[i], ns[j], 0, &m, &s);
            CHECKF(c != JT_ROUTE_AUTO && c != JT_ROUTE_CHAIN, "choice %s", jt_dbcast_route_name(c));
            double best = jt_dbcast_route_cost(c, sizes[i], ns[j], s, &m);
            for (size_t a = 0; a <= sizeof all / sizeof all[0]; a++) {
                jt_dbcast_routing o = a < sizeof all / sizeof all[0] ? all[a] : JT_ROUTE_SCATTER_ALLGATHER;
                size_t s2 = jt_dbcast_route_segment(o, sizes[i], ns[j], 0, &m);
                double other = jt_dbcast_route_cost(o, sizes[i], ns[j], s2, &m);
                CHECKF(best <= other * (1 + 1e-9), "%zu B to %d: chose %s (%g s) but %s costs %g s",
                      sizes[i], ns[j], jt_dbcast_route_name(c), best, jt_dbcast_route_name(o), other);
            }
        }
    }
    /* segment sizes */
    CHECKF(jt_dbcast_route_segment(JT_ROUTE_PIPELINE_CHAIN, 1 << 20, 4, 12345, &m) == 12345, "configured segment");
    CHECKF(jt_dbcast_route_segment(JT_ROUTE_PIPELINE_CHAIN, 1 << 20, 4, (size_t)8 << 30, &m) == JT_DBCAST_MAX_SEGMENT,
          "segment capped at 1 GiB");
    CHECKF(jt_dbcast_route_segment(JT_ROUTE_BINOMIAL, 1000, 4, 0, &m) == 1000, "non-pipelined: one segment");
    CHECKF(jt_dbcast_route_segment(JT_ROUTE_BINOMIAL, (size_t)3 << 30, 4, 0, &m) == JT_DBCAST_MAX_SEGMENT,
          "non-pipelined over 1 GiB: 1 GiB pieces");
    CHECKF(jt_dbcast_route_segment(JT_ROUTE_PIPELINE_TREE, 100, 4, 0, &m) == JT_DBCAST_MIN_AUTO_SEGMENT,
          "tiny message: minimum segment");

    if (jt_test_failures) {
        fprintf(stderr, "test_dbcast_route: %d failure(s)\n", jt_test_failures);
        return 1;
    }
    printf("test_dbcast_route: ok\n");
    return 0;
}
