/* A reference loop written to the documented method of OSU Micro-Benchmarks 7.x, next to
 * jostle's sample functions, in one MPI job (bench/osu_parity.py).
 *
 * The reference, as osu_latency / osu_bw / osu_bibw do it:
 *   - one send and one receive buffer per rank, each allocated once, page-aligned, for the
 *     largest size, and set (memset) over the message size before each size;
 *   - a barrier, then `skip` untimed and `iterations` timed iterations: latency 10 000 + 100 up
 *     to 8 KiB and 1 000 + 10 above (size > 8192), bandwidth 100 + 10 and 20 + 2;
 *   - each timed iteration between two MPI_Wtime calls on rank 0, summed; what OSU prints is
 *     the mean: latency = total / (2 x iterations), bandwidth = size x window x iterations /
 *     total (x 2 both ways for bibw);
 *   - latency: rank 0 sends its send buffer and receives into its receive buffer, rank 1
 *     receives into its receive buffer and answers from its own send buffer;
 *   - bw: rank 0 posts `window` (64) MPI_Isend of its one send buffer, waits for all, then
 *     receives a 4-byte acknowledgement into its receive buffer; rank 1 posts 64 MPI_Irecv into
 *     its one receive buffer, waits, and acknowledges from its send buffer;
 *   - bibw: both post 64 MPI_Irecv into their receive buffer then 64 MPI_Isend of their send
 *     buffer; rank 0 waits for its sends then its receives, rank 1 the other way round.
 * jostle: as many operations as OSU's iterations, through jt_p2p_sample (--buffers osu) in an
 * arena laid out as jostle-bench lays it out (jt_buffer_alloc), its buffers set over the size
 * (jt_p2p_touch), the harness's 10 warm-up samples, then samples of as many operations as the
 * harness's --sample-reps auto chooses, each charged one clock reading per operation as the
 * harness's default (--clock-overhead keep) charges it.  The two alternate per size, and which
 * goes first alternates per round.
 *
 * Usage: ref_osu latency|bw|bibw ROUNDS SIZE...   "# timer_overhead_s X", then one line per
 *          round and size on rank 0:
 *          "ROUND SIZE REF_MEAN REF_MEDIAN JOSTLE_MEDIAN JOSTLE_MEAN", seconds per iteration
 *          (latency: half a round trip; bw, bibw: one window)
 *        ref_osu sweep SIZE...                     the reference latency loop alone over the
 *          sizes, printed as osu_latency prints ("SIZE LATENCY_US"): a whole command to time. */
#include "comm/p2p.h"
#include "core/stats.h"
#include "core/timer.h"
#include "topo/bind.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LARGE 8192 /* OSU's LARGE_MESSAGE_SIZE: counts switch for sizes above it */
#define WINDOW 64

enum { LAT, BW, BIBW };

static void counts(int kind, size_t size, int *iters, int *skip)
{
    int large = size > LARGE;
    if (kind == LAT) {
        *iters = large ? 1000 : 10000;
        *skip = large ? 10 : 100;
    } else {
        *iters = large ? 20 : 100;
        *skip = large ? 2 : 10;
    }
}

/* OSU's loop for one size: the mean per iteration (what OSU prints), in seconds, on rank 0;
 * the median of the iterations in *median (OSU does not print it: it tells the method from
 * the statistic). */
static double reference(int kind, int rank, char *s, char *r, size_t size, double *it,
                        double *median)
{
    int iters, skip, n = (int)size, peer = 1 - rank;
    MPI_Request req[2 * WINDOW];
    MPI_Status stat[2 * WINDOW]; /* real statuses, as OSU passes (MPICH warns on IGNORE here) */
    counts(kind, size, &iters, &skip);
    memset(s, 'a', size);
    memset(r, 'b', size);
    MPI_Barrier(MPI_COMM_WORLD);
    double total = 0.0;
    for (int i = 0; i < iters + skip; i++) {
        double t0 = rank == 0 && i >= skip ? MPI_Wtime() : 0.0;
        if (kind == LAT) {
            if (rank == 0) {
                MPI_Send(s, n, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
                MPI_Recv(r, n, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(r, n, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(s, n, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
            }
        } else if (kind == BW) {
            for (int j = 0; j < WINDOW; j++) {
                if (rank == 0)
                    MPI_Isend(s, n, MPI_CHAR, 1, 100, MPI_COMM_WORLD, &req[j]);
                else
                    MPI_Irecv(r, n, MPI_CHAR, 0, 100, MPI_COMM_WORLD, &req[j]);
            }
            MPI_Waitall(WINDOW, req, stat);
            if (rank == 0)
                MPI_Recv(r, 4, MPI_CHAR, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            else
                MPI_Send(s, 4, MPI_CHAR, 0, 101, MPI_COMM_WORLD);
        } else {
            for (int j = 0; j < WINDOW; j++)
                MPI_Irecv(r, n, MPI_CHAR, peer, 10, MPI_COMM_WORLD, &req[WINDOW + j]);
            for (int j = 0; j < WINDOW; j++)
                MPI_Isend(s, n, MPI_CHAR, peer, 10, MPI_COMM_WORLD, &req[j]);
            int first = rank == 0 ? 0 : WINDOW; /* rank 0: sends first; rank 1: receives */
            MPI_Waitall(WINDOW, req + first, stat);
            MPI_Waitall(WINDOW, req + (WINDOW - first), stat);
        }
        if (rank == 0 && i >= skip) {
            it[i - skip] = MPI_Wtime() - t0;
            total += it[i - skip];
        }
    }
    double per = kind == LAT ? 0.5 : 1.0; /* latency: half a round trip */
    jt_stats st;
    jt_stats_compute(it, rank == 0 ? (size_t)iters : 0, &st);
    *median = st.median * per;
    return total / iters * per;
}

/* The harness's --sample-reps auto (src/harness/measure.c): the power of two of operations
 * per sample that makes a sample last 100 ticks (--min-sample-ticks), judged on rank 0's
 * shortest warm-up sample, at most 4096; every rank follows rank 0. */
static int sample_reps(const double *warm, int n, double tick)
{
    double d = warm[0];
    for (int k = 1; k < n; k++)
        d = fmin(d, warm[k]);
    int r = 1;
    while (r < 4096 && r * d < 100 * tick)
        r *= 2;
    MPI_Bcast(&r, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return r;
}

/* jostle's samples for one size, as the harness takes them by default (--sample-reps auto,
 * --clock-overhead keep: a sample of r operations charged the r - 1 clock readings it did not
 * make), as many operations as OSU's iterations: median and mean on rank 0. */
static void jostle(int kind, jt_p2p *p, size_t size, double *v, double *median, double *mean,
                   double tick, double overhead)
{
    int iters, skip;
    double warm[10];
    counts(kind, size, &iters, &skip);
    jt_p2p_touch(p, size); /* as jostle-bench's pingpong begins a size */
    p->reps = 1;
    for (int k = 0; k < 10; k++) /* the harness's default --warmup */
        warm[k] = jt_p2p_sample(p, size);
    p->reps = sample_reps(warm, 10, tick);
    int n = (iters + p->reps - 1) / p->reps;
    double sum = 0.0;
    for (int k = 0; k < n; k++) {
        v[k] = (jt_p2p_sample(p, size) + (p->reps - 1) * overhead) / p->reps;
        sum += v[k];
    }
    iters = n;
    jt_stats st;
    jt_stats_compute(v, p->me == 0 ? (size_t)iters : 0, &st);
    double per = kind == LAT ? 0.5 : 1.0; /* latency: half a round trip */
    *median = st.median * per;
    *mean = sum / iters * per;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int sweep = argc > 2 && strcmp(argv[1], "sweep") == 0;
    int kind = argc > 1 ? (strcmp(argv[1], "bw") == 0 ? BW : strcmp(argv[1], "bibw") == 0 ? BIBW
                                                                                            : LAT)
                        : LAT;
    int first = sweep ? 2 : 3;
    if (nranks != 2 || argc <= first ||
        (!sweep && strcmp(argv[1], "latency") && kind == LAT)) {
        if (rank == 0)
            fprintf(stderr, "usage: ref_osu latency|bw|bibw ROUNDS SIZE... | ref_osu sweep "
                            "SIZE...   (2 ranks)\n");
        MPI_Finalize();
        return 2;
    }
    int nsizes = argc - first, rounds = sweep ? 1 : atoi(argv[2]);
    uint64_t *sizes = calloc((size_t)nsizes, sizeof *sizes);
    size_t max = 1;
    for (int i = 0; i < nsizes; i++) {
        sizes[i] = strtoull(argv[first + i], NULL, 10);
        max = sizes[i] > max ? sizes[i] : max;
    }
    long page = sysconf(_SC_PAGESIZE);
    char *s = NULL, *r = NULL;
    if (posix_memalign((void **)&s, (size_t)page, max) || posix_memalign((void **)&r, (size_t)page, max))
        return 1;

    if (sweep) {
        if (rank == 0)
            printf("# OSU-method latency loop\n# Size       Latency (us)\n");
        double *it = calloc(10000, sizeof *it), med;
        for (int i = 0; i < nsizes; i++) {
            double lat = reference(LAT, rank, s, r, sizes[i], it, &med);
            if (rank == 0)
                printf("%-10llu%18.2f\n", (unsigned long long)sizes[i], lat * 1e6);
        }
        MPI_Finalize();
        return 0;
    }

    jt_topo topo;
    char err[256];
    if (jt_topo_load(&topo, NULL, err, sizeof err))
        return 1;
    jt_p2p_mode mode = kind == LAT ? JT_P2P_PINGPONG : kind == BW ? JT_P2P_STREAM : JT_P2P_BIDIR;
    size_t frames;
    size_t bytes = jt_p2p_arena_bytes(mode, JT_P2P_OSU, WINDOW, sizes, (size_t)nsizes, 0, &frames);
    jt_buffer buf;
    jt_buffer_alloc(&topo, &buf, bytes, JT_MEM_ANY);
    jt_p2p p;
    jt_p2p_init(&p, MPI_COMM_WORLD, rank, 1 - rank, mode, JT_P2P_OSU, WINDOW, 0, buf.p, buf.bytes,
                frames);
    /* jostle's samples are taken as the harness's default takes them (--clock-overhead keep,
     * as OSU); what --clock-overhead subtract would take off each one is printed for the
     * script's column. */
    double overhead = jt_timer_overhead(), tick = jt_timer_resolution();
    if (rank == 0)
        printf("# timer_overhead_s %.9e\n# timer_resolution_s %.9e\n", overhead, tick);
    double *v = calloc(10000, sizeof *v), *it = calloc(10000, sizeof *it);
    for (int round = 0; round < rounds; round++) {
        for (int i = 0; i < nsizes; i++) {
            double ref = 0, refmed = 0, med = 0, mean = 0;
            for (int turn = 0; turn < 2; turn++) {
                if ((turn + round) % 2 == 0)
                    ref = reference(kind, rank, s, r, sizes[i], it, &refmed);
                else
                    jostle(kind, &p, sizes[i], v, &med, &mean, tick, overhead);
            }
            if (rank == 0)
                printf("%d %llu %.9e %.9e %.9e %.9e\n", round, (unsigned long long)sizes[i], ref,
                       refmed, med, mean);
            fflush(stdout);
        }
    }
    jt_p2p_free(&p);
    jt_buffer_free(&topo, &buf);
    jt_topo_destroy(&topo);
    free(v);
    free(it);
    free(sizes);
    free(s);
    free(r);
    MPI_Finalize();
    return 0;
}
