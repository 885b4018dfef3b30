/* A plain STREAM-style OpenMP loop next to jostle's compute kernels, in one process: rounds of
 * the plain loop (one array split among THREADS OpenMP threads, schedule(static), each sweep
 * timed as a whole with omp_get_wtime, bandwidth in the STREAM convention) alternate with rounds
 * of jostle's worker pool (THREADS bound threads, the same kernel on arrays of the same total
 * size, each sweep timed by its thread).  Both are compiled with the project's flags.
 * Usage: ref_stream copy|triad THREADS BYTES_PER_THREAD ROUNDS
 * Prints, in GB/s: "plain" the median over sweeps of the plain loop; "jostle" THREADS x the
 * median per-thread sweep bandwidth (what the contention records hold, per core); "jostle_window"
 * all bytes the pool's completed sweeps moved / the time it ran (threads that were not running
 * at the same time cannot inflate it).
 * Bind the OpenMP threads as the pool binds (cores 0..THREADS-1): OMP_PROC_BIND=close
 * OMP_PLACES=cores. */
#include "harness/harness.h"
#include "core/stats.h"
#include "core/timer.h"
#include "kernels/stream_loops.h"
#include "kernels/workers.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
    if (argc != 5 || (strcmp(argv[1], "copy") && strcmp(argv[1], "triad"))) {
        fprintf(stderr, "usage: ref_stream copy|triad THREADS BYTES_PER_THREAD ROUNDS\n");
        return 2;
    }
    int triad = strcmp(argv[1], "triad") == 0, T = atoi(argv[2]), rounds = atoi(argv[4]);
    size_t per = (size_t)atoll(argv[3]);
    size_t n = per / (triad ? 3 : 2) / sizeof(double) * (size_t)T;
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
#pragma omp parallel for schedule(static) num_threads(T)
    for (size_t i = 0; i < n; i++) {
        a[i] = 1.0;
        b[i] = 2.0;
        c[i] = 0.0;
    }
    double bytes = (triad ? 24.0 : 16.0) * (double)n;

    jt_topo tp;
    char err[256];
    if (jt_topo_load(&tp, NULL, err, sizeof err))
        return fprintf(stderr, "%s\n", err), 1;
    int *cores = malloc((size_t)T * sizeof *cores);
    for (int t = 0; t < T; t++)
        cores[t] = t % jt_topo_ncores(&tp);
    jt_pool pool;
    jt_pool_create(&pool, &tp, jt_kernel_find(argv[1]), T, cores, per, JT_MEM_ANY, 1,
                   JT_STORES_NORMAL);

    jt_series plain = {0}, mine = {0};
    double ran = 0;
    for (int r = 0; r < rounds; r++) {
        double t_end = jt_now() + 0.5;
        while (jt_now() < t_end) {
            double t0 = omp_get_wtime();
            if (triad) {
#pragma omp parallel for schedule(static) num_threads(T)
                for (size_t i = 0; i < n; i++)
                    c[i] = a[i] + 3.0 * b[i];
            } else {
#pragma omp parallel for schedule(static) num_threads(T)
                for (size_t i = 0; i < n; i++)
                    c[i] = a[i];
            }
            jt_series_push(&plain, bytes / (omp_get_wtime() - t0) / 1e9);
        }
        double since = jt_now();
        jt_pool_start(&pool);
        nanosleep(&(struct timespec){0, 500000000}, NULL);
        jt_pool_stop(&pool);
        ran += jt_now() - since;
        jt_pool_harvest(&pool, since, &mine, NULL);
    }
    for (size_t k = 0; k < mine.n; k++) /* per-thread sweep time -> per-thread GB/s */
        mine.v[k] = pool.w[0].ws.bytes / mine.v[k] / 1e9;
    jt_stats sp, sm;
    jt_stats_compute(plain.v, plain.n, &sp);
    jt_stats_compute(mine.v, mine.n, &sm);
    printf("plain %.6g\njostle %.6g\njostle_window %.6g\n", sp.median, T * sm.median,
           (double)mine.n * pool.w[0].ws.bytes / ran / 1e9);
    jt_pool_destroy(&pool);
    jt_topo_destroy(&tp);
    return 0;
}
