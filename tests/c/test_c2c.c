/* The bounced cache line of the core-to-core latency (kernels/c2c.h) on this machine: the
 * helper answers every bounce, on the core asked, and a round trip takes a sane time (not
 * judged further: the machine may be shared). */
#include "check.h"

#include "core/timer.h"
#include "kernels/c2c.h"
#include "topo/topo.h"

int main(void)
{
    jt_topo tp;
    char err[1024];
    CHECK(jt_topo_load(&tp, NULL, err, sizeof err) == 0);
    if (jt_topo_ncores(&tp) < 2) {
        jt_topo_destroy(&tp);
        TEST_END();
    }
    jt_binding b;
    jt_bind_thread(&tp, 0, &b);
    jt_c2c c;
    jt_c2c_start(&c, &tp, 1);
    CHECK(c.helper_bind.core == 1 || !c.helper_bind.ok);
    double t0 = jt_now();
    jt_c2c_bounce(&c, 20000);
    double per = (jt_now() - t0) / 20000;
    CHECK(atomic_load(&c.line) == 40000);   /* every odd value answered with the next even */
    CHECK(per > 1e-9 && per < 1e-3);          /* a round trip: more than a ns, less than 1 ms */
    jt_c2c_stop(&c);
    jt_topo_destroy(&tp);
    TEST_END();
}
