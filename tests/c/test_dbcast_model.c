/* Serial unit test of the jt_dbcast cost model: the fit to a probe, the model's checks, the
 * segment size, and the automatic choice (which now includes the two-tree). */
#include "comm/dbcast_route.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

/* A platform like SimGrid's SMPI on 10 Gbit/s, 1 us links: latency and bandwidth factors
 * by message size (a hop is two links), full duplex. */
static const size_t P_BYTES[JT_DBCAST_PROBE_SIZES] = {8,    128,  512,   1024, 2048,
                                                     4096, 8192, 16384, 65536};
static const double P_LAT[JT_DBCAST_PROBE_SIZES] = {4.8e-6, 4.8e-6, 3.9e-6,  3.9e-6, 3.2e-6,
                                                    3.8e-6, 4.4e-6, 7.0e-6, 23.3e-6};
static const double P_BW[JT_DBCAST_PROBE_SIZES] = {1.36e9, 1.02e9, 0.42e9, 0.43e9, 0.76e9,
                                                   0.97e9, 1.36e9, 0.87e9, 1.18e9};
static const double O = 2e-8;

static jt_dbcast_probe synth(double duplex)
{
    jt_dbcast_probe p;
    for (int k = 0; k < JT_DBCAST_PROBE_SIZES; k++) {
        p.bytes[k] = P_BYTES[k];
        p.gap[k] = O + (k ? (double)P_BYTES[k] / P_BW[k] : 0);
        p.one_way[k] = P_LAT[k] + O + (double)P_BYTES[k] / P_BW[k];
    }
    int l = JT_DBCAST_PROBE_SIZES - 1;
    p.gap_both = O + (1 + duplex) * (double)P_BYTES[l] / P_BW[l];
    return p;
}

static int close_to(double a, double b) { return fabs(a - b) <= 1e-3 * fabs(b) + 1e-12; }

int main(void)
{
    jt_dbcast_model m;
    jt_dbcast_model_default(&m);
    const char *why = NULL;
    CHECKF(jt_dbcast_model_check(&m, &why) == 0, "default model refused: %s", why);

    /* 1. the fit recovers the platform's pieces, overhead and duplex */
    jt_dbcast_probe p = synth(0.0);
    jt_dbcast_model_fit(&p, &m);
    CHECKF(m.fitted == 1 && m.npieces == JT_DBCAST_PROBE_SIZES, "fit: %d pieces", m.npieces);
    CHECKF(close_to(m.overhead, O), "fit: overhead %g", m.overhead);
    for (int k = 0; k < JT_DBCAST_PROBE_SIZES; k++) { /* the tiny size: the best rate */
        CHECKF(close_to(m.piece_bandwidth[k], P_BW[k]), "fit: bandwidth of piece %d %g", k,
               m.piece_bandwidth[k]);
        CHECKF(close_to(m.piece_latency[k], P_LAT[k]), "fit: latency of piece %d %g", k,
               m.piece_latency[k]);
    }
    const int L = JT_DBCAST_PROBE_SIZES - 1;
    CHECKF(m.piece_bytes[0] == 0 && m.piece_bytes[L] == 65536, "fit: piece bounds");
    CHECKF(m.duplex == 0 && close_to(m.bandwidth, P_BW[L]) && close_to(m.latency, P_LAT[L]),
           "fit: duplex %g, last piece", m.duplex);
    CHECKF(jt_dbcast_model_check(&m, &why) == 0, "fitted model refused: %s", why);
    /* lookups: a size takes the piece of the nearest probe size in ratio (the tiny one:
     * below the next) */
    CHECKF(jt_dbcast_model_bandwidth(&m, 12000) == m.piece_bandwidth[7] &&
           jt_dbcast_model_bandwidth(&m, 11000) == m.piece_bandwidth[6] &&
           jt_dbcast_model_bandwidth(&m, 8192) == m.piece_bandwidth[6] &&
           jt_dbcast_model_bandwidth(&m, 300) == m.piece_bandwidth[2] &&
           jt_dbcast_model_bandwidth(&m, 200) == m.piece_bandwidth[1] &&
           jt_dbcast_model_bandwidth(&m, 1 << 20) == m.piece_bandwidth[L] &&
           jt_dbcast_model_latency(&m, 100) == m.piece_latency[0], "piece lookup");
    jt_dbcast_probe ps = synth(1.0);
    jt_dbcast_model shared = m;
    jt_dbcast_model_fit(&ps, &shared);
    CHECKF(close_to(shared.duplex, 1.0), "fit: shared link duplex %g", shared.duplex);
    ps.gap_both = 10.0; /* absurd: clamped */
    jt_dbcast_model_fit(&ps, &shared);
    CHECKF(shared.duplex == 1.0, "duplex clamped");

    /* 2. checks */
    jt_dbcast_model bad = m;
    bad.duplex = 1.5;
    CHECKF(jt_dbcast_model_check(&bad, &why) == -1 && why, "duplex 1.5 accepted");
    bad = m, bad.piece_bytes[2] = bad.piece_bytes[1];
    CHECKF(jt_dbcast_model_check(&bad, NULL) == -1, "pieces not increasing accepted");
    bad = m, bad.piece_bandwidth[3] = 0;
    CHECKF(jt_dbcast_model_check(&bad, NULL) == -1, "zero bandwidth piece accepted");
    bad = m, bad.npieces = JT_DBCAST_MODEL_PIECES + 1;
    CHECKF(jt_dbcast_model_check(&bad, NULL) == -1, "too many pieces accepted");

    /* 3. segments: a probed size, or a power of two above the largest probed size */
    const size_t sizes[] = {0, 1, 64, 8192, 65536, 100003, 1 << 20, (size_t)16 << 20,
                            (size_t)256 << 20};
    const int ns[] = {1, 2, 3, 7, 15, 16, 63, 100, 255, 1000, 4095};
    const jt_dbcast_routing all[] = {JT_ROUTE_FLAT, JT_ROUTE_BINOMIAL, JT_ROUTE_CHAIN,
                                     JT_ROUTE_PIPELINE_CHAIN, JT_ROUTE_PIPELINE_TREE,
                                     JT_ROUTE_TWO_TREE, JT_ROUTE_SCATTER_ALLGATHER};
    const jt_dbcast_model *models[] = {&m, &shared};
    for (int mi = 0; mi < 2; mi++) {
        const jt_dbcast_model *md = models[mi];
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            for (size_t j = 0; j < sizeof ns / sizeof ns[0]; j++) {
                size_t s = 0;
                jt_dbcast_routing c = jt_dbcast_route_choose(sizes[i], ns[j], 0, md, &s);
                CHECKF(c != JT_ROUTE_AUTO && c != JT_ROUTE_CHAIN, "choice %s", jt_dbcast_route_name(c));
                double best = jt_dbcast_route_cost(c, sizes[i], ns[j], s, md);
                CHECKF(isfinite(best) && best >= 0, "cost %g", best);
                for (size_t a = 0; a < sizeof all / sizeof all[0]; a++) {
                    size_t s2 = jt_dbcast_route_segment(all[a], sizes[i], ns[j], 0, md);
                    double other = jt_dbcast_route_cost(all[a], sizes[i], ns[j], s2, md);
                    CHECKF(best <= other * (1 + 1e-9), "%zu B to %d: chose %s (%g s) but %s "
                           "costs %g s", sizes[i], ns[j], jt_dbcast_route_name(c), best,
                           jt_dbcast_route_name(all[a]), other);
                    if (!jt_dbcast_route_is_pipelined(all[a]))
                        continue;
                    int probed = 0; /* a probed size, or a power of two above them */
                    for (int k = 0; k < md->npieces; k++)
                        probed |= s2 == md->piece_bytes[k];
                    probed |= s2 > 65536 && (s2 & (s2 - 1)) == 0;
                    CHECKF(probed && s2 >= JT_DBCAST_MIN_AUTO_SEGMENT &&
                           s2 <= JT_DBCAST_MAX_AUTO_SEGMENT, "%s segment %zu for %zu B",
                           jt_dbcast_route_name(all[a]), s2, sizes[i]);
                }
            }
        }
    }
    /* 4. what the model says on this platform: the two-tree for large messages to many (it
     * sends every byte once per node where a binary tree sends it twice), flat or a k-nomial
     * tree for small ones */
    CHECKF(jt_dbcast_route_choose((size_t)1 << 20, 255, 0, &m, NULL) == JT_ROUTE_TWO_TREE,
           "1 MiB to 255: two-tree");
    CHECKF(jt_dbcast_route_choose((size_t)16 << 20, 63, 0, &m, NULL) == JT_ROUTE_TWO_TREE,
           "16 MiB to 63: two-tree");
    jt_dbcast_routing small = jt_dbcast_route_choose(8, 255, 0, &m, NULL);
    CHECKF(jt_dbcast_route_radix(small) > 0 || small == JT_ROUTE_FLAT, "8 B to 255: %s",
           jt_dbcast_route_name(small));
    /* 64 KiB to 255: the pipeline fill (8 levels) dominates, smaller segments than the best
     * rate's 8 KiB (measured under SMPI: 2 KiB 224 us, 4 KiB 241 us, 8 KiB 271 us) */
    size_t s64 = 0;
    CHECKF(jt_dbcast_route_choose(65536, 255, 0, &m, &s64) == JT_ROUTE_TWO_TREE && s64 < 8192,
           "64 KiB to 255: %s, %zu B segments", jt_dbcast_route_name(jt_dbcast_route_choose(65536, 255, 0, &m, NULL)), s64);
    CHECKF(jt_dbcast_route_cost(JT_ROUTE_TWO_TREE, 65536, 255, 2048, &m) <
               jt_dbcast_route_cost(JT_ROUTE_TWO_TREE, 65536, 255, 8192, &m),
           "64 KiB to 255: 2 KiB segments not cheaper than 8 KiB");
    CHECKF(jt_dbcast_route_cost(JT_ROUTE_TWO_TREE, 1 << 20, 255, 8192, &m) <
           0.75 * jt_dbcast_route_cost(JT_ROUTE_PIPELINE_TREE, 1 << 20, 255, 8192, &m),
           "two-tree not well below the binary tree at full duplex");
    /* the bound: no routing under the model beats m / bandwidth */
    for (size_t a = 0; a < sizeof all / sizeof all[0]; a++) {
        size_t s2 = jt_dbcast_route_segment(all[a], 1 << 20, 255, 0, &m);
        double c = jt_dbcast_route_cost(all[a], 1 << 20, 255, s2, &m);
        CHECKF(c >= (double)(1 << 20) / 1.36e9, "%s under the bound: %g s",
               jt_dbcast_route_name(all[a]), c);
    }

    /* 5. scatter-allgather: 2 log2 N - 1 messages one after the other on the root's path, the
     * scatter's halving then the allgather's doubling; at least their latencies and wire times
     * (the lone last scatter message carries [0, 2 m / N)), no more than those with a header of
     * 12 + 2 B per node, the duplex and F; none where a message would pass 1 MiB; at 16 KiB to
     * 16 nodes cheaper than the binomial and k-nomial trees (whole messages per level) */
    for (int lg = 1; lg <= 10; lg++) {
        int N = 1 << lg;
        const size_t ms[] = {16384, 65536}; /* sizes whose headers stay in their pieces */
        for (size_t i = 0; i < 2; i++) {
            double lo = 0, hi = 0, c = (double)ms[i] / N;
            for (int k = 1; k <= lg; k++) { /* scatter: N/2^k chunks, the last 2 */
                double b = k < lg ? c * (N >> k) : 2 * c;
                lo += jt_dbcast_model_latency(&m, (size_t)b) + b / jt_dbcast_model_bandwidth(&m, (size_t)b);
                hi += jt_dbcast_model_latency(&m, (size_t)b + 12 + 2 * N) + m.overhead +
                      (b + 12 + 2 * N) / jt_dbcast_model_bandwidth(&m, (size_t)b + 12 + 2 * N);
            }
            for (int k = 1; k < lg; k++) { /* allgather: 2^k chunks */
                double b = c * (1 << k);
                lo += jt_dbcast_model_latency(&m, (size_t)b) + b / jt_dbcast_model_bandwidth(&m, (size_t)b);
                hi += jt_dbcast_model_latency(&m, (size_t)b + 12) + m.overhead + m.forward_delay +
                      (1 + m.duplex) * (b + 12) / jt_dbcast_model_bandwidth(&m, (size_t)b + 12);
            }
            double got = jt_dbcast_route_cost(JT_ROUTE_SCATTER_ALLGATHER, ms[i], N - 1, 0, &m);
            CHECKF(got >= lo * (1 - 1e-9) && got <= hi * (1 + 1e-9), "scatter-allgather %zu B to "
                   "%d: %g s, outside [%g, %g]", ms[i], N - 1, got, lo, hi);
            CHECKF(jt_dbcast_route_depth(JT_ROUTE_SCATTER_ALLGATHER, N - 1) == 2 * lg - 1,
                   "scatter-allgather depth to %d", N - 1);
        }
    }
    CHECKF(isinf(jt_dbcast_route_cost(JT_ROUTE_SCATTER_ALLGATHER, (size_t)4 << 20, 15, 0, &m)) &&
           isfinite(jt_dbcast_route_cost(JT_ROUTE_SCATTER_ALLGATHER, (size_t)2 << 20, 15, 0, &m)),
           "scatter-allgather: no message over 1 MiB");
    CHECKF(jt_dbcast_route_cost(JT_ROUTE_SCATTER_ALLGATHER, 16384, 15, 0, &m) <
               jt_dbcast_route_cost(JT_ROUTE_BINOMIAL, 16384, 15, 0, &m) &&
           jt_dbcast_route_cost(JT_ROUTE_SCATTER_ALLGATHER, 16384, 15, 0, &m) <
               jt_dbcast_route_cost(JT_ROUTE_KNOMIAL4, 16384, 15, 0, &m),
           "scatter-allgather at 16 KiB to 15 not below the trees of whole messages");
    /* on this platform the model takes it at 16 KiB to 15, 63 and 255, and it puts the
     * two-tree where SMPI did (16 KiB to 15 / 63 / 255, 2 and 8 KiB segments; 64 KiB to 255,
     * 2 / 4 / 8 KiB; 1 MiB, 8 KiB): within 0.88-1.08 of SMPI's time, thanks to the sends in
     * flight that share a node's link (with the fill of one other send, 16 KiB in 2 KiB
     * segments was modelled 0.72 of SMPI's time, and the two-tree taken there) */
    const int sag_n[] = {15, 63, 255};
    for (int i = 0; i < 3; i++)
        CHECKF(jt_dbcast_route_choose(16384, sag_n[i], 0, &m, NULL) == JT_ROUTE_SCATTER_ALLGATHER,
               "16 KiB to %d: %s", sag_n[i], jt_dbcast_route_name(jt_dbcast_route_choose(16384, sag_n[i], 0, &m, NULL)));
    const struct { size_t bytes; int n; size_t seg; double smpi; } tt[] = {
        {16384, 15, 2048, 75.9e-6},  {16384, 63, 2048, 104.7e-6},  {16384, 255, 2048, 136.2e-6},
        {16384, 15, 8192, 70.3e-6},  {16384, 63, 8192, 103.4e-6},  {16384, 255, 8192, 139.1e-6},
        {65536, 255, 2048, 224e-6},  {65536, 255, 4096, 241e-6},   {65536, 255, 8192, 271e-6},
        {1 << 20, 15, 8192, 1042e-6}, {1 << 20, 255, 8192, 1161e-6}};
    for (size_t i = 0; i < sizeof tt / sizeof tt[0]; i++) {
        double r = jt_dbcast_route_cost(JT_ROUTE_TWO_TREE, tt[i].bytes, tt[i].n, tt[i].seg, &m) / tt[i].smpi;
        CHECKF(r > 0.88 && r < 1.08, "two-tree %zu B to %d in %zu B segments: model / SMPI %.3f",
               tt[i].bytes, tt[i].n, tt[i].seg, r);
    }

    if (jt_test_failures) {
        fprintf(stderr, "test_dbcast_model: %d failure(s)\n", jt_test_failures);
        return 1;
    }
    printf("test_dbcast_model: ok\n");
    return 0;
}
