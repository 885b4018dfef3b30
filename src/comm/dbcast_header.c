/* jt_dbcast header encoding (version 4, compact); see dbcast_header.h and docs/dbcast.md. */
#include "comm/dbcast_header.h"

#include "jostle/dbcast.h"

#define RUN 1u
/* Byte 3: the routing (< 0x80), and the INLINE flag in its top bit. */
#define INLINE_BIT 0x80u

/* ---- varints: LEB128, 7 bits a byte, low first ---- */

/* Writes v at p (if p) and returns its length. */
static size_t put_uv(unsigned char *p, uint64_t v)
{
    size_t n = 0;
    do {
        unsigned char b = (unsigned char)(v & 0x7f);
        v >>= 7;
        if (p)
            p[n] = (unsigned char)(b | (v ? 0x80 : 0));
        n++;
    } while (v);
    return n;
}

/* Reads a varint from in[*pos..len) into *v; rejects running out (ELENGTH), an overlong
 * form (a last byte of 0 after the first) and a value over max (EFIELD). */
static int get_uv(const unsigned char *in, size_t len, size_t *pos, uint64_t max, uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned shift = 0;; shift += 7) {
        if (*pos >= len)
            return JT_DBCAST_HDR_ELENGTH;
        unsigned char b = in[(*pos)++];
        if (shift == 63 && (b & 0x7e))
            return JT_DBCAST_HDR_EFIELD; /* over 64 bits */
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            if (b == 0 && shift)
                return JT_DBCAST_HDR_EFIELD; /* overlong */
            break;
        }
        if (shift == 63)
            return JT_DBCAST_HDR_EFIELD;
    }
    if (x > max)
        return JT_DBCAST_HDR_EFIELD;
    *v = x;
    return JT_DBCAST_HDR_OK;
}

static uint32_t zig(uint32_t d) { return (d << 1) ^ (uint32_t)-(int32_t)(d >> 31); }
static uint32_t unzig(uint32_t z) { return (z >> 1) ^ (uint32_t)-(int32_t)(z & 1); }

static int check_fields(const jt_dbcast_hdr *h)
{
    if (h->routing == JT_ROUTE_AUTO || h->routing >= JT_ROUTE_COUNT_ || h->routing >= INLINE_BIT)
        return JT_DBCAST_HDR_EFIELD;
    if (h->flags & ~JT_DBCAST_HDR_INLINE)
        return JT_DBCAST_HDR_EFIELD;
    if (h->origin < 0 || h->tag < 0)
        return JT_DBCAST_HDR_EFIELD;
    if (h->routing == JT_ROUTE_SCATTER_ALLGATHER) {
        /* one inline range; a plan: a place among its nodes, fewer hops than nodes; none:
         * no hop and some bytes */
        if (!(h->flags & JT_DBCAST_HDR_INLINE) || h->streams != 1 || h->nseg != 0 ||
            h->range_off > h->total_bytes || h->range_bytes > h->total_bytes - h->range_off)
            return JT_DBCAST_HDR_EFIELD;
        if (h->nodes ? (h->place < 1 || h->place >= h->nodes || h->nhops >= h->nodes ||
                        h->nodes > (uint32_t)INT32_MAX)
                     : (h->nhops != 0 || h->range_bytes == 0))
            return JT_DBCAST_HDR_EFIELD;
        return JT_DBCAST_HDR_OK;
    }
    if (h->streams < 1 || h->streams > JT_DBCAST_MAX_STREAMS)
        return JT_DBCAST_HDR_EFIELD;
    /* the range lies in the data; one stream carries all of it; two halves are not empty */
    if (h->range_off > h->total_bytes || h->range_bytes > h->total_bytes - h->range_off)
        return JT_DBCAST_HDR_EFIELD;
    if (h->streams == 1 ? (h->range_off != 0 || h->range_bytes != h->total_bytes)
                        : h->range_bytes == 0)
        return JT_DBCAST_HDR_EFIELD;
    if (h->flags & JT_DBCAST_HDR_INLINE) {
        if (h->nseg != 0 || h->streams != 1)
            return JT_DBCAST_HDR_EFIELD;
    } else {
        /* segments: nseg = ceil(range / seg_bytes), each at most an int's worth */
        if (h->total_bytes == 0 || h->seg_bytes == 0 || h->seg_bytes > ((uint64_t)1 << 30))
            return JT_DBCAST_HDR_EFIELD;
        uint64_t n = (h->range_bytes + h->seg_bytes - 1) / h->seg_bytes;
        if (n != h->nseg || h->stream_tag < 0)
            return JT_DBCAST_HDR_EFIELD;
    }
    return JT_DBCAST_HDR_OK;
}

/* Writes the header (p NULL: only counts) and returns its length. */
static size_t emit(const jt_dbcast_hdr *h, const jt_dbcast_hop *hops, unsigned char *p)
{
    size_t n = JT_DBCAST_HDR_FIXED;
    int inl = (h->flags & JT_DBCAST_HDR_INLINE) != 0;
    if (p) {
        p[0] = 'J', p[1] = 'T';
        p[2] = (unsigned char)JT_DBCAST_VERSION;
        p[3] = (unsigned char)(h->routing | (inl ? INLINE_BIT : 0));
    }
#define PUT(v) (n += put_uv(p ? p + n : NULL, (uint64_t)(v)))
    int sag = h->routing == JT_ROUTE_SCATTER_ALLGATHER;
    PUT((uint32_t)h->origin);
    PUT((uint32_t)h->tag);
    PUT(h->seq);
    if (!inl || sag) /* inline: the payload's length, what follows the header */
        PUT(h->total_bytes);
    PUT(h->nhops);
    if (sag) {
        PUT(h->bcast_id);
        PUT(h->range_off);
        PUT(h->nodes);
        if (h->nodes)
            PUT(h->place);
    } else if (!inl) {
        PUT((uint32_t)h->stream_tag);
        PUT(h->bcast_id);
        PUT(h->seg_bytes);
        PUT(h->streams);
        if (h->streams > 1) {
            PUT(h->range_off);
            PUT(h->range_bytes);
        }
    }
    uint32_t prank = (uint32_t)h->origin, pseq = h->seq;
    for (uint32_t i = 0; i < h->nhops;) {
        uint32_t len = 1, r = (uint32_t)hops[i].rank, s = hops[i].seq;
        while (i + len < h->nhops && (uint32_t)hops[i + len].rank == (uint32_t)hops[i + len - 1].rank + 1u &&
               hops[i + len].seq == s)
            len++;
        PUT((uint64_t)zig(r - prank) << 1 | (len > 1 ? RUN : 0));
        if (len > 1)
            PUT(len - 2);
        PUT(zig(s - pseq));
        prank = r + (len - 1);
        pseq = s;
        i += len;
    }
#undef PUT
    return n;
}

size_t jt_dbcast_hdr_size(const jt_dbcast_hdr *h, const jt_dbcast_hop *hops)
{
    return emit(h, hops, NULL);
}

size_t jt_dbcast_hdr_max(uint32_t nhops)
{
    return JT_DBCAST_HDR_MAX_FIXED + (size_t)nhops * JT_DBCAST_HOP_MAX_BYTES;
}

size_t jt_dbcast_hdr_est(uint32_t below)
{
    return 12 + 2 * (size_t)below;
}

long jt_dbcast_hdr_encode(const jt_dbcast_hdr *h, const jt_dbcast_hop *hops, void *out, size_t cap)
{
    int rc = check_fields(h);
    if (rc)
        return rc;
    size_t need = emit(h, hops, NULL);
    if (cap < need)
        return JT_DBCAST_HDR_ECAP;
    emit(h, hops, out);
    return (long)need;
}

/* Walks the hop list from *pos (hops: where to put them, or NULL to validate only). */
static int walk_hops(const unsigned char *p, size_t len, size_t *pos, const jt_dbcast_hdr *h,
                     jt_dbcast_hop *hops)
{
    uint32_t prank = (uint32_t)h->origin, pseq = h->seq;
    for (uint32_t i = 0; i < h->nhops;) {
        uint64_t t, run = 0, z;
        int rc = get_uv(p, len, pos, ((uint64_t)UINT32_MAX << 1) | RUN, &t);
        if (!rc && (t & RUN))
            rc = get_uv(p, len, pos, UINT32_MAX, &run);
        if (!rc)
            rc = get_uv(p, len, pos, UINT32_MAX, &z);
        if (rc)
            return rc;
        uint64_t n = (t & RUN) ? run + 2 : 1;
        if (n > h->nhops - i)
            return JT_DBCAST_HDR_ELENGTH; /* more hops than nhops */
        uint32_t r = prank + unzig((uint32_t)(t >> 1)), s = pseq + unzig((uint32_t)z);
        for (uint32_t k = 0; hops && k < n; k++)
            hops[i + k] = (jt_dbcast_hop){(int32_t)(r + k), s};
        prank = r + (uint32_t)(n - 1);
        pseq = s;
        i += (uint32_t)n;
    }
    return JT_DBCAST_HDR_OK;
}

/* What every layout starts with (origin, tag, seq, then nhops after the total's place), and
 * the hop list from *pos: validated, where it starts and where the header ends recorded. */
static int take_common(const unsigned char *p, size_t len, size_t *pos, const uint64_t *v,
                       jt_dbcast_hdr *h)
{
    h->origin = (int32_t)v[0];
    h->tag = (int32_t)v[1];
    h->seq = (uint32_t)v[2];
    h->nhops = (uint32_t)v[4];
    h->hops_off = (uint32_t)*pos;
    int rc = walk_hops(p, len, pos, h, NULL);
    h->hdr_bytes = (uint32_t)*pos;
    return rc;
}

/* Scatter-allgather: origin, tag, seq, total, nhops, id, range offset, nodes, [place], hops,
 * the payload (the range). */
static int decode_sag(const unsigned char *p, size_t len, jt_dbcast_hdr *h)
{
    static const uint64_t max[9] = {INT32_MAX, INT32_MAX, UINT32_MAX, UINT64_MAX, UINT32_MAX,
                                    UINT64_MAX, UINT64_MAX, INT32_MAX, INT32_MAX};
    uint64_t v[9] = {0};
    size_t pos = JT_DBCAST_HDR_FIXED;
    if (!h->flags)
        return JT_DBCAST_HDR_EFIELD;
    for (int i = 0; i < 9; i++) {
        if (i == 8 && v[7] == 0)
            break; /* no plan: no place */
        int rc = get_uv(p, len, &pos, max[i], &v[i]);
        if (rc)
            return rc;
    }
    h->total_bytes = v[3];
    h->bcast_id = v[5];
    h->range_off = v[6];
    h->nodes = (uint32_t)v[7];
    h->place = (uint32_t)v[8];
    h->stream_tag = 0;
    h->seg_bytes = 0;
    h->nseg = 0;
    h->streams = 1;
    int rc = take_common(p, len, &pos, v, h);
    if (rc)
        return rc;
    h->range_bytes = (uint64_t)(len - pos);
    return check_fields(h);
}

int jt_dbcast_hdr_decode(const void *in, size_t len, jt_dbcast_hdr *h)
{
    const unsigned char *p = in;
    if (len < JT_DBCAST_HDR_MIN)
        return JT_DBCAST_HDR_ESHORT;
    if (p[0] != 'J' || p[1] != 'T')
        return JT_DBCAST_HDR_EMAGIC;
    if (p[2] != JT_DBCAST_VERSION)
        return JT_DBCAST_HDR_EVERSION;
    h->routing = (uint8_t)(p[3] & ~INLINE_BIT);
    h->flags = (p[3] & INLINE_BIT) ? JT_DBCAST_HDR_INLINE : 0;
    if (h->routing == JT_ROUTE_AUTO || h->routing >= JT_ROUTE_COUNT_)
        return JT_DBCAST_HDR_EFIELD; /* before reading fields */
    int inl = h->flags != 0;
    size_t pos = JT_DBCAST_HDR_FIXED;
    h->nodes = 0;
    h->place = 0;
    if (h->routing == JT_ROUTE_SCATTER_ALLGATHER)
        return decode_sag(p, len, h);
    /* origin, tag, seq, total (not inline), nhops, then (not inline) stream tag, id,
     * segment, streams, and with 2 streams the range */
    uint64_t v[11] = {0};
    static const uint64_t max[11] = {INT32_MAX, INT32_MAX, UINT32_MAX, UINT64_MAX, UINT32_MAX,
                                     INT32_MAX, UINT64_MAX, (uint64_t)1 << 30,
                                     JT_DBCAST_MAX_STREAMS, UINT64_MAX, UINT64_MAX};
    int nf = inl ? 5 : 9;
    for (int i = 0; i < nf; i++) {
        if (inl && i == 3)
            continue; /* no total: the payload's length */
        int rc = get_uv(p, len, &pos, max[i], &v[i]);
        if (rc)
            return rc;
        if (i == 8 && v[8] > 1)
            nf = 11; /* two streams: the range follows */
    }
    h->stream_tag = (int32_t)v[5];
    h->bcast_id = v[6];
    h->seg_bytes = v[7];
    h->streams = inl ? 1 : (uint32_t)v[8];
    h->nseg = 0;
    int rc = take_common(p, len, &pos, v, h);
    if (rc)
        return rc;
    h->total_bytes = inl ? (uint64_t)(len - pos) : v[3];
    h->range_off = nf == 11 ? v[9] : 0;
    h->range_bytes = nf == 11 ? v[10] : h->total_bytes;
    if (!inl && h->seg_bytes) {
        uint64_t n = h->range_bytes / h->seg_bytes + (h->range_bytes % h->seg_bytes != 0);
        if (n > UINT32_MAX)
            return JT_DBCAST_HDR_EFIELD;
        h->nseg = (uint32_t)n;
    }
    if (!inl && len != pos)
        return JT_DBCAST_HDR_ELENGTH;
    return check_fields(h);
}

void jt_dbcast_hdr_hops(const void *in, const jt_dbcast_hdr *h, jt_dbcast_hop *hops)
{
    size_t pos = h->hops_off;
    walk_hops(in, h->hdr_bytes, &pos, h, hops);
}

const char *jt_dbcast_hdr_strerror(int code)
{
    switch (code) {
    case JT_DBCAST_HDR_OK: return "ok";
    case JT_DBCAST_HDR_ESHORT: return "message shorter than a dbcast header";
    case JT_DBCAST_HDR_EMAGIC: return "bad magic (not a dbcast header)";
    case JT_DBCAST_HDR_EVERSION: return "unsupported dbcast header version";
    case JT_DBCAST_HDR_ELENGTH: return "message length disagrees with the header";
    case JT_DBCAST_HDR_EFIELD: return "inconsistent header field";
    case JT_DBCAST_HDR_ECAP: return "output buffer too small for the header";
    default: return "unknown header error";
    }
}
