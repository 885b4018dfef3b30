#include "kernels/work.h"

#include "core/timer.h"

#include <math.h>
#include <string.h>

const char *const jt_work_names[] = {"cpu", "triad", NULL};
const char *const jt_work_what[] = {
    "x[i] = x[i]*0.999 + 0.5 over 256 doubles (2 KiB, L1-resident) per unit, as IMB's "
    "IMB_cpu_exploit and OSU's dummy compute: no memory traffic",
    "c[i] = a[i] + 3*b[i] over 256 elements per unit, walking arrays larger than the caches "
    "(STREAM triad, memory-bound)",
    NULL,
};

void jt_work_init(jt_work *w, const jt_topo *tp, jt_work_kind kind, size_t bytes, int numa)
{
    memset(w, 0, sizeof *w);
    w->kind = kind;
    for (int i = 0; i < JT_WORK_SMALL; i++)
        w->small[i] = 1.0 + i;
    w->flops_per_unit = 2.0 * JT_WORK_SMALL;
    if (kind != JT_WORK_TRIAD)
        return;
    w->n = bytes / 3 / sizeof(double);
    if (w->n < JT_WORK_TRIAD_UNIT)
        w->n = JT_WORK_TRIAD_UNIT;
    for (int k = 0; k < 3; k++)
        jt_buffer_alloc(tp, &w->buf[k], w->n * sizeof(double), numa);
    w->a = w->buf[0].p;
    w->b = w->buf[1].p;
    w->c = w->buf[2].p;
    for (size_t i = 0; i < w->n; i++) {
        w->a[i] = 1.0;
        w->b[i] = 2.0;
    }
    w->bytes_per_unit = 24.0 * JT_WORK_TRIAD_UNIT; /* STREAM convention, no write-allocate */
    w->flops_per_unit = 2.0 * JT_WORK_TRIAD_UNIT;
}

void jt_work_free(jt_work *w, const jt_topo *tp)
{
    for (int k = 0; k < 3; k++)
        jt_buffer_free(tp, &w->buf[k]);
}

static void unit(jt_work *w)
{
    if (w->kind == JT_WORK_CPU) {
        double *restrict x = w->small;
        for (int i = 0; i < JT_WORK_SMALL; i++)
            x[i] = x[i] * 0.999 + 0.5;
        return;
    }
    if (w->pos + JT_WORK_TRIAD_UNIT > w->n)
        w->pos = 0;
    double *restrict a = w->a + w->pos, *restrict b = w->b + w->pos, *restrict c = w->c + w->pos;
    for (int i = 0; i < JT_WORK_TRIAD_UNIT; i++)
        c[i] = a[i] + 3.0 * b[i];
    w->pos += JT_WORK_TRIAD_UNIT;
}

void jt_work_run(jt_work *w, long units, double poll_s, void (*poll)(void *), void *arg)
{
    /* The poll period in units (from the calibration), not a clock read per unit: a read costs
     * ~20 ns, as much as a unit, and t_CPU has none (IMB and OSU count iterations likewise). */
    long every = poll && w->unit_s > 0 ? (long)(poll_s / w->unit_s) : 0;
    every = every < 1 ? 1 : every;
    for (long u = 0; u < units; u++) {
        unit(w);
        if (poll && (u + 1) % every == 0)
            poll(arg);
    }
    /* Keeps the results alive: the compiler cannot drop the loops. */
    w->sink += w->kind == JT_WORK_CPU ? w->small[units % JT_WORK_SMALL] : w->c[w->pos / 2];
}

double jt_work_calibrate(jt_work *w, double min_s)
{
    for (long units = 16;; units *= 2) {
        double t0 = jt_now();
        jt_work_run(w, units, 0, NULL, NULL);
        double t = jt_now() - t0;
        if (t >= min_s || units > (1L << 40)) {
            w->unit_s = t / (double)units;
            return w->unit_s;
        }
    }
}

long jt_work_units_for(const jt_work *w, double seconds)
{
    double u = w->unit_s > 0 ? seconds / w->unit_s : 1;
    return u < 1 ? 1 : (long)llround(u);
}
