/* The machine as hwloc sees it (or a saved XML topology): cores, NUMA nodes, NICs. */
#ifndef JT_TOPO_H
#define JT_TOPO_H

#include <hwloc.h>
#include <stddef.h>

struct jt_json;

typedef struct jt_topo {
    hwloc_topology_t t;
    int this_system;    /* binding is only meaningful when the topology is the running machine */
    char source[4096];  /* "this system" or the XML path */
} jt_topo;

#define JT_NIC_MAX 16

typedef struct jt_nic {
    char name[64];      /* OS device name: ib0, mlx5_0, eth0 */
    const char *kind;   /* "network" or "openfabrics" */
    char pci[32];       /* PCI bus id, "" when not on PCI */
    int numa;           /* logical index of the NUMA node it is attached to, -1 when unknown;
                         * the first of numa_set when it hangs above several */
    unsigned long long numa_set; /* bit n: logical NUMA node n is local to it (nodes 0-63), 0
                                  * when unknown: a NIC on a package of two nodes has both */
    double link_gbps;   /* PCI link speed in GB/s, 0 when unknown */
} jt_nic;

/* Loads the running machine (xml == NULL) or an XML file, I/O devices kept.  Returns 0, or
 * -1 with a message in err. */
int jt_topo_load(jt_topo *tp, const char *xml, char *err, size_t errlen);
void jt_topo_destroy(jt_topo *tp);

int jt_topo_ncores(const jt_topo *tp);
int jt_topo_nnuma(const jt_topo *tp);
hwloc_obj_t jt_topo_core(const jt_topo *tp, int core);
hwloc_obj_t jt_topo_numa(const jt_topo *tp, int node);
/* Logical NUMA node whose memory is local to this core (-1 if none). */
int jt_topo_numa_of_core(const jt_topo *tp, int core);
/* Logical index of the first NUMA node in a nodeset, -1 if empty. */
int jt_topo_numa_of_nodeset(const jt_topo *tp, hwloc_const_nodeset_t set);

int jt_topo_nics(const jt_topo *tp, jt_nic *out, int max);

/* Bytes of one last-level cache (the first data cache met from the top), 0 when hwloc knows
 * none; *count (may be NULL) gets how many the machine has. */
size_t jt_topo_llc_bytes(const jt_topo *tp, int *count);

/* The machine object of the run metadata (see docs/records.md). */
void jt_topo_machine_json(const jt_topo *tp, struct jt_json *j);

#endif
