/* Errors and warnings of jostle-bench.  Bad input exits with status 2 (usage), a failure
 * of the machine or the MPI library with status 1. */
#ifndef JT_ERRORS_H
#define JT_ERRORS_H

#include <stddef.h>

#define JT_EXIT_FAIL 1
#define JT_EXIT_USAGE 2

/* Bad input: prints "jostle-bench: error: <msg>" once (rank 0, or every process when the rank
 * is not known yet) and exits 2; under MPI every rank must reach it, or it aborts with 2. */
void jt_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Something that is not the user's fault (allocation, MPI, hwloc). */
void jt_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* The world rank before MPI_Init is known (from the launcher's environment), or -1. */
int jt_launcher_rank(void);
/* Set once MPI is up, so errors know whether to abort the job. */
void jt_errors_mpi_ready(int rank, int size);

#endif
