#include "core/errors.h"

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int g_rank = -1, g_size = 0; /* the only process-wide state: who we are, for messages */

int jt_launcher_rank(void)
{
    static const char *vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID", NULL};
    for (int i = 0; vars[i]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return atoi(v);
    }
    return -1;
}

void jt_errors_mpi_ready(int rank, int size)
{
    g_rank = rank;
    g_size = size;
}

static void vreport(const char *kind, const char *fmt, va_list ap)
{
    int rank = g_rank >= 0 ? g_rank : jt_launcher_rank();
    if (rank > 0)
        return;
    fprintf(stderr, "jostle-bench: %s: ", kind);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    fflush(stderr);
}

static __attribute__((noreturn)) void leave(int status)
{
    int init = 0, fini = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fini);
    /* Options are checked identically on every rank, so all of them get here and can finalize;
     * a job of one rank may simply finalize too. */
    if (init && !fini) {
        if (status == JT_EXIT_USAGE || g_size <= 1)
            MPI_Finalize();
        else
            MPI_Abort(MPI_COMM_WORLD, status);
    }
    exit(status);
}

void jt_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("error", fmt, ap);
    va_end(ap);
    int init = 0;
    MPI_Initialized(&init);
    /* Before MPI_Init every rank judges the same options and only rank 0 speaks: a rank that
     * left first would have the launcher kill rank 0 before its line is out (Open MPI aborts
     * the job on the first non-zero exit), so the others give it a moment. */
    if (!init && jt_launcher_rank() > 0)
        sleep(2);
    leave(JT_EXIT_USAGE);
}

void jt_fatal(const char *fmt, ...)
{
    va_list ap;
    int rank = g_rank >= 0 ? g_rank : jt_launcher_rank();
    va_start(ap, fmt);
    /* A failure may be local to one rank: every rank reports it. */
    fprintf(stderr, "jostle-bench: fatal (rank %d): ", rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    int init = 0, fini = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fini);
    if (init && !fini)
        MPI_Abort(MPI_COMM_WORLD, JT_EXIT_FAIL);
    exit(JT_EXIT_FAIL);
}
