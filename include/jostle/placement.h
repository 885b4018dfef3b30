/*
 * jostle — placement of MPI ranks and of their progress threads on the cores of one host
 * (Taboada, COMPAS 2016).  Pure functions of (layout, number of ranks, policy): no binding,
 * no MPI, no global state; a program binds what they return.  Implemented in
 * src/topo/rank_place.c.
 *
 * A layout is the host as the seed's algorithms see it: NUMA nodes, each a run of
 * consecutive positions (its cores), numbered NUMA node by NUMA node.  Position p is the
 * hwloc logical core layout.core[p].
 *
 * Rank policies:
 *   packed   rank r on position r (mod cores)
 *   scatter  spread over the host, NUMA-blind: floor(r * cores / ranks) (MPC's default, seed
 *            figure 1a)
 *   numa     algorithm 1: ranks balanced over the NUMA nodes, spread within each (figure 1b)
 * Progress-thread policies:
 *   bind     the rank's own core (MPC's default, figure 2a)
 *   next     the next core of the host (wrapping), whatever its NUMA node
 *   numa     algorithm 2: a free core of the rank's NUMA node, or the rank's own core when
 *            none is free; never another node (figure 2b)
 */
#ifndef JOSTLE_PLACEMENT_H
#define JOSTLE_PLACEMENT_H

#include <hwloc.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define JT_LAYOUT_MAX_NUMA 256
#define JT_LAYOUT_MAX_CORES 4096

typedef struct jt_layout {
    int nnuma, ncores;
    int first[JT_LAYOUT_MAX_NUMA + 1]; /* node k holds positions [first[k], first[k+1]) */
    int core[JT_LAYOUT_MAX_CORES];     /* hwloc logical core index of each position */
} jt_layout;

typedef enum { JT_RANKS_PACKED, JT_RANKS_SCATTER, JT_RANKS_NUMA, JT_RANKS_COUNT_ } jt_rank_policy;
typedef enum { JT_PROG_BIND, JT_PROG_NEXT, JT_PROG_NUMA, JT_PROG_COUNT_ } jt_progress_policy;

extern const char *const jt_rank_policy_names[];     /* NULL-terminated, in enum order */
extern const char *const jt_progress_policy_names[];
/* The policy of that name, or -1. */
int jt_rank_policy_find(const char *name);
int jt_progress_policy_find(const char *name);

/* The seed's example machine, or any with equal NUMA nodes: positions are cores. */
int jt_layout_uniform(jt_layout *l, int nnuma, int cores_per_numa);
/* From an hwloc topology: each core under the first NUMA node it is local to; nodes holding no
 * core (memory only) are left out, so layout node k is the k-th node that holds cores.
 * Returns 0, or -1 with the reason in err (too many cores or nodes for the layout). */
int jt_layout_from_hwloc(jt_layout *l, hwloc_topology_t t, char *err, size_t errlen);
/* NUMA node of a position. */
int jt_layout_numa_of(const jt_layout *l, int pos);

/* Algorithm 1 exactly, in integers (the seed's rational floors and ceilings): the global
 * position of rank r of n on nnuma nodes of cpn cores; *in_node (may be NULL) gets
 * nb_tache_mpi_dans_local_numa, the ranks on that rank's node. */
int jt_seed_alg1(int r, int n, int nnuma, int cpn, int *in_node);
/* Algorithm 2 exactly: the progress thread's position from its rank's global position. */
int jt_seed_alg2(int cpn, int in_node, int pos_global);

/* Position of rank r of n under a policy; -1 for r outside [0, n) or an empty layout.  More
 * ranks than cores are allowed (positions repeat: oversubscription is the caller's call). */
int jt_placement_rank(const jt_layout *l, jt_rank_policy rp, int r, int n);
/* Position of rank r's progress thread, the ranks being placed by rp. */
int jt_placement_progress(const jt_layout *l, jt_rank_policy rp, jt_progress_policy pp, int r,
                          int n);
/* Both for every rank: rank_pos[n], prog_pos[n] (prog_pos may be NULL).  Returns 0 or -1. */
int jt_placement_map(const jt_layout *l, jt_rank_policy rp, jt_progress_policy pp, int n,
                     int *rank_pos, int *prog_pos);

#ifdef __cplusplus
}
#endif

#endif
