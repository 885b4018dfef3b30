/*
 * Routing `pipeline-tree`: a balanced binary tree, message cut into segments forwarded as
 * they arrive. Each node sends every segment to at most two children, so its link carries
 * the data twice, never log(n) times as a binomial root's would. Preorder layout: child 0
 * is the head of the list with the rest of the first half below it, child 1 heads the
 * second half. Pure; see dbcast_route.h.
 */
#include "comm/route.h"

int jt_route_tree_children(int n, jt_dbcast_route_child *out)
{
    if (n == 0)
        return 0;
    int left = (n + 1) / 2; /* child 0 and left-1 below it */
    out[0] = (jt_dbcast_route_child){0, 1, left - 1};
    if (n - left == 0)
        return 1;
    out[1] = (jt_dbcast_route_child){left, left + 1, n - left - 1};
    return 2;
}
