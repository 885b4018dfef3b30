/* Point-to-point patterns between two ranks, one timed sample at a time: ping-pong (one round
 * trip), streaming (a window of non-blocking sends and an acknowledgement, like osu_bw) and
 * bidirectional streaming (both sides at once, like osu_bibw).  The one-sided put and get
 * modes build on these types in comm/rma.h; this file knows their names and buffer layout,
 * not their calls.
 *
 * The state of the buffers is a named dimension of every sample (docs/records.md):
 *   osu       OSU's conventions: the echo of a ping-pong is sent from the answering side's own
 *             send buffer; every message of a stream/bidir window uses one send buffer and one
 *             receive buffer per side (osu_bw, osu_bibw); put/get address one slot per message
 *             of the window (osu_put_bw, osu_get_bw).
 *   distinct  one slot per message in flight.
 *   echo      the ping-pong's answer sends back the buffer it has just received into: lines
 *             last written by the transfer (dirty) travel back; ping-pong only.
 *   cold      frames rotated through twice the last-level cache, so no byte is in cache. */
#ifndef JT_P2P_H
#define JT_P2P_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { JT_P2P_PINGPONG, JT_P2P_STREAM, JT_P2P_BIDIR, JT_P2P_PUT, JT_P2P_GET } jt_p2p_mode;
typedef enum { JT_P2P_OSU, JT_P2P_DISTINCT, JT_P2P_ECHO, JT_P2P_COLD } jt_p2p_buffers;

extern const char *const jt_p2p_mode_names[];    /* NULL-terminated, in enum order */
extern const char *const jt_p2p_buffers_names[]; /* NULL-terminated, in enum order */

typedef struct jt_p2p {
    MPI_Comm comm;
    int me;            /* 0 initiates and times, 1 answers, -1 takes no part */
    int peer;
    jt_p2p_mode mode;
    jt_p2p_buffers buffers;
    int window;        /* messages in flight per sample (stream, bidir, put, get) */
    int check;         /* verify every payload */
    int ack_bytes;     /* stream's acknowledgement of a window: 4 (osu_bw's) unless set after init */
    int reps;          /* operations timed together in one sample (1 after init; both sides
                        * must agree): the sample is their total time */
    unsigned char *arena;
    size_t arena_bytes;
    size_t frame_bytes; /* one frame: sending slots, then receiving slots (page-aligned) */
    size_t frames;     /* rotation frames of cold; 1 otherwise */
    size_t frame;      /* current frame */
    uint64_t iter;     /* samples taken, for patterns and rotation */
    MPI_Request *req;
    MPI_Status *st;    /* real statuses: MPICH's access hints reject MPI_STATUSES_IGNORE */
} jt_p2p;

/* In-flight bytes of one window of distinct slots are capped (the window shrinks for large
 * messages, as the records say) so that large sizes do not need window x size of memory.
 * A window over one shared buffer (osu) needs no such memory and is never reduced. */
#define JT_P2P_WINDOW_CAP ((size_t)256 << 20)

/* Why BUFFERS cannot be used with MODE (a sentence for a usage error), or NULL. */
const char *jt_p2p_buffers_refusal(jt_p2p_mode mode, jt_p2p_buffers buffers);

/* Bytes of buffer a pattern needs for these sizes (send and receive slots, times the frames
 * that cold rotates through to exceed llc_bytes twice over). */
size_t jt_p2p_arena_bytes(jt_p2p_mode mode, jt_p2p_buffers buffers, int window,
                          const uint64_t *sizes, size_t nsizes, size_t llc_bytes, size_t *frames);

/* The arena is the caller's (bound to a NUMA node, zeroed); window is the configured one. */
void jt_p2p_init(jt_p2p *p, MPI_Comm comm, int me, int peer, jt_p2p_mode mode,
                 jt_p2p_buffers buffers, int window, int check, unsigned char *arena,
                 size_t arena_bytes, size_t frames);
void jt_p2p_free(jt_p2p *p);

/* Messages in flight per sample for this size: the window, reduced past JT_P2P_WINDOW_CAP
 * when each message has its own slot. */
int jt_p2p_window_for(jt_p2p_mode mode, jt_p2p_buffers buffers, int window, size_t bytes);

/* The buffer of message k in the sending (dir 0) or receiving (dir 1) half of the current
 * frame: slot k, or slot 0 where the state shares one buffer among the window. */
unsigned char *jt_p2p_slot(jt_p2p *p, int dir, int k, size_t bytes);

/* Before the first sample of a size: each buffer of the window is written over `bytes` by
 * this rank (the send buffers 'a', the receive buffers 'b'), as OSU sets its buffers before
 * each size; not with cold, which it would warm. */
void jt_p2p_touch(jt_p2p *p, size_t bytes);

/* One sample of `bytes` per message of a two-sided mode (pingpong, stream, bidir); returns
 * its duration in seconds on side 0 (0 elsewhere).  A payload that fails --check is fatal. */
double jt_p2p_sample(jt_p2p *p, size_t bytes);

/* Ends a sample: counts it and moves cold's rotation on (jt_p2p_sample does it itself). */
void jt_p2p_advance(jt_p2p *p);

#endif
