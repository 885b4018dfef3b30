/* jostle-bench: the dispatcher.  `jostle-bench NAME [options]` under an MPI launcher;
 * `--version`, `--machine`, `--list` and the topology queries answer without MPI. */
#include "bench/bench.h"
#include "bench/topo_query.h"

#include "core/errors.h"
#include "jostle_buildinfo.h"
#include "topo/topo.h"

#include "core/sizes.h"
#include "core/stats.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *flavor(const char *lib)
{
    if (strstr(lib, "Open MPI"))
        return "openmpi";
    if (strstr(lib, "MPICH"))
        return "mpich";
    if (strstr(lib, "SMPI") || strstr(lib, "SimGrid"))
        return "simgrid";
    return "other";
}

static int version(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    /* MPI_Get_library_version may be called before MPI_Init (MPI-3.0, 8.1.1). */
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    jt_json j;
    jt_json_init(&j);
    jt_json_object(&j);
    jt_json_kstr(&j, "version", JT_VERSION);
    jt_json_kstr(&j, "git", JT_GIT);
    char first[256];
    snprintf(first, sizeof first, "%.*s", (int)strcspn(lib, "\n"), lib);
    jt_json_kstr(&j, "mpi_library", first);
    jt_json_kstr(&j, "mpi_flavor", flavor(lib));
    jt_json_kstr(&j, "compiler", JT_C_COMPILER);
    jt_json_key(&j, "benchmarks");
    jt_json_array(&j);
    for (int i = 0; jt_benches[i]; i++)
        jt_json_str(&j, jt_benches[i]->name);
    jt_json_end(&j);
    jt_json_end(&j);
    puts(j.buf);
    jt_json_free(&j);
    return 0;
}

static int machine(int argc, char **argv)
{
    const char *xml = NULL;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--topology") == 0 && i + 1 < argc)
            xml = argv[++i];
        else
            jt_usage_error("--machine takes only --topology FILE.xml, not '%s'", argv[i]);
    }
    jt_topo tp;
    char err[1024];
    if (jt_topo_load(&tp, xml, err, sizeof err))
        jt_usage_error("%s", err);
    jt_json j;
    jt_json_init(&j);
    jt_topo_machine_json(&tp, &j);
    puts(j.buf);
    jt_json_free(&j);
    jt_topo_destroy(&tp);
    return 0;
}

/* The one parser of --sizes, for the Python side too (it validates before launching). */
static int parse_sizes(int argc, char **argv)
{
    if (argc != 3)
        jt_usage_error("--parse-sizes takes one SPEC");
    uint64_t *v;
    size_t n;
    char err[512];
    if (jt_sizes_parse(argv[2], &v, &n, err, sizeof err))
        jt_usage_error("--sizes: %s", err);
    fputc('[', stdout);
    for (size_t i = 0; i < n; i++)
        printf("%s%llu", i ? "," : "", (unsigned long long)v[i]);
    puts("]");
    free(v);
    return 0;
}

/* The harness's statistics of numbers read from stdin, as a point line's keys: for samples
 * measured outside jostle-bench (an outside reference such as StarPU's mpi_cholesky). */
static int stats(int argc, char **argv)
{
    (void)argv;
    if (argc != 2)
        jt_usage_error("--stats takes no argument: numbers on standard input");
    size_t n = 0, cap = 64;
    double *v = malloc(cap * sizeof *v), x;
    while (v && scanf("%lf", &x) == 1) {
        if (n == cap)
            v = realloc(v, (cap *= 2) * sizeof *v);
        if (v)
            v[n++] = x;
    }
    if (!v)
        jt_fatal("out of memory");
    if (!feof(stdin) || n == 0)
        jt_usage_error("--stats: standard input must hold one or more numbers, and only numbers");
    jt_stats st;
    jt_stats_compute(v, n, &st);
    jt_json j;
    jt_json_init(&j);
    jt_json_object(&j);
    jt_json_kint(&j, "n", (long long)n);
    jt_stats_json(&st, &j);
    jt_json_end(&j);
    puts(j.buf);
    jt_json_free(&j);
    free(v);
    return 0;
}

static int describe(int argc, char **argv)
{
    if (argc != 2)
        jt_usage_error("--describe takes no argument, not '%s'", argv[2]);
    return jt_bench_describe();
}

static int transport(int argc, char **argv)
{
    if (argc != 2)
        jt_usage_error("--transport takes no argument, not '%s'", argv[2]);
    return jt_transport_print();
}

static int list(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    for (int i = 0; jt_benches[i]; i++)
        printf("%-12s %.*s\n", jt_benches[i]->name,
               (int)strcspn(jt_benches[i]->summary, ":\n"), jt_benches[i]->summary);
    return 0;
}

/* The queries jostle-bench answers alone, without an MPI launcher, each once: its flag, what
 * answers it, and its line of the usage text (made from this table, as the benchmarks' part is
 * made from list.h's). */
static const struct {
    const char *flag;
    int (*answer)(int argc, char **argv);
    const char *usage;
} queries[] = {
    {"--list", list, "(the benchmarks, one a line)"},
    {"--version", version, "(its version, MPI library and benchmarks, JSON)"},
    {"--machine", machine, "[--topology FILE.xml]"},
    {"--describe", describe, "(every benchmark's options and metrics, JSON)"},
    {"--transport", transport, "(the MPI library's transport settings, JSON)"},
    {"--parse-sizes", parse_sizes, "SPEC   (the sizes as a JSON list)"},
    {"--stats", stats, "< NUMBERS    (their statistics, as a point line's keys)"},
    {"--topo", jt_query_topo, "[--topology FILE.xml] [--export OUT.xml]"},
    {"--place", jt_query_place,
     "[--topology FILE.xml] [--nic NAME] [--favor latency|bandwidth] [--threads K]"},
    {"--place-ranks", jt_query_place_ranks,
     "[--topology FILE.xml] [--ranks N|A:B] [--policy P] [--progress Q]"},
    {"--latency-matrix", jt_query_latency,
     "[--bytes B] [--accesses N] [--rounds R] [--no-bandwidth]"},
    {"--stream", jt_query_stream,
     "[--bytes B] [--rounds R] [--seconds S]   (the triad on every core)"},
};
#define NQUERIES (sizeof queries / sizeof queries[0])

static void usage(FILE *f)
{
    fprintf(f, "Usage: jostle-bench BENCHMARK [options]   (under mpirun, mpiexec or srun)\n");
    for (size_t q = 0; q < NQUERIES; q++)
        fprintf(f, "       jostle-bench %s %s\n", queries[q].flag, queries[q].usage);
    fprintf(f, "\nBenchmarks:\n");
    for (int i = 0; jt_benches[i]; i++)
        fprintf(f, "  %-12s %.*s\n", jt_benches[i]->name,
                (int)strcspn(jt_benches[i]->summary, ":\n"), jt_benches[i]->summary);
    fprintf(f, "\n`jostle-bench BENCHMARK --help` lists its options.  Results: --output FILE.jsonl "
               "(docs/records.md).\n");
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? JT_EXIT_USAGE : 0;
    }
    for (size_t q = 0; q < NQUERIES; q++)
        if (strcmp(argv[1], queries[q].flag) == 0)
            return queries[q].answer(argc, argv);
    for (int i = 0; jt_benches[i]; i++)
        if (strcmp(argv[1], jt_benches[i]->name) == 0)
            return jt_harness_main(jt_benches[i], argc, argv);
    char names[512] = "";
    for (int i = 0; jt_benches[i]; i++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
                 jt_benches[i]->name);
    jt_usage_error("unknown benchmark '%s': expected one of %s (or a query: --list, --version, "
                   "--machine, … see --help)", argv[1], names);
}
