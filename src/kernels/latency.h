/* The memory-latency probe (Moreaud 2007, sec. 3.3.2, table 3.1): from a core of one NUMA
 * node, the time of one dependent access to the memory of another, by chasing pointers through
 * a random cyclic permutation of cache lines in a buffer far larger than the last-level cache
 * (so almost every access misses it; TLB misses are included, and cancel in the overhead over
 * local).  Also the copy bandwidth node to node, with the kernels' copy. */
#ifndef JT_KERNELS_LATENCY_H
#define JT_KERNELS_LATENCY_H

#include "topo/bind.h"
#include "topo/topo.h"

#include <stddef.h>

typedef struct jt_probe {
    double ns;          /* median over rounds: ns per access; GB/s for the bandwidth probe */
    double min, max;    /* over rounds */
    int rounds;
    int core, mem;      /* core bound (-1 when not bound), node holding the pages (read back) */
    char note[200];     /* what went wrong with the binding, "" when nothing */
} jt_probe;

/* The chase itself, for a benchmark that times it (bench/memlat.c): a buffer of bytes on NUMA
 * node mem (of the calling thread's binding) linked as one random cycle of cache lines, walked
 * once by init (the warm-up lap); each walk follows `accesses` dependent loads from where the
 * last one stopped. */
typedef struct jt_chase {
    jt_buffer buf;
    size_t lines;      /* in the cycle */
    size_t wanted;     /* lines asked for */
    int capped;        /* lines < wanted: the build's time ran out */
    double build_s;    /* the build and the warm-up lap */
    void **volatile at;
} jt_chase;

/* seconds > 0: the build and its warm-up lap within about that long, the cycle cut to the
 * largest power of two of lines that fits (capped, lines); 0: every line asked for. */
void jt_chase_init(const jt_topo *tp, jt_chase *c, size_t bytes, int mem, double seconds);
void jt_chase_walk(jt_chase *c, long accesses);
void jt_chase_free(const jt_topo *tp, jt_chase *c);

/* Default buffer: 4 x the largest cache of the machine, at least 64 MiB. */
size_t jt_latency_default_bytes(const jt_topo *tp);

/* Binds the calling thread to core, places bytes on NUMA node mem, and chases pointers
 * (accesses per round, rounds rounds).  Returns 0, or -1 when the topology is not this system
 * (nothing measured; note says so). */
int jt_latency_probe(const jt_topo *tp, int core, int mem, size_t bytes, long accesses,
                     int rounds, jt_probe *out);

/* The same binding, then the copy kernel over arrays of bytes in all (STREAM bytes). */
int jt_bandwidth_probe(const jt_topo *tp, int core, int mem, size_t bytes, int rounds,
                       jt_probe *out);

#endif
