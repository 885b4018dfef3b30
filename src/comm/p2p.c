#include "comm/p2p.h"

#include "comm/rma.h"

#include "core/errors.h"
#include "core/timer.h"

#include <stdlib.h>
#include <string.h>

const char *const jt_p2p_mode_names[] = {"pingpong", "stream", "bidir", "put", "get", NULL};

#define ACK_TAG 2
#define DATA_TAG 1
#define LINE 64

static size_t slot_stride(size_t max_bytes)
{
    size_t s = max_bytes ? max_bytes : 1;
    return (s + LINE - 1) / LINE * LINE; /* cache-line aligned slots */
}

int jt_p2p_window_for(jt_p2p_mode mode, int window, size_t bytes)
{
    if (mode == JT_P2P_PINGPONG)
        return 1;
    size_t fit = bytes ? JT_P2P_WINDOW_CAP / bytes : (size_t)window;
    return fit < 1 ? 1 : (fit < (size_t)window ? (int)fit : window);
}

size_t jt_p2p_arena_bytes(jt_p2p_mode mode, int window, const uint64_t *sizes, size_t nsizes,
                          int cold, size_t llc_bytes, size_t *frames)
{
    size_t half = LINE;
    for (size_t i = 0; i < nsizes; i++) {
        size_t need = (size_t)jt_p2p_window_for(mode, window, sizes[i]) * slot_stride(sizes[i]);
        if (need > half)
            half = need;
    }
    size_t frame = 2 * half, f = 1;
    if (cold) {
        /* Enough distinct frames that a frame is evicted before it is used again. */
        size_t want = 2 * (llc_bytes ? llc_bytes : (size_t)64 << 20);
        f = (want + frame - 1) / frame;
        if (f < 2)
            f = 2;
    }
    *frames = f;
    return f * frame;
}

void jt_p2p_init(jt_p2p *p, MPI_Comm comm, int me, int peer, jt_p2p_mode mode, int window,
                 int check, unsigned char *arena, size_t arena_bytes, size_t frames)
{
    memset(p, 0, sizeof *p);
    p->comm = comm;
    p->me = me;
    p->peer = peer;
    p->mode = mode;
    p->window = mode == JT_P2P_PINGPONG ? 1 : window;
    p->check = check;
    p->arena = arena;
    p->arena_bytes = arena_bytes;
    p->frames = frames ? frames : 1;
    p->frame_bytes = arena_bytes / p->frames;
    p->req = calloc(2 * (size_t)p->window + 1, sizeof *p->req);
    p->st = calloc(2 * (size_t)p->window + 1, sizeof *p->st);
    if (mode == JT_P2P_PUT || mode == JT_P2P_GET)
        jt_rma_init(p);
}

void jt_p2p_free(jt_p2p *p)
{
    jt_rma_free(p);
    free(p->req);
    free(p->st);
    p->req = NULL;
    p->st = NULL;
}

unsigned char *jt_p2p_slot(jt_p2p *p, int dir, int k, size_t bytes)
{
    return p->arena + p->frame * p->frame_bytes + (size_t)dir * (p->frame_bytes / 2) +
           (size_t)k * slot_stride(bytes);
}

static unsigned char pattern(uint64_t iter, int k, size_t i)
{
    return (unsigned char)(i * 7u + iter * 13u + (uint64_t)k * 101u + 1u);
}

static void fill(jt_p2p *p, unsigned char *b, int k, size_t bytes)
{
    for (size_t i = 0; i < bytes; i++)
        b[i] = pattern(p->iter, k, i);
}

static void verify(jt_p2p *p, const unsigned char *b, int k, size_t bytes)
{
    for (size_t i = 0; i < bytes; i++)
        if (b[i] != pattern(p->iter, k, i))
            jt_fatal("--check: message %d of sample %llu (%zu bytes) differs at byte %zu: got %u, "
                     "expected %u", k, (unsigned long long)p->iter, bytes, i, b[i],
                     pattern(p->iter, k, i));
}

static void advance(jt_p2p *p)
{
    p->iter++;
    p->frame = p->frames > 1 ? (size_t)(p->iter % p->frames) : 0;
}

static double pingpong(jt_p2p *p, size_t bytes)
{
    int n = (int)bytes;
    unsigned char *s = jt_p2p_slot(p, 0, 0, bytes), *r = jt_p2p_slot(p, 1, 0, bytes);
    double dt = 0.0;
    if (p->me == 0) {
        if (p->check)
            fill(p, s, 0, bytes);
        double t0 = jt_now();
        MPI_Send(s, n, MPI_BYTE, p->peer, DATA_TAG, p->comm);
        MPI_Recv(r, n, MPI_BYTE, p->peer, DATA_TAG, p->comm, MPI_STATUS_IGNORE);
        dt = jt_now() - t0;
        if (p->check) /* what came back went both ways */
            verify(p, r, 0, bytes);
    } else {
        /* The echo sends back what arrived, so a check on side 0 covers both transfers. */
        MPI_Recv(r, n, MPI_BYTE, p->peer, DATA_TAG, p->comm, MPI_STATUS_IGNORE);
        MPI_Send(r, n, MPI_BYTE, p->peer, DATA_TAG, p->comm);
    }
    return dt;
}

static double stream(jt_p2p *p, size_t bytes)
{
    int n = (int)bytes, w = jt_p2p_window_for(p->mode, p->window, bytes);
    double dt = 0.0;
    if (p->me == 0) {
        if (p->check)
            for (int k = 0; k < w; k++)
                fill(p, jt_p2p_slot(p, 0, k, bytes), k, bytes);
        double t0 = jt_now();
        for (int k = 0; k < w; k++)
            MPI_Isend(jt_p2p_slot(p, 0, k, bytes), n, MPI_BYTE, p->peer, DATA_TAG, p->comm,
                      &p->req[k]);
        MPI_Waitall(w, p->req, p->st);
        MPI_Recv(NULL, 0, MPI_BYTE, p->peer, ACK_TAG, p->comm, MPI_STATUS_IGNORE);
        dt = jt_now() - t0;
    } else {
        for (int k = 0; k < w; k++)
            MPI_Irecv(jt_p2p_slot(p, 1, k, bytes), n, MPI_BYTE, p->peer, DATA_TAG, p->comm,
                      &p->req[k]);
        MPI_Waitall(w, p->req, p->st);
        MPI_Send(NULL, 0, MPI_BYTE, p->peer, ACK_TAG, p->comm);
        if (p->check) /* after the acknowledgement: outside side 0's timing */
            for (int k = 0; k < w; k++)
                verify(p, jt_p2p_slot(p, 1, k, bytes), k, bytes);
    }
    return dt;
}

static double bidir(jt_p2p *p, size_t bytes)
{
    int n = (int)bytes, w = jt_p2p_window_for(p->mode, p->window, bytes);
    if (p->check)
        for (int k = 0; k < w; k++)
            fill(p, jt_p2p_slot(p, 0, k, bytes), k, bytes);
    double t0 = jt_now();
    for (int k = 0; k < w; k++)
        MPI_Irecv(jt_p2p_slot(p, 1, k, bytes), n, MPI_BYTE, p->peer, DATA_TAG, p->comm, &p->req[k]);
    for (int k = 0; k < w; k++)
        MPI_Isend(jt_p2p_slot(p, 0, k, bytes), n, MPI_BYTE, p->peer, DATA_TAG, p->comm,
                  &p->req[w + k]);
    MPI_Waitall(2 * w, p->req, p->st);
    double dt = jt_now() - t0;
    if (p->check)
        for (int k = 0; k < w; k++)
            verify(p, jt_p2p_slot(p, 1, k, bytes), k, bytes);
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
    case JT_P2P_PUT:
    case JT_P2P_GET: dt = jt_rma_sample(p, bytes); break;
    }
    advance(p);
    return dt;
}
