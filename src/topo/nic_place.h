/* Where threads and buffers go relative to the NIC (Moreaud 2007, NUIOA; Swartvagher 2021):
 * "near" is the NIC's NUMA node, "far" the node most distant from it by hwloc's distances. */
#ifndef JT_TOPO_NIC_PLACE_H
#define JT_TOPO_NIC_PLACE_H

#include "topo/topo.h"

#include <stddef.h>

/* The NIC that near and far refer to: the one named, or the first whose NUMA node is known.
 * Returns 0, or -1 with the reason in err (no such NIC, or none of known locality). */
int jt_place_nic(const jt_topo *tp, const char *name, jt_nic *out, char *err, size_t errlen);

/* The relative distance between two NUMA nodes (logical indexes): hwloc's latency matrix
 * (row from, column to) when the topology has one, else from hwloc's tree (10 for the node
 * itself, then larger the higher their common ancestor).  *from_matrix says which. */
long jt_place_distance(const jt_topo *tp, int from, int to, int *from_matrix);

/* Every NUMA node sorted by distance from node (node first, ties by index); returns how many
 * were written to order (at most max). */
int jt_place_numa_order(const jt_topo *tp, int node, int *order, int max);

/* The NUMA node farthest from the set near (bit n: logical node n; a NIC's numa_set): the node
 * outside it whose smallest distance to it is largest (hwloc's latencies, or its tree), ties to
 * the lowest; the first node of near when every node is in it (a one-node machine). */
int jt_place_far_numa(const jt_topo *tp, unsigned long long near);

/* The k-th core (0-based, wrapping) of a NUMA node, counted from its first core or from its
 * last (the seed binds the communication thread to the last core of a node). */
int jt_place_core_of_numa(const jt_topo *tp, int node, int k, int from_end);

/* The share of a host's cores that local rank l of L gets: [*first, *first + *count). */
void jt_place_share(int ncores, int l, int L, int *first, int *count);

/* Cores for n compute threads of local rank l of L whose communicating thread is on comm_core:
 * the share's cores in order, skipping comm_core; past the free ones (oversubscribed) they go
 * round the whole host, the other shares' cores first, so that threads pile on no one core
 * (a rank computing alone, --compute-on sender, spreads over the cores of the ranks that do
 * not compute).  Returns how many free cores the share has. */
int jt_place_compute_cores(int ncores, int l, int L, int comm_core, int n, int *cores);

/* What decides between NICs on different NUMA nodes (Moreaud 2007, 3.2.2). */
typedef enum { JT_FAVOR_LATENCY, JT_FAVOR_BANDWIDTH } jt_favor;
extern const char *const jt_favor_names[]; /* NULL-terminated, in enum order */

/* The node the communication threads start from: the named NIC's node, or, without a name,
 * the one node of every NIC of known locality (one per PCI device); a NIC above several nodes
 * gives the first of them, and *near (may be NULL) gets them all: each of them is near.
 * When the NICs disagree, the
 * node of lowest score: favor latency, the sum of distances to the NICs' nodes; favor
 * bandwidth, the PCI link bandwidth of the NICs not on it (every NIC counts 1 when a link
 * speed is unknown).  Ties go to the other criterion, then the lowest node.  Returns the node,
 * or -1 with the reason in why (no such NIC, none of known locality).  why says how it chose;
 * unknown (may be NULL) what it could not know. */
int jt_place_comm_home(const jt_topo *tp, const char *nic, jt_favor favor, char *why,
                       size_t whylen, char *unknown, size_t unklen, unsigned long long *near);

/* The k-th communication thread (0-based; local rank k): hierarchical placement (Moreaud 2007,
 * 3.3.1): the first on the home node, the next ones on the other nodes by increasing distance
 * from it, one per node, then round again on the next core of each.  Its buffers go to the
 * node of its core.  Returns 0, or -1 when no NIC locality is known (then core k, no memory
 * policy); why says which. */
int jt_place_comm(const jt_topo *tp, const char *nic, jt_favor favor, int k, int *core,
                  int *numa, char *why, size_t whylen);

#endif
