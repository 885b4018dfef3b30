/* The task graph of a tiled right-looking Cholesky (lower, A = L Lᵀ) on a 2D block-cyclic
 * P×Q grid, as pure functions: which tasks exist, who runs them (owner computes), their
 * priorities and flops, and which ranks need each final tile L(m,k) (the communication a
 * runtime infers from the DAG: one recipient is a send, several are a broadcast).
 * No MPI, no allocation beyond what a call returns: testable serially. */
#ifndef JT_CHOL_DAG_H
#define JT_CHOL_DAG_H

typedef enum { JT_CHOL_POTRF, JT_CHOL_TRSM, JT_CHOL_SYRK, JT_CHOL_GEMM } jt_chol_kind;

/* T×T tiles of nb×nb, ranks in a P×Q grid (rank = (m % P) * Q + n % Q). */
typedef struct jt_chol_grid {
    int T, P, Q, nb;
} jt_chol_grid;

/* One task; its output tile is (m,n), k is its step:
 *   POTRF(k):      L(k,k)  = chol(A(k,k))                  m = n = k
 *   TRSM(m,k):     L(m,k)  = A(m,k) L(k,k)^-T              n = k, m > k
 *   SYRK(m,k):     A(m,m) -= L(m,k) L(m,k)ᵀ                n = m > k
 *   GEMM(m,n,k):   A(m,n) -= L(m,k) L(n,k)ᵀ                m > n > k */
typedef struct jt_chol_task {
    jt_chol_kind kind;
    int m, n, k;
} jt_chol_task;

int jt_chol_owner(const jt_chol_grid *g, int m, int n);
/* Lower tiles only: index of (m,n), m >= n, in [0, T(T+1)/2). */
int jt_chol_tile_id(const jt_chol_grid *g, int m, int n);
/* Calls f for every task in the sequential (right-looking) order: for k, POTRF, the TRSMs,
 * the SYRKs, the GEMMs.  Every task's inputs are produced by tasks before it. */
void jt_chol_foreach(const jt_chol_grid *g, void (*f)(const jt_chol_task *t, void *arg),
                     void *arg);
long jt_chol_ntasks(int T);
/* Higher runs first: the critical path (as StarPU's Cholesky examples), 2T - 2k - m - n for
 * the task on tile (m,n) at step k: POTRF 2T - 2k, TRSM(m,k) 2T - 2k - m, SYRK(m,k)
 * 2T - 2k - 2m, GEMM(m,n,k) 2T - 2k - m - n. */
int jt_chol_priority(const jt_chol_grid *g, const jt_chol_task *t);
double jt_chol_task_flops(jt_chol_kind kind, int nb);
double jt_chol_flops(double N); /* N³/3 + N²/2 + N/6 */
const char *jt_chol_kind_name(jt_chol_kind kind);

/* The ranks other than its owner that run a task reading the final tile L(m,k), m >= k,
 * in increasing order, into out (room for P*Q); returns how many.  0: local only; 1: a
 * send; more: a broadcast. */
int jt_chol_recipients(const jt_chol_grid *g, int m, int k, int *out);

/* Order of need: sorts ranks[0..n) (with need[i] the urgency of ranks[i]: the highest
 * jt_chol_priority among its tasks reading the tile) most urgent first, ties to the lower
 * rank; need is permuted alongside.  Pure. */
void jt_chol_order_by_need(int *ranks, int *need, int n);

/* How an ordered root sends one final tile to its n recipients (in order of need): as
 * slices of that list, one send each, slice i starting at first[i] (room for n) and ending
 * where the next starts (the last at n); returns how many.  tree 0 (flat): one copy per
 * recipient.  tree 1: the most urgent recipient by a copy of its own, the others by one
 * tree: a tree's first-reached node heads its largest subtree, and the most urgent
 * recipient is about to run, and send, what is critical next (docs/cholesky.md).  Pure. */
int jt_chol_split_sends(int n, int tree, int *first);
/* jt_chol_recipients in order of need (the first task of each recipient reading L(m,k)
 * that comes earliest on the critical path first); need[i] (may be NULL) their urgency. */
int jt_chol_recipients_by_need(const jt_chol_grid *g, int m, int k, int *out, int *need);

/* The final tile a task reads as input i (0 or 1), as (m,k) of L; returns the number of
 * such inputs (POTRF 0, TRSM 1: L(k,k), SYRK 1: L(m,k), GEMM 2: L(m,k), L(n,k)). */
int jt_chol_inputs(const jt_chol_task *t, int im[2], int ik[2]);

/* Near-square P×Q = size with P <= Q (P the largest divisor <= sqrt(size)). */
void jt_chol_grid_auto(int size, int *P, int *Q);

#endif
