/*
 * Routings `chain` and `pipeline-chain`: root -> r0 -> r1 -> ... -> r(n-1). Each node's
 * one child is the head of its list, and the child forwards the rest. `chain` sends the
 * whole message per hop; `pipeline-chain` cuts it into segments that each node forwards
 * as they arrive, so the message crosses the n hops in about one message time plus one
 * segment time per hop. Pure; see dbcast_route.h.
 */
#include "comm/route.h"

int jt_route_chain_children(int n, jt_dbcast_route_child *out)
{
    if (n == 0)
        return 0;
    out[0] = (jt_dbcast_route_child){0, 1, n - 1};
    return 1;
}
