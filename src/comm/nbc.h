/* Non-blocking collectives (and Isend/Irecv pairs) as the overlap benchmark posts them, with
 * IMB's size conventions: `size` is one block per rank for Ialltoall, Igather, Iscatter and
 * Iallgather, the whole buffer for Ibcast, Ireduce and Iallreduce (MPI_FLOAT, MPI_SUM), and
 * each direction for isendrecv (rank r with r^1; an odd last rank sits out).  A progress
 * thread that calls MPI_Test on the posted requests until they complete is here too. */
#ifndef JT_NBC_H
#define JT_NBC_H

#include "topo/bind.h"

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

typedef enum {
    JT_NBC_IALLTOALL, JT_NBC_IGATHER, JT_NBC_ISCATTER, JT_NBC_IBCAST, JT_NBC_IALLGATHER,
    JT_NBC_IREDUCE, JT_NBC_IALLREDUCE, JT_NBC_ISENDRECV, JT_NBC_COUNT_
} jt_nbc_op;

extern const char *const jt_nbc_names[]; /* "ialltoall", …, NULL */
int jt_nbc_find(const char *name);       /* -1 when unknown */

/* Bytes of the send and receive buffers op needs on rank `rank` of n. */
void jt_nbc_buffers(jt_nbc_op op, size_t size, int n, size_t *send, size_t *recv);
/* Posts op; fills req and returns how many requests (0 to 2). */
int jt_nbc_post(jt_nbc_op op, size_t size, MPI_Comm comm, int root, void *sbuf, void *rbuf,
                MPI_Request req[2]);

/* MPI_Waitall and MPI_Testall of what jt_nbc_post posted (statuses kept in an array: MPICH's
 * annotations flag MPI_STATUSES_IGNORE as a 0-byte region).  test returns the flag. */
void jt_nbc_wait(MPI_Request req[2], int nreq);
int jt_nbc_test(MPI_Request req[2], int nreq);

/* n t_pure samples (post, then wait), each timed, after one barrier: back to back as IMB-NBC
 * runs them, or with n = 1 a barrier before each as OSU does.  This rank's times in t[] (the
 * caller takes the slowest rank's).  The overlap benchmark and bench/ref/ref_ialltoall.c. */
void jt_nbc_pure_batch(jt_nbc_op op, size_t size, MPI_Comm comm, int root, void *sbuf,
                       void *rbuf, int n, double *t);

/* The overlap ratio (t_pure + t_cpu - t_ovrl) / min(t_pure, t_cpu) (IMB's user guide, the
 * seed), or / max(...) when use_max (what IMB-NBC prints), clamped to [0, 1]; NaN when the
 * denominator is not positive. */
double jt_nbc_overlap(double t_pure, double t_cpu, double t_ovrl, int use_max);

/* The b samples of the slowest rank, the one with the largest total, into out: samples of rank
 * r are all[r * stride + i * step], i < b.  Back to back, the ranks' own samples do not line up
 * one by one, and a collective is done when its last rank is (IMB reports the slowest rank's
 * mean likewise); with a barrier before each sample (b = 1) this is the maximum over ranks. */
void jt_nbc_slowest(const double *all, int nranks, size_t stride, size_t step, size_t b,
                    double *out);

/* A thread per rank that completes the requests handed to it with MPI_Test (the library must
 * grant MPI_THREAD_MULTIPLE).  Idle, it spins (yielding) when `spin`, else sleeps on a
 * condition variable. */
typedef struct jt_progress_thread {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    const jt_topo *tp;
    int core, spin, ready, nreq;
    MPI_Request *req;
    atomic_int pending, quit, done;
    jt_binding bind;       /* obtained, read back by the thread itself */
} jt_progress_thread;

void jt_progress_thread_start(jt_progress_thread *p, const jt_topo *tp, int core, int spin);
void jt_progress_thread_hand(jt_progress_thread *p, MPI_Request *req, int nreq);
/* Returns once the handed requests are complete (yields the core meanwhile: the thread may
 * share it). */
void jt_progress_thread_wait(jt_progress_thread *p);
void jt_progress_thread_stop(jt_progress_thread *p);

#endif
