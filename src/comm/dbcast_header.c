/* jt_dbcast header encoding; see dbcast_header.h and docs/dbcast.md. */
#include "comm/dbcast_header.h"

#include "jostle/dbcast.h"

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)p[i] << (8 * i);
    return v;
}
static uint64_t get64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

size_t jt_dbcast_hdr_size(uint32_t nhops)
{
    return JT_DBCAST_HDR_FIXED + (size_t)nhops * JT_DBCAST_HOP_BYTES;
}

static int check_fields(const jt_dbcast_hdr *h)
{
    if (h->routing == JT_ROUTE_AUTO || h->routing >= JT_ROUTE_COUNT_)
        return JT_DBCAST_HDR_EFIELD;
    if (h->flags & ~JT_DBCAST_HDR_INLINE)
        return JT_DBCAST_HDR_EFIELD;
    if (h->origin < 0 || h->tag < 0)
        return JT_DBCAST_HDR_EFIELD;
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
        /* segments: nseg = ceil(range / seg_bytes), each at most JT-wide int-sized */
        if (h->total_bytes == 0 || h->seg_bytes == 0 || h->seg_bytes > ((uint64_t)1 << 30))
            return JT_DBCAST_HDR_EFIELD;
        uint64_t n = (h->range_bytes + h->seg_bytes - 1) / h->seg_bytes;
        if (n != h->nseg || h->stream_tag < 0)
            return JT_DBCAST_HDR_EFIELD;
    }
    return JT_DBCAST_HDR_OK;
}

long jt_dbcast_hdr_encode(const jt_dbcast_hdr *h, const jt_dbcast_hop *hops, void *out, size_t cap)
{
    int rc = check_fields(h);
    if (rc)
        return rc;
    size_t need = jt_dbcast_hdr_size(h->nhops);
    if (cap < need)
        return JT_DBCAST_HDR_ECAP;
    unsigned char *p = out;
    put32(p + 0, JT_DBCAST_MAGIC);
    p[4] = (unsigned char)(JT_DBCAST_VERSION & 0xff);
    p[5] = (unsigned char)(JT_DBCAST_VERSION >> 8);
    p[6] = h->routing;
    p[7] = h->flags;
    put32(p + 8, (uint32_t)h->origin);
    put32(p + 12, (uint32_t)h->tag);
    put32(p + 16, h->seq);
    put32(p + 20, (uint32_t)h->stream_tag);
    put64(p + 24, h->bcast_id);
    put64(p + 32, h->total_bytes);
    put64(p + 40, h->seg_bytes);
    put32(p + 48, h->nseg);
    put32(p + 52, h->nhops);
    put64(p + 56, h->range_off);
    put64(p + 64, h->range_bytes);
    put32(p + 72, h->streams);
    put32(p + 76, 0);
    for (uint32_t i = 0; i < h->nhops; i++) {
        put32(p + JT_DBCAST_HDR_FIXED + 8 * (size_t)i, (uint32_t)hops[i].rank);
        put32(p + JT_DBCAST_HDR_FIXED + 8 * (size_t)i + 4, hops[i].seq);
    }
    return (long)need;
}

int jt_dbcast_hdr_decode(const void *in, size_t len, jt_dbcast_hdr *h)
{
    const unsigned char *p = in;
    if (len < JT_DBCAST_HDR_FIXED)
        return JT_DBCAST_HDR_ESHORT;
    if (get32(p) != JT_DBCAST_MAGIC)
        return JT_DBCAST_HDR_EMAGIC;
    if ((unsigned)(p[4] | (p[5] << 8)) != JT_DBCAST_VERSION)
        return JT_DBCAST_HDR_EVERSION;
    h->routing = p[6];
    h->flags = p[7];
    h->origin = (int32_t)get32(p + 8);
    h->tag = (int32_t)get32(p + 12);
    h->seq = get32(p + 16);
    h->stream_tag = (int32_t)get32(p + 20);
    h->bcast_id = get64(p + 24);
    h->total_bytes = get64(p + 32);
    h->seg_bytes = get64(p + 40);
    h->nseg = get32(p + 48);
    h->nhops = get32(p + 52);
    h->range_off = get64(p + 56);
    h->range_bytes = get64(p + 64);
    h->streams = get32(p + 72);
    if (get32(p + 76) != 0)
        return JT_DBCAST_HDR_EFIELD;
    if (h->nhops > (len - JT_DBCAST_HDR_FIXED) / JT_DBCAST_HOP_BYTES)
        return JT_DBCAST_HDR_ELENGTH;
    size_t hl = jt_dbcast_hdr_size(h->nhops);
    if (h->flags & JT_DBCAST_HDR_INLINE) {
        if (h->total_bytes != (uint64_t)(len - hl))
            return JT_DBCAST_HDR_ELENGTH;
    } else if (len != hl) {
        return JT_DBCAST_HDR_ELENGTH;
    }
    return check_fields(h);
}

void jt_dbcast_hdr_hops(const void *in, uint32_t nhops, jt_dbcast_hop *hops)
{
    const unsigned char *p = (const unsigned char *)in + JT_DBCAST_HDR_FIXED;
    for (uint32_t i = 0; i < nhops; i++) {
        hops[i].rank = (int32_t)get32(p + 8 * (size_t)i);
        hops[i].seq = get32(p + 8 * (size_t)i + 4);
    }
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
