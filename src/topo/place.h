/* Where communication threads and their buffers go: near the NIC (Moreaud 2007, NUIOA). */
#ifndef JT_PLACE_H
#define JT_PLACE_H

#include "topo/topo.h"

#include <stddef.h>

/* The core for the communication thread of the k-th rank of a host, and the NUMA node for its
 * buffers: the NIC's node (the first NIC whose locality is known), its cores in order.  Returns
 * 0, or -1 when no NIC locality is known (then core k and no memory policy), with the reason in
 * why either way. */
int jt_place_comm(const jt_topo *tp, int k, int *core, int *numa, char *why, size_t whylen);

#endif
