/* Where threads and buffers go relative to the NIC (Moreaud 2007, NUIOA; Swartvagher 2021):
 * "near" is the NIC's NUMA node, "far" the node most distant from it by hwloc's distances. */
#ifndef JT_PLACE_H
#define JT_PLACE_H

#include "topo/topo.h"

#include <stddef.h>

/* The NIC that near and far refer to: the one named, or the first whose NUMA node is known.
 * Returns 0, or -1 with the reason in err (no such NIC, or none of known locality). */
int jt_place_nic(const jt_topo *tp, const char *name, jt_nic *out, char *err, size_t errlen);

/* The NUMA node farthest from node: largest latency in hwloc's distances, or, without
 * distances, the last other node; node itself on a one-node machine. */
int jt_place_far_numa(const jt_topo *tp, int node);

/* The k-th core (0-based, wrapping) of a NUMA node, counted from its first core or from its
 * last (the seed binds the communication thread to the last core of a node). */
int jt_place_core_of_numa(const jt_topo *tp, int node, int k, int from_end);

/* The share of a host's cores that local rank l of L gets: [*first, *first + *count). */
void jt_place_share(int ncores, int l, int L, int *first, int *count);

/* The communicating thread of local rank k: core and buffer node near the NIC (auto).  Returns
 * 0, or -1 when no NIC locality is known (then core k, no memory policy); why says which. */
int jt_place_comm(const jt_topo *tp, int k, int *core, int *numa, char *why, size_t whylen);

#endif
