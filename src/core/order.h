/* The order in which a sweep's points are measured: --order increasing|decreasing|
 * shuffled[:SEED].  A sweep measured in increasing order turns any drift of the machine over
 * the sweep (a memory bandwidth that wanders within minutes, a neighbour that starts) into a
 * trend with size; shuffled, the drift becomes noise spread over every size (ReproMPI shuffles
 * for the same reason: Hunold & Carpen-Amarie, IEEE TPDS 27(8), 2016).  The seed is recorded
 * so that a run can be repeated in the same order. */
#ifndef JT_ORDER_H
#define JT_ORDER_H

#include <stddef.h>
#include <stdint.h>

typedef enum { JT_ORDER_INCREASING, JT_ORDER_DECREASING, JT_ORDER_SHUFFLED } jt_order_kind;

typedef struct jt_order {
    jt_order_kind kind;
    int seeded;    /* shuffled:SEED given; otherwise the caller draws a seed and records it */
    uint64_t seed;
} jt_order;

extern const char *const jt_order_names[]; /* in enum order, NULL-terminated */

/* Parses SPEC; returns 0, or -1 with a message in err naming the value and what is allowed. */
int jt_order_parse(const char *spec, jt_order *o, char *err, size_t errlen);

/* idx[k] = the point measured k-th, a permutation of 0..n-1 (the benchmark's own order is
 * "increasing"); the same order and seed give the same permutation on every platform. */
void jt_order_permute(const jt_order *o, size_t n, size_t *idx);

#endif
