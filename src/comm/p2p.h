/* Point-to-point patterns between two ranks, one timed sample at a time: ping-pong (one round
 * trip), streaming (a window of non-blocking sends and an acknowledgement, like osu_bw),
 * bidirectional streaming (both sides at once, like osu_bibw), and one-sided streams of
 * MPI_Put or MPI_Get (comm/rma.h). */
#ifndef JT_P2P_H
#define JT_P2P_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { JT_P2P_PINGPONG, JT_P2P_STREAM, JT_P2P_BIDIR, JT_P2P_PUT, JT_P2P_GET } jt_p2p_mode;

extern const char *const jt_p2p_mode_names[]; /* NULL-terminated, in enum order */

typedef struct jt_p2p {
    MPI_Comm comm;
    int me;            /* 0 initiates and times, 1 answers, -1 takes no part */
    int peer;
    jt_p2p_mode mode;
    int window;        /* messages in flight per sample (stream, bidir) */
    int check;         /* verify every payload */
    unsigned char *arena;
    size_t arena_bytes;
    size_t frame_bytes; /* one frame: sending slots, then receiving slots */
    size_t frames;     /* rotation frames for --cold; 1 when hot */
    size_t frame;      /* current frame */
    uint64_t iter;     /* samples taken, for patterns and rotation */
    MPI_Request *req;
    MPI_Status *st;    /* real statuses: MPICH's access hints reject MPI_STATUSES_IGNORE */
    MPI_Win win;       /* put and get modes */
    int rma;
} jt_p2p;

/* In-flight bytes of one window are capped (the window shrinks for large messages, as the
 * records say) so that large sizes do not need window x size of memory. */
#define JT_P2P_WINDOW_CAP ((size_t)256 << 20)

/* Bytes of buffer a pattern needs for these sizes (window slots for sending and receiving,
 * times the frames that --cold rotates through to exceed llc_bytes twice over). */
size_t jt_p2p_arena_bytes(jt_p2p_mode mode, int window, const uint64_t *sizes, size_t nsizes,
                          int cold, size_t llc_bytes, size_t *frames);

/* The arena is the caller's (bound to a NUMA node); window is the configured one.  Collective
 * over comm in put and get modes (the window is created). */
void jt_p2p_init(jt_p2p *p, MPI_Comm comm, int me, int peer, jt_p2p_mode mode, int window,
                 int check, unsigned char *arena, size_t arena_bytes, size_t frames);
void jt_p2p_free(jt_p2p *p);

/* Messages in flight per sample for this size: the window, reduced past JT_P2P_WINDOW_CAP. */
int jt_p2p_window_for(jt_p2p_mode mode, int window, size_t bytes);

/* Slot k of the sending (dir 0) or receiving (dir 1) half of the current frame. */
unsigned char *jt_p2p_slot(jt_p2p *p, int dir, int k, size_t bytes);

/* One sample of `bytes` per message; returns its duration in seconds on side 0 (0 elsewhere).
 * A payload that fails --check is fatal. */
double jt_p2p_sample(jt_p2p *p, size_t bytes);

#endif
