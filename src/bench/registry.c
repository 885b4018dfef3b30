#include "bench/bench.h"

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
    NULL,
};

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
