/* The whole machine as JSON for `jostle topo`: packages, NUMA nodes with their memory and
 * cores, caches, the distance matrix, NICs, and where communication should go. */
#ifndef JT_DESCRIBE_H
#define JT_DESCRIBE_H

#include "topo/nic_place.h"

struct jt_json;

/* {"machine": (jt_topo_machine_json), "packages", "numa_nodes", "cores", "caches",
 *  "distances"}; see docs/cli.md, jostle topo. */
void jt_topo_describe_json(const jt_topo *tp, struct jt_json *j);

/* The advice of jostle place --comm for threads communication threads: the home node and how it
 * was chosen, then core, node and reason of each thread.  Returns 0, or -1 when no NIC
 * locality is known (the advice then says so). */
int jt_place_advice_json(const jt_topo *tp, const char *nic, jt_favor favor, int threads,
                         struct jt_json *j);

#endif
