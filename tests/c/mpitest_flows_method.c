/* The pairs' stream follows osu_mbw_mr's method (OMB's release of 2024, issue 27): two barriers
 * of every rank before each window and a 1-byte acknowledgement after it, where a plain stream
 * (osu_bw) takes no barrier and acknowledges with 4 bytes.  The threads follow osu_latency_mt's:
 * one barrier per batch, taken inside a communicating thread, not by the main thread.  The MPI
 * calls are counted through the profiling interface (2 ranks under ctest). */
#include "check.h"
#include "comm/flows.h"

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

/* Atomic: the flows' threads call MPI at the same time (TSan's data race otherwise). */
static atomic_int barriers, main_barriers, sends, send_count = -1;
static pthread_t main_thread;

/* Counted by whichever thread calls it; read by the main thread after jt_flows_run, which
 * waits for its threads. */
int MPI_Barrier(MPI_Comm comm)
{
    barriers++;
    main_barriers += pthread_equal(pthread_self(), main_thread) != 0;
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
    int provided, rank;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    main_thread = pthread_self();
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

    /* Two threads per rank in ping-pong: a warm-up batch and a timed one, a barrier each. */
    if (provided == MPI_THREAD_MULTIPLE) {
        int cores[2] = {0, 0}, numas[2] = {JT_MEM_ANY, JT_MEM_ANY};
        jt_flows_init(&f, &topo, MPI_COMM_WORLD, 1, 2, JT_P2P_PINGPONG, JT_P2P_OSU, WINDOW, 1,
                      arena, frames, cores, numas);
        barriers = main_barriers = 0;
        jt_flows_run(&f, BYTES, N, 1);
        jt_flows_run(&f, BYTES, N, 0);
        CHECKF(barriers == 2, "%d barriers for 2 batches, osu_latency_mt takes 1 per size",
               barriers);
        CHECKF(main_barriers == 0, "%d of the barriers taken by the main thread, osu_latency_mt "
               "takes them in a communicating thread", main_barriers);
        for (int t = 0; rank == 0 && t < 2; t++)
            for (int k = 0; k < N; k++)
                CHECK(f.flow[t].times[k] > 0.0);
        jt_flows_free(&f);
    } else if (rank == 0) {
        printf("mpitest_flows_method: threads not checked, the library gives no "
               "MPI_THREAD_MULTIPLE\n");
    }
    jt_topo_destroy(&topo);
    MPI_Finalize();
    return jt_test_failures != 0;
}
