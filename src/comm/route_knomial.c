/*
 * Routings `knomial-4`, `knomial-8`, `knomial-16`: the k-nomial tree of whole messages
 * (radix k fixed by the routing, so that forwarders, which see only their slice, split it
 * as the root did). Nodes: the caller (virtual 0) and list[i] (virtual i+1), N = n + 1.
 * Each round the caller cuts its N nodes into k blocks of b = ceil(N/k) (the last ones
 * shorter or empty), keeps block 0 and hands block j (j = 1..k-1, non-empty) to its first
 * node, then repeats on what it kept: ceil(log_k(N)) rounds of up to k-1 children, the
 * largest subtrees first. A round's sends go out together (the sending window is k-1, as
 * MVAPICH2's k-nomial posts a round's Isends at once). k = 2 is `binomial`.
 * Pure; see dbcast_route.h.
 */
#include "comm/route.h"

int jt_route_knomial_children(int k, int n, jt_dbcast_route_child *out)
{
    int c = 0;
    int N = n + 1;
    while (N > 1) {
        int b = (N + k - 1) / k;
        for (int j = 1; j < k && j * b < N; j++) {
            int end = (j + 1) * b < N ? (j + 1) * b : N; /* virtual [j*b, end) */
            out[c++] = (jt_dbcast_route_child){j * b - 1, j * b, end - j * b - 1};
        }
        N = b;
    }
    return c;
}

int jt_route_knomial_rounds(int k, int n) /* ceil(log_k(n + 1)) */
{
    int r = 0;
    for (long long p = 1; p < (long long)n + 1; p *= k)
        r++;
    return r;
}

/* Hops to the deepest recipient: the kept block goes on at this depth, block 1 (the
 * largest handed out: min(b, N - b) nodes) one hop deeper. ceil(log_k(n+1)) when k >= 3
 * and N > k (block 1 is then full); binomial's floor(log2(n+1)) when k = 2. */
int jt_route_knomial_depth(int k, int n)
{
    int N = n + 1;
    if (N <= 1)
        return 0;
    int b = (N + k - 1) / k, b1 = N - b < b ? N - b : b;
    int kept = jt_route_knomial_depth(k, b - 1), below = 1 + jt_route_knomial_depth(k, b1 - 1);
    return kept > below ? kept : below;
}
