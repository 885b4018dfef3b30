/* Communication placement (NUIOA, Moreaud 2007) on every XML of share/topologies: near is the
 * NIC's node, far another one, the hierarchy follows the distances, several NICs are weighed,
 * binding is skipped with a note; and the XML check refuses files hwloc could crash on. */
#include "check.h"

#include "topo/bind.h"
#include "topo/nic_place.h"
#include "topo/xmlcheck.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *src(void)
{
    const char *s = getenv("JOSTLE_SOURCE_DIR");
    return s ? s : ".";
}

static int load(jt_topo *tp, const char *name)
{
    char path[4096], err[1024];
    snprintf(path, sizeof path, "%s/share/topologies/%s", src(), name);
    if (jt_topo_load(tp, path, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    return 0;
}

/* The rules every topology must obey, whatever its shape. */
static void common_rules(const char *name, int nic_node)
{
    jt_topo tp;
    CHECK(load(&tp, name) == 0);
    if (!tp.t)
        return;
    int nn = jt_topo_nnuma(&tp), core, numa;
    char why[1024];
    CHECK(!tp.this_system);
    /* near: the NIC's node, for comm thread 0 and as home */
    CHECK(jt_place_comm_home(&tp, NULL, JT_FAVOR_LATENCY, why, sizeof why, NULL, 0, NULL) == nic_node);
    CHECK(jt_place_comm(&tp, NULL, JT_FAVOR_LATENCY, 0, &core, &numa, why, sizeof why) == 0);
    CHECK(numa == nic_node);
    CHECK(jt_topo_numa_of_core(&tp, core) == nic_node);
    CHECK(strstr(why, "NUMA node") != NULL);
    /* far: another node, the most distant */
    int far = jt_place_far_numa(&tp, 1ULL << nic_node);
    CHECK(nn == 1 ? far == nic_node : far != nic_node);
    for (int j = 0; j < nn; j++)
        CHECK(jt_place_distance(&tp, nic_node, j, NULL) <=
              jt_place_distance(&tp, nic_node, far, NULL));
    /* hierarchy: thread k on the k-th node by distance, distances never decrease */
    int order[256], m = jt_place_numa_order(&tp, nic_node, order, 256);
    CHECK(m == nn && order[0] == nic_node);
    long last = -1;
    for (int k = 0; k < nn; k++) {
        CHECK(jt_place_comm(&tp, NULL, JT_FAVOR_LATENCY, k, &core, &numa, why, sizeof why) == 0);
        long d = jt_place_distance(&tp, nic_node, numa, NULL);
        CHECK(d >= last);
        CHECK(jt_topo_numa_of_core(&tp, core) == numa);
        last = d;
    }
    /* one more round: the NIC's node again, on its next core */
    jt_place_comm(&tp, NULL, JT_FAVOR_LATENCY, nn, &core, &numa, why, sizeof why);
    CHECK(numa == nic_node);
    CHECK(core == jt_place_core_of_numa(&tp, nic_node, 1, 0));
    /* binding is skipped with a note on a topology that is not this system */
    jt_binding b;
    jt_bind_thread(&tp, core, &b);
    CHECK(!b.ok && strstr(b.note, "not this system") != NULL);
    /* an absent NIC name is refused, with the names that exist */
    CHECK(jt_place_comm_home(&tp, "nosuchnic0", JT_FAVOR_LATENCY, why, sizeof why, NULL, 0, NULL) < 0);
    CHECK(strstr(why, "nosuchnic0") != NULL);
    jt_topo_destroy(&tp);
}

static void hagrid_hierarchy(void)
{
    /* Seed 001 sec. 1: from node 0, one link to {1, 2}, two to {3, 4}, three to {5, 6, 7}. */
    jt_topo tp;
    if (load(&tp, "opteron-8numa.xml") != 0)
        return;
    int order[8], hops[8] = {0, 1, 1, 2, 2, 3, 3, 3};
    int hop_of[8] = {0, 1, 1, 2, 2, 3, 3, 3}; /* node -> hops from 0 */
    CHECK(jt_place_numa_order(&tp, 0, order, 8) == 8);
    for (int k = 0; k < 8; k++)
        CHECK(hop_of[order[k]] == hops[k]);
    CHECK(jt_place_far_numa(&tp, 1) == 5); /* 0 -> 5 crosses 4 links (table 3.1) */
    jt_topo_destroy(&tp);
}

static void henri_sockets(void)
{
    /* SNC-2: node 1 (same socket) before nodes 2 and 3 (the other socket). */
    jt_topo tp;
    if (load(&tp, "henri.xml") != 0)
        return;
    int order[4];
    jt_place_numa_order(&tp, 0, order, 4);
    CHECK(order[0] == 0 && order[1] == 1 && order[2] == 2 && order[3] == 3);
    CHECK(jt_place_far_numa(&tp, 1) == 2); /* of the equally far 2 and 3, the lowest */
    int core, numa;
    char why[1024];
    jt_place_comm(&tp, "mlx5_0", JT_FAVOR_LATENCY, 1, &core, &numa, why, sizeof why);
    CHECK(numa == 1 && core == 9);
    jt_topo_destroy(&tp);
}

static void one_node(void)
{
    jt_topo tp;
    if (load(&tp, "this-vm.xml") != 0)
        return;
    int core, numa;
    char why[1024];
    CHECK(jt_place_far_numa(&tp, 1) == 0);
    jt_place_comm(&tp, NULL, JT_FAVOR_LATENCY, 1, &core, &numa, why, sizeof why);
    CHECK(numa == 0 && core == 1);
    jt_topo_destroy(&tp);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static void xml_check(void)
{
    char err[1024], path[4096];
    const char *names[] = {"henri.xml", "opteron-2numa-nic0.xml", "opteron-2numa-nic1.xml",
                           "opteron-8numa.xml", "this-vm.xml"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/share/topologies/%s", src(), names[i]);
        CHECK(jt_xml_check(path, err, sizeof err) == 0);
    }
    const char *tmp = "test_place_comm.tmp.xml";
    write_file(tmp, "<html><body>no</body></html>");
    CHECK(jt_xml_check(tmp, err, sizeof err) != 0 && strstr(err, "no <topology>"));
    write_file(tmp, "<topology version=\"2.0\">\n<object type=\"Machine\" os_index=\"0\" "
                    "cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\">\n</object>\n"
                    "</topology>\n");
    CHECK(jt_xml_check(tmp, err, sizeof err) != 0 && strstr(err, "complete_nodeset") &&
          strstr(err, "line 2"));
    jt_topo tp;
    CHECK(jt_topo_load(&tp, tmp, err, sizeof err) != 0); /* refused before hwloc sees it */
    write_file(tmp, "<topology version=\"2.0\">\n<object type=\"Machine\" cpuset=\"0x1\" "
                    "complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\">\n"
                    "<object type=\"PCIDev\" pci_busid=\"0000:00:03.0\">");
    CHECK(jt_xml_check(tmp, err, sizeof err) != 0 && strstr(err, "truncated"));
    remove(tmp);
    CHECK(jt_xml_check("/nonexistent/x.xml", err, sizeof err) != 0 && strstr(err, "cannot be read"));
}

int main(void)
{
    common_rules("henri.xml", 0);
    common_rules("opteron-2numa-nic0.xml", 0);
    common_rules("opteron-2numa-nic1.xml", 1);
    common_rules("opteron-8numa.xml", 0);
    common_rules("this-vm.xml", 0);
    hagrid_hierarchy();
    henri_sockets();
    one_node();
    xml_check();
    TEST_END();
}
