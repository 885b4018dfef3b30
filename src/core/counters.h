/* Hardware counters of one thread through perf_event_open(2): cycles and cycles stalled in
 * the back end (waiting for memory, Swartvagher SIAM PP22).  Where the kernel, the hypervisor or
 * perf_event_paranoid refuses them, the reason is kept and the records say "unavailable". */
#ifndef JT_COUNTERS_H
#define JT_COUNTERS_H

#include <stddef.h>

typedef struct jt_counters {
    int fd_cycles, fd_stalled; /* -1 when not open */
    char reason[160];          /* why not, when not */
} jt_counters;

/* Opens the counters of the calling thread; returns 0, or -1 with the reason kept. */
int jt_counters_open(jt_counters *c);
/* Current counts (monotonic); 0 and 0 when not open. */
void jt_counters_read(const jt_counters *c, double *cycles, double *stalled);
void jt_counters_close(jt_counters *c);

#endif
