/* One rank's local view of the tiled Cholesky DAG (chol_dag.h) and its execution: the tasks
 * it runs, the tiles it owns, the final tiles of other ranks its tasks read (received) and,
 * for each final tile it produces, the ranks that need it (sent: one recipient is a send,
 * several a dynamic broadcast with one jt_dbcast call).  Receivers post ordinary receives
 * and never learn who else gets the tile.
 *
 * Execution (jt_chol_run): the calling thread is the communication thread: it alone calls
 * MPI (jt_dbcast in poll mode), releases the tasks whose inputs arrived and posts the sends
 * of finished tiles; workers (sched.h) only compute. */
#ifndef JT_CHOL_PLAN_H
#define JT_CHOL_PLAN_H

#include "jostle/dbcast.h"
#include "runtime/chol_dag.h"
#include "runtime/sched.h"

#include <stdatomic.h>

typedef struct jt_chol_ltask {
    jt_chol_task t;
    int prio;
    int ndeps;   /* the previous update of its tile + one per input */
    int next;    /* the next local task writing the same tile, or -1 */
    int final;   /* tile id when it produces a final L tile (POTRF, TRSM), else -1 */
} jt_chol_ltask;

enum { JT_TILE_NONE = 0, JT_TILE_OWNED, JT_TILE_REMOTE };

typedef struct jt_chol_tile {
    int m, n;
    int where;          /* JT_TILE_* for this rank */
    void *a;            /* nb×nb column-major (double, or float when single), set by the
                           caller for OWNED and REMOTE */
    int *cons, ncons;   /* local tasks reading it as a final tile */
    int *recip, nrecip; /* OWNED final tiles: the ranks to send it to, in order of need */
    int *need;          /* their urgency (jt_chol_order_by_need), most urgent first */
} jt_chol_tile;

typedef struct jt_chol_plan {
    jt_chol_grid g;
    int rank;
    jt_chol_ltask *tasks;
    int ntasks;
    jt_chol_tile *tiles; /* by jt_chol_tile_id */
    int ntiles;
    int *recv_order;     /* REMOTE tiles in the order they are produced (by step) */
    int nrecv;
    /* What the DAG says this rank sends: tiles with one recipient, with several
     * (broadcasts), and messages a flat routing posts (sum of recipients). */
    int nsend1, nbcast;
    long nmsgs;
    atomic_int *left;    /* per task, during a run: dependencies not yet satisfied */
    atomic_int fail_row; /* first row whose POTRF pivot was not positive, or INT_MAX */
    /* Simulated: a task's work at the host's speed is its flops times this, by kind: 1, or
     * the host's speed over the kernel's own rate (--kernel-rates, measured natively). */
    double cost_scale[4];
    int single;          /* tiles of float (the s-prefixed kernels), else double (default) */
    struct jt_chol_trace *trace; /* during a simulated run with JT_CHOL_TRACE set, else NULL */
} jt_chol_plan;

/* Bytes of one tile. */
size_t jt_chol_tile_bytes(const jt_chol_plan *p);

/* NULL on allocation failure. */
jt_chol_plan *jt_chol_plan_build(const jt_chol_grid *g, int rank);
void jt_chol_plan_free(jt_chol_plan *p);

/* How an owner sends its final tiles. */
typedef struct jt_chol_send {
    /* One jt_dbcast call per final tile, its recipients in order of need, with routing;
     * ordered 0: posted as soon as the tile is final (FLAT: every copy at once, as
     * StarPU-MPI does).  ordered 1: a rank posts one send at a time as a root, the most
     * urgent first (the highest need of its first recipient, jt_chol_order_by_need; ties to
     * the first queued); the sends of a tile are jt_chol_split_sends': with FLAT each copy
     * (flat-ordered), else a copy to the most urgent recipient and one broadcast to the
     * others (dbcast: its tree forwards while the root serves its next send). */
    int ordered;
    jt_dbcast_routing routing;
} jt_chol_send;

/* Runs one factorization of the tiles in place.  Every rank calls it; returns 0, or a
 * jt_dbcast error.  fail_row says if a diagonal tile was not positive definite. */
int jt_chol_run(jt_chol_plan *p, jt_sched *s, jt_dbcast_ctx *db, jt_chol_send how);

/* The scheduler callbacks for p (arg = p): the tile kernels, or their flops (simulated), and
 * the release of the local tasks a finished one makes ready. */
void jt_chol_exec(void *p, int task);
double jt_chol_cost(void *p, int task);
void jt_chol_finish(void *p, jt_sched *s, int task);

#endif
