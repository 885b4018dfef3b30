/*
 * jt_dbcast message header: encode/decode, pure functions, fixed little-endian layout
 * (independent of the host's byte order and struct padding).
 *
 * Layout (offsets in bytes), then nhops entries of 8 bytes, then (JT_DBCAST_HDR_INLINE)
 * the payload:
 *   0 u32 magic 'JTDB'        4 u16 version       6 u8 routing     7 u8 flags
 *   8 i32 origin root        12 i32 user tag     16 u32 seq (receiver's number for this
 *                                                       broadcast among those of origin)
 *  20 i32 stream tag (MPI tag of the data segments on this link)
 *  24 u64 bcast id           32 u64 total bytes  40 u64 segment bytes
 *  48 u32 segment count (of this stream's range)              52 u32 nhops
 *  56 u64 range offset       64 u64 range bytes: the part of the broadcast this stream
 *                                   carries (all of it but for the two-tree's two halves)
 *  72 u32 streams: how many streams carry the broadcast to the receiver (1 or 2)
 *  76 u32 reserved (0)
 *  80 nhops x { i32 rank, u32 seq }: the sub-list the receiver must forward to.
 * Version 2 (version 1 had no range: 56 fixed bytes).
 */
#ifndef JT_COMM_DBCAST_HEADER_H
#define JT_COMM_DBCAST_HEADER_H

#include <stddef.h>
#include <stdint.h>

#define JT_DBCAST_MAGIC 0x4244544Au /* "JTDB" in little-endian bytes */
#define JT_DBCAST_VERSION 2u
#define JT_DBCAST_HDR_FIXED 80u
#define JT_DBCAST_MAX_STREAMS 2u
#define JT_DBCAST_HOP_BYTES 8u
#define JT_DBCAST_HDR_INLINE 0x01u  /* payload follows the header in the same message */

typedef struct {
    uint8_t routing;      /* jt_dbcast_routing, resolved (never AUTO) */
    uint8_t flags;
    int32_t origin;
    int32_t tag;
    uint32_t seq;
    int32_t stream_tag;
    uint64_t bcast_id;
    uint64_t total_bytes;
    uint64_t seg_bytes;
    uint32_t nseg;        /* segments of this stream: ceil(range_bytes / seg_bytes) */
    uint32_t nhops;
    uint64_t range_off;   /* this stream's bytes: [range_off, range_off + range_bytes) */
    uint64_t range_bytes;
    uint32_t streams;     /* 1..JT_DBCAST_MAX_STREAMS streams carry the broadcast */
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
    JT_DBCAST_HDR_EFIELD = -5,    /* inconsistent field (routing, segments, flags) */
    JT_DBCAST_HDR_ECAP = -6       /* output buffer too small (encode) */
};

/* Bytes of an encoded header with nhops entries (without any inline payload). */
size_t jt_dbcast_hdr_size(uint32_t nhops);

/* Encodes h and hops[0..h->nhops-1] into out (cap bytes). The inline payload, if any,
 * is not copied (the caller appends it at out + jt_dbcast_hdr_size(nhops)). Returns the
 * header size or a negative JT_DBCAST_HDR_E* code. */
long jt_dbcast_hdr_encode(const jt_dbcast_hdr *h, const jt_dbcast_hop *hops, void *out, size_t cap);

/* Decodes and validates the message in[0..len-1] (header, and the inline payload if
 * flagged: len must then be exactly header + total_bytes). hops may be NULL (read them
 * later with jt_dbcast_hdr_hops). Returns JT_DBCAST_HDR_OK or a negative code. */
int jt_dbcast_hdr_decode(const void *in, size_t len, jt_dbcast_hdr *h);
void jt_dbcast_hdr_hops(const void *in, uint32_t nhops, jt_dbcast_hop *hops);

const char *jt_dbcast_hdr_strerror(int code);

#endif
