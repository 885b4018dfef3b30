/* The Cholesky DAG of 4×4 tiles on a 2×2 grid (chol_dag.h, chol_plan.h), checked against the
 * sends worked out by hand: tile (m,n) lives on rank (m%2)*2 + n%2, so
 *   rank 0: (0,0) (2,0) (2,2)     rank 1: (2,1)
 *   rank 2: (1,0) (3,0) (3,2)     rank 3: (1,1) (3,1) (3,3)
 * and the final tile L(m,k) is read by the TRSMs of column k (m = k), else by SYRK(m,k),
 * GEMM(m,j,k) for k<j<m and GEMM(i,m,k) for i>m. */
#include "check.h"
#include "runtime/chol_dag.h"
#include "runtime/chol_plan.h"

#include <string.h>

typedef struct expect {
    int m, k, n;
    int r[3];
} expect;

/* Every final tile: the ranks other than its owner that need it. */
static const expect sends[] = {
    {0, 0, 1, {2}},      /* L00 (r0): TRSM(1,0) r2, TRSM(2,0) r0, TRSM(3,0) r2 */
    {1, 0, 2, {1, 3}},   /* L10 (r2): SYRK(1,0) r3, GEMM(2,1,0) r1, GEMM(3,1,0) r3 */
    {2, 0, 2, {1, 2}},   /* L20 (r0): SYRK(2,0) r0, GEMM(2,1,0) r1, GEMM(3,2,0) r2 */
    {3, 0, 1, {3}},      /* L30 (r2): SYRK(3,0) r3, GEMM(3,1,0) r3, GEMM(3,2,0) r2 */
    {1, 1, 1, {1}},      /* L11 (r3): TRSM(2,1) r1, TRSM(3,1) r3 */
    {2, 1, 2, {0, 2}},   /* L21 (r1): SYRK(2,1) r0, GEMM(3,2,1) r2 */
    {3, 1, 1, {2}},      /* L31 (r3): SYRK(3,1) r3 (local), GEMM(3,2,1) r2 */
    {2, 2, 1, {2}},      /* L22 (r0): TRSM(3,2) r2 */
    {3, 2, 1, {3}},      /* L32 (r2): SYRK(3,2) r3 */
    {3, 3, 0, {0}},      /* L33 (r3): nobody */
};

int main(void)
{
    jt_chol_grid g = {4, 2, 2, 8};
    CHECK(jt_chol_owner(&g, 2, 1) == 1 && jt_chol_owner(&g, 3, 2) == 2);
    CHECK(jt_chol_ntasks(4) == 20); /* 4 POTRF + 6 TRSM + 6 SYRK + 4 GEMM */
    int out[4], nbcast = 0, nsend1 = 0;
    for (size_t i = 0; i < sizeof sends / sizeof *sends; i++) {
        expect e = sends[i];
        int n = jt_chol_recipients(&g, e.m, e.k, out);
        CHECKF(n == e.n, "L(%d,%d): %d recipients, expected %d", e.m, e.k, n, e.n);
        for (int q = 0; q < n && q < e.n; q++)
            CHECKF(out[q] == e.r[q], "L(%d,%d): recipient %d is %d, expected %d", e.m, e.k, q,
                   out[q], e.r[q]);
        nbcast += n > 1;
        nsend1 += n == 1;
    }
    CHECK(nbcast == 3 && nsend1 == 6); /* broadcasts: L10, L20, L21 */

    /* Priorities 2T - 2k - m - n of the task on tile (m,n) at step k (T = 4): SYRK(m,k) is
     * the update of (m,m), so 8 - 2k - 2m, below the TRSM(m,k) it waits for. */
    const struct { jt_chol_task t; int prio; } prios[] = {
        {{JT_CHOL_POTRF, 0, 0, 0}, 8}, {{JT_CHOL_POTRF, 2, 2, 2}, 4},
        {{JT_CHOL_TRSM, 1, 0, 0}, 7},  {{JT_CHOL_TRSM, 3, 1, 1}, 3},
        {{JT_CHOL_SYRK, 1, 1, 0}, 6},  {{JT_CHOL_SYRK, 3, 3, 0}, 2},
        {{JT_CHOL_SYRK, 2, 2, 1}, 2},  {{JT_CHOL_GEMM, 2, 1, 0}, 5},
        {{JT_CHOL_GEMM, 3, 2, 1}, 1},
    };
    for (size_t i = 0; i < sizeof prios / sizeof *prios; i++) {
        const jt_chol_task *t = &prios[i].t;
        int got = jt_chol_priority(&g, t);
        CHECKF(got == prios[i].prio, "%s(%d,%d,%d): priority %d, expected %d",
               jt_chol_kind_name(t->kind), t->m, t->n, t->k, got, prios[i].prio);
    }

    /* Order of need: the recipient whose first task reading the tile is most urgent first.
     * L10 (r2) is read by SYRK(1,0) on r3 (priority 6), GEMM(2,1,0) on r1 (5) and GEMM(3,1,0)
     * on r3 (4): r3 then r1, not the rank order r1, r3. */
    int need[4];
    CHECK(jt_chol_recipients_by_need(&g, 1, 0, out, need) == 2);
    CHECKF(out[0] == 3 && out[1] == 1 && need[0] == 6 && need[1] == 5,
           "L(1,0) by need: r%d (%d), r%d (%d); expected r3 (6), r1 (5)", out[0], need[0], out[1],
           need[1]);
    /* On a 1x3 grid of 4x4 tiles L(2,0) (r0) is read by SYRK(2,0) on r2 (priority 4), first in
     * the DAG's order, and by GEMM(2,1,0) on r1 (5) and GEMM(3,2,0) on r2 (3): r1 first. */
    jt_chol_grid g13 = {4, 1, 3, 8};
    CHECK(jt_chol_recipients_by_need(&g13, 2, 0, out, need) == 2);
    CHECKF(out[0] == 1 && out[1] == 2 && need[0] == 5 && need[1] == 4,
           "1x3, L(2,0) by need: r%d (%d), r%d (%d); expected r1 (5), r2 (4)", out[0], need[0],
           out[1], need[1]);
    /* The sort alone: higher need first, ties to the lower rank. */
    int rk[5] = {4, 1, 3, 0, 2}, nd[5] = {2, 7, 7, 1, 9};
    jt_chol_order_by_need(rk, nd, 5);
    CHECKF(rk[0] == 2 && rk[1] == 1 && rk[2] == 3 && rk[3] == 4 && rk[4] == 0 && nd[0] == 9 &&
           nd[1] == 7 && nd[2] == 7 && nd[3] == 2 && nd[4] == 1,
           "order_by_need: %d %d %d %d %d", rk[0], rk[1], rk[2], rk[3], rk[4]);

    /* The sends of an ordered root: flat, one copy each; a tree, the most urgent recipient
     * alone (it forwards nothing) then one tree for the others. */
    int first[6] = {-1, -1, -1, -1, -1, -1};
    CHECK(jt_chol_split_sends(0, 1, first) == 0 && jt_chol_split_sends(0, 0, first) == 0);
    CHECK(jt_chol_split_sends(1, 1, first) == 1 && first[0] == 0);
    CHECK(jt_chol_split_sends(2, 1, first) == 2 && first[0] == 0 && first[1] == 1);
    CHECK(jt_chol_split_sends(30, 1, first) == 2 && first[0] == 0 && first[1] == 1);
    CHECK(jt_chol_split_sends(4, 0, first) == 4 && first[0] == 0 && first[1] == 1 &&
          first[2] == 2 && first[3] == 3);

    /* The local views agree with the DAG: every task runs once, every send has its receive. */
    int tasks = 0, bc[4] = {0}, s1[4] = {0}, recv[4] = {0};
    for (int r = 0; r < 4; r++) {
        jt_chol_plan *p = jt_chol_plan_build(&g, r);
        CHECK(p != NULL);
        if (!p)
            continue;
        tasks += p->ntasks;
        bc[r] = p->nbcast, s1[r] = p->nsend1, recv[r] = p->nrecv;
        for (int i = 0; i < p->ntasks; i++)
            CHECK(jt_chol_owner(&g, p->tasks[i].t.m, p->tasks[i].t.n) == r);
        /* The recipients the walk of the DAG found are the hand-checked ones above. */
        for (size_t i = 0; i < sizeof sends / sizeof *sends; i++) {
            const jt_chol_tile *t = &p->tiles[jt_chol_tile_id(&g, sends[i].m, sends[i].k)];
            if (t->where != JT_TILE_OWNED)
                continue;
            int found = 0;
            for (int q = 0; q < t->nrecip; q++)
                for (int e = 0; e < sends[i].n; e++)
                    found += t->recip[q] == sends[i].r[e];
            CHECKF(t->nrecip == sends[i].n && found == sends[i].n,
                   "rank %d, L(%d,%d): %d recipients from the DAG, expected %d", r, sends[i].m,
                   sends[i].k, t->nrecip, sends[i].n);
        }
        jt_chol_plan_free(p);
    }
    CHECK(tasks == 20);
    CHECKF(bc[0] == 1 && bc[1] == 1 && bc[2] == 1 && bc[3] == 0, "broadcasts per rank %d %d %d %d",
           bc[0], bc[1], bc[2], bc[3]);
    CHECKF(s1[0] == 2 && s1[1] == 0 && s1[2] == 2 && s1[3] == 2, "single sends %d %d %d %d",
           s1[0], s1[1], s1[2], s1[3]);
    /* Receives = messages a flat routing sends to each rank: r0 gets L21; r1 L10 L20 L11;
     * r2 L00 L20 L21 L31 L22; r3 L10 L30 L32. */
    CHECKF(recv[0] == 1 && recv[1] == 3 && recv[2] == 5 && recv[3] == 3, "receives %d %d %d %d",
           recv[0], recv[1], recv[2], recv[3]);
    /* A larger case: on a 3x4 grid of 12x12 tiles, every rank's recipients found by walking
     * the DAG equal the closed form of jt_chol_recipients_by_need, in the same order. */
    jt_chol_grid g2 = {12, 3, 4, 8};
    for (int r = 0; r < 12; r++) {
        jt_chol_plan *p = jt_chol_plan_build(&g2, r);
        CHECK(p != NULL);
        for (int i = 0; p && i < p->ntiles; i++) {
            const jt_chol_tile *t = &p->tiles[i];
            if (t->where != JT_TILE_OWNED)
                continue;
            int want[12], wneed[12], nw = jt_chol_recipients_by_need(&g2, t->m, t->n, want, wneed);
            int same = t->nrecip == nw;
            for (int q = 0; same && q < nw; q++) /* the same list, in the same order */
                same = t->recip[q] == want[q] && t->need[q] == wneed[q];
            CHECKF(same, "3x4, rank %d, L(%d,%d): %d recipients from the DAG, %d from the closed "
                   "form, or not in the same order of need", r, t->m, t->n, t->nrecip, nw);
        }
        jt_chol_plan_free(p);
    }
    TEST_END();
}
