/* Core-to-core latency: one cache line bounced between two threads bound to two cores, as
 * core-to-core latency tools measure it.  The caller's thread writes an odd value into the line
 * and waits for the helper thread (on the other core) to answer with the next even one: one
 * round trip moves the line twice between the cores' caches, the least any intra-node message
 * between those cores can take (its flag, or its data, must make the same trip).  The bounces
 * are timed by the caller (the benchmark's run), never here. */
#ifndef JT_C2C_H
#define JT_C2C_H

#include "topo/bind.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>

typedef struct jt_c2c {
    alignas(64) atomic_long line; /* the bounced cache line, alone in it */
    char pad[64 - sizeof(atomic_long)];
    pthread_t th;
    const jt_topo *tp;
    int helper_core;
    jt_binding helper_bind;  /* what the helper thread obtained */
    atomic_int ready;
    long next;               /* the caller's next odd value */
} jt_c2c;

/* Starts the helper thread bound to helper_core; returns once it is bound and waiting. */
void jt_c2c_start(jt_c2c *c, const jt_topo *tp, int helper_core);
/* n round trips of the line between the caller's core and the helper's. */
void jt_c2c_bounce(jt_c2c *c, long n);
/* Stops and joins the helper thread. */
void jt_c2c_stop(jt_c2c *c);

#endif
