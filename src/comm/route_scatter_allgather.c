/*
 * Routing `scatter-allgather`: a binomial scatter of the message cut into N chunks (N: the
 * root and its n recipients), then a recursive-doubling allgather (van de Geijn; MPICH's
 * scatter_rdb_allgather), in source-routing terms. Pure; see route.h and docs/dbcast.md.
 *
 * Nodes: the root is node 0, the list's i-th recipient node i + 1; chunk j is bytes
 * [j c, (j+1) c) of the message (c = ceil(m / N), the last chunks shorter or empty). The
 * set [0, N) is split recursively: S = [a, b) into L = [a, a + ceil(|S|/2)) and U = the rest.
 *   - Scatter: the first node of S (its holder, which has S's chunks) sends U's chunks to
 *     U's first node, then goes on with L; a node's own set X (the one it holds) is what it
 *     received. At the innermost level, {v, v+1}, the holder sends [v, v+2): its own chunk
 *     rides along, one message fewer on the critical path and no byte more.
 *   - Allgather, innermost level first: at S, L[i] sends L's chunks to U[i] and U[i] sends
 *     U's chunks to L[i] (i < |U|), as soon as it has them; L[0] has S's chunks already
 *     (the holder), so nothing goes to it; when |L| = |U| + 1, U[0] (which got U's chunks
 *     in the scatter) also sends them to L's last node.
 * Every node then receives every chunk exactly once, and sends at most one message a level.
 * A node learns its place, the nodes it holds and its partners at the levels above X from
 * the header of its scatter message: its view, the ranks of X and of X's partners at
 * every level above it (for X in L: U[i] for i in X; for X in U: L[i], i >= 1, and L's
 * last node when X = U and |L| > |U|), spans of node numbers in that order.
 */
#include "comm/route.h"

static int half(int a, int b) { return (b - a + 1) / 2; } /* |L| of [a, b) */

void jt_route_sag_held(int N, int v, int *a, int *b)
{
    int x = 0, y = N;
    while (x != v) {
        int u = x + half(x, y);
        if (v < u)
            y = u;
        else
            x = u;
    }
    *a = x, *b = y;
}

/* The sets containing X = [xa, xb), from [0, N) down to X's parent: count, stored in as/bs. */
static int ancestors(int N, int xa, int xb, int *as, int *bs)
{
    int k = 0, a = 0, b = N;
    while (a != xa || b != xb) {
        as[k] = a, bs[k] = b, k++;
        int u = a + half(a, b);
        if (xa < u)
            b = u;
        else
            a = u;
    }
    return k;
}

int jt_route_sag_view(int N, int v, jt_route_span *out)
{
    int xa, xb, as[64], bs[64], k = 0;
    if (N < 1 || v < 0 || v >= N)
        return -1;
    jt_route_sag_held(N, v, &xa, &xb);
    if (xb - xa > 1)
        out[k++] = (jt_route_span){v + 1, xb - v - 1};
    int na = ancestors(N, xa, xb, as, bs);
    for (int l = 0; l < na; l++) {
        int a = as[l], b = bs[l], h = half(a, b), u = a + h, nu = b - u;
        if (xa < u) { /* X in L: U[i] for its i < |U| */
            int lo = xa - a, hi = xb - a < nu ? xb - a : nu;
            if (hi > lo)
                out[k++] = (jt_route_span){u + lo, hi - lo};
        } else { /* X in U: L[i] for its i >= 1, and L's last node when X = U is short */
            int xs = xa - u, lo = xs > 1 ? xs : 1, hi = (xs == 0 && h > nu) ? h : xb - u;
            if (hi > lo)
                out[k++] = (jt_route_span){a + lo, hi - lo};
        }
    }
    return k;
}

int jt_route_sag_sends(int N, int v, jt_route_sag_send *out)
{
    int xa, xb, k = 0, as[64], bs[64], nin = 0;
    if (N < 1 || v < 0 || v >= N)
        return -1;
    jt_route_sag_held(N, v, &xa, &xb);
    /* scatter: U's chunks to U's first node, largest first; {v, v+1} takes [v, v+2) */
    for (int b = xb; b - v > 1;) {
        int u = v + half(v, b);
        if (b - v == 2)
            out[k++] = (jt_route_sag_send){v + 1, v, v + 2, 1};
        else
            out[k++] = (jt_route_sag_send){u, u, b, 1};
        if (b - v > 2)
            bs[nin++] = b; /* a level of X above {v, v+1}: its allgather send, below */
        b = u;
    }
    /* allgather inside X, innermost first: the holder's L to U's first node */
    for (int l = nin - 1; l >= 0; l--) {
        int u = v + half(v, bs[l]);
        out[k++] = (jt_route_sag_send){u, v, u, 0};
    }
    /* the levels above X, innermost first */
    int na = ancestors(N, xa, xb, as, bs);
    for (int l = na - 1; l >= 0; l--) {
        int a = as[l], b = bs[l], h = half(a, b), u = a + h, nu = b - u;
        if (v < u) {
            if (v - a < nu)
                out[k++] = (jt_route_sag_send){u + (v - a), a, u, 0};
        } else if (v > u) {
            out[k++] = (jt_route_sag_send){a + (v - u), u, b, 0};
        } else if (h > nu) {
            out[k++] = (jt_route_sag_send){a + h - 1, u, b, 0};
        }
    }
    return k;
}

void jt_route_sag_bytes(uint64_t m, int N, int c0, int c1, uint64_t *off, uint64_t *len)
{
    uint64_t c = N > 0 ? (m + (uint64_t)N - 1) / (uint64_t)N : 0;
    uint64_t lo = (uint64_t)c0 * c, hi = (uint64_t)c1 * c;
    lo = lo < m ? lo : m;
    hi = hi < m ? hi : m;
    *off = lo;
    *len = hi - lo;
}

uint64_t jt_route_sag_largest(uint64_t m, int N)
{
    if (N < 2)
        return 0;
    uint64_t c = (m + (uint64_t)N - 1) / (uint64_t)N, k = (uint64_t)(N + 1) / 2;
    k = k < 2 ? 2 : k;
    return k * c < m ? k * c : m;
}
