/*
 * jt_dbcast cost model: the time of a broadcast under each routing, the segment size of the
 * pipelines, the automatic choice, and the fit of the model to the probe that jt_dbcast_init
 * runs (dbcast_probe.c). Pure; see dbcast_route.h and docs/dbcast.md ("Cost model").
 */
#include "comm/dbcast_header.h"
#include "comm/dbcast_route.h"

#include <math.h>
#include <stddef.h>

void jt_dbcast_model_default(jt_dbcast_model *m)
{
    /* Used where the probe is off (cfg.probe = 0). One piece, fitted once on jostle's
     * simulated cluster (SimGrid SMPI, 10 Gbps and 1 us links, shared by both directions):
     * SMPI's latency factors make a hop of large messages ~40 us. The probe at init
     * replaces this with the platform's own numbers. */
    *m = (jt_dbcast_model){0};
    m->latency = 40e-6;
    m->overhead = 3e-6;
    m->bandwidth = 0.93e9;
    m->forward_delay = 1.0e-6;
    m->duplex = 1.0;
    m->inline_bytes = JT_DBCAST_DEFAULT_INLINE;
}

/* The piece of the probed size nearest bytes in ratio (where a regime changes between two
 * probed sizes is not known: halfway, geometrically, is the least wrong guess; a header
 * that takes a payload a little over a probed size stays in its piece). Piece 0 (the tiny
 * size, recorded as 0 B) holds up to piece 1's size. */
static int piece_of(const jt_dbcast_model *m, size_t bytes)
{
    int k = 0;
    while (k + 1 < m->npieces && m->piece_bytes[k + 1] <= bytes)
        k++;
    if (k >= 1 && k + 1 < m->npieces &&
        (double)bytes * (double)bytes > (double)m->piece_bytes[k] * (double)m->piece_bytes[k + 1])
        k++;
    return k;
}

double jt_dbcast_model_latency(const jt_dbcast_model *m, size_t bytes)
{
    return m->npieces > 0 ? m->piece_latency[piece_of(m, bytes)] : m->latency;
}

double jt_dbcast_model_bandwidth(const jt_dbcast_model *m, size_t bytes)
{
    return m->npieces > 0 ? m->piece_bandwidth[piece_of(m, bytes)] : m->bandwidth;
}

int jt_dbcast_model_check(const jt_dbcast_model *m, const char **why)
{
    const char *w = NULL;
    if (!(m->latency > 0 && m->latency < 1 && m->overhead > 0 && m->overhead < 1))
        w = "latency and overhead must be > 0 and < 1 s";
    else if (!(m->bandwidth > 0 && m->bandwidth < 1e15))
        w = "bandwidth must be > 0 and < 1e15 B/s";
    else if (!(m->forward_delay >= 0 && m->forward_delay < 1))
        w = "forward delay must be >= 0 and < 1 s";
    else if (!(m->duplex >= 0 && m->duplex <= 1))
        w = "duplex must be in [0, 1]";
    else if (m->npieces < 0 || m->npieces > JT_DBCAST_MODEL_PIECES)
        w = "npieces must be in [0, JT_DBCAST_MODEL_PIECES]";
    for (int k = 0; !w && k < m->npieces; k++) {
        if (k == 0 ? m->piece_bytes[0] != 0 : m->piece_bytes[k] <= m->piece_bytes[k - 1])
            w = "piece_bytes must start at 0 and increase";
        else if (!(m->piece_latency[k] > 0 && m->piece_latency[k] < 1 &&
                   m->piece_bandwidth[k] > 0 && m->piece_bandwidth[k] < 1e15))
            w = "a piece's latency must be in (0, 1) s and its bandwidth in (0, 1e15) B/s";
    }
    if (why)
        *why = w;
    return w ? -1 : 0;
}

void jt_dbcast_model_fit(const jt_dbcast_probe *p, jt_dbcast_model *m)
{
    enum { K = JT_DBCAST_PROBE_SIZES };
    double o = p->gap[0] > 1e-9 ? p->gap[0] : 1e-9;
    double bw[K], lat[K], best = 0;
    for (int k = K - 1; k >= 1; k--) {
        double x = p->gap[k] - o; /* wire time of one message in a stream */
        bw[k] = x > 0 ? (double)p->bytes[k] / x : 0;
        if (!(bw[k] > 0 && bw[k] < 1e15)) /* not measurable: the next size's */
            bw[k] = k + 1 < K ? bw[k + 1] : 1e9;
        best = bw[k] > best ? bw[k] : best;
    }
    /* The tiny size's wire time is its overhead: not separable. The link's best rate, not
     * the next size's (SMPI gives 257-731 B messages 0.34 of the link, smaller ones 0.81:
     * borrowed, that rate made flat look 2.4 times too slow at 8 B). */
    bw[0] = best > 0 ? best : 1e9;
    for (int k = 0; k < K; k++) {
        lat[k] = p->one_way[k] - o - (double)p->bytes[k] / bw[k];
        if (!(lat[k] > 1e-9))
            lat[k] = 1e-9;
        if (lat[k] > 0.5)
            lat[k] = 0.5;
    }
    m->overhead = o < 0.5 ? o : 0.5;
    m->npieces = K;
    for (int k = 0; k < K; k++) {
        m->piece_bytes[k] = k == 0 ? 0 : p->bytes[k];
        m->piece_latency[k] = lat[k];
        m->piece_bandwidth[k] = bw[k];
    }
    m->latency = lat[K - 1];
    m->bandwidth = bw[K - 1];
    double x = p->gap[K - 1] - o, xb = p->gap_both - o;
    double d = x > 0 ? xb / x - 1.0 : 0.0;
    m->duplex = !(d > 0) ? 0.0 : d > 1 ? 1.0 : d;
    m->fitted = 1;
}

/* ---- costs ---- */

static double xfer(const jt_dbcast_model *m, size_t b) /* wire time of b bytes */
{
    return (double)b / jt_dbcast_model_bandwidth(m, b);
}

static double hop(const jt_dbcast_model *m, size_t b) /* one message over one hop */
{
    return jt_dbcast_model_latency(m, b) + m->overhead + xfer(m, b);
}

/* A pipeline of S segments of s bytes: the busiest node's link takes `per` per segment
 * (or per pair, two-tree) in steady state, for `stages` stages; `depth` hops fill it, each
 * costing a hop and `extra` more injections: the other sends in flight that share the link
 * with a segment (fill(), below). A child gets at most 2 segments per such a hop (2 sends in
 * flight per child). */
static double pipeline(const jt_dbcast_model *m, double stages, double per, int depth,
                       size_t s, double extra)
{
    double h = hop(m, s) + extra * (m->overhead + xfer(m, s)), window = h / 2.0;
    if (per < window)
        per = window;
    return (stages - 1.0) * per + depth * h + (depth - 1) * m->forward_delay;
}

/* The bytes of one message carrying `bytes` to a receiver with `below` hops below it: an
 * inline payload travels with its header, about 12 + 2 x below bytes (jt_dbcast_hdr_est:
 * version 4's varint deltas; with version 2's 80 + 8 B a hop, a binomial root's first
 * header at 256 nodes was 1096 B, more than a 256 B payload, and changed its piece). */
static size_t wire(const jt_dbcast_model *m, size_t bytes, long below)
{
    return bytes <= m->inline_bytes ? bytes + jt_dbcast_hdr_est((uint32_t)below) : bytes;
}

/* Binomial: ceil(log2(n+1)) rounds of whole messages. One path the last recipient's data
 * takes is the root's own sends, one after the other (the window); every other path also
 * has that many rounds, with headers of about the same sizes. */
static double binomial(const jt_dbcast_model *m, size_t bytes, int n)
{
    jt_dbcast_route_child kids[64]; /* ceil(log2(n+1)) <= 32 */
    int nk = jt_dbcast_route_children(JT_ROUTE_BINOMIAL, n, kids);
    double t = 0;
    for (int c = 0; c < nk; c++)
        t += hop(m, wire(m, bytes, kids[c].sub_len));
    return t;
}

/* K-nomial: ceil(log_k(n+1)) rounds of up to k-1 whole messages posted together, which
 * share the caller's link as flat's do: a round costs one latency plus each message's
 * injection. The root's rounds are one path to the last recipient (a round-1 child's
 * slice has as many rounds left as the root after round 1), as for the binomial tree. */
static double knomial(const jt_dbcast_model *m, int k, size_t bytes, int n)
{
    double t = 0;
    for (int N = n + 1; N > 1;) { /* the rounds of route_knomial.c */
        int b = (N + k - 1) / k;
        t += jt_dbcast_model_latency(m, wire(m, bytes, b - 1));
        for (int j = 1; j < k && j * b < N; j++) {
            int end = (j + 1) * b < N ? (j + 1) * b : N;
            t += m->overhead + xfer(m, wire(m, bytes, end - j * b - 1));
        }
        N = b;
    }
    return t;
}

/* Scatter-allgather: the root's messages one after the other (its scatter, halving, then
 * its allgather sends, doubling: 2 log2 N - 1 of them for N = n + 1 a power of two) are one
 * path to the last recipient, whose partners at each level send it as much as it sends them
 * at the same time (a link with x in and x out: (1 + duplex) x). Each message is inline
 * (its header: the receiver's view in a scatter message, none in the allgather's); a
 * forwarder reacts (F) to each allgather step. */
static double sag(const jt_dbcast_model *m, size_t bytes, int n)
{
    if (jt_route_sag_largest(bytes, n + 1) > JT_DBCAST_SAG_MAX_MSG)
        return INFINITY;
    jt_route_sag_send s[JT_ROUTE_SAG_MAX_SENDS];
    jt_route_span sp[JT_ROUTE_SAG_MAX_SPANS];
    int k = jt_route_sag_sends(n + 1, 0, s);
    double t = 0;
    for (int i = 0; i < k; i++) {
        uint64_t off, len, hops = 0;
        jt_route_sag_bytes(bytes, n + 1, s[i].c0, s[i].c1, &off, &len);
        if (!len && !s[i].plan)
            continue;
        int ns = s[i].plan ? jt_route_sag_view(n + 1, s[i].dest, sp) : 0;
        for (int j = 0; j < ns; j++)
            hops += (uint64_t)sp[j].len;
        size_t b = (size_t)len + jt_dbcast_hdr_est((uint32_t)hops);
        t += hop(m, b);
        if (!s[i].plan)
            t += m->duplex * xfer(m, b) + m->forward_delay;
    }
    return t;
}

/* The sends of a node that share its link with a segment: a window of 2 per child (of the
 * segments that node sends each child), so a segment arrives after its own injection and
 * those of the others in flight: children x min(2, segments) - 1 more (a binary tree's node
 * with 2 or more segments per tree: 3; with one: 1, its second child's; a chain's: 1).
 * SMPI, two-tree at 16 and 64 KiB to 15-255 and 256 KiB-1 MiB, 2-8 KiB segments: model /
 * SMPI 0.91-1.02 (before, with 1 for the trees, 0 for the chain and h/2: 1.0 for one
 * segment a tree, 1.2-1.5 for more); chain, 1 MiB to 1 in 8 KiB: 1052 / 1057 us (was 778). */
static double fill(int children, double segments)
{
    return children * (segments < 2.0 ? segments : 2.0) - 1.0;
}

double jt_dbcast_route_cost(jt_dbcast_routing r, size_t bytes, int n, size_t seg,
                            const jt_dbcast_model *m)
{
    if (n <= 0)
        return 0.0;
    double o = m->overhead, F = m->forward_delay, dx = m->duplex;
    int d = jt_dbcast_route_depth(r, n);
    int inl = bytes <= m->inline_bytes;
    switch (r) {
    case JT_ROUTE_FLAT: { /* the root injects n copies, all posted at once */
        size_t b = wire(m, bytes, 0);
        return jt_dbcast_model_latency(m, b) + n * (o + xfer(m, b));
    }
    case JT_ROUTE_BINOMIAL:
        return binomial(m, bytes, n) + (d - 1) * F;
    case JT_ROUTE_KNOMIAL4:
    case JT_ROUTE_KNOMIAL8:
    case JT_ROUTE_KNOMIAL16:
        return knomial(m, jt_dbcast_route_radix(r), bytes, n) + (d - 1) * F;
    case JT_ROUTE_CHAIN:
        return n * hop(m, wire(m, bytes, n / 2)) + (n - 1) * F;
    case JT_ROUTE_SCATTER_ALLGATHER:
        return sag(m, bytes, n);
    case JT_ROUTE_PIPELINE_CHAIN:
    case JT_ROUTE_PIPELINE_TREE:
    case JT_ROUTE_TWO_TREE: {
        if (seg == 0)
            seg = 1;
        double S = bytes ? ceil((double)bytes / (double)seg) : 1.0;
        size_t s = bytes < seg ? (bytes ? bytes : 1) : seg;
        if (inl) { /* one message per hop, whole (store and forward), header included */
            S = 1.0;
            s = wire(m, bytes, r == JT_ROUTE_PIPELINE_CHAIN ? n / 2 : n / d);
        }
        double x = xfer(m, s);
        if (r == JT_ROUTE_PIPELINE_CHAIN) /* a forwarder: s in, s out */
            return pipeline(m, S, o + (n > 1 ? 1.0 + dx : 1.0) * x, d, s, fill(1, S));
        if (r == JT_ROUTE_PIPELINE_TREE) /* an interior node: s in, 2s out */
            return pipeline(m, S, 2 * o + (n > 2 ? 2.0 + dx : 2.0) * x, d, s, fill(2, S));
        /* two-tree: per pair of segments (one per tree), an interior node takes 2s in (one
         * from each parent) and sends 2s (its tree's, to two children) */
        return pipeline(m, ceil(S / 2.0), 2 * o + (n > 1 ? 2.0 + 2.0 * dx : 2.0) * x, d, s,
                        fill(2, ceil(S / 2.0)));
    }
    default:
        return INFINITY;
    }
}

/* ---- segment size ---- */

static size_t round_seg(size_t s)
{
    if (s > JT_DBCAST_MAX_SEGMENT)
        s = JT_DBCAST_MAX_SEGMENT;
    return s ? s : 1;
}

size_t jt_dbcast_route_segment(jt_dbcast_routing r, size_t bytes, int n, size_t seg_cfg,
                               const jt_dbcast_model *m)
{
    if (seg_cfg)
        return seg_cfg > JT_DBCAST_MAX_SEGMENT ? JT_DBCAST_MAX_SEGMENT : seg_cfg;
    if (!jt_dbcast_route_is_pipelined(r))
        return round_seg(bytes);
    /* Candidates: the sizes the probe measured (their cost is known, not interpolated:
     * SMPI's factors and eager/rendezvous steps make cost jump between sizes), then powers
     * of two above the largest one, where the last piece holds. */
    size_t cand[64];
    int nc = 0;
    size_t top = m->npieces > 0 ? m->piece_bytes[m->npieces - 1] : 0;
    for (int k = 0; k < m->npieces; k++)
        if (m->piece_bytes[k] >= JT_DBCAST_MIN_AUTO_SEGMENT)
            cand[nc++] = m->piece_bytes[k];
    for (size_t s = JT_DBCAST_MIN_AUTO_SEGMENT; s <= JT_DBCAST_MAX_AUTO_SEGMENT && nc < 64; s *= 2)
        if (s > top)
            cand[nc++] = s;
    size_t best = JT_DBCAST_MIN_AUTO_SEGMENT;
    double best_cost = INFINITY;
    for (int i = 0; i < nc; i++) {
        size_t s = cand[i];
        double c = jt_dbcast_route_cost(r, bytes, n, s, m);
        if (c < best_cost * (1.0 - 1e-9)) {
            best_cost = c;
            best = s;
        }
        if (s >= bytes)
            break; /* one segment: larger ones cost the same */
    }
    return best;
}

jt_dbcast_routing jt_dbcast_route_choose(size_t bytes, int n, size_t seg_cfg,
                                         const jt_dbcast_model *m, size_t *seg_out)
{
    jt_dbcast_model def;
    if (!m) {
        jt_dbcast_model_default(&def);
        m = &def;
    }
    static const jt_dbcast_routing cand[] = {JT_ROUTE_FLAT, JT_ROUTE_BINOMIAL,
                                             JT_ROUTE_PIPELINE_CHAIN, JT_ROUTE_PIPELINE_TREE,
                                             JT_ROUTE_TWO_TREE, JT_ROUTE_KNOMIAL4,
                                             JT_ROUTE_KNOMIAL8, JT_ROUTE_KNOMIAL16,
                                             JT_ROUTE_SCATTER_ALLGATHER};
    jt_dbcast_routing best = JT_ROUTE_FLAT;
    size_t best_seg = jt_dbcast_route_segment(JT_ROUTE_FLAT, bytes, n, 0, m);
    if (n > 0) { /* one recipient too: segments may beat one message (SMPI's factors) */
        double best_cost = INFINITY;
        for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++) {
            int piped = jt_dbcast_route_is_pipelined(cand[i]);
            size_t seg = jt_dbcast_route_segment(cand[i], bytes, n, piped ? seg_cfg : 0, m);
            double c = jt_dbcast_route_cost(cand[i], bytes, n, seg, m);
            if (c < best_cost * (1.0 - 1e-9)) {
                best_cost = c;
                best = cand[i];
                best_seg = seg;
            }
        }
    }
    if (seg_out)
        *seg_out = best_seg;
    return best;
}
