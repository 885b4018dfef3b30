/* Placement relative to the NIC: near and far, the communication threads' cores and nodes,
 * the compute threads' share of the cores (topo/nic_place.h).  The placement of ranks and
 * progress threads by policy is topo/rank_place.c. */
#include "topo/nic_place.h"

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

long jt_place_distance(const jt_topo *tp, int from, int to, int *from_matrix)
{
    hwloc_obj_t a = jt_topo_numa(tp, from), b = jt_topo_numa(tp, to);
    if (from_matrix)
        *from_matrix = 0;
    if (!a || !b)
        return from == to ? 10 : 20;
    struct hwloc_distances_s *d = NULL;
    unsigned nr = 1;
    long v = -1;
    if (hwloc_distances_get_by_type(tp->t, HWLOC_OBJ_NUMANODE, &nr, &d,
                                    HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) == 0 && nr == 1) {
        int i = hwloc_distances_obj_index(d, a), j = hwloc_distances_obj_index(d, b);
        if (i >= 0 && j >= 0)
            v = (long)d->values[(unsigned)i * d->nbobjs + (unsigned)j];
        hwloc_distances_release(tp->t, d);
    }
    if (v >= 0) {
        if (from_matrix)
            *from_matrix = 1;
        return v;
    }
    if (from == to)
        return 10;
    /* Nodes under a deeper common ancestor (a package, a sub-NUMA group) are nearer. */
    hwloc_obj_t c = hwloc_get_common_ancestor_obj(tp->t, a->parent, b->parent);
    return 20 + (long)hwloc_topology_get_depth(tp->t) - (c ? (long)c->depth : 0);
}

int jt_place_numa_order(const jt_topo *tp, int node, int *order, int max)
{
    int nn = jt_topo_nnuma(tp), m = 0;
    long dist[256];
    for (int j = 0; j < nn && m < max && m < 256; j++) {
        long dj = j == node ? -1 : jt_place_distance(tp, node, j, NULL);
        int at = m++;
        while (at > 0 && dist[at - 1] > dj) { /* insertion keeps ties in index order */
            dist[at] = dist[at - 1];
            order[at] = order[at - 1];
            at--;
        }
        dist[at] = dj;
        order[at] = j;
    }
    return m;
}

/* The distance between node and the nearest node of set (a NIC's nodes), from the set to
 * the node or the other way (hwloc's latency matrices need not be symmetric). */
static long set_distance(const jt_topo *tp, int node, unsigned long long set, int from_set)
{
    long best = -1;
    for (int k = 0; k < 64; k++)
        if (set >> k & 1) {
            long d = from_set ? jt_place_distance(tp, k, node, NULL)
                              : jt_place_distance(tp, node, k, NULL);
            best = best < 0 || d < best ? d : best;
        }
    return best;
}

int jt_place_far_numa(const jt_topo *tp, unsigned long long near)
{
    int nn = jt_topo_nnuma(tp), far = -1, first = -1;
    long far_d = -1;
    for (int node = 0; node < nn; node++) {
        if (node < 64 && near >> node & 1) {
            first = first < 0 ? node : first;
            continue;
        }
        long d = set_distance(tp, node, near, 1);
        if (d > far_d) {
            far_d = d;
            far = node;
        }
    }
    return far >= 0 ? far : (first >= 0 ? first : 0);
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

int jt_place_compute_cores(int ncores, int l, int L, int comm_core, int n, int *cores)
{
    int first, count;
    jt_place_share(ncores, l, L, &first, &count);
    int free_cores = count - (comm_core >= first && comm_core < first + count ? 1 : 0);
    for (int t = 0, c = 0; t < n; t++) {
        if (t < free_cores) {
            while (first + c == comm_core)
                c++;
            cores[t] = first + c++;
        } else {
            cores[t] = (first + count + (t - free_cores)) % ncores;
        }
    }
    return free_cores;
}

const char *const jt_favor_names[] = {"latency", "bandwidth", NULL};

/* One entry per PCI device: ib0 and mlx5_0 are two names of one card. */
static int known_nics(const jt_topo *tp, jt_nic *out)
{
    jt_nic all[JT_NIC_MAX];
    int na = jt_topo_nics(tp, all, JT_NIC_MAX), n = 0;
    for (int i = 0; i < na; i++) {
        int dup = 0;
        for (int k = 0; k < n && all[i].pci[0]; k++)
            dup |= strcmp(out[k].pci, all[i].pci) == 0;
        if (all[i].numa >= 0 && !dup)
            out[n++] = all[i];
    }
    return n;
}

/* "NUMA node 1" or "NUMA nodes 0,1" */
static void set_text(char *out, size_t len, unsigned long long set)
{
    int n = 0;
    for (int k = 0; k < 64; k++)
        n += (int)(set >> k & 1);
    snprintf(out, len, "NUMA node%s ", n > 1 ? "s" : "");
    for (int k = 0, i = 0; k < 64; k++)
        if (set >> k & 1)
            snprintf(out + strlen(out), len - strlen(out), "%s%d", i++ ? "," : "", k);
}

int jt_place_comm_home(const jt_topo *tp, const char *name, jt_favor favor, char *why,
                       size_t whylen, char *unknown, size_t unklen, unsigned long long *near)
{
    jt_nic nics[JT_NIC_MAX];
    char err[512], where[256];
    unsigned long long ignored;
    near = near ? near : &ignored;
    *near = 0;
    if (unknown && unklen)
        unknown[0] = '\0';
    if (name) {
        if (jt_place_nic(tp, name, nics, err, sizeof err) != 0) {
            snprintf(why, whylen, "%s", err);
            return -1;
        }
        set_text(where, sizeof where, *near = nics[0].numa_set);
        snprintf(why, whylen, "%s: the node%s of NIC %s (--nic)", where,
                 *near & (*near - 1) ? "s, each near," : "", name);
        return nics[0].numa;
    }
    int n = known_nics(tp, nics);
    if (n == 0) {
        jt_place_nic(tp, NULL, nics, err, sizeof err);
        snprintf(why, whylen, "%s", err);
        return -1;
    }
    int same = 1, unknown_speed = 0;
    double total = 0;
    for (int k = 0; k < n; k++) {
        same &= nics[k].numa_set == nics[0].numa_set;
        unknown_speed |= nics[k].link_gbps <= 0;
        total += nics[k].link_gbps;
    }
    if (same) {
        char names[JT_NIC_MAX * 66] = "";
        for (int k = 0; k < n; k++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%.63s",
                     k ? ", " : "", nics[k].name);
        set_text(where, sizeof where, *near = nics[0].numa_set);
        snprintf(why, whylen, "%s: the node%s of %s %.600s", where,
                 *near & (*near - 1) ? "s, each near," : "", n > 1 ? "every NIC," : "NIC", names);
        return nics[0].numa;
    }
    /* NICs disagree: weigh them (the seed gives no formula; docs/seed001-facts.md sec. 8). */
    int nn = jt_topo_nnuma(tp), best = -1;
    double best_lat = 0, best_bw = 0;
    for (int node = 0; node < nn; node++) {
        double lat = 0, bw = 0;
        for (int k = 0; k < n; k++) {
            lat += (double)set_distance(tp, node, nics[k].numa_set, 0);
            if (!(node < 64 && nics[k].numa_set >> node & 1))
                bw += unknown_speed ? 1.0 : nics[k].link_gbps / total;
        }
        double a = favor == JT_FAVOR_LATENCY ? lat : bw, b = favor == JT_FAVOR_LATENCY ? bw : lat;
        double ba = favor == JT_FAVOR_LATENCY ? best_lat : best_bw;
        double bb = favor == JT_FAVOR_LATENCY ? best_bw : best_lat;
        if (best < 0 || a < ba - 1e-9 || (a < ba + 1e-9 && b < bb - 1e-9)) {
            best = node;
            best_lat = lat;
            best_bw = bw;
        }
    }
    snprintf(why, whylen, "NUMA node %d: the NICs are on different nodes; favoring %s, node %d "
             "has the %s (distance sum %.0f, bandwidth share not local %.2f)", best,
             jt_favor_names[favor], best,
             favor == JT_FAVOR_LATENCY ? "smallest sum of distances to the NICs' nodes"
                                       : "most NIC bandwidth attached",
             best_lat, best_bw);
    *near = best < 64 ? 1ULL << best : 0;
    if (unknown && unklen)
        snprintf(unknown, unklen, "the NICs' own latencies are not known to hwloc (every NIC "
                 "weighs the same for latency)%s", unknown_speed ? "; a PCI link speed is "
                 "unknown, so every NIC weighs the same for bandwidth" : "");
    return best;
}

int jt_place_comm(const jt_topo *tp, const char *nic, jt_favor favor, int k, int *core,
                  int *numa, char *why, size_t whylen)
{
    char home_why[1024];
    int home = jt_place_comm_home(tp, nic, favor, home_why, sizeof home_why, NULL, 0, NULL);
    if (home >= 0) {
        int order[256], m = jt_place_numa_order(tp, home, order, 256);
        *numa = order[k % m];
        *core = jt_place_core_of_numa(tp, *numa, k / m, 0);
        if (k % m == 0)
            snprintf(why, whylen, "comm thread %d: core %d and memory of NUMA node %d; %.700s", k,
                     *core, *numa, home_why);
        else
            snprintf(why, whylen, "comm thread %d: core %d and memory of NUMA node %d, number %d "
                     "by distance from home node %d (hierarchical placement, distance %ld)", k, *core,
                     *numa, k % m + 1, home, jt_place_distance(tp, home, *numa, NULL));
        return 0;
    }
    int ncores = jt_topo_ncores(tp);
    *core = ncores > 0 ? k % ncores : 0;
    *numa = JT_MEM_ANY;
    snprintf(why, whylen, "%.700s: core %d, memory where first touched", home_why, *core);
    return -1;
}
