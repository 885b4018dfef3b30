/* Placement engine: the seed's example (8 cores, 2 NUMA nodes, 1 to 8 ranks: figures 1 and 2
 * of Taboada 2016) exactly, the algorithms against every small uniform machine, the policies'
 * properties on the XML topologies of share/topologies, and a memory-only NUMA node
 * (memonly-numa.xml) left out of the placement. */
#include "check.h"

#include "jostle/placement.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

/* Figure 1b (algorithm 1) and figure 2b (algorithm 2), row n = ranks 0..n-1; checked by hand
 * against the seed's text: 3 ranks leave free cores on both nodes and their threads use them;
 * 7 ranks fill node 0 (threads on the ranks' cores) and share node 1's free core 7. */
static const int alg1_rows[8][8] = {
    {0}, {0, 4}, {0, 2, 4}, {0, 2, 4, 6}, {0, 1, 2, 4, 6}, {0, 1, 2, 4, 5, 6},
    {0, 1, 2, 3, 4, 5, 6}, {0, 1, 2, 3, 4, 5, 6, 7},
};
static const int alg2_rows[8][8] = {
    {1}, {1, 5}, {1, 3, 5}, {1, 3, 5, 7}, {3, 3, 3, 5, 7}, {3, 3, 3, 7, 7, 7},
    {0, 1, 2, 3, 7, 7, 7}, {0, 1, 2, 3, 4, 5, 6, 7},
};
/* Figure 1a: MPC's default, spread over the host whatever the nodes. */
static const int scatter_rows[8][8] = {
    {0}, {0, 4}, {0, 2, 5}, {0, 2, 4, 6}, {0, 1, 3, 4, 6}, {0, 1, 2, 4, 5, 6},
    {0, 1, 2, 3, 4, 5, 6}, {0, 1, 2, 3, 4, 5, 6, 7},
};

static void seed_example(void)
{
    jt_layout l;
    CHECK(jt_layout_uniform(&l, 2, 4) == 0);
    for (int n = 1; n <= 8; n++)
        for (int r = 0; r < n; r++) {
            int in_node, g = jt_seed_alg1(r, n, 2, 4, &in_node);
            CHECK(g == alg1_rows[n - 1][r]);
            CHECK(jt_seed_alg2(4, in_node, g) == alg2_rows[n - 1][r]);
            CHECK(jt_placement_rank(&l, JT_RANKS_NUMA, r, n) == alg1_rows[n - 1][r]);
            CHECK(jt_placement_progress(&l, JT_RANKS_NUMA, JT_PROG_NUMA, r, n) ==
                  alg2_rows[n - 1][r]);
            CHECK(jt_placement_rank(&l, JT_RANKS_SCATTER, r, n) == scatter_rows[n - 1][r]);
            CHECK(jt_placement_rank(&l, JT_RANKS_PACKED, r, n) == r);
            CHECK(jt_placement_progress(&l, JT_RANKS_NUMA, JT_PROG_BIND, r, n) ==
                  alg1_rows[n - 1][r]);
            CHECK(jt_placement_progress(&l, JT_RANKS_PACKED, JT_PROG_NEXT, r, n) == (r + 1) % 8);
        }
    /* Bad input: a rank outside the job, an empty machine. */
    CHECK(jt_placement_rank(&l, JT_RANKS_NUMA, 3, 3) == -1);
    CHECK(jt_placement_rank(&l, JT_RANKS_NUMA, -1, 3) == -1);
    CHECK(jt_layout_uniform(&l, 0, 4) == -1);
    CHECK(jt_rank_policy_find("numa") == JT_RANKS_NUMA);
    CHECK(jt_rank_policy_find("spread") == -1);
    CHECK(jt_progress_policy_find("next") == JT_PROG_NEXT);
    /* More ranks than cores: allowed, positions repeat within the machine. */
    for (int r = 0; r < 12; r++) {
        int p = jt_placement_rank(&l, JT_RANKS_NUMA, r, 12);
        CHECK(p >= 0 && p < 8 && jt_layout_numa_of(&l, p) == r * 2 / 12);
    }
}

/* Properties every layout must have; returns the failures found. */
static void properties(const jt_layout *l, int n, const char *what)
{
    int *rp = calloc((size_t)n, sizeof *rp), *pp = calloc((size_t)n, sizeof *pp);
    int count[JT_LAYOUT_MAX_NUMA] = {0}, fails = jt_test_failures;
    for (int pol = 0; pol < JT_RANKS_COUNT_; pol++)
        for (int pr = 0; pr < JT_PROG_COUNT_; pr++) {
            CHECK(jt_placement_map(l, pol, pr, n, rp, pp) == 0);
            for (int r = 0; r < n; r++) {
                CHECK(rp[r] >= 0 && rp[r] < l->ncores && pp[r] >= 0 && pp[r] < l->ncores);
                if (n <= l->ncores && pol != JT_RANKS_SCATTER)
                    for (int q = 0; q < r; q++)
                        CHECK(rp[q] != rp[r]); /* one rank per core while they fit */
            }
        }
    jt_placement_map(l, JT_RANKS_NUMA, JT_PROG_NUMA, n, rp, pp);
    for (int r = 0; r < n; r++) {
        int k = jt_layout_numa_of(l, rp[r]);
        count[k]++;
        CHECK(jt_layout_numa_of(l, pp[r]) == k); /* never leaves its rank's node */
    }
    for (int k = 0; k < l->nnuma; k++) {
        CHECK(count[k] - count[0] <= 1 && count[0] - count[k] <= 1); /* balanced within one */
        int cores = l->first[k + 1] - l->first[k];
        for (int r = 0; r < n && count[k] < cores; r++) /* a free core exists: it is used */
            for (int q = 0; q < n && jt_layout_numa_of(l, rp[r]) == k; q++)
                CHECK(pp[r] != rp[q]);
    }
    /* Algorithm 2 under other rank policies: still on the node, on a free core if any. */
    for (int pol = JT_RANKS_PACKED; pol <= JT_RANKS_SCATTER; pol++) {
        jt_placement_map(l, pol, JT_PROG_NUMA, n, rp, pp);
        for (int r = 0; r < n; r++)
            CHECK(jt_layout_numa_of(l, pp[r]) == jt_layout_numa_of(l, rp[r]));
    }
    if (jt_test_failures != fails)
        fprintf(stderr, "  (%s, %d ranks)\n", what, n);
    free(rp);
    free(pp);
}

/* Every uniform machine up to 8 nodes of 32 cores: the engine is the seed's formulas. */
static void uniform_machines(void)
{
    for (int N = 1; N <= 8; N++)
        for (int C = 1; C <= 32; C++) {
            jt_layout l;
            jt_layout_uniform(&l, N, C);
            for (int n = 1; n <= N * C; n++) {
                for (int r = 0; r < n; r++) {
                    int in_node, g = jt_seed_alg1(r, n, N, C, &in_node);
                    int fails = jt_test_failures;
                    CHECK(jt_placement_rank(&l, JT_RANKS_NUMA, r, n) == g);
                    CHECK(jt_placement_progress(&l, JT_RANKS_NUMA, JT_PROG_NUMA, r, n) ==
                          jt_seed_alg2(C, in_node, g));
                    if (fails != jt_test_failures) {
                        fprintf(stderr, "  (%d nodes x %d cores, rank %d of %d)\n", N, C, r, n);
                        return;
                    }
                }
                if (C <= 8)
                    properties(&l, n, "uniform");
            }
        }
}

/* The hwloc node (logical index) nearest to core c: of those local to it, the one of fewest
 * CPUs, the first on a tie; -1 if none. */
static int nearest_numa(hwloc_topology_t t, int c)
{
    hwloc_obj_t co = hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, (unsigned)c);
    int best = -1, best_w = 0, n = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
    for (int j = 0; j < n; j++) {
        hwloc_obj_t no = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, (unsigned)j);
        int w = hwloc_bitmap_weight(no->cpuset);
        if (hwloc_bitmap_intersects(co->nodeset, no->nodeset) && (best < 0 || w < best_w)) {
            best = j;
            best_w = w;
        }
    }
    return best;
}

static int load_xml(hwloc_topology_t *t, const char *name)
{
    const char *src = getenv("JOSTLE_SOURCE_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/share/topologies/%s", src ? src : ".", name);
    hwloc_topology_init(t);
    if (hwloc_topology_set_xml(*t, path) == 0 && hwloc_topology_load(*t) == 0)
        return 0;
    hwloc_topology_destroy(*t);
    *t = NULL;
    return -1;
}

/* memonly-numa.xml: 2 packages of 4 cores, NUMA nodes P#0 and P#1 on them, and P#2, memory
 * only, on the Machine (hwloc gives it every CPU and puts it in every core's nodeset).  It
 * takes no part: the layout is the seed's example machine, and no rank nor progress thread
 * ever lands on it, for every rank and progress policy and 1 to 8 ranks. */
static void memory_only_node(void)
{
    hwloc_topology_t t;
    CHECK(load_xml(&t, "memonly-numa.xml") == 0);
    if (!t)
        return;
    CHECK(hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE) == 3);
    CHECK(hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE) == 8);
    jt_layout l;
    char err[256];
    CHECK(jt_layout_from_hwloc(&l, t, err, sizeof err) == 0);
    CHECK(l.nnuma == 2 && l.ncores == 8);
    CHECK(l.first[0] == 0 && l.first[1] == 4 && l.first[2] == 8);
    /* Layout node k is package k's cores, all nearest to NUMA node P#k, never P#2. */
    for (int p = 0; p < l.ncores; p++) {
        int k = jt_layout_numa_of(&l, p);
        CHECK(k == p / 4);
        hwloc_obj_t co = hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, (unsigned)l.core[p]);
        hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_PACKAGE, co);
        CHECK(pkg && (int)pkg->logical_index == k);
        hwloc_obj_t no = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE,
                                               (unsigned)nearest_numa(t, l.core[p]));
        CHECK(no && (int)no->os_index == k);
    }
    int rp[8], pp[8];
    for (int n = 1; n <= 8; n++) {
        int fails = jt_test_failures;
        /* The seed's figures 1b and 2b, as on the uniform 2 x 4 machine. */
        for (int r = 0; r < n; r++) {
            CHECK(jt_placement_rank(&l, JT_RANKS_NUMA, r, n) == alg1_rows[n - 1][r]);
            CHECK(jt_placement_progress(&l, JT_RANKS_NUMA, JT_PROG_NUMA, r, n) ==
                  alg2_rows[n - 1][r]);
        }
        for (int pol = 0; pol < JT_RANKS_COUNT_; pol++)
            for (int pr = 0; pr < JT_PROG_COUNT_; pr++) {
                int count[2] = {0, 0};
                CHECK(jt_placement_map(&l, pol, pr, n, rp, pp) == 0);
                for (int r = 0; r < n; r++) {
                    /* every rank and thread on a real core, of a node holding cores */
                    int kr = jt_layout_numa_of(&l, rp[r]), kp = jt_layout_numa_of(&l, pp[r]);
                    CHECK(rp[r] >= 0 && rp[r] < 8 && pp[r] >= 0 && pp[r] < 8);
                    CHECK((kr == 0 || kr == 1) && (kp == 0 || kp == 1));
                    if (kr == 0 || kr == 1)
                        count[kr]++;
                    for (int q = 0; q < r; q++)
                        CHECK(rp[q] != rp[r]); /* one rank per core */
                    if (pr == JT_PROG_BIND)
                        CHECK(pp[r] == rp[r]);
                    if (pr == JT_PROG_NUMA) /* never leaves its rank's node */
                        CHECK(kp == kr);
                }
                if (pol == JT_RANKS_NUMA) /* balanced over the two nodes */
                    CHECK(count[0] - count[1] <= 1 && count[1] - count[0] <= 1);
            }
        if (jt_test_failures != fails)
            fprintf(stderr, "  (memonly-numa.xml, %d ranks)\n", n);
    }
    hwloc_topology_destroy(t);
}

static void xml_topologies(void)
{
    const char *src = getenv("JOSTLE_SOURCE_DIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/share/topologies", src ? src : ".");
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    int seen = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".xml") != 0)
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        hwloc_topology_t t;
        hwloc_topology_init(&t);
        CHECK(hwloc_topology_set_xml(t, path) == 0);
        CHECK(hwloc_topology_load(t) == 0);
        jt_layout l;
        char err[256];
        CHECK(jt_layout_from_hwloc(&l, t, err, sizeof err) == 0);
        CHECK(l.ncores == hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE));
        /* The layout's nodes are the hwloc nodes nearest to some core, in logical order: a
         * node of no core (memory only) is left out.  A position's core really is local to
         * (and nearest to) the position's node. */
        int nodes = 0, last = -1;
        for (int p = 0; p < l.ncores; p++) {
            int k = jt_layout_numa_of(&l, p), j = nearest_numa(t, l.core[p]);
            CHECK(k >= 0 && k < l.nnuma && l.first[k] < l.first[k + 1]);
            if (p == 0 || k != jt_layout_numa_of(&l, p - 1)) {
                CHECK(j > last); /* a new layout node: the next hwloc node holding cores */
                last = j;
                nodes++;
            }
            CHECK(j == last);
        }
        CHECK(l.nnuma == nodes);
        for (int n = 1; n <= l.ncores + 3; n++)
            properties(&l, n, e->d_name);
        hwloc_topology_destroy(t);
        seen++;
    }
    if (d)
        closedir(d);
    CHECK(seen >= 4);
}

int main(void)
{
    seed_example();
    uniform_machines();
    xml_topologies();
    memory_only_node();
    TEST_END();
}
