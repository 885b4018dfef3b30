/* A minimal assertion kit for the C unit tests: a failed check prints where and why, and the
 * test exits non-zero at the end. */
#ifndef JT_TEST_CHECK_H
#define JT_TEST_CHECK_H

#include <math.h>
#include <stdio.h>

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

#define TEST_END()                                                                               \
    do {                                                                                         \
        if (jt_test_failures)                                                                    \
            fprintf(stderr, "%d check(s) failed\n", jt_test_failures);                           \
        else                                                                                     \
            printf("all checks passed\n");                                                       \
        return jt_test_failures != 0;                                                            \
    } while (0)

#endif
