/*
 * jt_dbcast routing: what the one-file-per-routing sources (route_*.c) provide to the
 * dispatcher (dbcast_route.c, whose header includes this one). Private to src/comm/; pure functions, no MPI, no state.
 * Each *_children function splits a list of n recipients (n >= 0) into the caller's
 * children, in the conventions of dbcast_route.h, and returns their number.
 */
#ifndef JT_COMM_ROUTE_H
#define JT_COMM_ROUTE_H

#include "jostle/dbcast.h"

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

/* smallest d with 2^d >= x; largest d with 2^d <= x (x >= 1) */
int jt_route_ceil_log2(long long x);
int jt_route_floor_log2(long long x);

#endif
