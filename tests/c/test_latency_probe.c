/* The memory-latency probe on this machine, with a small buffer (fast; the figures are not
 * judged, only that they are sane), and its refusal on a topology that is not this system. */
#include "check.h"

#include "kernels/latency.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    jt_topo tp;
    char err[1024];
    CHECK(jt_topo_load(&tp, NULL, err, sizeof err) == 0);
    jt_probe p;
    CHECK(jt_latency_probe(&tp, 0, 0, 1 << 20, 200000, 3, &p) == 0);
    CHECK(p.rounds == 3 && p.min <= p.ns && p.ns <= p.max);
    CHECK(p.ns > 0.2 && p.ns < 10000); /* a dependent load: more than a cycle, less than 10 us */
    CHECK(jt_bandwidth_probe(&tp, 0, 0, 1 << 20, 3, &p) == 0);
    CHECK(p.ns > 0.01 && p.ns < 10000); /* GB/s */
    CHECK(jt_latency_default_bytes(&tp) >= ((size_t)64 << 20));
    /* A chain whole at the size wanted is not cut, however late its last stage ends; one
     * that stops short is (a build share of 1 ns ends at the first stage it may end at),
     * never under 1 MiB (a stall at a few lines cut one at 128 B on a throttled node). */
    jt_chase c;
    jt_chase_init(&tp, &c, 2 * 64, -1, 1e-9);
    CHECKF(c.lines == 2 && !c.capped, "2 lines wanted: %zu built, capped %d", c.lines, c.capped);
    jt_chase_free(&tp, &c);
    jt_chase_init(&tp, &c, 1 << 20, -1, 1e-9);
    CHECKF(c.lines == (1 << 14) && !c.capped, "1 MiB wanted, 1 ns to build: %zu lines, capped %d",
           c.lines, c.capped);
    jt_chase_free(&tp, &c);
    jt_chase_init(&tp, &c, 16 << 20, -1, 1e-9);
    CHECKF(c.lines == (1 << 14) && c.capped, "16 MiB wanted, 1 ns to build: %zu lines, capped %d",
           c.lines, c.capped);
    jt_chase_free(&tp, &c);
    jt_topo_destroy(&tp);

    char path[4096];
    const char *s = getenv("JOSTLE_SOURCE_DIR");
    snprintf(path, sizeof path, "%s/share/topologies/opteron-8numa.xml", s ? s : ".");
    CHECK(jt_topo_load(&tp, path, err, sizeof err) == 0);
    CHECK(jt_latency_probe(&tp, 0, 0, 1 << 20, 1000, 1, &p) == -1);
    CHECK(strstr(p.note, "not this system") != NULL);
    jt_topo_destroy(&tp);
    TEST_END();
}
