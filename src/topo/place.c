#include "topo/place.h"

#include "topo/bind.h"

#include <stdio.h>

int jt_place_comm(const jt_topo *tp, int k, int *core, int *numa, char *why, size_t whylen)
{
    jt_nic nics[JT_NIC_MAX];
    int nn = jt_topo_nics(tp, nics, JT_NIC_MAX), ncores = jt_topo_ncores(tp);
    for (int i = 0; i < nn; i++) {
        if (nics[i].numa < 0)
            continue;
        hwloc_obj_t node = jt_topo_numa(tp, nics[i].numa);
        int seen = 0;
        for (int c = 0; c < ncores && node; c++) {
            hwloc_obj_t co = jt_topo_core(tp, c);
            if (!hwloc_bitmap_intersects(co->cpuset, node->cpuset))
                continue;
            if (seen++ == k) {
                *core = c;
                *numa = nics[i].numa;
                snprintf(why, whylen, "core %d and memory of NUMA node %d, the node of NIC %s", c,
                         *numa, nics[i].name);
                return 0;
            }
        }
    }
    *core = ncores > 0 ? k % ncores : 0;
    *numa = JT_MEM_ANY;
    snprintf(why, whylen, "no NIC of known NUMA locality: core %d, memory where first touched",
             *core);
    return -1;
}
