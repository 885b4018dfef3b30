/* Rank and progress-thread placement (Taboada, COMPAS 2016, algorithms 1 and 2); see
 * include/jostle/placement.h.  The NIC-relative placement of communication threads is
 * topo/nic_place.c. */
#include "jostle/placement.h"

#include <stdio.h>
#include <string.h>

const char *const jt_rank_policy_names[] = {"packed", "scatter", "numa", NULL};
const char *const jt_progress_policy_names[] = {"bind", "next", "numa", NULL};

static int find(const char *const *names, const char *name)
{
    for (int i = 0; name && names[i]; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

int jt_rank_policy_find(const char *name) { return find(jt_rank_policy_names, name); }
int jt_progress_policy_find(const char *name) { return find(jt_progress_policy_names, name); }

/* ceil(a / b) and floor(a / b) for a >= 0, b > 0: the seed's rationals, without rounding. */
static long cdiv(long a, long b) { return (a + b - 1) / b; }

int jt_layout_uniform(jt_layout *l, int nnuma, int cpn)
{
    if (nnuma < 1 || cpn < 1 || nnuma > JT_LAYOUT_MAX_NUMA || nnuma * cpn > JT_LAYOUT_MAX_CORES)
        return -1;
    l->nnuma = nnuma;
    l->ncores = nnuma * cpn;
    for (int k = 0; k <= nnuma; k++)
        l->first[k] = k * cpn;
    for (int p = 0; p < l->ncores; p++)
        l->core[p] = p;
    return 0;
}

int jt_layout_from_hwloc(jt_layout *l, hwloc_topology_t t, char *err, size_t errlen)
{
    hwloc_obj_type_t ct = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE
                                                                          : HWLOC_OBJ_PU;
    int ncores = hwloc_get_nbobjs_by_type(t, ct);
    int nnuma = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
    if (ncores > JT_LAYOUT_MAX_CORES || nnuma > JT_LAYOUT_MAX_NUMA || ncores < 1) {
        snprintf(err, errlen, "a topology of %d cores and %d NUMA nodes is outside the placement "
                 "engine's range (1 to %d cores, %d nodes)", ncores, nnuma, JT_LAYOUT_MAX_CORES,
                 JT_LAYOUT_MAX_NUMA);
        return -1;
    }
    memset(l, 0, sizeof *l);
    /* Each core under the first node it is local to (node 0 when none claims it), node by
     * node in logical order.  Only nodes holding a core take part: a memory-only node (KNL
     * MCDRAM, HBM, CXL) would have 0 cores, algorithm 1 would put ranks on it at first[k]
     * (outside it, maybe == ncores) and the numa progress policy would find no node.  (hwloc
     * lists it after the nodes below it, so it is never a core's first.)  Every core has a
     * node, so one is left at least: all cores on node 0 when no node is local to any. */
    int m = 0, nodes = 0;
    for (int k = 0; k < (nnuma > 0 ? nnuma : 1); k++) {
        l->first[nodes] = m;
        for (int c = 0; c < ncores; c++) {
            hwloc_obj_t co = hwloc_get_obj_by_type(t, ct, (unsigned)c);
            int node = 0;
            for (int j = 0; j < nnuma; j++)
                if (hwloc_bitmap_intersects(co->nodeset,
                                            hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE,
                                                                  (unsigned)j)->nodeset)) {
                    node = j;
                    break;
                }
            if (node == k)
                l->core[m++] = c;
        }
        if (m > l->first[nodes])
            nodes++;
    }
    l->nnuma = nodes;
    l->ncores = m;
    l->first[nodes] = m;
    return 0;
}

int jt_layout_numa_of(const jt_layout *l, int pos)
{
    for (int k = 0; k < l->nnuma; k++)
        if (pos >= l->first[k] && pos < l->first[k + 1])
            return k;
    return -1;
}

/* ---- the seed's algorithms, as printed ------------------------------------------------- */

int jt_seed_alg1(int r, int n, int nnuma, int cpn, int *in_node)
{
    long id_numa = (long)r * nnuma / n;
    long id_local = r - cdiv(id_numa * n, nnuma);
    long local_n = cdiv((id_numa + 1) * n, nnuma) - cdiv(id_numa * n, nnuma);
    long pos_local = id_local * cpn / local_n;
    if (in_node)
        *in_node = (int)local_n;
    return (int)(pos_local + id_numa * cpn);
}

int jt_seed_alg2(int cpn, int in_node, int pos_global)
{
    if (in_node >= cpn)
        return pos_global;
    /* esp = cpn / (cpn - in_node); ceil((floor(pos / esp) + 1) * esp) - 1 */
    long free_n = cpn - in_node;
    long q = (long)pos_global * free_n / cpn;
    return (int)(cdiv((q + 1) * cpn, free_n) - 1);
}

/* ---- policies over a layout ------------------------------------------------------------ */

/* Algorithm 1 with each node's own core count (the seed's cpu_par_numa when they are equal). */
static int numa_rank(const jt_layout *l, int r, int n, int *in_node)
{
    long N = l->nnuma, id = (long)r * N / n;
    long id_local = r - cdiv(id * n, N);
    long local_n = cdiv((id + 1) * n, N) - cdiv(id * n, N);
    long cpn = l->first[id + 1] - l->first[id];
    if (in_node)
        *in_node = (int)local_n;
    return l->first[id] + (int)(id_local * cpn / local_n);
}

int jt_placement_rank(const jt_layout *l, jt_rank_policy rp, int r, int n)
{
    if (r < 0 || r >= n || l->ncores < 1)
        return -1;
    switch (rp) {
    case JT_RANKS_PACKED: return r % l->ncores;
    case JT_RANKS_SCATTER: return (int)((long)r * l->ncores / n) % l->ncores;
    case JT_RANKS_NUMA: return numa_rank(l, r, n, NULL);
    default: return -1;
    }
}

static int holds_rank(const jt_layout *l, jt_rank_policy rp, int n, int pos)
{
    for (int q = 0; q < n; q++)
        if (jt_placement_rank(l, rp, q, n) == pos)
            return 1;
    return 0;
}

/* Algorithm 2 within the rank's node.  Under algorithm 1 its result is always a free core of
 * the node (checked exhaustively in tests/c/test_placement.c); ranks placed otherwise may sit
 * on it, and then the next free core of the node is taken. */
static int numa_progress(const jt_layout *l, jt_rank_policy rp, int r, int n)
{
    int pos = jt_placement_rank(l, rp, r, n), k = jt_layout_numa_of(l, pos);
    int lo = l->first[k], cpn = l->first[k + 1] - lo, in_node = 0;
    for (int q = 0; q < n; q++)
        in_node += jt_layout_numa_of(l, jt_placement_rank(l, rp, q, n)) == k;
    int p = lo + jt_seed_alg2(cpn, in_node, pos - lo);
    if (in_node >= cpn || rp == JT_RANKS_NUMA)
        return p;
    for (int s = 0; s < cpn; s++) {
        int c = lo + (p - lo + s) % cpn;
        if (!holds_rank(l, rp, n, c))
            return c;
    }
    return pos; /* every core of the node holds a rank */
}

int jt_placement_progress(const jt_layout *l, jt_rank_policy rp, jt_progress_policy pp, int r,
                          int n)
{
    int pos = jt_placement_rank(l, rp, r, n);
    if (pos < 0)
        return -1;
    switch (pp) {
    case JT_PROG_BIND: return pos;
    case JT_PROG_NEXT: return (pos + 1) % l->ncores;
    case JT_PROG_NUMA: return numa_progress(l, rp, r, n);
    default: return -1;
    }
}

int jt_placement_map(const jt_layout *l, jt_rank_policy rp, jt_progress_policy pp, int n,
                     int *rank_pos, int *prog_pos)
{
    for (int r = 0; r < n; r++) {
        rank_pos[r] = jt_placement_rank(l, rp, r, n);
        if (prog_pos)
            prog_pos[r] = jt_placement_progress(l, rp, pp, r, n);
        if (rank_pos[r] < 0 || (prog_pos && prog_pos[r] < 0))
            return -1;
    }
    return 0;
}
