/* A small task scheduler: ready tasks by priority, run by workers, completions handed back
 * to one thread (the communication thread, which alone calls MPI).  Tasks are ints; what a
 * task does is the owner's callback.  What a finished task makes ready locally is released
 * by the thread that saw it finish (the finish callback), as a StarPU worker releases its
 * successors: a local dependency never waits for the communication thread to wake up.
 *
 * Native build: nworkers pthreads call exec(arg, task), then finish(arg, s, task).
 * SimGrid build (JT_SMPI): no thread may call MPI beside the rank's actor, and kernels are
 * not run: a task is a SimGrid execution of cost(arg, task) flops on the rank's host,
 * started asynchronously (at most nworkers at once) so that the actor keeps communicating
 * (forwarding broadcasts) while the node computes, as a runtime's communication thread does. */
#ifndef JT_SCHED_H
#define JT_SCHED_H

#include "topo/bind.h"

typedef struct jt_sched jt_sched;

/* What the owner of the tasks provides (arg is passed back to each). */
typedef struct jt_sched_ops {
    void (*exec)(void *arg, int task);    /* native build: the task's work */
    double (*cost)(void *arg, int task);  /* simulated: its flops on the rank's host */
    /* Optional: once the task ran, in the thread that saw it end (a worker natively, the
     * rank's actor simulated), before it is handed back by jt_sched_take_done: may call
     * jt_sched_push for the tasks it makes ready. */
    void (*finish)(void *arg, jt_sched *s, int task);
    void *arg;
} jt_sched_ops;

/* cap: the largest task id + 1.  cores (native build; NULL: unbound): worker w binds itself to
 * cores[w] before it takes a task, and all have when this returns.  NULL on failure. */
jt_sched *jt_sched_create(int nworkers, const jt_topo *tp, const int *cores, int cap,
                          const jt_sched_ops *ops);
/* Worker w's binding as obtained; NULL when unbound or simulated. */
const jt_binding *jt_sched_binding(const jt_sched *s, int w);
void jt_sched_destroy(jt_sched *s);
/* A ready task (any thread). */
void jt_sched_push(jt_sched *s, int task, int prio);
/* Completed tasks since the last call, at most max, into out; returns how many. */
int jt_sched_take_done(jt_sched *s, int *out, int max);
/* Nothing to do: wait at most max_s for a completion (returns at once if one is pending). */
void jt_sched_wait(jt_sched *s, double max_s);

#endif
