#include "runtime/chol_trace.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ev {
    double t;
    int kind, a, b, c, d;
} ev;

struct jt_chol_trace {
    char path[512];
    ev *v;
    size_t n, cap;
};

jt_chol_trace *jt_chol_trace_open(int rank, const char *mode)
{
    const char *pre = getenv("JT_CHOL_TRACE");
    if (!pre || !*pre)
        return NULL;
    jt_chol_trace *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    snprintf(t->path, sizeof t->path, "%s-%s-r%d.csv", pre, mode, rank);
    return t;
}

void jt_chol_trace_ev(jt_chol_trace *t, int kind, int a, int b, int c, int d)
{
    if (!t)
        return;
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 4096;
        ev *v = realloc(t->v, cap * sizeof *v);
        if (!v)
            return; /* a trace with a gap rather than a failed run */
        t->v = v, t->cap = cap;
    }
    t->v[t->n++] = (ev){MPI_Wtime(), kind, a, b, c, d};
}

void jt_chol_trace_close(jt_chol_trace *t)
{
    if (!t)
        return;
    FILE *f = fopen(t->path, "w");
    if (!f) {
        fprintf(stderr, "jostle: cannot write the trace %s\n", t->path);
    } else {
        fprintf(f, "t,ev,a,b,c,d\n");
        for (size_t i = 0; i < t->n; i++)
            fprintf(f, "%.9f,%c,%d,%d,%d,%d\n", t->v[i].t, t->v[i].kind, t->v[i].a, t->v[i].b,
                    t->v[i].c, t->v[i].d);
        fclose(f);
    }
    free(t->v), free(t);
}
