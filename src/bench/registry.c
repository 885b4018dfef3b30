#include "bench/bench.h"

#include "core/errors.h"
#include "core/sizes.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const jt_bench *const jt_benches[] = {
    &jt_bench_pingpong,
#ifndef JT_SMPI /* SMPI cannot simulate compute threads beside MPI calls */
    &jt_bench_contention,
    &jt_bench_overlap,
#endif
    &jt_bench_bcast,
    &jt_bench_cholesky,
#ifndef JT_SMPI /* the kernels run for real */
    &jt_bench_tile_kernels,
#endif
    NULL,
};

size_t jt_bench_sizes(const jt_ctx *ctx, const char *dflt, uint64_t **sizes)
{
    const char *spec = jt_opt_str(&ctx->opts, "sizes");
    size_t n;
    char err[512];
    if (jt_sizes_parse(spec ? spec : dflt, sizes, &n, err, sizeof err))
        jt_usage_error("--sizes: %s", err);
    for (size_t i = 0; i < n; i++)
        if ((*sizes)[i] > (uint64_t)INT_MAX) {
            char b[32];
            jt_format_bytes((*sizes)[i], b, sizeof b);
            jt_usage_error("--sizes: size '%s' is not allowed: one MPI message holds at most %d "
                           "bytes (count of MPI_BYTE)", b, INT_MAX);
        }
    return n;
}

size_t jt_bench_memory_per_rank(const jt_ctx *ctx)
{
    unsigned long long kb = 0;
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    size_t bytes = kb ? (size_t)kb * 1024
                      : (size_t)sysconf(_SC_AVPHYS_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
    return bytes / (size_t)(ctx->local_size > 0 ? ctx->local_size : 1);
}
