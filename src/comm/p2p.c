#include "comm/p2p.h"

#include "core/errors.h"
#include "core/timer.h"

#include <stdlib.h>
#include <string.h>

const char *const jt_p2p_mode_names[] = {"pingpong", "stream", "bidir", "put", "get", NULL};
const char *const jt_p2p_buffers_names[] = {"osu", "distinct", "echo", "cold", NULL};

#define ACK_TAG 2
#define DATA_TAG 1
#define ACK_BYTES 4 /* osu_bw's acknowledgement: 4 bytes, receive buffer 0 from send buffer 0;
                     * the most a caller may set in jt_p2p.ack_bytes */
#define LINE 64
#define PAGE 4096

static size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }

static size_t slot_stride(size_t max_bytes)
{
    return round_up(max_bytes > ACK_BYTES ? max_bytes : ACK_BYTES, LINE); /* line-aligned */
}

/* osu's stream and bidir: the whole window goes through one buffer per side. */
static int one_buffer(jt_p2p_mode mode, jt_p2p_buffers buffers)
{
    return buffers == JT_P2P_OSU && (mode == JT_P2P_STREAM || mode == JT_P2P_BIDIR);
}

const char *jt_p2p_buffers_refusal(jt_p2p_mode mode, jt_p2p_buffers buffers)
{
    if (buffers == JT_P2P_ECHO && mode != JT_P2P_PINGPONG)
        return "echo sends back the buffer a message arrived in, and only the ping-pong's answer "
               "sends anything back; allowed with this mode: osu, distinct, cold";
    return NULL;
}

int jt_p2p_window_for(jt_p2p_mode mode, jt_p2p_buffers buffers, int window, size_t bytes)
{
    if (mode == JT_P2P_PINGPONG)
        return 1;
    if (one_buffer(mode, buffers))
        return window;
    size_t fit = bytes ? JT_P2P_WINDOW_CAP / bytes : (size_t)window;
    return fit < 1 ? 1 : (fit < (size_t)window ? (int)fit : window);
}

size_t jt_p2p_arena_bytes(jt_p2p_mode mode, jt_p2p_buffers buffers, int window,
                          const uint64_t *sizes, size_t nsizes, size_t llc_bytes, size_t *frames)
{
    size_t half = PAGE;
    for (size_t i = 0; i < nsizes; i++) {
        int slots = one_buffer(mode, buffers) ? 1 : jt_p2p_window_for(mode, buffers, window,
                                                                        sizes[i]);
        size_t need = (size_t)slots * slot_stride(sizes[i]);
        if (need > half)
            half = need;
    }
    /* Each half starts on a page, as OSU's separately allocated, page-aligned buffers do. */
    size_t frame = 2 * round_up(half, PAGE), f = 1;
    if (buffers == JT_P2P_COLD) {
        /* Enough distinct frames that a frame is evicted before it is used again. */
        size_t want = 2 * (llc_bytes ? llc_bytes : (size_t)64 << 20);
        f = (want + frame - 1) / frame;
        if (f < 2)
            f = 2;
    }
    *frames = f;
    return f * frame;
}

void jt_p2p_init(jt_p2p *p, MPI_Comm comm, int me, int peer, jt_p2p_mode mode,
                 jt_p2p_buffers buffers, int window, int check, unsigned char *arena,
                 size_t arena_bytes, size_t frames)
{
    memset(p, 0, sizeof *p);
    p->reps = 1;
    p->comm = comm;
    p->me = me;
    p->peer = peer;
    p->mode = mode;
    p->buffers = buffers;
    p->window = mode == JT_P2P_PINGPONG ? 1 : window;
    p->check = check;
    p->ack_bytes = ACK_BYTES;
    p->arena = arena;
    p->arena_bytes = arena_bytes;
    p->frames = frames ? frames : 1;
    p->frame_bytes = arena_bytes / p->frames;
    p->req = calloc(2 * (size_t)p->window + 1, sizeof *p->req);
    p->st = calloc(2 * (size_t)p->window + 1, sizeof *p->st);
}

void jt_p2p_free(jt_p2p *p)
{
    free(p->req);
    free(p->st);
    p->req = NULL;
    p->st = NULL;
}

unsigned char *jt_p2p_slot(jt_p2p *p, int dir, int k, size_t bytes)
{
    if (one_buffer(p->mode, p->buffers))
        k = 0;
    return p->arena + p->frame * p->frame_bytes + (size_t)dir * (p->frame_bytes / 2) +
           (size_t)k * slot_stride(bytes);
}

/* OSU's convention.  At 4 MiB (15 rounds a job against the reference loop, 2-core VM, MPICH)
 * jostle's same loop without it took 1.07-1.10x the reference's time, and 0.99-1.00x when the
 * reference ran on jostle's untouched buffers; with it 0.94-1.05x (quartiles of a round +-10%). */
void jt_p2p_touch(jt_p2p *p, size_t bytes)
{
    if (p->me < 0 || p->buffers == JT_P2P_COLD)
        return;
    int w = one_buffer(p->mode, p->buffers) ? 1 : jt_p2p_window_for(p->mode, p->buffers,
                                                                      p->window, bytes);
    for (int k = 0; k < w; k++) {
        memset(jt_p2p_slot(p, 0, k, bytes), 'a', bytes);
        memset(jt_p2p_slot(p, 1, k, bytes), 'b', bytes);
    }
}

/* The payload of message k of this sample as side `from` sends it. */
static unsigned char pattern(uint64_t iter, int k, int from, size_t i)
{
    return (unsigned char)(i * 7u + iter * 13u + (uint64_t)k * 101u + (unsigned)from * 59u + 1u);
}

static void fill(jt_p2p *p, unsigned char *b, int k, size_t bytes)
{
    for (size_t i = 0; i < bytes; i++)
        b[i] = pattern(p->iter, k, p->me, i);
}

static void verify(jt_p2p *p, const unsigned char *b, int k, int from, size_t bytes)
{
    for (size_t i = 0; i < bytes; i++)
        if (b[i] != pattern(p->iter, k, from, i))
            jt_fatal("--check: message %d of sample %llu (%zu bytes, --buffers %s) differs at "
                     "byte %zu: got %u, expected %u as rank %d sent it", k,
                     (unsigned long long)p->iter, bytes, jt_p2p_buffers_names[p->buffers], i,
                     b[i], pattern(p->iter, k, from, i), from);
}

void jt_p2p_advance(jt_p2p *p)
{
    p->iter++;
    p->frame = p->frames > 1 ? (size_t)(p->iter % p->frames) : 0;
}

/* Every message of one buffer carries the same payload (the last to land is the one read). */
static int msg_id(jt_p2p *p, int k) { return one_buffer(p->mode, p->buffers) ? 0 : k; }

static double pingpong(jt_p2p *p, size_t bytes)
{
    int n = (int)bytes, echo = p->buffers == JT_P2P_ECHO;
    unsigned char *s = jt_p2p_slot(p, 0, 0, bytes), *r = jt_p2p_slot(p, 1, 0, bytes);
    double dt = 0.0;
    if (p->me == 0) {
        if (p->check)
            fill(p, s, 0, bytes);
        double t0 = jt_now();
        for (int k = 0; k < p->reps; k++) {
            MPI_Send(s, n, MPI_BYTE, p->peer, DATA_TAG, p->comm);
            MPI_Recv(r, n, MPI_BYTE, p->peer, DATA_TAG, p->comm, MPI_STATUS_IGNORE);
        }
        dt = jt_now() - t0;
        /* echo: side 0's own payload came back (both transfers checked); otherwise side 1's. */
        if (p->check)
            verify(p, r, 0, echo ? 0 : 1, bytes);
    } else {
        if (p->check && !echo) /* before the receive: outside side 0's round trip */
            fill(p, s, 0, bytes);
        for (int k = 0; k < p->reps; k++) {
            MPI_Recv(r, n, MPI_BYTE, p->peer, DATA_TAG, p->comm, MPI_STATUS_IGNORE);
            MPI_Send(echo ? r : s, n, MPI_BYTE, p->peer, DATA_TAG, p->comm);
        }
        if (p->check && !echo)
            verify(p, r, 0, 0, bytes);
    }
    return dt;
}

static double stream(jt_p2p *p, size_t bytes)
{
    int n = (int)bytes, w = jt_p2p_window_for(p->mode, p->buffers, p->window, bytes);
    double dt = 0.0;
    if (p->me == 0) {
        if (p->check)
            for (int k = 0; k < w; k++)
                fill(p, jt_p2p_slot(p, 0, k, bytes), msg_id(p, k), bytes);
        double t0 = jt_now();
        for (int r = 0; r < p->reps; r++) {
            for (int k = 0; k < w; k++)
                MPI_Isend(jt_p2p_slot(p, 0, k, bytes), n, MPI_BYTE, p->peer, DATA_TAG, p->comm,
                          &p->req[k]);
            MPI_Waitall(w, p->req, p->st);
            MPI_Recv(jt_p2p_slot(p, 1, 0, ACK_BYTES), p->ack_bytes, MPI_BYTE, p->peer, ACK_TAG,
                     p->comm, MPI_STATUS_IGNORE);
        }
        dt = jt_now() - t0;
    } else {
        for (int r = 0; r < p->reps; r++) {
            for (int k = 0; k < w; k++)
                MPI_Irecv(jt_p2p_slot(p, 1, k, bytes), n, MPI_BYTE, p->peer, DATA_TAG, p->comm,
                          &p->req[k]);
            MPI_Waitall(w, p->req, p->st);
            MPI_Send(jt_p2p_slot(p, 0, 0, ACK_BYTES), p->ack_bytes, MPI_BYTE, p->peer, ACK_TAG,
                     p->comm);
        }
        if (p->check) /* after the acknowledgement: outside side 0's timing */
            for (int k = 0; k < w; k++)
                verify(p, jt_p2p_slot(p, 1, k, bytes), msg_id(p, k), 0, bytes);
    }
    return dt;
}

static double bidir(jt_p2p *p, size_t bytes)
{
    int n = (int)bytes, w = jt_p2p_window_for(p->mode, p->buffers, p->window, bytes);
    if (p->check)
        for (int k = 0; k < w; k++)
            fill(p, jt_p2p_slot(p, 0, k, bytes), msg_id(p, k), bytes);
    double t0 = jt_now();
    for (int r = 0; r < p->reps; r++) {
        for (int k = 0; k < w; k++)
            MPI_Irecv(jt_p2p_slot(p, 1, k, bytes), n, MPI_BYTE, p->peer, DATA_TAG, p->comm,
                      &p->req[k]);
        for (int k = 0; k < w; k++)
            MPI_Isend(jt_p2p_slot(p, 0, k, bytes), n, MPI_BYTE, p->peer, DATA_TAG, p->comm,
                      &p->req[w + k]);
        /* As osu_bibw waits: rank 0 for its sends, then its receives; rank 1 the other way. */
        int first = p->me == 0 ? w : 0;
        MPI_Waitall(w, p->req + first, p->st);
        MPI_Waitall(w, p->req + (w - first), p->st);
    }
    double dt = jt_now() - t0;
    if (p->check)
        for (int k = 0; k < w; k++)
            verify(p, jt_p2p_slot(p, 1, k, bytes), msg_id(p, k), p->peer, bytes);
    return p->me == 0 ? dt : 0.0;
}

double jt_p2p_sample(jt_p2p *p, size_t bytes)
{
    double dt = 0.0;
    if (p->me < 0)
        return 0.0;
    switch (p->mode) {
    case JT_P2P_PINGPONG: dt = pingpong(p, bytes); break;
    case JT_P2P_STREAM: dt = stream(p, bytes); break;
    case JT_P2P_BIDIR: dt = bidir(p, bytes); break;
    default: jt_fatal("jt_p2p_sample: mode %s is one-sided (comm/rma.h)", jt_p2p_mode_names[p->mode]);
    }
    jt_p2p_advance(p);
    return dt;
}
