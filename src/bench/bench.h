/* The benchmarks jostle-bench knows: one file each in src/bench/, listed in list.h. */
#ifndef JT_BENCH_H
#define JT_BENCH_H

#include "comm/p2p.h"
#include "harness/harness.h"

#define JT_BENCH(id, simgrid) extern const jt_bench jt_bench_##id;
#include "bench/list.h"
#undef JT_BENCH

/* Those of this build, in list.h's order; NULL-terminated. */
extern const jt_bench *const jt_benches[];

/* jostle-bench --describe: every benchmark of list.h (this build's) as JSON on stdout. */
int jt_bench_describe(void);

/* --sizes, or b's default_sizes when not given, as message sizes: parsed, each within one MPI
 * message (an int count of MPI_BYTE); a usage error names the bad value.  Returns how many;
 * *sizes is malloc'ed.  Pure (a benchmark's read). */
size_t jt_bench_sizes(const jt_opts *o, const jt_bench *b, uint64_t **sizes);

/* Bytes this host can give each of its ranks (MemAvailable / local ranks), for size checks. */
size_t jt_bench_memory_per_rank(const jt_ctx *ctx);

/* --buffers, the state of the buffers of a communicating thread (comm/p2p.h), in every
 * benchmark that has one; --cold, its former spelling, is refused with the new one. */
#define JT_BENCH_BUFFERS_OPTION                                                                  \
    {"buffers", "STATE", "osu", "state of the buffers: osu (OSU's conventions: the echo from its " \
                                "own send buffer, one buffer per side for a window), distinct (a " \
                                "slot per message in flight), echo (send back what arrived: "    \
                                "dirty lines; pingpong only), cold (rotate through twice the "   \
                                "last-level cache)", jt_p2p_buffers_names}
#define JT_BENCH_COLD_OPTION {"cold", NULL, NULL, "removed: use --buffers cold", NULL}
/* --setup-time: a working set sized by the time it is given as well as by the caches
 * (kernels/setup_time.h), for every benchmark that builds one (memlat, contention). */
#define JT_BENCH_SETUP_TIME_OPTION                                                              \
    {"setup-time", "S", "0", "seconds the working set (chase, arrays) may take to build on a "   \
                             "host (0: no limit); one that does not fit is cut to the largest "  \
                             "power of two that does, and the cut recorded", NULL}

/* The state asked for, refused (exit 2, the value named) where MODE cannot have it. */
jt_p2p_buffers jt_bench_buffers(const jt_opts *o, jt_p2p_mode mode);
/* The meta's "buffers" object: the state and what it means. */
void jt_bench_buffers_json(jt_json *j, jt_p2p_mode mode, jt_p2p_buffers buffers);

#endif
