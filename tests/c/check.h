/* A minimal assertion kit for the C unit tests: a failed check prints where and why, and the
 * test exits non-zero at the end. */
#ifndef JT_TEST_CHECK_H
#define JT_TEST_CHECK_H

#include <math.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static int jt_test_failures;

#define CHECK(cond)                                                                              \
    do {                                                                                         \
        if (!(cond)) {                                                                           \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);             \
            jt_test_failures++;                                                                  \
        }                                                                                        \
    } while (0)

/* CHECK with a printf-style explanation of what was expected. */
#define CHECKF(cond, ...)                                                                        \
    do {                                                                                         \
        if (!(cond)) {                                                                           \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);             \
            fprintf(stderr, __VA_ARGS__);                                                        \
            fputc('\n', stderr);                                                                 \
            jt_test_failures++;                                                                  \
        }                                                                                        \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                                    \
    do {                                                                                         \
        double a_ = (a), b_ = (b);                                                               \
        if (!(fabs(a_ - b_) <= (tol))) {                                                         \
            fprintf(stderr, "%s:%d: %s = %.12g, expected %.12g (+-%g)\n", __FILE__, __LINE__,    \
                    #a, a_, b_, (double)(tol));                                                  \
            jt_test_failures++;                                                                  \
        }                                                                                        \
    } while (0)

/* Runs fn(arg) in a child with stderr captured into msg: for code that exits on bad input.
 * Returns the child's exit status (0 when fn returns), or -1. */
static inline int jt_test_in_child(void (*fn)(void *), void *arg, char *msg, size_t len)
{
    int fd[2];
    if (pipe(fd))
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 2);
        fn(arg);
        _exit(0);
    }
    close(fd[1]);
    size_t got = 0; /* stderr is unbuffered: the message comes in pieces, read to the end */
    ssize_t n;
    while (got < len - 1 && (n = read(fd[0], msg + got, len - 1 - got)) > 0)
        got += (size_t)n;
    msg[got] = '\0';
    close(fd[0]);
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#define TEST_END()                                                                               \
    do {                                                                                         \
        if (jt_test_failures)                                                                    \
            fprintf(stderr, "%d check(s) failed\n", jt_test_failures);                           \
        else                                                                                     \
            printf("all checks passed\n");                                                       \
        return jt_test_failures != 0;                                                            \
    } while (0)

#endif
