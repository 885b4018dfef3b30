/* Placement engine: the seed's example (8 cores, 2 NUMA nodes, 1 to 8 ranks: figures 1 and 2
 * of Taboada 2016) exactly, the algorithms against every small uniform machine, and the
 * policies' properties on the XML topologies of share/topologies. */
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
        CHECK(l.nnuma == hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE));
        /* A position's core really is local to the position's node. */
        for (int p = 0; p < l.ncores; p++) {
            hwloc_obj_t c = hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, (unsigned)l.core[p]);
            hwloc_obj_t n = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE,
                                                  (unsigned)jt_layout_numa_of(&l, p));
            CHECK(hwloc_bitmap_intersects(c->nodeset, n->nodeset));
        }
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
    TEST_END();
}
