/*
 * jt_dbcast routing: pure functions, no MPI calls, no state.
 *
 * Source routing works on a LIST of recipients that excludes the caller. A routing
 * splits a list of n recipients into the caller's children; each child gets a
 * contiguous slice of the list (its subtree, which it must forward to) and applies
 * the same routing to that slice. Everything is expressed in list indices, so the
 * functions do not depend on rank numbers.
 */
#ifndef JT_COMM_DBCAST_ROUTE_H
#define JT_COMM_DBCAST_ROUTE_H

#include <stddef.h>
#include "comm/route.h"
#include "jostle/dbcast.h"

/* The routings' names in enum order, NULL-terminated (jt_dbcast_route_name, and the choices of
 * an option that takes one routing). */
extern const char *const jt_route_names[];

/* Upper bound of the number of children for n recipients (>= the value returned by
 * jt_dbcast_route_children). */
int jt_dbcast_route_max_children(jt_dbcast_routing r, int n);

/* Children of the caller for n recipients, first-to-send first (the largest subtree
 * first for trees). out must hold jt_dbcast_route_max_children(r, n) entries.
 * Returns the number of children, or -1 for AUTO/an unknown routing or n < 0. */
int jt_dbcast_route_children(jt_dbcast_routing r, int n, jt_dbcast_route_child *out);

/* Depth of the tree (hops from the root to the farthest recipient) in closed form:
 * flat 1, chains n, binomial and binary trees floor(log2(n+1)), two-tree 1 + floor(log2 n)
 * (the root's hop, then a complete binary tree of n). (A binomial broadcast
 * takes ceil(log2(n+1)) ROUNDS of sends, since a node sends to its children one after
 * the other.) */
int jt_dbcast_route_depth(jt_dbcast_routing r, int n);

int jt_dbcast_route_is_pipelined(jt_dbcast_routing r);
/* The radix of a k-nomial routing (binomial 2, knomial-K K), else 0. */
int jt_dbcast_route_radix(jt_dbcast_routing r);

/* The root's side. A routing sends the data in jt_dbcast_route_streams(r) streams: 1, or 2
 * for the two-tree, each carrying a part of the bytes (stream j: segments
 * [j*ceil(S/2), ...) of S) through its own tree over ALL the recipients. Stream j lists the
 * recipients in its own order: the caller's i-th recipient (by urgency) is at position
 * pos[j*n + i] of stream j's list (pos holds streams*n ints); the root's children in that
 * list are jt_dbcast_route_root_children (forwarders use jt_dbcast_route_children).
 * Returns n, or -1 (bad routing, no memory). */
int jt_dbcast_route_streams(jt_dbcast_routing r);
int jt_dbcast_route_layout(jt_dbcast_routing r, int n, int *pos);
int jt_dbcast_route_root_children(jt_dbcast_routing r, int n, jt_dbcast_route_child *out);

/* The list positions in the order routing r reaches them, a node's sends one after the other
 * (one step each): out[k] is the k-th position reached (ties: lower position first).  A root
 * that lists its recipients by urgency puts its k-th recipient at out[k], so that trees serve
 * them in that order as a flat send does.  Returns n, or -1 (bad routing, no memory). */
int jt_dbcast_route_arrival(jt_dbcast_routing r, int n, int *out);

/* The cost model (jt_dbcast_model, jt_dbcast_model_default) is public: jostle/dbcast.h. */

/* Largest segment ever used (keeps every MPI count an int). */
#define JT_DBCAST_MAX_SEGMENT ((size_t)1 << 30)
#define JT_DBCAST_MIN_AUTO_SEGMENT ((size_t)2 << 10)
#define JT_DBCAST_MAX_AUTO_SEGMENT ((size_t)1 << 20)
/* The largest message of scatter-allgather, which sends every range inline (what the
 * header receive holds beside a header: MAX_INLINE); beyond, the root takes the two-tree. */
#define JT_DBCAST_SAG_MAX_MSG ((size_t)1 << 20)
/* Default of cfg.inline_bytes and of the model's inline_bytes. */
#define JT_DBCAST_DEFAULT_INLINE ((size_t)8192)

/* ---- dbcast_model.c ---- */

/* One hop of a message of `bytes` under the model: the latency and bandwidth of the
 * model's piece for that size (the piece of the nearest size in ratio: above
 * sqrt(piece_bytes[k] * piece_bytes[k+1]) piece k+1; piece 0 below piece_bytes[1];
 * latency/bandwidth without pieces). */
double jt_dbcast_model_latency(const jt_dbcast_model *m, size_t bytes);
double jt_dbcast_model_bandwidth(const jt_dbcast_model *m, size_t bytes);
/* 0 if m is usable, else -1 with a reason in why (may be NULL). */
int jt_dbcast_model_check(const jt_dbcast_model *m, const char **why);

/* What the probe at init measures between two ranks, per size (jt_dbcast_model_fit). */
#define JT_DBCAST_PROBE_SIZES 9
typedef struct {
    size_t bytes[JT_DBCAST_PROBE_SIZES];  /* ascending; bytes[0] tiny */
    double one_way[JT_DBCAST_PROBE_SIZES];/* s: half the least round trip */
    double gap[JT_DBCAST_PROBE_SIZES];    /* s per message of a stream of back-to-back ones */
    double gap_both;  /* s per message of the largest size, both ranks streaming at once */
} jt_dbcast_probe;
/* Fits the model to a probe: overhead = gap of the tiny size; per size, bandwidth from the
 * gap less the overhead (the tiny size: the best of the others' bandwidths), latency =
 * one_way - overhead - bytes/bandwidth (>= 1 ns);
 * duplex from gap_both/gap of the largest size. Keeps m's forward_delay. */
void jt_dbcast_model_fit(const jt_dbcast_probe *p, jt_dbcast_model *m);

/* Segment size for routing r: seg_cfg if nonzero (clamped to the maximum); otherwise
 * the model's optimum for pipelined routings among 4 KiB multiples (about 2^(k/2) KiB,
 * JT_DBCAST_MIN_AUTO_SEGMENT to JT_DBCAST_MAX_AUTO_SEGMENT), or the whole message for the
 * others. */
size_t jt_dbcast_route_segment(jt_dbcast_routing r, size_t bytes, int n, size_t seg_cfg,
                               const jt_dbcast_model *m);

/* Modelled completion time of a broadcast of bytes to n recipients with routing r and
 * segment size seg (ignored by non-pipelined routings). */
double jt_dbcast_route_cost(jt_dbcast_routing r, size_t bytes, int n, size_t seg,
                            const jt_dbcast_model *m);

/* The automatic choice: the routing among flat, binomial, pipeline-chain, pipeline-tree,
 * two-tree, the k-nomial trees and scatter-allgather with the least modelled cost (ties:
 * that order). n <= 0 gives flat.
 * *seg_out (may be NULL) receives the segment size to use. */
jt_dbcast_routing jt_dbcast_route_choose(size_t bytes, int n, size_t seg_cfg,
                                         const jt_dbcast_model *m, size_t *seg_out);

#endif
