/*
 * Routing `flat`: the root sends the whole message to every recipient itself (depth 1,
 * the root injects n copies). Every send is posted at once, as a linear broadcast does
 * (Open MPI's basic linear bcast, StarPU-MPI's sends of one piece of data).
 * Pure; see dbcast_route.h for the conventions (children as list slices).
 */
#include "comm/route.h"

int jt_route_flat_children(int n, jt_dbcast_route_child *out)
{
    for (int i = 0; i < n; i++)
        out[i] = (jt_dbcast_route_child){i, i + 1, 0};
    return n;
}
