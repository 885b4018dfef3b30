/* A growing list of per-sample values (durations in seconds, each one timed with jt_now, or
 * ratios): what a benchmark's run fills and the harness turns into statistics. */
#ifndef JT_SERIES_H
#define JT_SERIES_H

#include <stddef.h>

typedef struct jt_series {
    double *v;
    size_t n, cap;
} jt_series;

void jt_series_push(jt_series *s, double x);
void jt_series_clear(jt_series *s);
void jt_series_free(jt_series *s);

#endif
