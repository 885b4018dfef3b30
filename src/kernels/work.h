/* Calibrated work for overlap measurements: IMB's IMB_cpu_exploit and OSU's dummy compute
 * run a cache-resident loop for a time close to the communication's; jostle also offers a
 * memory-bound triad.  Work is counted in units whose duration is calibrated on the calling
 * thread, so a target time maps to a number of units.  While it runs, an optional callback
 * (MPI_Test) is called every poll_s seconds of calibrated work (counted in units). */
#ifndef JT_WORK_H
#define JT_WORK_H

#include "topo/bind.h"

#define JT_WORK_SMALL 256 /* doubles of the cache-resident vector: 2 KiB, in L1 */
#define JT_WORK_TRIAD_UNIT 256 /* triad elements per unit: 6 KiB moved */

typedef enum { JT_WORK_CPU, JT_WORK_TRIAD, JT_WORK_COUNT_ } jt_work_kind;
extern const char *const jt_work_names[];  /* "cpu", "triad", NULL */
extern const char *const jt_work_what[];   /* for the records */

typedef struct jt_work {
    jt_work_kind kind;
    double small[JT_WORK_SMALL];
    jt_buffer buf[3];
    double *a, *b, *c;
    size_t n, pos;             /* triad: elements per array, next element */
    double unit_s;             /* seconds per unit, from jt_work_calibrate */
    double bytes_per_unit, flops_per_unit;
    double sink;
} jt_work;

/* triad: three arrays of bytes/3 on numa (JT_MEM_*), first touched by the caller. */
void jt_work_init(jt_work *w, const jt_topo *tp, jt_work_kind kind, size_t bytes, int numa);
void jt_work_free(jt_work *w, const jt_topo *tp);
/* Times batches of growing size until one lasts min_s; sets and returns unit_s. */
double jt_work_calibrate(jt_work *w, double min_s);
/* Units for a target time (at least 1). */
long jt_work_units_for(const jt_work *w, double seconds);
void jt_work_run(jt_work *w, long units, double poll_s, void (*poll)(void *), void *arg);

#endif
