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
    h.routing = (uint8_t)(1 + rnd() % (JT_ROUTE_SCATTER_ALLGATHER - 1)); /* its own: below */
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
        h.bcast_id = 0; /* not carried inline */
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
    size_t hl = jt_dbcast_hdr_size(h, hops);
    CHECKF(hl <= jt_dbcast_hdr_max(h->nhops), "header of %zu bytes over the bound for %u hops", hl, h->nhops);
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
        int kind = it % 4; /* random; consecutive ranks, one seq (runs); small steps; mixed */
        for (uint32_t i = 0; i < nh; i++) {
            uint32_t pr = i ? (uint32_t)hops[i - 1].rank : (uint32_t)h.origin;
            uint32_t ps = i ? hops[i - 1].seq : h.seq;
            if (kind == 0 || (kind == 3 && rnd() % 8 == 0)) {
                hops[i].rank = (int32_t)(rnd() & (rnd() % 2 ? 0xffffffffu : 0x7fffffffu));
                hops[i].seq = (uint32_t)rnd();
            } else if (kind == 1 || (kind == 3 && rnd() % 2)) {
                hops[i].rank = (int32_t)(pr + 1);
                hops[i].seq = ps;
            } else {
                hops[i].rank = (int32_t)(pr + (uint32_t)(rnd() % 129) - 64);
                hops[i].seq = ps + (uint32_t)(rnd() % 5) - 2;
            }
        }
        unsigned char *msg;
        size_t len = build(&h, hops, &msg);
        jt_dbcast_hdr d;
        int rc = jt_dbcast_hdr_decode(msg, len, &d);
        CHECKF(rc == JT_DBCAST_HDR_OK, "iteration %d: decode failed: %s", it, jt_dbcast_hdr_strerror(rc));
        CHECKF(same_hdr(&h, &d), "iteration %d: fields differ after a round trip", it);
        jt_dbcast_hop *back = malloc((nh ? nh : 1) * sizeof *back);
        CHECKF(d.hdr_bytes == len - ((h.flags & JT_DBCAST_HDR_INLINE) ? h.total_bytes : 0),
              "iteration %d: header length %u", it, d.hdr_bytes);
        jt_dbcast_hdr_hops(msg, &d, back);
        for (uint32_t i = 0; i < nh; i++)
            CHECKF(back[i].rank == hops[i].rank && back[i].seq == hops[i].seq, "iteration %d: hop %u differs", it, i);
        /* every shorter prefix is rejected (never read past len); an inline message's length
         * is its payload's, so only a prefix of its header */
        if (it < 200) {
            for (size_t cut = 0; cut < (inl ? d.hdr_bytes : len); cut++) {
                unsigned char *pre = malloc(cut ? cut : 1);
                memcpy(pre, msg, cut);
                CHECKF(jt_dbcast_hdr_decode(pre, cut, &d) != JT_DBCAST_HDR_OK,
                      "iteration %d: prefix of %zu/%zu bytes accepted", it, cut, len);
                free(pre);
            }
        }
        /* trailing garbage is rejected for non-inline messages (inline, it is payload) */
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

    /* 1b. scatter-allgather: always inline, a range of the data, a plan (nodes, place, the
     * view's hops) or none; round trips, every prefix of the header rejected, bad fields */
    for (int it = 0; it < 500; it++) {
        jt_dbcast_hdr h;
        memset(&h, 0, sizeof h);
        h.routing = JT_ROUTE_SCATTER_ALLGATHER;
        h.flags = JT_DBCAST_HDR_INLINE;
        h.origin = (int32_t)(rnd() % 100000);
        h.tag = (int32_t)(rnd() & 0x7fffffff);
        h.seq = (uint32_t)rnd();
        h.bcast_id = rnd();
        h.streams = 1;
        h.total_bytes = 1 + rnd() % ((uint64_t)1 << 40);
        h.range_off = rnd() % h.total_bytes;
        h.range_bytes = 1 + rnd() % 3000;
        if (h.range_bytes > h.total_bytes - h.range_off)
            h.range_bytes = h.total_bytes - h.range_off;
        if (it % 2) { /* a plan */
            h.nodes = 2 + (uint32_t)(rnd() % 5000);
            h.place = 1 + (uint32_t)(rnd() % (h.nodes - 1));
            h.nhops = (uint32_t)(rnd() % h.nodes);
            if (it % 4 == 1)
                h.range_bytes = 0; /* a plan may come with no byte */
        }
        jt_dbcast_hop *hops = malloc((h.nhops ? h.nhops : 1) * sizeof *hops);
        for (uint32_t i = 0; i < h.nhops; i++)
            hops[i] = (jt_dbcast_hop){(int32_t)(it % 3 ? 1 + i : rnd() % 100000), h.seq + (uint32_t)(i % 2)};
        size_t hl = jt_dbcast_hdr_size(&h, hops), len = hl + (size_t)h.range_bytes;
        CHECKF(hl <= jt_dbcast_hdr_max(h.nhops), "sag %d: header of %zu bytes over the bound", it, hl);
        unsigned char *msg = calloc(len + 1, 1);
        CHECKF(jt_dbcast_hdr_encode(&h, hops, msg, len) == (long)hl, "sag %d: encode", it);
        jt_dbcast_hdr d;
        int rc = jt_dbcast_hdr_decode(msg, len, &d);
        CHECKF(rc == JT_DBCAST_HDR_OK && same_hdr(&h, &d) && d.nodes == h.nodes && d.place == h.place &&
               d.hdr_bytes == hl, "sag %d: round trip (%s)", it, jt_dbcast_hdr_strerror(rc));
        jt_dbcast_hop *back = malloc((h.nhops ? h.nhops : 1) * sizeof *back);
        jt_dbcast_hdr_hops(msg, &d, back);
        for (uint32_t i = 0; i < h.nhops; i++)
            CHECKF(back[i].rank == hops[i].rank && back[i].seq == hops[i].seq, "sag %d: hop %u", it, i);
        for (size_t cut = 0; it < 100 && cut < hl; cut++)
            CHECKF(jt_dbcast_hdr_decode(msg, cut, &d) != JT_DBCAST_HDR_OK, "sag %d: prefix %zu accepted", it, cut);
        free(back), free(hops), free(msg);
    }
    {
        jt_dbcast_hdr h, d;
        memset(&h, 0, sizeof h);
        h.routing = JT_ROUTE_SCATTER_ALLGATHER, h.flags = JT_DBCAST_HDR_INLINE, h.streams = 1;
        h.total_bytes = 100, h.range_off = 10, h.range_bytes = 20;
        unsigned char buf[128];
        CHECKF(jt_dbcast_hdr_encode(&h, NULL, buf, sizeof buf) > 0, "sag: a plain range refused");
        jt_dbcast_hdr b = h;
        b.flags = 0;
        CHECKF(jt_dbcast_hdr_encode(&b, NULL, buf, sizeof buf) == JT_DBCAST_HDR_EFIELD, "sag: not inline accepted");
        b = h, b.range_bytes = 0;
        CHECKF(jt_dbcast_hdr_encode(&b, NULL, buf, sizeof buf) == JT_DBCAST_HDR_EFIELD, "sag: empty range without a plan accepted");
        b = h, b.range_off = 90;
        CHECKF(jt_dbcast_hdr_encode(&b, NULL, buf, sizeof buf) == JT_DBCAST_HDR_EFIELD, "sag: range past the data accepted");
        b = h, b.nodes = 4, b.place = 0;
        CHECKF(jt_dbcast_hdr_encode(&b, NULL, buf, sizeof buf) == JT_DBCAST_HDR_EFIELD, "sag: place 0 (the root) accepted");
        b = h, b.nodes = 4, b.place = 4;
        CHECKF(jt_dbcast_hdr_encode(&b, NULL, buf, sizeof buf) == JT_DBCAST_HDR_EFIELD, "sag: place past the nodes accepted");
        b = h, b.nodes = 4, b.place = 1, b.nhops = 4;
        jt_dbcast_hop four[4] = {{1, 0}, {2, 0}, {3, 0}, {5, 0}};
        CHECKF(jt_dbcast_hdr_encode(&b, four, buf, sizeof buf) == JT_DBCAST_HDR_EFIELD, "sag: as many hops as nodes accepted");
        long n = jt_dbcast_hdr_encode(&h, NULL, buf, sizeof buf);
        buf[3] = (unsigned char)JT_ROUTE_SCATTER_ALLGATHER; /* the INLINE bit off on the wire */
        CHECKF(jt_dbcast_hdr_decode(buf, (size_t)n + 20, &d) == JT_DBCAST_HDR_EFIELD, "sag: decoded without INLINE");
    }

    /* 2. byte layout (version 4), whatever the host */
    {
        jt_dbcast_hdr h;
        memset(&h, 0, sizeof h);
        h.routing = JT_ROUTE_BINOMIAL;
        h.flags = JT_DBCAST_HDR_INLINE;
        h.origin = 3, h.tag = 5, h.seq = 6, h.total_bytes = 2, h.range_bytes = 2;
        h.streams = 1, h.nhops = 5;
        jt_dbcast_hop hp[5] = {{4, 6}, {5, 6}, {6, 6}, {9, 7}, {8, 7}};
        static const unsigned char want[] = {'J', 'T', JT_DBCAST_VERSION, JT_ROUTE_BINOMIAL | 0x80,
                                             3, 5, 6, 5, /* origin, tag, seq, nhops: no total */
                                             5, 1, 0,  /* 4..6 seq 6: rank +1, a run of 3, seq +0 */
                                             12, 2,    /* 9 seq 7: rank +3, seq +1 */
                                             2, 0};    /* 8 seq 7: rank -1, seq +0 */
        unsigned char b[64];
        CHECKF(jt_dbcast_hdr_size(&h, hp) == sizeof want, "layout: size %zu", jt_dbcast_hdr_size(&h, hp));
        CHECKF(jt_dbcast_hdr_encode(&h, hp, b, sizeof b) == (long)sizeof want, "layout: encode size");
        CHECKF(memcmp(b, want, sizeof want) == 0, "layout: inline bytes");
        jt_dbcast_hdr s;
        memset(&s, 0, sizeof s);
        s.routing = JT_ROUTE_TWO_TREE, s.origin = 300, s.total_bytes = 100, s.stream_tag = 7;
        s.bcast_id = 0x1122334455667788ull, s.seg_bytes = 40, s.streams = 2;
        s.range_off = 0x10, s.range_bytes = 80, s.nseg = 2;
        long n = jt_dbcast_hdr_encode(&s, NULL, b, sizeof b);
        CHECKF(n == 24, "layout: segmented header of %ld bytes", n);
        CHECKF(b[2] == JT_DBCAST_VERSION && b[3] == JT_ROUTE_TWO_TREE && b[4] == 0xac && b[5] == 0x02 &&
                   b[6] == 0 && b[7] == 0 && b[8] == 100 && b[9] == 0 && b[10] == 7 && b[11] == 0x88 &&
                   b[19] == 0x11 && b[20] == 40 && b[21] == 2 && b[22] == 0x10 && b[23] == 80,
               "layout: segmented fields");
        /* the compact list: 255 consecutive ranks with one seq is one run */
        jt_dbcast_hop all[255];
        for (int i = 0; i < 255; i++)
            all[i] = (jt_dbcast_hop){i + 1, 40};
        jt_dbcast_hdr f = h;
        f.origin = 0, f.seq = 40, f.nhops = 255, f.total_bytes = f.range_bytes = 8;
        CHECKF(jt_dbcast_hdr_size(&f, all) == 13, "255 consecutive hops: %zu bytes", jt_dbcast_hdr_size(&f, all));
        f.nhops = 0;
        CHECKF(jt_dbcast_hdr_size(&f, all) == JT_DBCAST_HDR_MIN, "no hop: %zu bytes", jt_dbcast_hdr_size(&f, all));
        for (int i = 0; i < 255; i++)
            all[i].seq = (uint32_t)(40 + i % 3); /* no runs: 2 B a hop */
        f.nhops = 255;
        CHECKF(jt_dbcast_hdr_size(&f, all) == 8 + 2 * 255 + 1, "255 small steps: %zu bytes", jt_dbcast_hdr_size(&f, all));
        /* the bound is reached: ranks far apart, seqs far apart */
        for (int i = 0; i < 255; i++)
            all[i] = (jt_dbcast_hop){i % 2 ? INT32_MIN : 0, i % 2 ? 0 : 0x80000000u}; /* steps of 2^31 */
        f.origin = INT32_MAX, f.tag = INT32_MAX, f.seq = 0, f.total_bytes = f.range_bytes = 5000;
        CHECKF(jt_dbcast_hdr_size(&f, all) <= jt_dbcast_hdr_max(255) && jt_dbcast_hdr_size(&f, all) >= 10 * 255,
               "worst hops: %zu bytes", jt_dbcast_hdr_size(&f, all));
        s.range_off = (uint64_t)1 << 63, s.range_bytes = (uint64_t)1 << 61, s.total_bytes = UINT64_MAX;
        s.origin = s.tag = s.stream_tag = INT32_MAX, s.seq = UINT32_MAX, s.bcast_id = UINT64_MAX;
        s.seg_bytes = (uint64_t)1 << 30, s.nseg = 1u << 31;
        size_t big = jt_dbcast_hdr_size(&s, NULL);
        CHECKF(big <= JT_DBCAST_HDR_MAX_FIXED && big > 64, "largest fixed part: %zu", big);
        unsigned char b2[128];
        CHECKF(jt_dbcast_hdr_encode(&s, NULL, b2, big - 1) == JT_DBCAST_HDR_ECAP &&
                   jt_dbcast_hdr_encode(&s, NULL, b2, big) == (long)big &&
                   jt_dbcast_hdr_decode(b2, big, &s) == JT_DBCAST_HDR_OK && s.nseg == 1u << 31,
               "largest fields");
    }

    /* 3. malformed messages, on a segmented header whose varints are one byte each:
     *  0 'J' 'T', 2 version, 3 routing (| 0x80 inline), 4 origin 1, 5 tag 2, 6 seq 3,
     *  7 total 100, 8 nhops 3, 9 stream tag 7, 10 id 9, 11 segment 40, 12 streams 1,
     * 13 hop: rank +1 with a run, 14 run of 3, 15 seq +0 */
    {
        jt_dbcast_hdr h;
        memset(&h, 0, sizeof h);
        h.routing = JT_ROUTE_PIPELINE_CHAIN, h.origin = 1, h.tag = 2, h.seq = 3;
        h.total_bytes = 100, h.range_bytes = 100, h.nhops = 3, h.stream_tag = 7, h.bcast_id = 9;
        h.seg_bytes = 40, h.nseg = 3, h.streams = 1;
        jt_dbcast_hop hops[3] = {{2, 3}, {3, 3}, {4, 3}};
        unsigned char *msg;
        size_t len = build(&h, hops, &msg);
        static const unsigned char want[] = {5, 1, 0};
        CHECKF(len == 16 && msg[8] == 3 && msg[12] == 1 && memcmp(msg + 13, want, 3) == 0, "base message");
        jt_dbcast_hdr d;
        unsigned char bad[64];

#define MUTATE(off, val, expect, what)                                                   \
    do {                                                                                 \
        memcpy(bad, msg, len);                                                           \
        bad[(off)] = (unsigned char)(val);                                               \
        int rc_ = jt_dbcast_hdr_decode(bad, len, &d);                                    \
        CHECKF((int)(expect) == ANY ? rc_ != JT_DBCAST_HDR_OK : rc_ == (expect), "%s: got %d (%s)", \
               what, rc_, jt_dbcast_hdr_strerror(rc_));                                  \
    } while (0)
/* replaces `cut` bytes at off by the n bytes of ins */
#define SPLICE(off, cut, ins, n, expect, what)                                           \
    do {                                                                                 \
        memcpy(bad, msg, (off));                                                         \
        memcpy(bad + (off), (ins), (n));                                                 \
        memcpy(bad + (off) + (n), msg + (off) + (cut), len - (off) - (cut));             \
        int rc_ = jt_dbcast_hdr_decode(bad, len - (cut) + (n), &d);                      \
        CHECKF((int)(expect) == ANY ? rc_ != JT_DBCAST_HDR_OK : rc_ == (expect), "%s: got %d (%s)", \
               what, rc_, jt_dbcast_hdr_strerror(rc_));                                  \
    } while (0)
        const int ANY = 1; /* any error */

        CHECKF(jt_dbcast_hdr_decode(msg, len, &d) == JT_DBCAST_HDR_OK && d.nseg == 3, "base decodes");
        MUTATE(0, 'X', JT_DBCAST_HDR_EMAGIC, "bad magic");
        MUTATE(1, 'D', JT_DBCAST_HDR_EMAGIC, "bad magic, second byte");
        MUTATE(2, 3, JT_DBCAST_HDR_EVERSION, "version 3");
        MUTATE(2, JT_DBCAST_VERSION + 1, JT_DBCAST_HDR_EVERSION, "future version");
        MUTATE(3, 0, JT_DBCAST_HDR_EFIELD, "routing AUTO on the wire");
        MUTATE(3, JT_ROUTE_COUNT_, JT_DBCAST_HDR_EFIELD, "unknown routing");
        MUTATE(3, 0x7f, JT_DBCAST_HDR_EFIELD, "routing 127");
        MUTATE(3, 0x80, JT_DBCAST_HDR_EFIELD, "inline AUTO");
        MUTATE(3, JT_ROUTE_PIPELINE_CHAIN | 0x80, ANY, "inline flag on a segmented header");
        MUTATE(8, 4, JT_DBCAST_HDR_ELENGTH, "more hops than listed");
        MUTATE(8, 2, JT_DBCAST_HDR_ELENGTH, "a run past the hop count");
        MUTATE(8, 0x83, ANY, "hop count running on");
        MUTATE(11, 0, JT_DBCAST_HDR_EFIELD, "segment of 0 bytes");
        MUTATE(12, 0, JT_DBCAST_HDR_EFIELD, "no stream");
        MUTATE(12, 3, JT_DBCAST_HDR_EFIELD, "three streams");
        MUTATE(12, 2, ANY, "two streams without a range");
        MUTATE(14, 5, JT_DBCAST_HDR_ELENGTH, "a run of 7 in 3 hops");
        MUTATE(15, 0x80, JT_DBCAST_HDR_ELENGTH, "last varint running past the end");
        static const unsigned char neg[] = {0x80, 0x80, 0x80, 0x80, 0x08}; /* 2^31 */
        SPLICE(4, 1, neg, 5, JT_DBCAST_HDR_EFIELD, "negative origin");
        SPLICE(5, 1, neg, 5, JT_DBCAST_HDR_EFIELD, "negative tag");
        SPLICE(9, 1, neg, 5, JT_DBCAST_HDR_EFIELD, "negative stream tag");
        static const unsigned char seq33[] = {0x80, 0x80, 0x80, 0x80, 0x10}; /* 2^32 */
        SPLICE(6, 1, seq33, 5, JT_DBCAST_HDR_EFIELD, "seq over 32 bits");
        SPLICE(8, 1, seq33, 5, JT_DBCAST_HDR_EFIELD, "hop count over 32 bits");
        SPLICE(15, 1, seq33, 5, JT_DBCAST_HDR_EFIELD, "seq step over 32 bits");
        static const unsigned char rk34[] = {0x80, 0x80, 0x80, 0x80, 0x20}; /* 2^33 */
        SPLICE(13, 1, rk34, 5, JT_DBCAST_HDR_EFIELD, "rank step over 32 bits");
        static const unsigned char over1[] = {0x81, 0x00};
        SPLICE(4, 1, over1, 2, JT_DBCAST_HDR_EFIELD, "overlong varint");
        static const unsigned char seg31[] = {0x81, 0x80, 0x80, 0x80, 0x04}; /* 2^30 + 1 */
        SPLICE(11, 1, seg31, 5, JT_DBCAST_HDR_EFIELD, "segment over 1 GiB");
        static const unsigned char big[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
        SPLICE(7, 1, big, 10, JT_DBCAST_HDR_EFIELD, "2^64 - 1 bytes in 40 B segments: 2^59 segments");
        static const unsigned char big2[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
        SPLICE(7, 1, big2, 10, JT_DBCAST_HDR_EFIELD, "total over 64 bits");
        static const unsigned char big3[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x81, 0x01};
        SPLICE(7, 1, big3, 11, JT_DBCAST_HDR_EFIELD, "11-byte varint");
        static const unsigned char rng[] = {2, 90, 20}; /* two streams, [90, 110) of 100 */
        SPLICE(12, 1, rng, 3, JT_DBCAST_HDR_EFIELD, "range past the data");
        static const unsigned char rng0[] = {2, 100, 0};
        SPLICE(12, 1, rng0, 3, JT_DBCAST_HDR_EFIELD, "empty half");
        static const unsigned char rngok[] = {2, 60, 40};
        SPLICE(12, 1, rngok, 3, JT_DBCAST_HDR_OK, "second half");
        CHECKF(d.streams == 2 && d.range_off == 60 && d.range_bytes == 40 && d.nseg == 1, "second half fields");
        static const unsigned char one[] = {1};
        SPLICE(len, 0, one, 1, JT_DBCAST_HDR_ELENGTH, "trailing byte");
        static const unsigned char hop0[] = {0};
        SPLICE(8, 1, hop0, 1, JT_DBCAST_HDR_ELENGTH, "no hops but a list");
        free(msg);

        /* inline: the payload is all that follows the header; its length is the total */
        jt_dbcast_hdr hl;
        memset(&hl, 0, sizeof hl);
        hl.routing = JT_ROUTE_FLAT, hl.flags = JT_DBCAST_HDR_INLINE, hl.total_bytes = 4;
        hl.range_bytes = 4, hl.streams = 1;
        len = build(&hl, NULL, &msg);
        CHECKF(len == 8 + 4 && jt_dbcast_hdr_decode(msg, len, &d) == JT_DBCAST_HDR_OK && d.hdr_bytes == 8 &&
                   d.total_bytes == 4 && d.range_bytes == 4,
               "inline base");
        CHECKF(jt_dbcast_hdr_decode(msg, 8, &d) == JT_DBCAST_HDR_OK && d.total_bytes == 0, "inline, no payload");
        MUTATE(7, 3, JT_DBCAST_HDR_ELENGTH, "inline with more hops than bytes");
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
        CHECKF(jt_dbcast_hdr_encode(&hc, h4, buf, jt_dbcast_hdr_size(&hc, h4) - 1) == JT_DBCAST_HDR_ECAP, "capacity not checked");
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
