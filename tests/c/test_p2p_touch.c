/* Serial unit test of jt_p2p_touch: which bytes of the arena a new size writes, for each state
 * of the buffers (no message is sent: jt_p2p_init and the slots need no MPI). */
#include "comm/p2p.h"

#include "check.h"

#include <stdlib.h>
#include <string.h>

/* Bytes of [b, b + n) equal to c. */
static size_t count(const unsigned char *b, size_t n, unsigned char c)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += b[i] == c;
    return k;
}

static void one(jt_p2p_mode mode, jt_p2p_buffers bufs, int me, size_t size, int window)
{
    const uint64_t sizes[] = {size};
    size_t frames, bytes = jt_p2p_arena_bytes(mode, bufs, window, sizes, 1, 1 << 20, &frames);
    unsigned char *arena = calloc(1, bytes);
    jt_p2p p;
    jt_p2p_init(&p, MPI_COMM_NULL, me, 1 - me, mode, bufs, window, 0, arena, bytes, frames);
    jt_p2p_touch(&p, size);
    int w = jt_p2p_window_for(mode, bufs, window, size);
    int slots = (bufs == JT_P2P_OSU && mode != JT_P2P_PINGPONG) || mode == JT_P2P_PINGPONG ? 1 : w;
    size_t a = count(arena, bytes, 'a'), b = count(arena, bytes, 'b');
    if (me < 0 || bufs == JT_P2P_COLD) {
        CHECKF(a == 0 && b == 0, "%s, rank %d: %zu and %zu bytes written, expected none",
               jt_p2p_buffers_names[bufs], me, a, b);
    } else {
        CHECKF(a == slots * size && b == slots * size,
               "%s %s: %zu 'a' and %zu 'b', expected %zu of each (%d buffers of %zu)",
               jt_p2p_mode_names[mode], jt_p2p_buffers_names[bufs], a, b, slots * size, slots,
               size);
        /* exactly the message: the sending buffer's first and last byte, not the one after */
        unsigned char *s = jt_p2p_slot(&p, 0, 0, size), *r = jt_p2p_slot(&p, 1, 0, size);
        CHECK(s[0] == 'a' && s[size - 1] == 'a' && r[0] == 'b' && r[size - 1] == 'b');
        CHECK(s + size >= arena + bytes || s[size] != 'a' || slots > 1);
    }
    jt_p2p_free(&p);
    free(arena);
}

int main(void)
{
    one(JT_P2P_PINGPONG, JT_P2P_OSU, 0, 1000, 1);
    one(JT_P2P_PINGPONG, JT_P2P_ECHO, 1, 4096, 1);
    one(JT_P2P_PINGPONG, JT_P2P_DISTINCT, 0, 3, 1);
    one(JT_P2P_STREAM, JT_P2P_OSU, 0, 1000, 8);   /* one buffer per side for the window */
    one(JT_P2P_STREAM, JT_P2P_DISTINCT, 1, 1000, 8); /* a buffer per message */
    one(JT_P2P_BIDIR, JT_P2P_DISTINCT, 0, 64, 4);
    one(JT_P2P_PINGPONG, JT_P2P_COLD, 0, 1000, 1);  /* cold stays cold */
    one(JT_P2P_STREAM, JT_P2P_OSU, -1, 1000, 8);    /* an idle rank has no buffers */
    TEST_END();
}
