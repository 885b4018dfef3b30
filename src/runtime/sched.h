/* A small task scheduler: ready tasks by priority, run by workers, completions handed back
 * to one thread (the communication thread, which alone calls MPI and decides what becomes
 * ready).  Tasks are ints; what a task does is the owner's callback.
 *
 * Native build: nworkers pthreads call exec(arg, task).
 * SimGrid build (JT_SMPI): no thread may call MPI beside the rank's actor, and kernels are
 * not run: a task is a SimGrid execution of cost(arg, task) flops on the rank's host,
 * started asynchronously (at most nworkers at once) so that the actor keeps communicating
 * (forwarding broadcasts) while the node computes, as a runtime's communication thread does. */
#ifndef JT_SCHED_H
#define JT_SCHED_H

#include "topo/bind.h"

typedef struct jt_sched jt_sched;
typedef void (*jt_sched_exec)(void *arg, int task);
typedef double (*jt_sched_cost)(void *arg, int task);

/* cap: the largest task id + 1.  cores (native build; NULL: unbound): worker w binds itself to
 * cores[w] before it takes a task, and all have when this returns.  NULL on failure. */
jt_sched *jt_sched_create(int nworkers, const jt_topo *tp, const int *cores, int cap,
                          jt_sched_exec exec, jt_sched_cost cost, void *arg);
/* Worker w's binding as obtained; NULL when unbound or simulated. */
const jt_binding *jt_sched_binding(const jt_sched *s, int w);
void jt_sched_destroy(jt_sched *s);
/* A ready task (communication thread). */
void jt_sched_push(jt_sched *s, int task, int prio);
/* Completed tasks since the last call, at most max, into out; returns how many. */
int jt_sched_take_done(jt_sched *s, int *out, int max);
/* Nothing to do: wait at most max_s for a completion (returns at once if one is pending). */
void jt_sched_wait(jt_sched *s, double max_s);

#endif
