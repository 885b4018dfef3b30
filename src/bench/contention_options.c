/* contention's options: read and checked (bench/contention.h). */
#include "bench/contention.h"

#include "core/errors.h"
#include "core/sizes.h"
#include "kernels/stream_loops.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

const char *const jt_contention_phase_names[] = {"compute", "comm", "together", NULL};
static const char *const who_names[] = {"both", "sender", "none", NULL};

const jt_opt_spec jt_contention_options[] = {
    {"kernel", "NAME", "triad", "compute kernel: copy, triad, cg, gemm or cpu", jt_kernel_names},
    {"stores", "KIND", "normal", "stores of copy and triad: normal (write-allocate, as likwid-bench's "
                                 "copy and stream) or nt (non-temporal, as its *_mem kernels and "
                                 "STREAM's compiled copy)", jt_stores_names},
    {"ai", "F", NULL, "triad's arithmetic intensity in flop/byte, from 1/12 (0.0833): the "
                      "executed value is recorded", NULL},
    {"compute-cores", "N", NULL, "compute threads per rank [the free cores of the rank's share "
                                 "of its host]", NULL},
    {"compute-on", "WHO", "both", "ranks that compute: both, sender (rank 0) or none", who_names},
    {"compute-mem", "NODE", "local", "NUMA node of the compute arrays: local (first touch), "
                                     "near, far, interleave or N", NULL},
    {"array-bytes", "B", NULL, "bytes of arrays per compute thread [12 x last-level cache / "
                               "threads, at least 24M]", NULL},
    {"phases", "LIST", "compute,comm,together", "phases in order (any of compute, comm, together)", NULL},
    {"repeat", "K", "1", "repeat the sequence of phases K times", NULL},
    {"phase-time", "S", "1", "seconds each phase lasts at least", NULL},
    JT_BENCH_SETUP_TIME_OPTION,
    {"oversubscribe", NULL, NULL, "allow more bound threads than cores (marked in the records)", NULL},
    JT_BENCH_BUFFERS_OPTION,
    JT_BENCH_COLD_OPTION,
    JT_PP_FLOWS_OPTIONS,
    {NULL, NULL, NULL, NULL, NULL},
};

static void parse_phases(state *s, const char *list)
{
    char *copy = strdup(list), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int k = 0;
        while (jt_contention_phase_names[k] && strcmp(jt_contention_phase_names[k], t) != 0)
            k++;
        if (!jt_contention_phase_names[k] || s->nphases == 8)
            jt_usage_error("--phases '%s' is not allowed: expected a list of compute, comm, "
                           "together (at most 8)", list);
        s->phases[s->nphases++] = k;
    }
    free(copy);
    if (s->nphases == 0)
        jt_usage_error("--phases '%s' is empty: expected a list of compute, comm, together", list);
}

void jt_contention_read(const jt_opts *o, const jt_topo *tp, void *st)
{
    state *s = st;
    char err[512];
    s->nsizes = jt_bench_sizes(o, &jt_bench_contention, &s->sizes);
    const char *kname = jt_opt_str(o, "kernel");
    s->kernel = &jt_kernels[jt_opt_choice(o, "kernel")];
    jt_pp_flows_options(o, JT_P2P_PINGPONG, &s->pairs, &s->threads);
#ifndef JT_HAVE_OPENBLAS
    if (s->kernel->needs_blas)
        jt_usage_error("--kernel gemm is not available: jostle-bench was built without OpenBLAS");
#endif
    s->reps = 1;
    s->stores = jt_opt_choice(o, "stores");
    if (s->stores == JT_STORES_NT && !s->kernel->has_stores)
        jt_usage_error("--stores nt applies to --kernel copy and triad, not '%s'", kname);
    if (s->stores == JT_STORES_NT && tp && !jt_streams_nt_available())
        jt_usage_error("--stores nt is not available: this CPU has no non-temporal vector stores "
                       "jostle knows (x86-64 only)");
    if (jt_opt_given(o, "ai")) {
        if (s->kernel != jt_kernel_find("triad"))
            jt_usage_error("--ai applies to --kernel triad only, not '%s'", kname);
        double ai = jt_opt_double(o, "ai", 0.0, 1e6);
        if (ai < 1.0 / 12.0 - 1e-9)
            jt_usage_error("--ai '%s' is not allowed: triad moves 24 bytes per 2 flops, so the "
                           "lowest intensity is 1/12 = 0.0833 flop/byte", jt_opt_str(o, "ai"));
        s->reps = jt_triad_reps_for_ai(ai);
        if (s->reps > 1 && s->stores == JT_STORES_NT)
            jt_usage_error("--stores nt with --ai '%s' is not allowed: non-temporal stores exist "
                           "for triad at its lowest intensity (1/12) only", jt_opt_str(o, "ai"));
    }
    parse_phases(s, jt_opt_str(o, "phases"));
    s->repeat = (int)jt_opt_long(o, "repeat", 1, 1000);
    s->phase_time = jt_opt_double(o, "phase-time", 0.0, 3600.0);
    s->setup_time = jt_opt_double(o, "setup-time", 0.0, 3600.0);
    s->compute_on = jt_opt_choice(o, "compute-on");
    s->ncompute = jt_opt_given(o, "compute-cores") ? (int)jt_opt_long(o, "compute-cores", 0, 4096)
                                                   : -1; /* -1: the free cores, in setup */
    const char *cm = jt_opt_str(o, "compute-mem");
    char *end;
    long node = strtol(cm, &end, 10), nnuma = tp ? jt_topo_nnuma(tp) : LONG_MAX; /* NULL: elsewhere */
    if (strcmp(cm, "local") && strcmp(cm, "near") && strcmp(cm, "far") &&
        strcmp(cm, "interleave") && (end == cm || *end || node < 0 || node >= nnuma))
        jt_usage_error(tp ? "--compute-mem '%s' is not allowed: NUMA nodes are 0 to %ld, or local, "
                            "near, far, interleave" : "--compute-mem '%s' is not allowed: expected "
                            "a NUMA node, local, near, far or interleave", cm, nnuma - 1);
    if (jt_opt_given(o, "array-bytes")) {
        uint64_t v;
        if (jt_parse_bytes(jt_opt_str(o, "array-bytes"), &v, err, sizeof err) || v < 4096)
            jt_usage_error("--array-bytes '%s' is not allowed: expected a byte count of at least "
                           "4K", jt_opt_str(o, "array-bytes"));
        s->array_bytes = (size_t)v;
    }
    s->buffers = jt_bench_buffers(o, JT_P2P_PINGPONG);
}
