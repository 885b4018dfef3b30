/* The pairs' stream follows osu_mbw_mr's method (OMB's release of 2024, issue 27): two barriers
 * of every rank before each window and a 1-byte acknowledgement after it, where a plain stream
 * (osu_bw) takes no barrier and acknowledges with 4 bytes.  The MPI calls are counted through
 * the profiling interface (2 ranks under ctest). */
#include "check.h"
#include "comm/flows.h"

#include <mpi.h>
#include <stdlib.h>

static int barriers, sends, send_count = -1;

int MPI_Barrier(MPI_Comm comm)
{
    barriers++;
    return PMPI_Barrier(comm);
}

/* Side 1 of a stream sends nothing but the acknowledgement with MPI_Send. */
int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    sends++;
    send_count = count;
    return PMPI_Send(buf, count, type, dest, tag, comm);
}

enum { N = 5, BYTES = 4096, WINDOW = 8 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    jt_topo topo;
    char err[256];
    if (jt_topo_load(&topo, NULL, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    uint64_t size = BYTES;
    size_t frames, arena = jt_p2p_arena_bytes(JT_P2P_STREAM, JT_P2P_OSU, WINDOW, &size, 1, 0,
                                              &frames);
    int core = 0, numa = JT_MEM_ANY;

    jt_flows f;
    jt_flows_init(&f, &topo, MPI_COMM_WORLD, 1, 0, JT_P2P_STREAM, JT_P2P_OSU, WINDOW, 1, arena,
                  frames, &core, &numa);
    barriers = sends = 0;
    jt_flows_run(&f, BYTES, N, 1);
    CHECKF(barriers == 2 * N, "%d barriers for %d windows, osu_mbw_mr takes 2 each", barriers, N);
    if (rank == 1)
        CHECKF(sends == N && send_count == 1, "%d sends of %d bytes, expected %d of 1 (the "
               "acknowledgement of osu_mbw_mr)", sends, send_count, N);
    for (int k = 0; rank == 0 && k < N; k++)
        CHECK(f.flow[0].times[k] > 0.0);
    jt_flows_free(&f);

    /* The same window without flows: osu_bw's 4-byte acknowledgement, no barrier. */
    jt_buffer buf;
    jt_buffer_alloc(&topo, &buf, arena, JT_MEM_ANY);
    jt_p2p p;
    jt_p2p_init(&p, MPI_COMM_WORLD, rank, 1 - rank, JT_P2P_STREAM, JT_P2P_OSU, WINDOW, 1, buf.p,
                buf.bytes, frames);
    barriers = sends = 0;
    for (int k = 0; k < N; k++)
        jt_p2p_sample(&p, BYTES);
    CHECK(barriers == 0);
    if (rank == 1)
        CHECKF(sends == N && send_count == 4, "%d sends of %d bytes, expected %d of 4 (osu_bw's)",
               sends, send_count, N);
    jt_p2p_free(&p);
    jt_buffer_free(&topo, &buf);
    jt_topo_destroy(&topo);
    MPI_Finalize();
    return jt_test_failures != 0;
}
