/* The modes of a distribution; the method and its sources are in modes.h. */
#include "core/modes.h"

#include "core/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median gap between distinct neighbouring values: a timer's tick when the data are
 * quantised, a tiny spacing when they are not. */
static double quantum(const double *y, size_t n)
{
    double *g = malloc(n * sizeof *g);
    size_t k = 0;
    for (size_t i = 1; i < n; i++)
        if (y[i] > y[i - 1])
            g[k++] = y[i] - y[i - 1];
    double q = 0.0;
    if (k > 0) {
        qsort(g, k, sizeof *g, cmp_double);
        q = g[k / 2];
    }
    free(g);
    return q;
}

/* Samples of sorted y at or below v. */
static size_t count_le(const double *y, size_t n, double v)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (y[mid] <= v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

typedef struct kde {
    double a, d, h, se_k; /* grid origin and step, bandwidth, R(K)/(n h) */
    double *f;
    int M;
} kde;

static double se2(const kde *k, int j) { return k->f[j] * k->se_k; }

/* Binned Gaussian density (linear binning, kernel cut at 4h) on a grid over the bulk of y. */
static int kde_build(kde *k, const double *y, size_t n, double h)
{
    double a = jt_quantile_sorted(y, n, 0.001) - 3 * h;
    double b = jt_quantile_sorted(y, n, 0.999) + 3 * h;
    double M = ceil((b - a) / (h / 4)) + 1;
    k->M = (int)fmin(fmax(M, 64), 16384);
    k->a = a;
    k->d = (b - a) / (k->M - 1);
    k->h = h;
    k->se_k = 1.0 / (2.0 * sqrt(M_PI)) / ((double)n * h);
    double *c = calloc((size_t)k->M, sizeof *c);
    k->f = calloc((size_t)k->M, sizeof *k->f);
    if (!c || !k->f) {
        free(c);
        return -1;
    }
    for (size_t i = 0; i < n; i++) { /* samples past the grid count in shares, not here */
        double pos = (y[i] - a) / k->d;
        if (pos < 0 || pos > k->M - 1)
            continue;
        int j = (int)pos;
        double w = pos - j;
        c[j] += 1 - w;
        if (j + 1 < k->M)
            c[j + 1] += w;
    }
    int L = (int)ceil(4 * h / k->d);
    double *ker = malloc((size_t)(L + 1) * sizeof *ker);
    for (int l = 0; l <= L; l++) {
        double u = l * k->d / h;
        ker[l] = exp(-0.5 * u * u) / (sqrt(2 * M_PI) * (double)n * h);
    }
    for (int j = 0; j < k->M; j++) {
        if (c[j] == 0)
            continue;
        for (int l = -L; l <= L; l++)
            if (j + l >= 0 && j + l < k->M)
                k->f[j + l] += c[j] * ker[abs(l)];
    }
    free(ker);
    free(c);
    return 0;
}

/* Candidate peaks pk[0..np-1] with valleys vl[i] between pk[i] and pk[i+1]. */
typedef struct cands {
    int *pk, *vl, np;
} cands;

static void remove_peak(cands *c, const kde *k, int p)
{
    int v; /* the valley that goes with it: the higher of its two (the lower bounds the merge) */
    if (p == 0)
        v = 0;
    else if (p == c->np - 1)
        v = p - 1;
    else
        v = k->f[c->vl[p - 1]] > k->f[c->vl[p]] ? p - 1 : p;
    memmove(c->pk + p, c->pk + p + 1, (size_t)(c->np - p - 1) * sizeof *c->pk);
    memmove(c->vl + v, c->vl + v + 1, (size_t)(c->np - 2 - v) * sizeof *c->vl);
    c->np--;
}

/* The share of peak p: samples between its valleys. */
static double share(const cands *c, const kde *k, const double *y, size_t n, int p)
{
    size_t lo = p == 0 ? 0 : count_le(y, n, k->a + k->d * c->vl[p - 1]);
    size_t hi = p == c->np - 1 ? n : count_le(y, n, k->a + k->d * c->vl[p]);
    return (double)(hi - lo) / (double)n;
}

/* A grid point's location in the samples' unit. */
static double at_x(const kde *k, double j, int logs)
{
    double v = k->a + k->d * j;
    return logs ? exp(v) : v;
}

/* Of the neighbours closer than JT_MODES_TICKS ticks, the lowest peak; -1 when none. */
static int too_close(const cands *c, const kde *k, int logs, double tick)
{
    int worst = -1;
    for (int i = 0; tick > 0 && i + 1 < c->np; i++) {
        if (at_x(k, c->pk[i + 1], logs) - at_x(k, c->pk[i], logs) >= JT_MODES_TICKS * tick)
            continue;
        int lo = k->f[c->pk[i]] < k->f[c->pk[i + 1]] ? i : i + 1;
        if (worst < 0 || k->f[c->pk[lo]] < k->f[c->pk[worst]])
            worst = lo;
    }
    return worst;
}

/* Merges the weakest candidate until no two are closer than the tick allows, every valley is
 * significant and every mode large enough (and at most JT_MODES_MAX remain). */
static void merge(cands *c, const kde *k, const double *y, size_t n, int logs, double tick)
{
    while (c->np > 1) {
        int worst = too_close(c, k, logs, tick);
        double worst_z = INFINITY;
        for (int i = 0; worst < 0 && i + 1 < c->np; i++) {
            int lo = k->f[c->pk[i]] < k->f[c->pk[i + 1]] ? c->pk[i] : c->pk[i + 1];
            double pv = k->f[lo], vv = k->f[c->vl[i]];
            double z = (pv - vv) / sqrt(se2(k, lo) + se2(k, c->vl[i]));
            int ok = z >= JT_MODES_Z && pv - vv >= JT_MODES_DEPTH * pv;
            if (!ok && z < worst_z) {
                worst_z = z;
                worst = lo == c->pk[i] ? i : i + 1;
            }
        }
        if (worst < 0) {
            double least = INFINITY;
            for (int p = 0; p < c->np; p++) {
                double s = share(c, k, y, n, p);
                if (s < least && (s < JT_MODES_MIN_SHARE || c->np > JT_MODES_MAX)) {
                    least = s;
                    worst = p;
                }
            }
        }
        if (worst < 0)
            return;
        remove_peak(c, k, worst);
    }
}

void jt_modes_find(const double *x, size_t n, double tick, jt_modes *out)
{
    memset(out, 0, sizeof *out);
    out->tick = tick > 0 ? tick : 0.0;
    out->n = 1;
    out->m[0].at = n ? jt_quantile_sorted(x, n, 0.5) : NAN;
    out->m[0].share = 1.0;
    if (n < JT_MODES_MIN_N || x[0] == x[n - 1])
        return;
    int logs = x[0] > 0;
    double *y = malloc(n * sizeof *y);
    double mean = 0, m2 = 0;
    for (size_t i = 0; i < n; i++) {
        y[i] = logs ? log(x[i]) : x[i];
        double dl = y[i] - mean;
        mean += dl / (double)(i + 1);
        m2 += dl * (y[i] - mean);
    }
    double sd = sqrt(m2 / (double)(n - 1));
    double iqr = jt_quantile_sorted(y, n, 0.75) - jt_quantile_sorted(y, n, 0.25);
    double s = iqr > 0 ? fmin(sd, iqr / 1.34) : sd;
    double h = fmax(0.9 * s * pow((double)n, -0.2), quantum(y, n));
    /* The tick on the density's scale: on the log scale, as wide as it is near the bottom of
     * the bulk (a tick is wider in log there than at the median). */
    double x10 = jt_quantile_sorted(x, n, 0.1);
    if (out->tick > 0)
        h = fmax(h, logs ? log1p(out->tick / x10) : out->tick);
    kde k = {0};
    if (!(h > 0) || kde_build(&k, y, n, h) != 0) {
        free(y);
        return;
    }
    cands c = {malloc((size_t)k.M * sizeof(int)), malloc((size_t)k.M * sizeof(int)), 0};
    for (int j = 1; j + 1 < k.M; j++) {
        if (!(k.f[j] > k.f[j - 1] && k.f[j] >= k.f[j + 1]))
            continue;
        if (c.np > 0) { /* the valley since the previous peak */
            int v = c.pk[c.np - 1];
            for (int q = v; q <= j; q++)
                v = k.f[q] < k.f[v] ? q : v;
            c.vl[c.np - 1] = v;
        }
        c.pk[c.np++] = j;
    }
    if (c.np > 0) {
        merge(&c, &k, y, n, logs, out->tick);
        out->tested = 1;
        out->bandwidth = h;
        out->log_scale = logs;
        double top = 0.0; /* the density at the last mode kept */
        out->n = 0;
        for (int p = 0; p < c.np; p++) {
            int j = c.pk[p];
            /* the parabola through the peak and its neighbours: a location finer than the grid */
            double fl = k.f[j - 1], f0 = k.f[j], fr = k.f[j + 1], den = fl - 2 * f0 + fr;
            double at = at_x(&k, j + (den < 0 ? 0.5 * (fl - fr) / den : 0.0), logs);
            double sh = share(&c, &k, y, n, p);
            /* refined apart from the grid, two may come closer than the tick allows: one */
            if (out->n > 0 && at - out->m[out->n - 1].at < JT_MODES_TICKS * out->tick) {
                out->m[out->n - 1].share += sh;
                if (f0 > top)
                    out->m[out->n - 1].at = at, top = f0;
                continue;
            }
            out->m[out->n].at = at;
            out->m[out->n++].share = sh;
            top = f0;
        }
    }
    free(c.pk);
    free(c.vl);
    free(k.f);
    free(y);
}
