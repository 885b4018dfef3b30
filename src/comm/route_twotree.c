/*
 * Routing `two-tree`: two pipelined binary trees, each carrying half of the message
 * (Sanders, Speck, Träff, "Two-tree algorithms for full bandwidth broadcast, reduction and
 * scan", Parallel Computing 35(12), 2009).
 *
 * In one pipelined binary tree, an interior node receives every byte once and sends it
 * twice while the leaves (half the nodes) send nothing. With two trees over the same
 * recipients, where every node interior in one tree is a leaf in the other, and each tree
 * carrying half the segments, every node receives the message once (half from each of its
 * two parents) and sends it at most once (twice its half): the load the bandwidth bound
 * m/beta allows, plus a pipeline fill of about one segment per level.
 *
 * Source routing, as the other routings: the root sends stream A (the first half of the
 * segments) to the top of tree A with the whole list A below it, and stream B to the top of
 * tree B with list B; lists A and B are two orders of the same recipients. Forwarders split
 * the list they get as a COMPLETE binary tree (jt_route_twotree_children), whose
 * floor(t/2) interior nodes (t nodes in all) leave enough leaves for the other tree's
 * interior nodes. The receiver assembles both halves into one receive.
 * Pure; see dbcast_route.h.
 */
#include "comm/dbcast_route.h"

#include <stdlib.h>

/* Nodes in the left subtree of a complete binary tree of t nodes (t >= 2). */
static int complete_left(int t)
{
    int h = jt_route_floor_log2(t); /* levels 0..h */
    int half = 1 << (h - 1);        /* last-level slots under the left child */
    int last = t - ((1 << h) - 1);  /* nodes on the last level */
    return half - 1 + (last < half ? last : half);
}

int jt_route_twotree_children(int n, jt_dbcast_route_child *out)
{
    if (n == 0)
        return 0;
    int left = complete_left(n + 1);
    out[0] = (jt_dbcast_route_child){0, 1, left - 1};
    if (n - left == 0)
        return 1;
    out[1] = (jt_dbcast_route_child){left, left + 1, n - left - 1};
    return 2;
}

/* Marks interior[p] for the positions p of a list of n laid out as one tree: position 0 is
 * the top (the root's child), positions 1..n-1 its subtree split as above. */
static void mark_interior(int off, int len, int parent, char *interior)
{
    jt_dbcast_route_child kids[2];
    if (len > 0)
        interior[parent] = 1;
    int k = jt_route_twotree_children(len, kids);
    for (int c = 0; c < k; c++)
        mark_interior(off + kids[c].sub_off, kids[c].sub_len, off + kids[c].child, interior);
}

int jt_route_twotree_layout(int n, int *pos)
{
    if (n <= 0)
        return n == 0 ? 0 : -1;
    char *interior = calloc((size_t)n, 1);
    int *order = malloc((size_t)n * sizeof *order);
    int *inner = malloc((size_t)n * sizeof *inner), *leaf = malloc((size_t)n * sizeof *leaf);
    if (!interior || !order || !inner || !leaf) {
        free(interior), free(order), free(inner), free(leaf);
        return -1;
    }
    mark_interior(1, n - 1, 0, interior);
    /* positions in the order the tree reaches them: the top, then its subtree's order */
    order[0] = 0;
    if (n > 1 && jt_dbcast_route_arrival(JT_ROUTE_TWO_TREE, n - 1, order + 1) != n - 1) {
        free(interior), free(order), free(inner), free(leaf);
        return -1;
    }
    int ni = 0, nl = 0;
    for (int k = 0; k < n; k++) {
        int p = k == 0 ? 0 : order[k] + 1;
        if (interior[p])
            inner[ni++] = p;
        else
            leaf[nl++] = p;
    }
    /* ni = floor(n/2) <= nl. Tree A: recipients 0..ni-1 interior (the most urgent, reached
     * first), the rest on its leaves. Tree B: recipients ni..2ni-1 interior; its leaves take
     * 0..ni-1 first, then 2ni.. . */
    int *a = pos, *b = pos + n;
    for (int i = 0; i < n; i++)
        a[i] = i < ni ? inner[i] : leaf[i - ni];
    for (int i = 0; i < n; i++) {
        if (i >= ni && i < 2 * ni)
            b[i] = inner[i - ni];
        else
            b[i] = leaf[i < ni ? i : i - ni];
    }
    free(interior), free(order), free(inner), free(leaf);
    return n;
}
