/* Reference loops written to the method of osu_mbw_mr and osu_latency_mt (OSU Micro-Benchmarks,
 * the release of 2024: c/mpi/pt2pt/standard/osu_mbw_mr.c and osu_latency_mt.c), next to
 * jostle's flows (comm/flows.h) in one MPI job (bench/osu_pairs_parity.py).
 *
 * mbw, as osu_mbw_mr: pairs = ranks / 2, rank i sends to rank i + pairs; one send and one
 * receive buffer per rank, page-aligned, zeroed over the largest size when allocated
 * (allocate_memory_pt2pt_mul), set ('a', 'b') over the size before each size; a
 * barrier; then per iteration a barrier of every rank and a second one (OMB's validation pass,
 * run once without -c), then each sender times a window of 64 MPI_Isend of its one buffer,
 * MPI_Waitall and a 1-byte acknowledgement (tag 101, into its receive buffer; receivers: 64
 * MPI_Irecv into one buffer, MPI_Waitall, the acknowledgement from their send buffer); `skip`
 * untimed iterations first; 100 + 10 at every size (osu_mbw_mr keeps its counts for every size,
 * where osu_bw takes 20 + 2 above 8 KiB).  Printed: bandwidth = size x pairs x window x
 * iterations / (the senders' summed loop times / pairs) in MB/s (1e6), whose message rate,
 * 1e6 x bandwidth / size, the script derives as osu_mbw_mr does.
 * jostle: jt_flows with the same pairs, stream mode, --buffers osu: its buffers set over the
 * size (as pingpong begins a size), 10 warm-up samples (the harness's --warmup, set to the
 * reference's skip), then the same iterations; each sample a window timed by each sender
 * after the same two barriers; the
 * aggregate as `jostle-bench pingpong --pairs N --format osu` prints it (flows x size x window /
 * the mean over samples of the mean over pairs).
 *
 * latmt T, as osu_latency_mt -t T:T with MPI_THREAD_MULTIPLE on 2 ranks: T threads per rank
 * (pthreads started once and kept over the sizes, as OSU's; the main thread waits), per size
 * a barrier taken inside the last of a rank's threads to arrive, buffers set, each thread's
 * share of the iterations (thread t takes iterations t, t + T, ...; osu_latency_mt's
 * 10 000 + 100 up to 8 KiB and 1 000 + 10 above, the timed ones divided by DIV; only the
 * timed ones read the clock, MPI_Wtime around the round trip, on rank 0 only: OSU's
 * recv_thread reads none) as MPI_Send / MPI_Recv round trips (tag = iteration with several
 * threads, as OSU; 1 and 2 with one), buffers page-aligned and left untouched until each size
 * sets them (allocate_memory_pt2pt), each round trip timed; latency =
 * the threads' mean of their summed round trips / (2 x their iterations), in us (OSU divides
 * the threads' summed time by one thread's share of the iterations: T times this, the same
 * with one thread, where the script's target is).  jostle:
 * jt_flows with 1 pair and T threads, pingpong, its warm-up the reference's skip, then all the
 * iterations on each thread (each on its own communicator).
 * Each rank's threads (both loops) are bound to the cores jostle's default gives them.  Both
 * loops keep each timed sample (stored after its clock reading) for the median printed beside.
 *
 * Usage: ref_mbw [--pages huge] [--jostle-first] mbw ROUNDS SIZE...
 *        ref_mbw [--pages huge] [--jostle-first] [--touch-at-alloc] latmt T ROUNDS DIV SIZE...
 * Prints on rank 0 "ROUND SIZE REF JOSTLE REF_MEDIAN JOSTLE_MEDIAN": REF and JOSTLE in MB/s
 * (mbw) or us (latmt), OSU's figure; the medians are of one sample's time in seconds (a window,
 * or a round trip), over every sender or thread. */
#define _GNU_SOURCE /* madvise, MADV_HUGEPAGE */
#include "comm/flows.h"
#include "core/stats.h"
#include "topo/nic_place.h"

#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define LARGE 8192
#define WINDOW 64

typedef struct ref {
    int rank, nranks, pairs, threads, lat, div;
    size_t size;
    int iters, skip;
    const jt_topo *topo;
    int core[JT_FLOWS_MAX_THREADS];
    char *s[JT_FLOWS_MAX_THREADS], *r[JT_FLOWS_MAX_THREADS];
    double sum[JT_FLOWS_MAX_THREADS];
    int timed[JT_FLOWS_MAX_THREADS];    /* iterations each thread timed */
    double *samp[JT_FLOWS_MAX_THREADS]; /* each timed sample, per thread */
    double median;                      /* of the last reference loop's samples, rank 0 */
} ref;

static void counts(ref *x)
{
    if (!x->lat) { /* osu_mbw_mr: the same at every size */
        x->iters = 100;
        x->skip = 10;
        return;
    }
    /* DIV shortens the timed loop only: OSU's skip (100, 10 above 8 KiB) is kept, as a new
     * size's first loop is slow for longer than 10 round trips with MPICH at 128 B - 4 KiB. */
    int large = x->size > LARGE, it = (large ? 1000 : 10000) / x->div;
    x->iters = it < x->threads ? x->threads : it; /* every thread times at least one */
    x->skip = large ? 10 : 100;
}

/* The median of the first n values of rank 0's gathered array (senders first). */
static double median_of(double *v, size_t n)
{
    jt_stats s;
    jt_stats_compute(v, n, &s);
    return s.median;
}

/* Rank 0: every rank's `per` samples, rank-major. */
static double *gather(ref *x, const double *mine, size_t per)
{
    double *all = x->rank == 0 ? malloc(per * (size_t)x->nranks * sizeof *all) : NULL;
    MPI_Gather(mine, (int)per, MPI_DOUBLE, all, (int)per, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return all;
}

static double mbw_reference(ref *x)
{
    int n = (int)x->size, sender = x->rank < x->pairs, active = x->rank < 2 * x->pairs;
    int peer = sender ? x->rank + x->pairs : x->rank - x->pairs;
    MPI_Request req[WINDOW];
    MPI_Status st[WINDOW];
    double *own = x->samp[0];
    memset(own, 0, (size_t)x->iters * sizeof *own);
    memset(x->s[0], 'a', x->size);
    memset(x->r[0], 'b', x->size);
    MPI_Barrier(MPI_COMM_WORLD);
    double t = 0.0;
    for (int i = 0; i < x->iters + x->skip; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (!active)
            continue;
        MPI_Barrier(MPI_COMM_WORLD); /* OMB's per-pass barrier (its ranks are all active) */
        double t0 = sender ? MPI_Wtime() : 0.0; /* OSU's receivers read no clock */
        for (int j = 0; j < WINDOW; j++) {
            if (sender)
                MPI_Isend(x->s[0], n, MPI_CHAR, peer, 100, MPI_COMM_WORLD, &req[j]);
            else
                MPI_Irecv(x->r[0], n, MPI_CHAR, peer, 100, MPI_COMM_WORLD, &req[j]);
        }
        MPI_Waitall(WINDOW, req, st);
        if (sender)
            MPI_Recv(x->r[0], 1, MPI_CHAR, peer, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else
            MPI_Send(x->s[0], 1, MPI_CHAR, peer, 101, MPI_COMM_WORLD);
        if (sender && i >= x->skip) {
            double dt = MPI_Wtime() - t0;
            t += dt;
            own[i - x->skip] = dt;
        }
    }
    double sum = 0.0;
    MPI_Reduce(&t, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    double *all = gather(x, own, (size_t)x->iters);
    if (all)
        x->median = median_of(all, (size_t)x->iters * x->pairs);
    free(all);
    return (double)x->size / 1e6 * x->pairs * x->iters * WINDOW / (sum / x->pairs);
}

/* osu_latency_mt's threads (OMB 7.x, c/mpi/pt2pt/standard/osu_latency_mt.c): created once after
 * MPI_Init and kept over every size (send_thread / recv_thread loop over the sizes themselves);
 * per size the last of a rank's threads to arrive takes the MPI_Barrier, inside the thread, and
 * the loop follows at once.  Here the sizes alternate with jostle's flows, so between two sizes
 * the threads wait for the next one (x->job); the barrier stays in the thread, after that wait,
 * so the time a thread takes to wake is not in its first iterations, as in OSU. */
typedef struct lat_pool {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    long job;           /* sizes handed out; -1 ends the threads */
    int done;           /* threads that finished the current size */
    int arrived;        /* OSU's finished_size: threads at the start of the current size */
    long gen;           /* barriers taken: a waiting thread's predicate */
    pthread_t th[JT_FLOWS_MAX_THREADS];
} lat_pool;

typedef struct lat_arg {
    ref *x;
    lat_pool *p;
    int t;
} lat_arg;

static lat_arg lat_args[JT_FLOWS_MAX_THREADS];

/* One size on thread t, as OSU's thread runs it after its barrier. */
static void lat_size(ref *x, int t)
{
    int n = (int)x->size, peer = 1 - x->rank, k = 0;
    memset(x->s[t], 'a', x->size); /* OSU's set_buffer_pt2pt, per size */
    memset(x->r[t], 'b', x->size);
    double total = 0.0;
    for (int i = t; i < x->iters + x->skip; i += x->threads) {
        int tag_s = x->threads > 1 ? i : 1, tag_r = x->threads > 1 ? i : 2;
        if (x->rank != 0) { /* OSU's recv_thread reads no clock: here its two readings per round
                             * trip made the reference 4% slower at 1 KiB with Open MPI */
            MPI_Recv(x->r[t], n, MPI_CHAR, peer, tag_s, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(x->s[t], n, MPI_CHAR, peer, tag_r, MPI_COMM_WORLD);
            continue;
        }
        double t0 = 0.0;
        if (i >= x->skip)
            t0 = MPI_Wtime();
        MPI_Send(x->s[t], n, MPI_CHAR, peer, tag_s, MPI_COMM_WORLD);
        MPI_Recv(x->r[t], n, MPI_CHAR, peer, tag_r, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (i >= x->skip) {
            double dt = MPI_Wtime() - t0;
            total += dt;
            x->samp[t][k++] = dt;
        }
    }
    x->sum[t] = total;
    x->timed[t] = k;
}

static void *lat_thread(void *arg)
{
    lat_arg *a = arg;
    ref *x = a->x;
    lat_pool *p = a->p;
    jt_binding b;
    jt_bind_thread(x->topo, x->core[a->t], &b); /* jostle's cores (OSU binds nothing itself) */
    long seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->job == seen)
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->job < 0)
            break;
        seen = p->job;
        if (++p->arrived == x->threads) { /* the last to arrive: OSU's barrier, in the thread */
            MPI_Barrier(MPI_COMM_WORLD);
            p->arrived = 0;
            p->gen++;
            pthread_cond_broadcast(&p->cv);
        } else {
            long g = p->gen;
            while (p->gen == g)
                pthread_cond_wait(&p->cv, &p->mu);
        }
        pthread_mutex_unlock(&p->mu);
        lat_size(x, a->t);
        pthread_mutex_lock(&p->mu);
        p->done++;
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static void lat_start(ref *x, lat_pool *p)
{
    memset(p, 0, sizeof *p);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    for (int t = 0; t < x->threads; t++) {
        lat_args[t] = (lat_arg){x, p, t};
        pthread_create(&p->th[t], NULL, lat_thread, &lat_args[t]);
    }
}

static void lat_stop(ref *x, lat_pool *p)
{
    pthread_mutex_lock(&p->mu);
    p->job = -1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (int t = 0; t < x->threads; t++)
        pthread_join(p->th[t], NULL);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
}

/* One size on every thread; the main thread waits (as OSU's main waits in pthread_join). */
static double lat_reference(ref *x, lat_pool *p)
{
    pthread_mutex_lock(&p->mu);
    p->done = 0;
    p->job++;
    pthread_cond_broadcast(&p->cv);
    while (p->done < x->threads)
        pthread_cond_wait(&p->cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
    if (x->rank != 0) /* it timed nothing */
        return 0.0;
    double mean = 0.0;
    size_t m = 0;
    double *pool = malloc((size_t)x->iters * sizeof *pool);
    for (int t = 0; t < x->threads; t++) {
        size_t k = (size_t)x->timed[t];
        mean += x->sum[t] / (double)k / 2.0 / x->threads;
        memcpy(pool + m, x->samp[t], k * sizeof *pool);
        m += k;
    }
    x->median = median_of(pool, m); /* rank 0's threads: the ones that time, as in OSU */
    free(pool);
    return mean * 1e6;
}

/* jostle's value for one size, on rank 0 (and the median of its senders' samples). */
static double jostle(ref *x, jt_flows *f, double *median)
{
    /* Its warm-up (jostle-bench's --warmup) is the reference's skip, so both loops time the
     * same iterations after the same number untimed. */
    jt_flows_run(f, x->size, (size_t)x->skip, 1);
    jt_flows_run(f, x->size, (size_t)x->iters, 0);
    int per = f->nflow;
    size_t cnt = (size_t)per * (size_t)x->iters;
    double *mine = malloc(cnt * sizeof *mine);
    for (int t = 0; t < per; t++)
        memcpy(mine + (size_t)t * x->iters, f->flow[t].times, (size_t)x->iters * sizeof *mine);
    double *all = gather(x, mine, cnt), total = 0.0;
    free(mine);
    if (!all)
        return 0.0;
    for (size_t k = 0; k < cnt * (size_t)x->pairs; k++) /* over flows (senders' first) and samples */
        total += all[k];
    double mean = total / ((double)cnt * x->pairs); /* the mean over samples of the flows' mean */
    *median = median_of(all, cnt * (size_t)x->pairs);
    free(all);
    if (x->lat)
        return mean / 2.0 * 1e6;
    return (double)per * x->pairs * (double)x->size * WINDOW / mean / 1e6;
}

/* The reference's buffers, as OSU allocates them (page-aligned, zeroed over the largest size by
 * osu_mbw_mr; left to each size's setting by osu_latency_mt, unless TOUCH); with HUGE 2 MiB-
 * aligned and madvised.  Nonzero when out of memory. */
static int ref_buffers(ref *x, size_t max, int huge, int touch)
{
    size_t page = huge ? (size_t)2 << 20 : (size_t)sysconf(_SC_PAGESIZE);
    size_t len = (max + page - 1) / page * page;
    for (int t = 0; t < x->threads; t++) {
        if (posix_memalign((void **)&x->s[t], page, huge ? len : max) ||
            posix_memalign((void **)&x->r[t], page, huge ? len : max))
            return 1;
        if (huge && (madvise(x->s[t], len, MADV_HUGEPAGE) || madvise(x->r[t], len, MADV_HUGEPAGE)))
            return 1;
        if (!x->lat || touch) {
            memset(x->s[t], 0, max);
            memset(x->r[t], 0, max);
        }
        x->samp[t] = malloc(10000 * sizeof *x->samp[t]); /* the most iterations of any size */
        if (!x->samp[t])
            return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    /* --pages huge: both loops' buffers on 2 MiB pages (jostle's --pages huge; the reference's
     * 2 MiB-aligned and madvised, as THP "always" gives a buffer that covers its 2 MiB ranges
     * whole): a departure from OSU's buffers, named by osu_pairs_parity.py --pages. */
    /* --jostle-first: jostle's buffers are allocated before the reference's.  A fresh job's
     * later allocations may land on other physical pages than its first (on a KVM guest, other
     * host pages): osu_pairs_parity.py alternates the order from job to job, as it alternates
     * which loop runs first from round to round. */
    /* --touch-at-alloc: the latency loop's buffers zeroed when allocated, as jostle's and
     * osu_mbw_mr's are, where osu_latency_mt leaves each page to the first size that sets it
     * (a page faulted in at 4 MiB was 5-8% faster there on this KVM guest). */
    int huge = 0, jostle_first = 0, touch = 0;
    for (;;) {
        int k = 0;
        if (argc > 2 && strcmp(argv[1], "--pages") == 0 && strcmp(argv[2], "huge") == 0)
            huge = 1, k = 2;
        else if (argc > 1 && strcmp(argv[1], "--jostle-first") == 0)
            jostle_first = 1, k = 1;
        else if (argc > 1 && strcmp(argv[1], "--touch-at-alloc") == 0)
            touch = 1, k = 1;
        if (!k)
            break;
        argv[k] = argv[0];
        argv += k;
        argc -= k;
    }
    int lat = argc > 1 && strcmp(argv[1], "latmt") == 0, first = lat ? 5 : 3, provided;
    MPI_Init_thread(&argc, &argv, lat ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
    ref x;
    memset(&x, 0, sizeof x);
    MPI_Comm_rank(MPI_COMM_WORLD, &x.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &x.nranks);
    x.threads = lat && argc > 2 ? atoi(argv[2]) : 1;
    x.div = lat && argc > 4 ? atoi(argv[4]) : 1;
    if (argc <= first || (!lat && strcmp(argv[1], "mbw")) || x.nranks < 2 ||
        (lat && x.nranks != 2) || (lat && provided < MPI_THREAD_MULTIPLE) || x.threads < 1 ||
        x.threads > JT_FLOWS_MAX_THREADS || x.div < 1) {
        if (x.rank == 0)
            fprintf(stderr, "usage: ref_mbw mbw ROUNDS SIZE... (2N ranks) | ref_mbw latmt T "
                            "ROUNDS DIV SIZE... (2 ranks, MPI_THREAD_MULTIPLE, T in 1..%d, "
                            "DIV >= 1)\n", JT_FLOWS_MAX_THREADS);
        MPI_Finalize();
        return 2;
    }
    x.lat = lat;
    x.pairs = lat ? 1 : x.nranks / 2;
    int rounds = atoi(argv[lat ? 3 : 2]), nsizes = argc - first;
    size_t max = 1;
    uint64_t *sizes = calloc((size_t)nsizes, sizeof *sizes);
    for (int i = 0; i < nsizes; i++) {
        sizes[i] = strtoull(argv[first + i], NULL, 10);
        max = sizes[i] > max ? sizes[i] : max;
    }
    jt_topo topo;
    char err[256];
    if (jt_topo_load(&topo, NULL, err, sizeof err))
        return 1;
    x.topo = &topo;
    /* The cores jostle-bench gives each rank's flows by default (pingpong_flows.c): the
     * NIC-aware placement of comm thread k = local rank x threads + t (one host here). */
    int numas[JT_FLOWS_MAX_THREADS], local = x.rank;
    char why[1024];
    for (int t = 0; t < x.threads; t++)
        jt_place_comm(&topo, NULL, JT_FAVOR_LATENCY, local * x.threads + t, &x.core[t], &numas[t],
                      why, sizeof why);
    jt_binding b;
    if (!lat) /* both loops' buffers first touched on the core they run on */
        jt_bind_thread(&topo, x.core[0], &b);
    if (huge)
        jt_buffer_pages(JT_PAGES_HUGE); /* jostle's flows */
    jt_p2p_mode mode = lat ? JT_P2P_PINGPONG : JT_P2P_STREAM;
    size_t frames;
    size_t arena = jt_p2p_arena_bytes(mode, JT_P2P_OSU, WINDOW, sizes, (size_t)nsizes, 0, &frames);
    jt_flows f;
    for (int turn = 0; turn < 2; turn++) {
        if (turn == jostle_first) {
            if (ref_buffers(&x, max, huge, touch))
                return 1;
        } else {
            jt_flows_init(&f, &topo, MPI_COMM_WORLD, x.pairs, lat ? x.threads : 0, mode,
                          JT_P2P_OSU, WINDOW, 0, arena, frames, x.core, numas);
        }
    }
    lat_pool pool;
    if (lat)
        lat_start(&x, &pool);
    for (int round = 0; round < rounds; round++) {
        for (int i = 0; i < nsizes; i++) {
            x.size = sizes[i];
            counts(&x);
            double r = 0, j = 0, rmed = 0, jmed = 0;
            for (int turn = 0; turn < 2; turn++) {
                if ((turn + round) % 2 == 0) {
                    r = lat ? lat_reference(&x, &pool) : mbw_reference(&x);
                    rmed = x.median;
                } else {
                    j = jostle(&x, &f, &jmed);
                }
            }
            if (x.rank == 0)
                printf("%d %llu %.9e %.9e %.9e %.9e\n", round, (unsigned long long)x.size, r, j,
                       rmed, jmed);
            fflush(stdout);
        }
    }
    if (lat)
        lat_stop(&x, &pool);
    jt_flows_free(&f);
    for (int t = 0; t < x.threads; t++) {
        free(x.s[t]);
        free(x.r[t]);
        free(x.samp[t]);
    }
    free(sizes);
    jt_topo_destroy(&topo);
    MPI_Finalize();
    return 0;
}
