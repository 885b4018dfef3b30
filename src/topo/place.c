#include "topo/place.h"

#include "topo/bind.h"

#include <stdio.h>
#include <string.h>

int jt_place_nic(const jt_topo *tp, const char *name, jt_nic *out, char *err, size_t errlen)
{
    jt_nic nics[JT_NIC_MAX];
    int nn = jt_topo_nics(tp, nics, JT_NIC_MAX);
    char names[JT_NIC_MAX * 66] = "";
    for (int i = 0; i < nn; i++) {
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%.63s", i ? ", " : "",
                 nics[i].name);
        if (name ? strcmp(nics[i].name, name) == 0 : nics[i].numa >= 0) {
            *out = nics[i];
            if (out->numa < 0) {
                snprintf(err, errlen, "NIC %s has no known NUMA locality: near and far are "
                         "undefined for it", name);
                return -1;
            }
            return 0;
        }
    }
    if (name)
        snprintf(err, errlen, "--nic '%.64s' is not allowed: this machine's NICs are %.400s",
                 name, nn ? names : "none");
    else
        snprintf(err, errlen, "no NIC of known NUMA locality on this machine (NICs: %.400s)",
                 nn ? names : "none");
    return -1;
}

int jt_place_far_numa(const jt_topo *tp, int node)
{
    int nn = jt_topo_nnuma(tp);
    if (nn <= 1)
        return node;
    int far = node == nn - 1 ? nn - 2 : nn - 1;
    struct hwloc_distances_s *d = NULL;
    unsigned nr = 1;
    if (hwloc_distances_get_by_type(tp->t, HWLOC_OBJ_NUMANODE, &nr, &d,
                                    HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) == 0 && nr == 1) {
        hwloc_obj_t from = jt_topo_numa(tp, node);
        int i = from ? hwloc_distances_obj_index(d, from) : -1;
        hwloc_uint64_t best = 0;
        for (unsigned j = 0; i >= 0 && j < d->nbobjs; j++) {
            hwloc_uint64_t v = d->values[(unsigned)i * d->nbobjs + j];
            if ((int)d->objs[j]->logical_index != node && v > best) {
                best = v;
                far = (int)d->objs[j]->logical_index;
            }
        }
        hwloc_distances_release(tp->t, d);
    }
    return far;
}

int jt_place_core_of_numa(const jt_topo *tp, int node, int k, int from_end)
{
    hwloc_obj_t n = jt_topo_numa(tp, node);
    int ncores = jt_topo_ncores(tp), cores[4096], m = 0;
    for (int c = 0; c < ncores && m < 4096; c++) {
        hwloc_obj_t co = jt_topo_core(tp, c);
        if (!n || hwloc_bitmap_intersects(co->cpuset, n->cpuset))
            cores[m++] = c;
    }
    if (m == 0)
        return -1;
    k %= m;
    return from_end ? cores[m - 1 - k] : cores[k];
}

void jt_place_share(int ncores, int l, int L, int *first, int *count)
{
    if (L < 1)
        L = 1;
    if (ncores < L) { /* fewer cores than ranks: each rank gets one, shared */
        *first = l % (ncores > 0 ? ncores : 1);
        *count = 1;
        return;
    }
    *first = (int)((long)ncores * l / L);
    *count = (int)((long)ncores * (l + 1) / L) - *first;
}

int jt_place_comm(const jt_topo *tp, int k, int *core, int *numa, char *why, size_t whylen)
{
    jt_nic nic;
    char err[256];
    if (jt_place_nic(tp, NULL, &nic, err, sizeof err) == 0) {
        *core = jt_place_core_of_numa(tp, nic.numa, k, 0);
        *numa = nic.numa;
        snprintf(why, whylen, "core %d and memory of NUMA node %d, the node of NIC %s", *core,
                 *numa, nic.name);
        return 0;
    }
    int ncores = jt_topo_ncores(tp);
    *core = ncores > 0 ? k % ncores : 0;
    *numa = JT_MEM_ANY;
    snprintf(why, whylen, "%s: core %d, memory where first touched", err, *core);
    return -1;
}
