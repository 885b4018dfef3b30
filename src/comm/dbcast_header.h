/*
 * jt_dbcast message header: encode/decode, pure functions, byte-exact wire format
 * (independent of the host's byte order and struct padding). Version 4, compact:
 *
 *   0 'J' 'T'   2 u8 version (4)   3 u8 routing (< 0x80) | 0x80 if INLINE
 *   4 varints (LEB128, unsigned, canonical: no overlong form, no overflow):
 *       origin, user tag, seq (the receiver's number for this broadcast among those of
 *       origin), total bytes (only without INLINE: inline, it is the payload's length,
 *       all that follows the header), nhops
 *     only without INLINE (a segmented stream):
 *       stream tag, bcast id, segment bytes, streams (1 or 2),
 *       and with 2 streams: range offset, range bytes (else the range is all the data)
 *   then the hop list, runs of hops: for the first hop of a run
 *       varint (zigzag(rank - previous rank) << 1 | RUN), [varint (run length - 2) if RUN],
 *       varint zigzag(seq - previous seq)
 *     (differences modulo 2^32; "previous" starts at origin and at seq); the run's other
 *     hops each have rank + 1 and the same seq as the one before.
 *   then (INLINE) the payload.
 * Routing scatter-allgather has its own fields, always INLINE (each message one byte range):
 *       origin, user tag, seq, total bytes, nhops, bcast id, range offset, nodes (0: no plan),
 *       [place, if nodes], the hop list (the receiver's view), the payload (the range).
 * The segment count is derived: ceil(range bytes / segment bytes).
 * Size: at most JT_DBCAST_HDR_MAX_FIXED + JT_DBCAST_HOP_MAX_BYTES x nhops bytes; typically
 * 8-12 B inline (16-20 B segmented) + about 2 B per hop, 3 B for a run of consecutive ranks
 * with equal seqs. Version 3 had a 7-byte fixed part ('JTDB', version, routing, flags) and
 * carried the total of inline messages (12 B at least); versions 1 and 2 were fixed layouts
 * (56 and 80 B + 8 B per hop).
 */
#ifndef JT_COMM_DBCAST_HEADER_H
#define JT_COMM_DBCAST_HEADER_H

#include <stddef.h>
#include <stdint.h>

#define JT_DBCAST_VERSION 4u
#define JT_DBCAST_HDR_FIXED 4u      /* 'J' 'T', version, routing | INLINE */
#define JT_DBCAST_HDR_MIN 8u        /* the fixed part, 4 one-byte varints (inline, no total) */
#define JT_DBCAST_HDR_MAX_FIXED 75u /* 4 + 5 varints (30 B at most) + 6 (41 B at most) */
#define JT_DBCAST_HOP_MAX_BYTES 10u /* a hop: 5 + 5 B at most; a run's length is paid by its 2+ hops */
#define JT_DBCAST_MAX_STREAMS 2u
#define JT_DBCAST_HDR_INLINE 0x01u  /* payload follows the header in the same message */

typedef struct {
    uint8_t routing;      /* jt_dbcast_routing, resolved (never AUTO) */
    uint8_t flags;
    int32_t origin;
    int32_t tag;
    uint32_t seq;
    int32_t stream_tag;   /* 0 on the wire for inline messages */
    uint64_t bcast_id;    /* not carried by inline messages (decoded as 0) */
    uint64_t total_bytes;
    uint64_t seg_bytes;   /* 0 for inline messages */
    uint32_t nseg;        /* segments of this stream: ceil(range_bytes / seg_bytes) */
    uint32_t nhops;
    uint64_t range_off;   /* this stream's bytes: [range_off, range_off + range_bytes) */
    uint64_t range_bytes;
    uint32_t streams;     /* 1..JT_DBCAST_MAX_STREAMS streams carry the broadcast */
    uint32_t nodes;       /* scatter-allgather: the nodes (root + recipients) when the
                             message carries the receiver's plan, else 0 */
    uint32_t place;       /* scatter-allgather plan: the receiver's node number, 1..nodes-1 */
    uint32_t hops_off;    /* set by decode: where the hop list starts */
    uint32_t hdr_bytes;   /* set by decode: header bytes (the inline payload follows) */
} jt_dbcast_hdr;

typedef struct {
    int32_t rank;
    uint32_t seq;
} jt_dbcast_hop;

enum {
    JT_DBCAST_HDR_OK = 0,
    JT_DBCAST_HDR_ESHORT = -1,    /* buffer shorter than the fixed part */
    JT_DBCAST_HDR_EMAGIC = -2,
    JT_DBCAST_HDR_EVERSION = -3,
    JT_DBCAST_HDR_ELENGTH = -4,   /* length disagrees with nhops / inline payload */
    JT_DBCAST_HDR_EFIELD = -5,    /* inconsistent field (routing, segments, flags, varint) */
    JT_DBCAST_HDR_ECAP = -6       /* output buffer too small (encode) */
};

/* Exact bytes of the encoded header of h with hops[0..h->nhops-1] (no inline payload). */
size_t jt_dbcast_hdr_size(const jt_dbcast_hdr *h, const jt_dbcast_hop *hops);
/* Hard bound on any header with nhops hops (receive buffers). */
size_t jt_dbcast_hdr_max(uint32_t nhops);
/* What the cost model assumes for an inline header with `below` hops: a short fixed part
 * and 2 B a hop (small rank and seq differences; runs take less). */
size_t jt_dbcast_hdr_est(uint32_t below);

/* Encodes h and hops[0..h->nhops-1] into out (cap bytes). The inline payload, if any,
 * is not copied (the caller appends it at out + the returned size). Returns the header
 * size or a negative JT_DBCAST_HDR_E* code. */
long jt_dbcast_hdr_encode(const jt_dbcast_hdr *h, const jt_dbcast_hop *hops, void *out, size_t cap);

/* Decodes and validates the message in[0..len-1] (header, hop list, and the inline
 * payload if flagged: len must then be exactly header + total_bytes); sets h->hdr_bytes
 * and h->hops_off. Returns JT_DBCAST_HDR_OK or a negative code. */
int jt_dbcast_hdr_decode(const void *in, size_t len, jt_dbcast_hdr *h);
/* The hops of a message that jt_dbcast_hdr_decode accepted into h. */
void jt_dbcast_hdr_hops(const void *in, const jt_dbcast_hdr *h, jt_dbcast_hop *hops);

const char *jt_dbcast_hdr_strerror(int code);

#endif
