/*
 * jt_dbcast routing: what the one-file-per-routing sources (route_*.c) provide to the
 * dispatcher (dbcast_route.c, whose header includes this one). Private to src/comm/; pure functions, no MPI, no state.
 * Each *_children function splits a list of n recipients (n >= 0) into the caller's
 * children, in the conventions of dbcast_route.h, and returns their number.
 */
#ifndef JT_COMM_ROUTE_H
#define JT_COMM_ROUTE_H

#include "jostle/dbcast.h"

#include <stdint.h>

/* A child of the caller: list[child], and its subtree list[sub_off .. sub_off+sub_len-1]. */
typedef struct {
    int child;    /* index in the list of the child to send to */
    int sub_off;  /* its subtree: list[sub_off .. sub_off+sub_len-1] */
    int sub_len;
} jt_dbcast_route_child;

int jt_route_flat_children(int n, jt_dbcast_route_child *out);      /* route_flat.c */
int jt_route_binomial_children(int n, jt_dbcast_route_child *out);  /* route_binomial.c */
int jt_route_chain_children(int n, jt_dbcast_route_child *out);     /* route_chain.c */
int jt_route_tree_children(int n, jt_dbcast_route_child *out);      /* route_tree.c */
int jt_route_twotree_children(int n, jt_dbcast_route_child *out);   /* route_twotree.c */
/* route_knomial.c: radix k >= 2; ceil(log_k(n+1)) rounds of up to k-1 children */
int jt_route_knomial_children(int k, int n, jt_dbcast_route_child *out);
int jt_route_knomial_rounds(int k, int n);
int jt_route_knomial_depth(int k, int n);
/* route_twotree.c: the root's two lists (see jt_dbcast_route_layout). */
int jt_route_twotree_layout(int n, int *pos);

/* route_scatter_allgather.c. Nodes 0..N-1 (0: the root; i: the list's (i-1)-th), chunk j
 * of N. A span of nodes [off, off+len); a send of chunks [c0, c1) to node dest, with dest's
 * plan (its place and view) in the header when plan is set (the scatter's messages). */
typedef struct { int off, len; } jt_route_span;
typedef struct { int dest, c0, c1, plan; } jt_route_sag_send;
#define JT_ROUTE_SAG_MAX_SPANS 64   /* spans of a view: 1 + the levels above X, <= 33 */
#define JT_ROUTE_SAG_MAX_SENDS 132  /* sends of a node: <= 3 a level */
/* The set [*a, *b) node v holds after the scatter (v = *a; [0, N) for the root). */
void jt_route_sag_held(int N, int v, int *a, int *b);
/* The nodes whose ranks v's plan carries, as spans in hop-list order: X without v, then X's
 * partners at each level above X, top first. Returns the count, -1 for a bad N or v. */
int jt_route_sag_view(int N, int v, jt_route_span *out);
/* v's sends in the order it posts them (scatter, then the allgather innermost level first).
 * Returns the count, -1 for a bad N or v. */
int jt_route_sag_sends(int N, int v, jt_route_sag_send *out);
/* Bytes [*off, *off + *len) of chunks [c0, c1) of an m-byte message in N chunks. */
void jt_route_sag_bytes(uint64_t m, int N, int c0, int c1, uint64_t *off, uint64_t *len);
/* The largest message of a broadcast of m bytes among N nodes. */
uint64_t jt_route_sag_largest(uint64_t m, int N);

/* smallest d with 2^d >= x; largest d with 2^d <= x (x >= 1) */
int jt_route_ceil_log2(long long x);
int jt_route_floor_log2(long long x);

#endif
