/* Core-to-core latency: the bounced cache line (c2c.h). */
#include "kernels/c2c.h"

#include "core/errors.h"

#include <string.h>

#define C2C_QUIT (-1L)

static void *helper_main(void *arg)
{
    jt_c2c *c = arg;
    jt_bind_thread(c->tp, c->helper_core, &c->helper_bind);
    atomic_store_explicit(&c->ready, 1, memory_order_release);
    for (;;) {
        long v = atomic_load_explicit(&c->line, memory_order_acquire);
        if (v == C2C_QUIT)
            return NULL;
        if (v & 1) /* the caller's odd value: answer with the next even one */
            atomic_store_explicit(&c->line, v + 1, memory_order_release);
    }
}

void jt_c2c_start(jt_c2c *c, const jt_topo *tp, int helper_core)
{
    memset(c, 0, sizeof *c);
    atomic_init(&c->line, 0);
    atomic_init(&c->ready, 0);
    c->tp = tp;
    c->helper_core = helper_core;
    c->next = 1;
    if (pthread_create(&c->th, NULL, helper_main, c) != 0)
        jt_fatal("cannot start the core-to-core helper thread");
    while (!atomic_load_explicit(&c->ready, memory_order_acquire))
        ;
}

void jt_c2c_bounce(jt_c2c *c, long n)
{
    for (long i = 0; i < n; i++) {
        long v = c->next;
        atomic_store_explicit(&c->line, v, memory_order_release);
        while (atomic_load_explicit(&c->line, memory_order_acquire) != v + 1)
            ;
        c->next = v + 2;
    }
}

void jt_c2c_stop(jt_c2c *c)
{
    atomic_store_explicit(&c->line, C2C_QUIT, memory_order_release);
    pthread_join(c->th, NULL);
}
