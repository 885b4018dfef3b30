/* A two-mode ping-pong made honestly (issue 26): rank 1 answers at once on even samples and
 * after spinning 40 us on odd ones, so the round trips fall in two modes, about 40 us apart,
 * half each.  The detector (core/modes.h) must find both, at their places and shares
 * (2 ranks under ctest). */
#include "check.h"
#include "core/modes.h"
#include "core/stats.h"
#include "core/timer.h"

#include <mpi.h>

enum { N = 600, WARMUP = 50 };
#define SPIN_S 40e-6

static void spin(double s)
{
    double t0 = jt_now();
    while (jt_now() - t0 < s)
        ;
}

/* N round trips timed on rank 0 (us); rank 1 spins on odd samples when slow is set. */
static void pingpong(int rank, int slow, double *rtt)
{
    char b = 0;
    for (int i = -WARMUP; i < N; i++) {
        if (rank == 0) {
            double t0 = jt_now();
            MPI_Send(&b, 1, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(&b, 1, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (i >= 0)
                rtt[i] = (jt_now() - t0) * 1e6;
        } else if (rank == 1) {
            MPI_Recv(&b, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (slow && (i & 1))
                spin(SPIN_S);
            MPI_Send(&b, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    static double rtt[N];
    jt_stats st;
    jt_modes m;
    /* A plain round trip must be well under the spin for the two modes to be apart: not so
     * with MPICH's ranks taking turns on a loaded 2-core VM (24 ms a round trip here). */
    pingpong(rank, 0, rtt);
    int skip = 0;
    if (rank == 0) {
        jt_stats_compute(rtt, N, &st);
        skip = st.median > 0.25 * SPIN_S * 1e6;
        if (skip)
            printf("skipped: a plain round trip takes %.1f us here, the partner's %.0f us "
                   "cannot stand apart\n", st.median, SPIN_S * 1e6);
    }
    MPI_Bcast(&skip, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (skip) {
        MPI_Finalize();
        return 77; /* ctest: SKIP_RETURN_CODE */
    }
    pingpong(rank, 1, rtt);
    if (rank == 0) {
        jt_stats_compute(rtt, N, &st);
        jt_modes_find(rtt, N, jt_timer_resolution() * 1e6, &m); /* the tick, in us */
        printf("slow partner every other sample: %d mode(s)", m.n);
        for (int k = 0; k < m.n; k++)
            printf(" %.2f us (%.0f%%)", m.m[k].at, 100 * m.m[k].share);
        printf("; median %.2f us\n", st.median);
        /* Both modes at their places, half the samples each, whatever else the machine adds
         * (on a loaded VM a third mode tens of ms up: a rank waiting out a time slice). */
        CHECK(m.tested && m.n >= 2);
        int fast = -1, slow = -1;
        for (int k = 0; k < m.n; k++)
            if (m.m[k].at < 0.5 * SPIN_S * 1e6 && fast < 0)
                fast = k;
        for (int k = 0; fast >= 0 && k < m.n; k++)
            if (m.m[k].at - m.m[fast].at > 0.8 * SPIN_S * 1e6 &&
                m.m[k].at - m.m[fast].at < 1.5 * SPIN_S * 1e6)
                slow = k;
        CHECKF(fast >= 0 && slow >= 0, "no modes near the plain round trip and 40 us later");
        if (fast >= 0 && slow >= 0) {
            CHECK(m.m[fast].share > 0.25 && m.m[slow].share > 0.25);
            CHECK_NEAR(m.m[fast].share, m.m[slow].share, 0.15);
        }
    }
    MPI_Finalize();
    TEST_END();
}
