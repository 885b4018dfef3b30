/* The bare ping-pong loop of Zahn 2021 (listing 1) next to jostle's own sample path, in one MPI
 * job: blocks of REPS round trips of the bare loop (blocking send/receive of one buffer, the
 * block timed as a whole with CLOCK_MONOTONIC) alternate with blocks of REPS samples of
 * jostle's ping-pong (jt_p2p_sample, each round trip timed, the clock's overhead subtracted as
 * the harness does).  Same processes, same cores, same moment: on a noisy or bimodal machine
 * only such an interleaving compares the two fairly.
 * Usage: ref_pingpong BYTES REPS BLOCKS
 * Rank 0 prints, in seconds: "bare" the median over blocks of the block's mean RTT (the
 * seed's quantity), "jostle" the median of all of jostle's samples (what jostle reports), and
 * "jostle_blockmean" the median over blocks of the mean of jostle's samples (like for like). */
#include "comm/p2p.h"
#include "core/timer.h"

#include "ref_report.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void bare_round_trip(int rank, char *buf, int len)
{
    if (rank == 0) {
        MPI_Send(buf, len, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(buf, len, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
        MPI_Recv(buf, len, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, len, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc != 4) {
        if (rank == 0)
            fprintf(stderr, "usage: ref_pingpong BYTES REPS BLOCKS\n");
        MPI_Finalize();
        return 2;
    }
    int len = atoi(argv[1]), reps = atoi(argv[2]), blocks = atoi(argv[3]);
    char *buf = malloc(len > 0 ? (size_t)len : 1);
    memset(buf, 1, len > 0 ? (size_t)len : 1);

    uint64_t size = (uint64_t)len;
    size_t frames;
    /* The bare loop echoes from the buffer it received into: jostle's echo state is its twin. */
    size_t arena = jt_p2p_arena_bytes(JT_P2P_PINGPONG, JT_P2P_ECHO, 1, &size, 1, 0, &frames);
    unsigned char *mem = calloc(1, arena);
    jt_p2p p;
    jt_p2p_init(&p, MPI_COMM_WORLD, rank < 2 ? rank : -1, 1 - rank, JT_P2P_PINGPONG, JT_P2P_ECHO,
                1, 0, mem, arena, frames);
    double overhead = jt_timer_overhead();

    double *bare = calloc((size_t)blocks, sizeof *bare);
    double *mine = calloc((size_t)blocks * (size_t)reps, sizeof *mine);
    bare_round_trip(rank, buf, len); /* the seed's untimed "fire once" */
    for (int k = 0; k < 10; k++)
        jt_p2p_sample(&p, size);     /* and the harness's warm-up */
    for (int b = 0; b < blocks; b++) {
        double t0 = jt_now();
        for (int r = 0; r < reps; r++)
            bare_round_trip(rank, buf, len);
        bare[b] = (jt_now() - t0) / reps;
        for (int r = 0; r < reps; r++)
            mine[(size_t)b * reps + r] = jt_p2p_sample(&p, size) - overhead;
    }
    if (rank == 0)
        ref_report(bare, mine, blocks, reps);
    jt_p2p_free(&p);
    free(mem);
    free(buf);
    free(bare);
    free(mine);
    MPI_Finalize();
    return 0;
}
