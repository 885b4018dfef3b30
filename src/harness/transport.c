/* The MPI library's transport settings for the meta line: the control variables that choose
 * it, read through the MPI tool interface (Open MPI's pml, btl and mtl include/exclude lists,
 * "^ucx" meaning all but ucx; MPICH's netmod, its device being in the library string).
 *
 * Open MPI's MPI_T_init_thread opens every component of every framework to register their
 * variables: 0.21 s on a 2-core VM, as long as MPI_Init itself, and a third of a short run's
 * wall time.  So the query runs beside MPI_Init, in a child process (`jostle-bench
 * --transport`, the same query a user can run) spawned before it by the rank the launcher
 * names 0; MPI_Init mostly waits, and the answer is read when the meta line is written.
 * Without a launcher's rank (or if the spawn fails) rank 0 asks in process, as before.
 *
 * A launch `jostle` makes with Open MPI on this host is given the answer in $JOSTLE_TRANSPORT,
 * asked once by its command (python/jostle/run/transport.py): the same library, environment
 * and files answer the same, and no third process runs beside the two ranks' MPI_Init (0.25 s
 * a launch on 2 cores). */
#include "harness/internal.h"

#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* The query: {"pml": "...", ...}; absent names skipped, {} without the tool interface. */
static void query(jt_json *j)
{
    jt_json_object(j);
#if !defined(JT_SMPI)
    static const char *const names[] = {"pml", "btl", "mtl", "MPIR_CVAR_CH4_NETMOD",
                                        "MPIR_CVAR_NEMESIS_NETMOD"};
    int provided, n = 0;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
        goto done;
    MPI_T_cvar_get_num(&n);
    for (int i = 0; i < n; i++) {
        char name[128];
        int nlen = sizeof name, verbosity, bind, scope, count, dlen = 0;
        MPI_Datatype type;
        MPI_T_enum e;
        if (MPI_T_cvar_get_info(i, name, &nlen, &verbosity, &type, &e, NULL, &dlen, &bind,
                                &scope) != MPI_SUCCESS || type != MPI_CHAR)
            continue;
        int wanted = 0;
        for (size_t k = 0; k < sizeof names / sizeof *names; k++)
            wanted |= strcmp(name, names[k]) == 0;
        MPI_T_cvar_handle h;
        if (!wanted || MPI_T_cvar_handle_alloc(i, NULL, &h, &count) != MPI_SUCCESS)
            continue;
        char *value = calloc((size_t)count + 1, 1); /* Open MPI's strings hold 2048 */
        if (value && MPI_T_cvar_read(h, value) == MPI_SUCCESS)
            jt_json_kstr(j, name, value);
        free(value);
        MPI_T_cvar_handle_free(&h);
    }
    MPI_T_finalize();
done:
#endif
    jt_json_end(j);
}

int jt_transport_print(void)
{
    jt_json j;
    jt_json_init(&j);
    query(&j);
    puts(j.buf);
    jt_json_free(&j);
    return 0;
}

static pid_t child = -1;
static int from_child = -1;

#if !defined(JT_SMPI)
/* This process's rank as its launcher set it before MPI_Init (Open MPI, PMIx, Hydra, srun). */
static int launch_rank(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                       "SLURM_PROCID"};
    for (size_t k = 0; k < sizeof vars / sizeof *vars; k++) {
        const char *v = getenv(vars[k]);
        if (v && *v)
            return atoi(v);
    }
    return -1;
}
#endif

/* $JOSTLE_TRANSPORT when it holds a JSON object ({...} on one line), else NULL. */
static const char *given(void)
{
    const char *v = getenv("JOSTLE_TRANSPORT");
    size_t n = v ? strlen(v) : 0;
    return n >= 2 && v[0] == '{' && v[n - 1] == '}' && !strchr(v, '\n') ? v : NULL;
}

void jt_transport_begin(void)
{
#if !defined(JT_SMPI)
    int fd[2];
    if (given() || launch_rank() != 0 || pipe(fd) != 0)
        return;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    posix_spawn_file_actions_addclose(&fa, fd[1]);
    char *argv[] = {"jostle-bench", "--transport", NULL};
    pid_t pid;
    if (posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, environ) == 0) {
        child = pid;
        from_child = fd[0];
    } else {
        close(fd[0]);
    }
    close(fd[1]);
    posix_spawn_file_actions_destroy(&fa);
#endif
}

/* The child's answer (a JSON object), or NULL if it gave none. */
static char *child_answer(void)
{
    size_t n = 0, cap = 4096;
    char *buf = malloc(cap);
    ssize_t got;
    while (buf && (got = read(from_child, buf + n, cap - n - 1)) > 0)
        if ((n += (size_t)got) + 1 == cap) {
            char *more = realloc(buf, cap *= 2);
            if (!more)
                free(buf);
            buf = more;
        }
    close(from_child);
    from_child = -1;
    waitpid(child, NULL, 0); /* a whole line is a whole answer, however the child ended */
    child = -1;
    if (!buf)
        return NULL;
    buf[n] = '\0';
    n = strcspn(buf, "\n");
    buf[n] = '\0';
    if (n < 2 || buf[0] != '{' || buf[n - 1] != '}') {
        free(buf);
        return NULL;
    }
    return buf;
}

void jt_transport_json(jt_json *j)
{
    jt_json_key(j, "transport");
    char *got = from_child >= 0 ? child_answer() : NULL;
    if (given())
        jt_json_raw(j, given());
    else if (got)
        jt_json_raw(j, got);
    else
        query(j);
    free(got);
}
