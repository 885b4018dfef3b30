#include "core/series.h"

#include "core/errors.h"

#include <stdlib.h>
#include <string.h>

void jt_series_push(jt_series *s, double x)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 1024;
        double *v = realloc(s->v, cap * sizeof *v);
        if (!v)
            jt_fatal("out of memory for samples");
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = x;
}

void jt_series_clear(jt_series *s) { s->n = 0; }

void jt_series_free(jt_series *s)
{
    free(s->v);
    memset(s, 0, sizeof *s);
}
