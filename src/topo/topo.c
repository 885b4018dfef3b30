#include "topo/topo.h"

#include "core/json.h"
#include "topo/xmlcheck.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int jt_topo_load(jt_topo *tp, const char *xml, char *err, size_t errlen)
{
    memset(tp, 0, sizeof *tp);
    /* Judged before hwloc sees it: hwloc trusts the sets of an XML file and may crash. */
    if (xml && jt_xml_check(xml, err, errlen) != 0)
        return -1;
    if (hwloc_topology_init(&tp->t) != 0) {
        snprintf(err, errlen, "hwloc_topology_init failed");
        return -1;
    }
    /* NICs are I/O objects: they must be asked for before loading. */
    hwloc_topology_set_io_types_filter(tp->t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (xml && hwloc_topology_set_xml(tp->t, xml) != 0) {
        snprintf(err, errlen, "topology file '%s' is not a valid hwloc XML topology", xml);
        hwloc_topology_destroy(tp->t);
        return -1;
    }
    if (hwloc_topology_load(tp->t) != 0) {
        snprintf(err, errlen, "hwloc could not load the topology%s%s: %s", xml ? " from " : "",
                 xml ? xml : "", strerror(errno));
        hwloc_topology_destroy(tp->t);
        return -1;
    }
    tp->this_system = hwloc_topology_is_thissystem(tp->t);
    snprintf(tp->source, sizeof tp->source, "%s", xml ? xml : "this system");
    return 0;
}

void jt_topo_destroy(jt_topo *tp)
{
    if (tp->t)
        hwloc_topology_destroy(tp->t);
    tp->t = NULL;
}

/* Cores, or PUs on the rare machine whose cores are not reported. */
static hwloc_obj_type_t core_type(const jt_topo *tp)
{
    return hwloc_get_nbobjs_by_type(tp->t, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
}

int jt_topo_ncores(const jt_topo *tp)
{
    return hwloc_get_nbobjs_by_type(tp->t, core_type(tp));
}

int jt_topo_nnuma(const jt_topo *tp)
{
    int n = hwloc_get_nbobjs_by_type(tp->t, HWLOC_OBJ_NUMANODE);
    return n > 0 ? n : 1;
}

hwloc_obj_t jt_topo_core(const jt_topo *tp, int core)
{
    return hwloc_get_obj_by_type(tp->t, core_type(tp), (unsigned)core);
}

hwloc_obj_t jt_topo_numa(const jt_topo *tp, int node)
{
    return hwloc_get_obj_by_type(tp->t, HWLOC_OBJ_NUMANODE, (unsigned)node);
}

int jt_topo_numa_of_nodeset(const jt_topo *tp, hwloc_const_nodeset_t set)
{
    hwloc_obj_t n = NULL;
    while ((n = hwloc_get_next_obj_by_type(tp->t, HWLOC_OBJ_NUMANODE, n)))
        if (hwloc_bitmap_isset(set, n->os_index))
            return (int)n->logical_index;
    return -1;
}

int jt_topo_numa_of_core(const jt_topo *tp, int core)
{
    hwloc_obj_t c = jt_topo_core(tp, core);
    return c ? jt_topo_numa_of_nodeset(tp, c->nodeset) : -1;
}

/* The NIC's NUMA nodes: those local to its closest non-I/O ancestor, as a set (a package of
 * two nodes, cluster-on-die or sub-NUMA clustering with the I/O above the nodes); unknown when
 * that ancestor is the whole machine of several nodes (hwloc could not place the NIC). */
static unsigned long long nic_numa_set(const jt_topo *tp, hwloc_obj_t osdev)
{
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(tp->t, osdev);
    if (jt_topo_nnuma(tp) == 1)
        return 1;
    if (!anc || !anc->nodeset || anc == hwloc_get_root_obj(tp->t))
        return 0;
    unsigned long long set = 0;
    hwloc_obj_t n = NULL;
    while ((n = hwloc_get_next_obj_by_type(tp->t, HWLOC_OBJ_NUMANODE, n)))
        if (n->logical_index < 64 && hwloc_bitmap_isset(anc->nodeset, n->os_index))
            set |= 1ULL << n->logical_index;
    return set;
}

int jt_topo_nics(const jt_topo *tp, jt_nic *out, int max)
{
    int n = 0;
    hwloc_obj_t o = NULL;
    while ((o = hwloc_get_next_osdev(tp->t, o)) && n < max) {
        hwloc_obj_osdev_type_t ty = o->attr->osdev.type;
        if (ty != HWLOC_OBJ_OSDEV_NETWORK && ty != HWLOC_OBJ_OSDEV_OPENFABRICS)
            continue;
        jt_nic *nic = &out[n++];
        memset(nic, 0, sizeof *nic);
        snprintf(nic->name, sizeof nic->name, "%s", o->name ? o->name : "?");
        nic->kind = ty == HWLOC_OBJ_OSDEV_NETWORK ? "network" : "openfabrics";
        hwloc_obj_t p = o->parent;
        while (p && p->type != HWLOC_OBJ_PCI_DEVICE)
            p = p->parent;
        if (p) {
            const struct hwloc_pcidev_attr_s *a = &p->attr->pcidev;
            snprintf(nic->pci, sizeof nic->pci, "%04x:%02x:%02x.%01x", a->domain, a->bus, a->dev,
                     a->func);
            nic->link_gbps = a->linkspeed;
        }
        nic->numa_set = nic_numa_set(tp, o);
        nic->numa = -1;
        for (int k = 63; k >= 0; k--)
            if (nic->numa_set >> k & 1)
                nic->numa = k;
    }
    return n;
}

/* The value of the first line of PATH that starts with KEY (after KEY and any of " \t:=\""),
 * without its end; the whole first line when KEY is "". */
static int file_value(const char *path, const char *key, char *out, size_t len)
{
    FILE *f = fopen(path, "r");
    char line[512];
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f)) {
        if (strncmp(line, key, strlen(key)) != 0)
            continue;
        char *v = line + strlen(key);
        v += strspn(v, " \t:=\"");
        v[strcspn(v, "\"\n")] = '\0';
        snprintf(out, len, "%s", v);
        found = 1;
    }
    if (f)
        fclose(f);
    return found;
}

static void kstr_or_null(jt_json *j, const char *key, const char *v)
{
    jt_json_key(j, key);
    jt_json_str(j, v && *v ? v : NULL);
}

/* What else decides a figure's numbers on this host: kernel, OS, CPU frequency and governor
 * (null where there is no cpufreq, as in most VMs). Read from the running system only. */
static void system_json(const jt_topo *tp, jt_json *j)
{
    hwloc_obj_t root = hwloc_get_root_obj(tp->t);
    const char *os = hwloc_obj_get_info_by_name(root, "OSName");
    const char *rel = hwloc_obj_get_info_by_name(root, "OSRelease");
    char kernel[160] = "", distro[160] = "", gov[64] = "", mhz[64] = "";
    if (os)
        snprintf(kernel, sizeof kernel, "%s %s", os, rel ? rel : "");
    if (tp->this_system) {
        file_value("/etc/os-release", "PRETTY_NAME", distro, sizeof distro);
        file_value("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "", gov, sizeof gov);
        char khz[64];
        if (file_value("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "", khz, sizeof khz))
            snprintf(mhz, sizeof mhz, "%.0f", atof(khz) / 1000.0);
        else
            file_value("/proc/cpuinfo", "cpu MHz", mhz, sizeof mhz);
    }
    kstr_or_null(j, "kernel", kernel);
    kstr_or_null(j, "os", distro);
    kstr_or_null(j, "cpu_governor", gov);
    jt_json_key(j, "cpu_mhz");
    if (*mhz)
        jt_json_num(j, atof(mhz));
    else
        jt_json_null(j);
}

void jt_topo_machine_json(const jt_topo *tp, jt_json *j)
{
    hwloc_obj_t root = hwloc_get_root_obj(tp->t);
    hwloc_obj_t pkg = hwloc_get_obj_by_type(tp->t, HWLOC_OBJ_PACKAGE, 0);
    const char *cpu = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUModel") : NULL;
    jt_json_object(j);
    jt_json_kstr(j, "cpu", cpu ? cpu : "unknown");
    jt_json_kint(j, "packages", hwloc_get_nbobjs_by_type(tp->t, HWLOC_OBJ_PACKAGE));
    jt_json_kint(j, "cores", jt_topo_ncores(tp));
    jt_json_kint(j, "pus", hwloc_get_nbobjs_by_type(tp->t, HWLOC_OBJ_PU));
    jt_json_kint(j, "numa_nodes", jt_topo_nnuma(tp));
    jt_json_kint(j, "memory_bytes", (long long)root->total_memory);
    hwloc_obj_t llc = NULL;
    for (int d = 0; d < hwloc_topology_get_depth(tp->t) && !llc; d++) {
        hwloc_obj_t o = hwloc_get_obj_by_depth(tp->t, d, 0);
        if (o && hwloc_obj_type_is_dcache(o->type))
            llc = o;
    }
    jt_json_kint(j, "llc_bytes", llc ? (long long)llc->attr->cache.size : 0);
    jt_json_kstr(j, "topology", tp->source);
    jt_json_kbool(j, "this_system", tp->this_system);
    system_json(tp, j);
    jt_json_key(j, "nics");
    jt_json_array(j);
    jt_nic nics[JT_NIC_MAX];
    int nn = jt_topo_nics(tp, nics, JT_NIC_MAX);
    for (int i = 0; i < nn; i++) {
        jt_json_object(j);
        jt_json_kstr(j, "name", nics[i].name);
        jt_json_kstr(j, "kind", nics[i].kind);
        jt_json_key(j, "pci");
        jt_json_str(j, nics[i].pci[0] ? nics[i].pci : NULL);
        jt_json_key(j, "numa");
        if (nics[i].numa >= 0)
            jt_json_int(j, nics[i].numa);
        else
            jt_json_null(j);
        jt_json_key(j, "numa_set");
        jt_json_array(j);
        for (int k = 0; k < 64; k++)
            if (nics[i].numa_set >> k & 1)
                jt_json_int(j, k);
        jt_json_end(j);
        jt_json_key(j, "link_gbps");
        if (nics[i].link_gbps > 0)
            jt_json_num(j, nics[i].link_gbps);
        else
            jt_json_null(j);
        jt_json_end(j);
    }
    jt_json_end(j);
    jt_json_end(j);
}

size_t jt_topo_llc_bytes(const jt_topo *tp, int *count)
{
    for (int d = 0; d < hwloc_topology_get_depth(tp->t); d++) {
        hwloc_obj_t o = hwloc_get_obj_by_depth(tp->t, d, 0);
        if (o && hwloc_obj_type_is_dcache(o->type)) {
            if (count)
                *count = (int)hwloc_get_nbobjs_by_depth(tp->t, d);
            return (size_t)o->attr->cache.size;
        }
    }
    if (count)
        *count = 0;
    return 0;
}
