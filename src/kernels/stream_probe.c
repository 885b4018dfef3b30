/* The node's STREAM triad on all cores at once: the triad kernel in a pool of bound workers
 * (kernels/stream_probe.h).  The loops themselves are kernels/stream_loops.c. */
#include "kernels/stream_probe.h"

#include "kernels/kernels.h"
#include "kernels/stream_loops.h"
#include "kernels/workers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

size_t jt_stream_default_bytes(const jt_topo *tp)
{
    int n = 0;
    size_t llc = jt_topo_llc_bytes(tp, &n);
    size_t cores = (size_t)(jt_topo_ncores(tp) > 0 ? jt_topo_ncores(tp) : 1);
    size_t b = llc ? 4 * llc * (size_t)n / cores : 0, floor = (size_t)24 << 20;
    return b > floor ? b : floor;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void nap(double s)
{
    struct timespec t = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&t, NULL);
}

void jt_stream_probe(const jt_topo *tp, size_t bytes, int rounds, double seconds,
                     jt_stream_result *out)
{
    memset(out, 0, sizeof *out);
    int n = jt_topo_ncores(tp) > 0 ? jt_topo_ncores(tp) : 1;
    int *cores = malloc((size_t)n * sizeof *cores);
    for (int c = 0; c < n; c++)
        cores[c] = c;
    jt_pool pool;
    jt_pool_create(&pool, tp, jt_kernel_find("triad"), n, cores, bytes, -1 /* first touch */, 1,
                   JT_STORES_NORMAL);
    free(cores);
    for (int t = 0; t < n; t++)
        if (!pool.w[t].bind.ok) {
            if (!out->unbound++)
                snprintf(out->note, sizeof out->note, "core %d: %s", t, pool.w[t].bind.note);
        }
    double *v = malloc((size_t)(rounds > 0 ? rounds : 1) * sizeof *v);
    jt_pool_start(&pool); /* a warm-up round: pages, frequencies and the threads settle */
    nap(seconds / 2);
    jt_pool_stop(&pool);
    for (int r = 0; r < rounds; r++) {
        double wall;
        jt_pool_start(&pool);
        nap(seconds);
        double sweeps = jt_pool_sweeps(&pool, &wall);
        jt_pool_stop(&pool);
        v[r] = wall > 0 ? sweeps * pool.w[0].ws.bytes / wall / 1e9 : 0;
    }
    qsort(v, (size_t)rounds, sizeof *v, cmp);
    out->threads = n;
    out->bytes = bytes;
    out->rounds = rounds;
    out->worst = v[0];
    out->best = v[rounds - 1];
    out->median = rounds % 2 ? v[rounds / 2] : 0.5 * (v[rounds / 2 - 1] + v[rounds / 2]);
    free(v);
    jt_pool_destroy(&pool);
}
