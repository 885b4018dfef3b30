#include "bench/bench.h"

#include "core/errors.h"
#include "core/sizes.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* IN_BUILD(simgrid, ...): the entry, unless this is the SimGrid build and it is not in it. */
#ifdef JT_SMPI
#define IN_BUILD_0(...)
#define IN_BUILD_1(...) __VA_ARGS__
#define IN_BUILD(simgrid, ...) IN_BUILD_##simgrid(__VA_ARGS__)
#else
#define IN_BUILD(simgrid, ...) __VA_ARGS__
#endif

const jt_bench *const jt_benches[] = {
#define JT_BENCH(id, simgrid) IN_BUILD(simgrid, &jt_bench_##id, )
#include "bench/list.h"
#undef JT_BENCH
    NULL,
};

static const int simgrid_build[] = {
#define JT_BENCH(id, simgrid) IN_BUILD(simgrid, simgrid, )
#include "bench/list.h"
#undef JT_BENCH
    0,
};

int jt_bench_describe(void)
{
    jt_json j;
    jt_json_init(&j);
    jt_json_object(&j);
    jt_json_kint(&j, "schema", 1);
    jt_json_kstr(&j, "tool", "jostle-bench");
    jt_json_key(&j, "common");
    jt_describe_common(&j);
    jt_json_key(&j, "benchmarks");
    jt_json_array(&j);
    for (int i = 0; jt_benches[i]; i++)
        jt_describe_bench(jt_benches[i], simgrid_build[i], &j);
    jt_json_end(&j);
    jt_json_end(&j);
    puts(j.buf);
    jt_json_free(&j);
    return 0;
}

size_t jt_bench_sizes(const jt_opts *o, const jt_bench *b, uint64_t **sizes)
{
    const char *spec = jt_opt_str(o, "sizes"), *dflt = b->default_sizes;
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
