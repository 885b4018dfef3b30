#include "topo/describe.h"

#include "core/json.h"
#include "topo/bind.h"

#include <stdio.h>
#include <string.h>

/* OS indexes of the PUs of a cpuset. */
static void pus(const jt_topo *tp, hwloc_const_cpuset_t set, jt_json *j)
{
    jt_json_array(j);
    hwloc_obj_t pu = NULL;
    while ((pu = hwloc_get_next_obj_inside_cpuset_by_type(tp->t, set, HWLOC_OBJ_PU, pu)))
        jt_json_int(j, pu->os_index);
    jt_json_end(j);
}

/* Logical indexes of the cores inside a cpuset. */
static void cores_in(const jt_topo *tp, hwloc_const_cpuset_t set, jt_json *j)
{
    jt_json_array(j);
    for (int c = 0; c < jt_topo_ncores(tp); c++)
        if (hwloc_bitmap_isincluded(jt_topo_core(tp, c)->cpuset, set))
            jt_json_int(j, c);
    jt_json_end(j);
}

static void numa_in(const jt_topo *tp, hwloc_const_nodeset_t set, jt_json *j)
{
    jt_json_array(j);
    hwloc_obj_t n = NULL;
    while ((n = hwloc_get_next_obj_by_type(tp->t, HWLOC_OBJ_NUMANODE, n)))
        if (hwloc_bitmap_isset(set, n->os_index))
            jt_json_int(j, n->logical_index);
    jt_json_end(j);
}

static void caches(const jt_topo *tp, jt_json *j)
{
    jt_json_array(j);
    for (int d = 0; d < hwloc_topology_get_depth(tp->t); d++) {
        hwloc_obj_t o = hwloc_get_obj_by_depth(tp->t, d, 0);
        if (!o || !hwloc_obj_type_is_cache(o->type))
            continue;
        static const char *const kinds[] = {"unified", "data", "instruction"};
        int ty = (int)o->attr->cache.type;
        jt_json_object(j);
        jt_json_kint(j, "level", o->attr->cache.depth);
        jt_json_kstr(j, "type", ty >= 0 && ty < 3 ? kinds[ty] : "?");
        jt_json_kint(j, "bytes", (long long)o->attr->cache.size);
        jt_json_kint(j, "line_bytes", o->attr->cache.linesize);
        jt_json_kint(j, "count", hwloc_get_nbobjs_by_depth(tp->t, d));
        jt_json_kint(j, "cores_each", hwloc_get_nbobjs_inside_cpuset_by_type(
                                          tp->t, o->cpuset, jt_topo_ncores(tp) ==
                                          hwloc_get_nbobjs_by_type(tp->t, HWLOC_OBJ_CORE)
                                              ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU));
        jt_json_end(j);
    }
    jt_json_end(j);
}

void jt_topo_describe_json(const jt_topo *tp, jt_json *j)
{
    jt_json_object(j);
    jt_json_key(j, "machine");
    jt_topo_machine_json(tp, j);

    jt_json_key(j, "packages");
    jt_json_array(j);
    hwloc_obj_t o = NULL;
    while ((o = hwloc_get_next_obj_by_type(tp->t, HWLOC_OBJ_PACKAGE, o))) {
        const char *cpu = hwloc_obj_get_info_by_name(o, "CPUModel");
        jt_json_object(j);
        jt_json_kint(j, "index", o->logical_index);
        jt_json_kstr(j, "cpu", cpu ? cpu : "unknown");
        jt_json_key(j, "cores");
        cores_in(tp, o->cpuset, j);
        jt_json_key(j, "numa_nodes");
        numa_in(tp, o->nodeset, j);
        jt_json_end(j);
    }
    jt_json_end(j);

    int nn = jt_topo_nnuma(tp);
    jt_json_key(j, "numa_nodes");
    jt_json_array(j);
    for (int n = 0; n < nn; n++) {
        hwloc_obj_t no = jt_topo_numa(tp, n);
        jt_json_object(j);
        jt_json_kint(j, "index", n);
        jt_json_kint(j, "os_index", no ? no->os_index : 0);
        jt_json_kint(j, "memory_bytes", no ? (long long)no->attr->numanode.local_memory
                                           : (long long)hwloc_get_root_obj(tp->t)->total_memory);
        jt_json_key(j, "cores");
        cores_in(tp, no ? no->cpuset : hwloc_get_root_obj(tp->t)->cpuset, j);
        jt_json_end(j);
    }
    jt_json_end(j);

    jt_json_key(j, "cores");
    jt_json_array(j);
    for (int c = 0; c < jt_topo_ncores(tp); c++) {
        hwloc_obj_t co = jt_topo_core(tp, c);
        hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(tp->t, HWLOC_OBJ_PACKAGE, co);
        jt_json_object(j);
        jt_json_kint(j, "index", c);
        jt_json_kint(j, "os_index", co->os_index);
        jt_json_kint(j, "numa", jt_topo_numa_of_core(tp, c));
        jt_json_kint(j, "package", pkg ? (long long)pkg->logical_index : 0);
        jt_json_key(j, "pus");
        pus(tp, co->cpuset, j);
        jt_json_end(j);
    }
    jt_json_end(j);

    jt_json_key(j, "caches");
    caches(tp, j);

    int from_matrix = 0;
    jt_json_key(j, "distances");
    jt_json_object(j);
    jt_json_key(j, "values");
    jt_json_array(j);
    for (int a = 0; a < nn; a++) {
        jt_json_array(j);
        for (int b = 0; b < nn; b++)
            jt_json_int(j, jt_place_distance(tp, a, b, &from_matrix));
        jt_json_end(j);
    }
    jt_json_end(j);
    jt_json_kstr(j, "source", from_matrix ? "hwloc latency matrix (the OS's, e.g. ACPI SLIT)"
                                          : "none in the topology: derived from hwloc's tree");
    jt_json_end(j);
    jt_json_end(j);
}

int jt_place_advice_json(const jt_topo *tp, const char *nic, jt_favor favor, int threads,
                         jt_json *j)
{
    char why[1024], unknown[512];
    unsigned long long near = 0;
    int home = jt_place_comm_home(tp, nic, favor, why, sizeof why, unknown, sizeof unknown, &near);
    jt_json_object(j);
    jt_json_kstr(j, "topology", tp->source);
    jt_json_kbool(j, "this_system", tp->this_system);
    jt_json_kstr(j, "favor", jt_favor_names[favor]);
    jt_json_key(j, "nic");
    jt_json_str(j, nic);
    jt_json_key(j, "home_numa");
    if (home >= 0)
        jt_json_int(j, home);
    else
        jt_json_null(j);
    jt_json_key(j, "near_numa"); /* every node that counts as near: a NIC may hang above several */
    jt_json_array(j);
    for (int k = 0; k < 64; k++)
        if (near >> k & 1)
            jt_json_int(j, k);
    jt_json_end(j);
    jt_json_kstr(j, "why", why);
    jt_json_key(j, "order");
    jt_json_array(j);
    int order[256], m = home >= 0 ? jt_place_numa_order(tp, home, order, 256) : 0;
    for (int i = 0; i < m; i++) {
        jt_json_object(j);
        jt_json_kint(j, "numa", order[i]);
        jt_json_kint(j, "distance", jt_place_distance(tp, home, order[i], NULL));
        jt_json_end(j);
    }
    jt_json_end(j);
    /* near and far as the benchmarks' --comm-core near/far take them (harness.c). */
    int far = home >= 0 ? jt_place_far_numa(tp, near) : -1;
    jt_json_key(j, "far_numa");
    if (far >= 0)
        jt_json_int(j, far);
    else
        jt_json_null(j);
    jt_json_key(j, "threads");
    jt_json_array(j);
    for (int k = 0; k < threads; k++) {
        int core, numa;
        jt_place_comm(tp, nic, favor, k, &core, &numa, why, sizeof why);
        jt_json_object(j);
        jt_json_kint(j, "thread", k);
        jt_json_kint(j, "core", core);
        if (home >= 0) {
            jt_json_kint(j, "near_core", jt_place_core_of_numa(tp, home, k, 0));
            jt_json_kint(j, "far_core", jt_place_core_of_numa(tp, far, k, 1));
        }
        jt_json_key(j, "numa");
        if (numa >= 0)
            jt_json_int(j, numa);
        else
            jt_json_null(j);
        jt_json_kstr(j, "why", why);
        jt_json_end(j);
    }
    jt_json_end(j);
    /* What no topology can tell: said every time, so that the advice is not over-trusted. */
    jt_json_key(j, "unknown");
    jt_json_array(j);
    if (unknown[0])
        jt_json_str(j, unknown);
    jt_json_str(j, "which NIC the MPI library really uses (pass --nic to be sure)");
    jt_json_str(j, "how busy the cores and memory of each node will be: the advice assumes the "
                   "communication threads get cores of their own");
    if (!tp->this_system)
        jt_json_str(j, "the binding itself: the topology is not this system, nothing was bound");
    jt_json_end(j);
    jt_json_end(j);
    return home >= 0 ? 0 : -1;
}
