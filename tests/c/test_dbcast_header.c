/* Serial unit test of the jt_dbcast header encoding: round trips, byte layout, and
 * rejection of malformed messages. */
#include "comm/dbcast_header.h"
#include "jostle/dbcast.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) /* xorshift64*, deterministic */
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}

static jt_dbcast_hdr random_hdr(int inl, uint32_t nhops)
{
    jt_dbcast_hdr h;
    memset(&h, 0, sizeof h);
    h.routing = (uint8_t)(1 + rnd() % (JT_ROUTE_COUNT_ - 1));
    h.flags = inl ? JT_DBCAST_HDR_INLINE : 0;
    h.origin = (int32_t)(rnd() % 100000);
    h.tag = (int32_t)(rnd() & 0x7fffffff);
    h.seq = (uint32_t)rnd();
    h.bcast_id = rnd();
    h.nhops = nhops;
    h.streams = 1;
    if (inl) {
        h.total_bytes = rnd() % 5000;
        h.range_bytes = h.total_bytes;
    } else {
        h.total_bytes = 1 + rnd() % ((uint64_t)1 << 40);
        h.range_bytes = h.total_bytes;
        if (h.total_bytes > 1 && rnd() % 2) { /* one of two streams: a range of the data */
            h.streams = 2;
            h.range_off = rnd() % h.total_bytes;
            h.range_bytes = 1 + rnd() % (h.total_bytes - h.range_off);
        }
        h.seg_bytes = 1 + rnd() % ((uint64_t)1 << 30);
        h.nseg = (uint32_t)((h.range_bytes + h.seg_bytes - 1) / h.seg_bytes);
        if ((h.range_bytes + h.seg_bytes - 1) / h.seg_bytes > UINT32_MAX)
            h.seg_bytes = (uint64_t)1 << 30, h.nseg = (uint32_t)((h.range_bytes + h.seg_bytes - 1) / h.seg_bytes);
        h.stream_tag = (int32_t)(2 + rnd() % 1000000);
    }
    return h;
}

static int same_hdr(const jt_dbcast_hdr *a, const jt_dbcast_hdr *b)
{
    return a->routing == b->routing && a->flags == b->flags && a->origin == b->origin &&
           a->tag == b->tag && a->seq == b->seq && a->stream_tag == b->stream_tag &&
           a->bcast_id == b->bcast_id && a->total_bytes == b->total_bytes &&
           a->seg_bytes == b->seg_bytes && a->nseg == b->nseg && a->nhops == b->nhops &&
           a->range_off == b->range_off && a->range_bytes == b->range_bytes &&
           a->streams == b->streams;
}

/* Encodes h (+ hops, + inline payload) into a fresh buffer; returns its length. */
static size_t build(const jt_dbcast_hdr *h, const jt_dbcast_hop *hops, unsigned char **out)
{
    size_t hl = jt_dbcast_hdr_size(h->nhops);
    size_t pl = (h->flags & JT_DBCAST_HDR_INLINE) ? (size_t)h->total_bytes : 0;
    unsigned char *buf = malloc(hl + pl + 16);
    long rc = jt_dbcast_hdr_encode(h, hops, buf, hl + pl + 16);
    CHECKF(rc == (long)hl, "encode returned %ld, expected %zu", rc, hl);
    for (size_t i = 0; i < pl; i++)
        buf[hl + i] = (unsigned char)(i * 31 + 7);
    *out = buf;
    return hl + pl;
}

int main(void)
{
    /* 1. round trips */
    for (int it = 0; it < 2000; it++) {
        int inl = it % 3 == 0;
        uint32_t nh = it < 1000 ? (uint32_t)(it % 70) : (uint32_t)(rnd() % 5000);
        jt_dbcast_hdr h = random_hdr(inl, nh);
        jt_dbcast_hop *hops = malloc((nh ? nh : 1) * sizeof *hops);
        for (uint32_t i = 0; i < nh; i++) {
            hops[i].rank = (int32_t)(rnd() & 0x7fffffff);
            hops[i].seq = (uint32_t)rnd();
        }
        unsigned char *msg;
        size_t len = build(&h, hops, &msg);
        jt_dbcast_hdr d;
        int rc = jt_dbcast_hdr_decode(msg, len, &d);
        CHECKF(rc == JT_DBCAST_HDR_OK, "iteration %d: decode failed: %s", it, jt_dbcast_hdr_strerror(rc));
        CHECKF(same_hdr(&h, &d), "iteration %d: fields differ after a round trip", it);
        jt_dbcast_hop *back = malloc((nh ? nh : 1) * sizeof *back);
        jt_dbcast_hdr_hops(msg, d.nhops, back);
        for (uint32_t i = 0; i < nh; i++)
            CHECKF(back[i].rank == hops[i].rank && back[i].seq == hops[i].seq, "iteration %d: hop %u differs", it, i);
        /* every shorter prefix is rejected (never read past len) */
        if (it < 200) {
            for (size_t cut = 0; cut < len; cut++) {
                unsigned char *pre = malloc(cut ? cut : 1);
                memcpy(pre, msg, cut);
                CHECKF(jt_dbcast_hdr_decode(pre, cut, &d) != JT_DBCAST_HDR_OK,
                      "iteration %d: prefix of %zu/%zu bytes accepted", it, cut, len);
                free(pre);
            }
        }
        /* trailing garbage is rejected for non-inline messages (and changes the
         * payload size of inline ones, which is detected as a length mismatch too
         * unless it is exactly the payload) */
        if (!inl) {
            unsigned char *more = malloc(len + 1);
            memcpy(more, msg, len);
            more[len] = 0;
            CHECKF(jt_dbcast_hdr_decode(more, len + 1, &d) == JT_DBCAST_HDR_ELENGTH,
                  "iteration %d: trailing byte accepted", it);
            free(more);
        }
        free(back);
        free(hops);
        free(msg);
    }

    /* 2. byte layout is fixed little-endian, whatever the host */
    {
        jt_dbcast_hdr h;
        memset(&h, 0, sizeof h);
        h.routing = JT_ROUTE_BINOMIAL;
        h.origin = 0x01020304;
        h.tag = 5;
        h.seq = 6;
        h.stream_tag = 7;
        h.bcast_id = 0x1122334455667788ull;
        h.total_bytes = 100;
        h.seg_bytes = 100;
        h.nseg = 1;
        h.nhops = 1;
        h.range_off = 0x10;
        h.range_bytes = 80;
        h.streams = 2;
        jt_dbcast_hop hop = {9, 10};
        unsigned char b[88];
        CHECKF(jt_dbcast_hdr_encode(&h, &hop, b, sizeof b) == 88, "layout: size");
        CHECKF(memcmp(b, "JTDB", 4) == 0, "layout: magic bytes");
        CHECKF(b[4] == JT_DBCAST_VERSION && b[5] == 0, "layout: version");
        CHECKF(b[6] == JT_ROUTE_BINOMIAL && b[7] == 0, "layout: routing/flags");
        CHECKF(b[8] == 4 && b[9] == 3 && b[10] == 2 && b[11] == 1, "layout: origin little-endian");
        CHECKF(b[24] == 0x88 && b[31] == 0x11, "layout: bcast id little-endian");
        CHECKF(b[48] == 1 && b[52] == 1 && b[80] == 9 && b[84] == 10, "layout: nseg, nhops, hop");
        CHECKF(b[56] == 0x10 && b[64] == 80 && b[72] == 2 && b[76] == 0, "layout: range, streams");
    }

    /* 3. malformed messages */
    {
        jt_dbcast_hdr h = random_hdr(0, 3);
        h.streams = 1, h.range_off = 0, h.range_bytes = h.total_bytes;
        h.nseg = (uint32_t)((h.range_bytes + h.seg_bytes - 1) / h.seg_bytes);
        jt_dbcast_hop hops[3] = {{1, 0}, {2, 0}, {3, 0}};
        unsigned char *msg;
        size_t len = build(&h, hops, &msg);
        jt_dbcast_hdr d;
        unsigned char *bad = malloc(len);

#define MUTATE(off, val, expect, what)                                                   \
    do {                                                                                 \
        memcpy(bad, msg, len);                                                           \
        bad[(off)] = (unsigned char)(val);                                               \
        int rc_ = jt_dbcast_hdr_decode(bad, len, &d);                                    \
        CHECKF(rc_ == (expect), "%s: got %d (%s)", what, rc_, jt_dbcast_hdr_strerror(rc_)); \
    } while (0)

        MUTATE(0, 'X', JT_DBCAST_HDR_EMAGIC, "bad magic");
        MUTATE(4, JT_DBCAST_VERSION + 1, JT_DBCAST_HDR_EVERSION, "future version");
        MUTATE(6, 0, JT_DBCAST_HDR_EFIELD, "routing AUTO on the wire");
        MUTATE(6, JT_ROUTE_COUNT_, JT_DBCAST_HDR_EFIELD, "unknown routing");
        MUTATE(7, 0x80, JT_DBCAST_HDR_EFIELD, "unknown flag");
        MUTATE(11, 0x80, JT_DBCAST_HDR_EFIELD, "negative origin");
        MUTATE(15, 0x80, JT_DBCAST_HDR_EFIELD, "negative tag");
        MUTATE(48, bad[48] ^ 1, JT_DBCAST_HDR_EFIELD, "segment count disagrees with sizes");
        MUTATE(52, 4, JT_DBCAST_HDR_ELENGTH, "more hops than bytes");
        MUTATE(55, 0xff, JT_DBCAST_HDR_ELENGTH, "huge hop count (overflow)");
        MUTATE(52, 2, JT_DBCAST_HDR_ELENGTH, "fewer hops than bytes");
        MUTATE(7, JT_DBCAST_HDR_INLINE, JT_DBCAST_HDR_ELENGTH, "inline flag without payload");
        MUTATE(72, 0, JT_DBCAST_HDR_EFIELD, "no stream");
        MUTATE(72, 3, JT_DBCAST_HDR_EFIELD, "three streams");
        MUTATE(77, 1, JT_DBCAST_HDR_EFIELD, "reserved field set");
        MUTATE(56, 1, JT_DBCAST_HDR_EFIELD, "one stream that is not the whole data");
        MUTATE(71, 0x80, JT_DBCAST_HDR_EFIELD, "range past the data");
        free(bad);
        free(msg);

        /* one of two streams: the range lies in the data and is not empty; never inline */
        jt_dbcast_hdr h2 = h;
        h2.streams = 2;
        h2.range_off = h2.total_bytes; /* empty, at the end */
        h2.range_bytes = 0;
        h2.nseg = 0;
        unsigned char b2[256];
        CHECKF(jt_dbcast_hdr_encode(&h2, hops, b2, sizeof b2) == JT_DBCAST_HDR_EFIELD, "empty stream encoded");
        h2.range_off = h2.total_bytes - 1, h2.range_bytes = 2, h2.nseg = 1;
        CHECKF(jt_dbcast_hdr_encode(&h2, hops, b2, sizeof b2) == JT_DBCAST_HDR_EFIELD, "range past the end encoded");
        h2.range_bytes = 1;
        CHECKF(jt_dbcast_hdr_encode(&h2, hops, b2, sizeof b2) > 0, "last byte as a stream refused");
        jt_dbcast_hdr h3 = random_hdr(1, 0);
        h3.streams = 2;
        CHECKF(jt_dbcast_hdr_encode(&h3, NULL, b2, sizeof b2) == JT_DBCAST_HDR_EFIELD, "inline second stream encoded");
        msg = NULL;
        bad = NULL;
        free(bad);
        free(msg);

        /* inline with a segment count is inconsistent */
        jt_dbcast_hdr hi = random_hdr(1, 0);
        hi.nseg = 1;
        unsigned char buf[128];
        CHECKF(jt_dbcast_hdr_encode(&hi, NULL, buf, sizeof buf) == JT_DBCAST_HDR_EFIELD, "inline with segments encoded");
        /* zero-byte non-inline message is refused (zero bytes always travel inline) */
        jt_dbcast_hdr hz = random_hdr(0, 0);
        hz.total_bytes = 0;
        hz.nseg = 0;
        CHECKF(jt_dbcast_hdr_encode(&hz, NULL, buf, sizeof buf) == JT_DBCAST_HDR_EFIELD, "empty non-inline encoded");
        /* segments over 1 GiB are refused (MPI counts are int) */
        jt_dbcast_hdr hs = random_hdr(0, 0);
        hs.seg_bytes = ((uint64_t)1 << 30) + 1;
        hs.total_bytes = hs.seg_bytes;
        hs.nseg = 1;
        CHECKF(jt_dbcast_hdr_encode(&hs, NULL, buf, sizeof buf) == JT_DBCAST_HDR_EFIELD, "2^30+1 segment encoded");
        /* too small an output buffer */
        jt_dbcast_hdr hc = random_hdr(0, 4);
        jt_dbcast_hop h4[4] = {{1, 1}, {2, 2}, {3, 3}, {4, 4}};
        CHECKF(jt_dbcast_hdr_encode(&hc, h4, buf, jt_dbcast_hdr_size(4) - 1) == JT_DBCAST_HDR_ECAP, "capacity not checked");
        CHECKF(jt_dbcast_hdr_decode(buf, 3, &d) == JT_DBCAST_HDR_ESHORT, "3-byte message accepted");
        for (int c = JT_DBCAST_HDR_ECAP; c <= 0; c++)
            CHECKF(strcmp(jt_dbcast_hdr_strerror(c), "unknown header error") != 0, "no message for code %d", c);
    }

    if (jt_test_failures) {
        fprintf(stderr, "test_dbcast_header: %d failure(s)\n", jt_test_failures);
        return 1;
    }
    printf("test_dbcast_header: ok\n");
    return 0;
}
