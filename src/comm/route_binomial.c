/*
 * Routing `binomial`: the classic binomial tree of whole messages, ceil(log2(n+1)) rounds.
 * Nodes: the caller (virtual 0) and list[i] (virtual i+1), N = n + 1. The caller keeps the
 * lower ceil(N/2) nodes and hands the upper half to its first node, then repeats on what it
 * kept: the largest subtree goes first. Pure; see dbcast_route.h.
 */
#include "comm/route.h"

int jt_route_binomial_children(int n, jt_dbcast_route_child *out)
{
    int k = 0;
    int N = n + 1;
    while (N > 1) {
        int keep = (N + 1) / 2;
        out[k++] = (jt_dbcast_route_child){keep - 1, keep, N - 1 - keep};
        N = keep;
    }
    return k;
}
