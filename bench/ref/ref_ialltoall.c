/* A bare MPI_Ialltoall + MPI_Wait loop next to jostle's t_pure samples, in one MPI job: blocks
 * of REPS back-to-back post+wait timed as a whole after one barrier (as IMB-NBC times t_pure)
 * alternate with blocks of REPS samples of jostle's path (jt_nbc_pure_batch: one barrier per
 * BATCH samples, as `jostle-bench overlap --batch` takes them, post and wait back to back, each
 * timed, the clock's overhead subtracted as the harness does).  Both take the slowest rank's
 * time (the bare loop's largest mean; jostle's jt_nbc_slowest per batch).
 * Usage: ref_ialltoall BYTES REPS BLOCKS [BATCH, 16 as the benchmark's default]
 * Rank 0 prints, in seconds: "bare" the median over blocks of the block's mean, "jostle" the
 * median of jostle's samples, "jostle_blockmean" the median over blocks of their mean. */
#include "comm/nbc.h"
#include "core/timer.h"

#include "ref_report.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc != 4 && argc != 5) {
        if (rank == 0)
            fprintf(stderr, "usage: ref_ialltoall BYTES REPS BLOCKS [BATCH]\n");
        MPI_Finalize();
        return 2;
    }
    size_t bytes = (size_t)atoll(argv[1]), sb, rb;
    int reps = atoi(argv[2]), blocks = atoi(argv[3]), batch = argc == 5 ? atoi(argv[4]) : 16;
    batch = batch < 1 ? 1 : batch;
    jt_nbc_buffers(JT_NBC_IALLTOALL, bytes, n, &sb, &rb);
    char *sbuf = calloc(1, sb ? sb : 1), *rbuf = calloc(1, rb ? rb : 1);
    double overhead = jt_timer_overhead();
    double *every = calloc((size_t)reps * n, sizeof *every);
    double *bare = calloc((size_t)blocks, sizeof *bare), *mine = calloc((size_t)blocks * reps,
                                                                         sizeof *mine);
    /* warm-up of the library's path */
    jt_nbc_pure_batch(JT_NBC_IALLTOALL, bytes, MPI_COMM_WORLD, 0, sbuf, rbuf, reps, mine);
    for (int b = 0; b < blocks; b++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = jt_now();
        for (int r = 0; r < reps; r++) {
            MPI_Request req;
            MPI_Ialltoall(sbuf, (int)bytes, MPI_BYTE, rbuf, (int)bytes, MPI_BYTE, MPI_COMM_WORLD,
                          &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        double t = (jt_now() - t0) / reps;
        MPI_Allreduce(&t, &bare[b], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        double *blk = mine + (size_t)b * reps;
        for (int r = 0; r < reps; r += batch)
            jt_nbc_pure_batch(JT_NBC_IALLTOALL, bytes, MPI_COMM_WORLD, 0, sbuf, rbuf,
                              reps - r < batch ? reps - r : batch, blk + r);
        for (int r = 0; r < reps; r++)
            blk[r] -= overhead;
        MPI_Gather(blk, reps, MPI_DOUBLE, every, reps, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        for (int r = 0; rank == 0 && r < reps; r += batch)
            jt_nbc_slowest(every + r, n, (size_t)reps, 1,
                           (size_t)(reps - r < batch ? reps - r : batch), blk + r);
    }
    if (rank == 0)
        ref_report(bare, mine, blocks, reps);
    free(every);
    free(bare);
    free(mine);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
