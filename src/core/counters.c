/* syscall(2) is a GNU/BSD extension: perf_event_open has no libc wrapper. */
#define _GNU_SOURCE
#include "core/counters.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int open_one(uint64_t config)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_HARDWARE;
    a.config = config;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    return (int)syscall(SYS_perf_event_open, &a, 0 /* this thread */, -1, -1, 0);
}

int jt_counters_open(jt_counters *c)
{
    c->fd_cycles = open_one(PERF_COUNT_HW_CPU_CYCLES);
    if (c->fd_cycles < 0) {
        snprintf(c->reason, sizeof c->reason, "perf_event_open(cycles): %s", strerror(errno));
        c->fd_stalled = -1;
        return -1;
    }
    c->fd_stalled = open_one(PERF_COUNT_HW_STALLED_CYCLES_BACKEND);
    if (c->fd_stalled < 0) {
        snprintf(c->reason, sizeof c->reason, "perf_event_open(stalled-cycles-backend): %s",
                 strerror(errno));
        close(c->fd_cycles);
        c->fd_cycles = -1;
        return -1;
    }
    c->reason[0] = '\0';
    return 0;
}

void jt_counters_read(const jt_counters *c, double *cycles, double *stalled)
{
    uint64_t v = 0, s = 0;
    if (c->fd_cycles >= 0 && read(c->fd_cycles, &v, sizeof v) != sizeof v)
        v = 0;
    if (c->fd_stalled >= 0 && read(c->fd_stalled, &s, sizeof s) != sizeof s)
        s = 0;
    *cycles = (double)v;
    *stalled = (double)s;
}

void jt_counters_close(jt_counters *c)
{
    if (c->fd_cycles >= 0)
        close(c->fd_cycles);
    if (c->fd_stalled >= 0)
        close(c->fd_stalled);
    c->fd_cycles = c->fd_stalled = -1;
}
