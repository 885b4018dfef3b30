/* shift: every directed link between the ranks of a job, for `jostle scan` (one rank per node).
 *
 * The pattern is mpiGraph's (Moody, LLNL): N-1 rounds; in round k every rank r sends to r+k and
 * receives from r-k at once (mod N), so each round also loads the switch.  A sample of link
 * (r-k -> r) is the time from a barrier to the completion of r's receive, taken on r: the
 * receive side, because a send may complete when its data is buffered, long before it arrives.
 * Below SHIFT_PINGPONG bytes the ranks leave a barrier further apart than a message takes (and
 * a ping-pong of every rank at once waits on the answering rank's own exit from it), so a small
 * size is measured pair by pair as in --pattern pairwise: the latency of each pair, alone.
 * --pattern pairwise measures one pair at a time instead (no contention between pairs): a
 * ping-pong of the size between r and r+k, a sample RTT/2 taken on r.
 *
 * A point is one link at one size (params: round, src, dst and their hosts).  The harness
 * reports rank 0's series, so the rank that times a link sends its samples to rank 0.  In the
 * shift pattern every link of a round is measured by the same rounds: the rounds of (size, k)
 * are kept per rank and each of the round's N points takes the next of them, measuring more
 * rounds only when a point needs more samples than were taken (so the rounds are run about
 * once, not N times). */
#include "bench/bench.h"

#include "core/errors.h"
#include "core/timer.h"
#include "topo/bind.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SHIFT, PAIRWISE };
static const char *const pattern_names[] = {"shift", "pairwise", NULL};

static const jt_opt_spec options[] = {
    {"pattern", "P", "shift", "shift (mpiGraph's: in round k every rank sends to rank+k at once) "
                              "or pairwise (one pair at a time, a ping-pong; no contention)",
     pattern_names},
    {NULL, NULL, NULL, NULL, NULL},
};

#define HOSTLEN 64
#define SHIFT_PINGPONG 65536

typedef struct state {
    uint64_t *sizes;
    size_t nsizes;
    int pattern, n, me;
    char *hosts;        /* n x HOSTLEN: every rank's host, for the params */
    jt_buffer sbuf, rbuf;
    double *cache;      /* shift: this rank's samples of the current (size, round) */
    size_t have, cap;   /* samples taken of it */
    size_t *pos;        /* per reporting rank: how many of them it has reported */
    long key;           /* the (size, round) the cache holds, -1 none */
    double *tmp;
    size_t tmpcap;
} state;

/* arg[0] = bytes of one message, one way */

static const jt_metric metrics[] = {
    {"latency", "us", "Latency(us)", 0, jt_metric_us},
    {"bandwidth", "MB/s", "Bandwidth(MB/s)", 0, jt_metric_mbps},
};

static void read_options(const jt_opts *o, const jt_topo *tp, void *st)
{
    state *s = st;
    (void)tp;
    s->nsizes = jt_bench_sizes(o, &jt_bench_shift, &s->sizes);
    s->pattern = jt_opt_choice(o, "pattern");
}

static void setup(jt_ctx *ctx, void *st)
{
    state *s = st;
    s->n = ctx->size;
    s->me = ctx->rank;
    s->key = -1;
    uint64_t biggest = 0;
    for (size_t i = 0; i < s->nsizes; i++)
        biggest = s->sizes[i] > biggest ? s->sizes[i] : biggest;
    char msg[512];
    snprintf(msg, sizeof msg, "--sizes: the largest size needs %llu MiB per rank, more than "
             "host %s has available", (unsigned long long)(2 * biggest >> 20), ctx->host);
    jt_check_all(ctx, 2 * biggest > jt_bench_memory_per_rank(ctx) * 8 / 10 ? msg : NULL);
    if (ctx->local_size > 1 && ctx->rank == 0)
        jt_warn(ctx, "%d ranks share a host: their links are shared memory, not the network "
                "(shift is meant for one rank per node)", ctx->local_size);
    jt_binding b;
    jt_bind_thread(&ctx->topo, ctx->comm_core, &b);
    size_t bytes = biggest > 0 ? (size_t)biggest : 1;
    jt_buffer_alloc(&ctx->topo, &s->sbuf, bytes, ctx->comm_mem);
    jt_buffer_alloc(&ctx->topo, &s->rbuf, bytes, ctx->comm_mem);
    jt_ctx_bound_comm(ctx, &b, &s->sbuf);
    char mine[HOSTLEN];
    snprintf(mine, sizeof mine, "%.*s", HOSTLEN - 1, ctx->host);
    s->hosts = calloc((size_t)s->n, HOSTLEN);
    MPI_Allgather(mine, HOSTLEN, MPI_CHAR, s->hosts, HOSTLEN, MPI_CHAR, ctx->comm);
    s->pos = calloc((size_t)s->n, sizeof *s->pos);
}

static size_t npoints(void *st)
{
    state *s = st;
    return s->nsizes * (size_t)(s->n - 1) * (size_t)s->n;
}

/* Point i: size index, round k (1..n-1), and the rank r that times the link. */
static void decode(const state *s, size_t i, size_t *si, int *k, int *r)
{
    size_t per_size = (size_t)(s->n - 1) * (size_t)s->n;
    *si = i / per_size;
    *k = 1 + (int)(i % per_size / (size_t)s->n);
    *r = (int)(i % (size_t)s->n);
}

/* Whether size b is measured by shift rounds (else pair by pair). */
static int by_rounds(const state *s, uint64_t b) { return s->pattern == SHIFT && b >= SHIFT_PINGPONG; }

/* The link a point measures: a round's receiver r from r-k; a pair's r to r+k. */
static void link_of(const state *s, uint64_t b, int k, int r, int *src, int *dst)
{
    *src = by_rounds(s, b) ? (r - k + s->n) % s->n : r;
    *dst = by_rounds(s, b) ? r : (r + k) % s->n;
}

static void point(void *st, size_t i, jt_point *p)
{
    state *s = st;
    size_t si;
    int k, r, src, dst;
    decode(s, i, &si, &k, &r);
    uint64_t b = s->sizes[si];
    link_of(s, b, k, r, &src, &dst);
    char label[64];
    snprintf(label, sizeof label, "%llu %d>%d", (unsigned long long)b, src, dst);
    snprintf(p->label, sizeof p->label, "%.31s", label);
    p->arg[0] = (double)(b > 0 ? b : 1);
    p->metrics = metrics;
    p->nmetrics = 2;
    jt_json_kint(p->params, "size", (long long)b);
    jt_json_kstr(p->params, "pattern", pattern_names[s->pattern]);
    jt_json_kint(p->params, "round", k);
    jt_json_kint(p->params, "src", src);
    jt_json_kint(p->params, "dst", dst);
    jt_json_kstr(p->params, "src_host", s->hosts + (size_t)src * HOSTLEN); /* NUL-terminated */
    jt_json_kstr(p->params, "dst_host", s->hosts + (size_t)dst * HOSTLEN);
}

static double *room(double **v, size_t *cap, size_t need)
{
    if (need > *cap) {
        *cap = need * 2;
        double *nv = realloc(*v, *cap * sizeof **v);
        if (!nv)
            jt_fatal("out of memory for %zu samples", need);
        *v = nv;
    }
    return *v;
}

/* One round of the shift pattern on every rank; returns this rank's receive time. */
static double shift_round(jt_ctx *ctx, state *s, int k, uint64_t b)
{
    MPI_Request rq[2];
    int from = (s->me - k + s->n) % s->n, to = (s->me + k) % s->n;
    MPI_Barrier(ctx->comm);
    double t0 = jt_now();
    MPI_Irecv(s->rbuf.p, (int)b, MPI_BYTE, from, k, ctx->comm, &rq[0]);
    MPI_Isend(s->sbuf.p, (int)b, MPI_BYTE, to, k, ctx->comm, &rq[1]);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    double dt = jt_now() - t0;
    MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
    return dt;
}

/* N samples of link r -> peer as ping-pongs, into out (on r; peer only answers).  One untimed
 * round trip first: the point starts when the harness's broadcast lets each rank go, and the
 * peer may leave it later than r. */
static void pair_samples(jt_ctx *ctx, state *s, int r, int peer, uint64_t b, size_t n, double *out)
{
    for (size_t q = 0; q <= n; q++) {
        if (s->me == r) {
            double t0 = jt_now();
            MPI_Send(s->sbuf.p, (int)b, MPI_BYTE, peer, 1, ctx->comm);
            MPI_Recv(s->rbuf.p, (int)b, MPI_BYTE, peer, 1, ctx->comm, MPI_STATUS_IGNORE);
            if (q > 0)
                out[q - 1] = (jt_now() - t0) / 2;
        } else if (s->me == peer) {
            MPI_Recv(s->rbuf.p, (int)b, MPI_BYTE, r, 1, ctx->comm, MPI_STATUS_IGNORE);
            MPI_Send(s->sbuf.p, (int)b, MPI_BYTE, r, 1, ctx->comm);
        }
    }
}

static void run(jt_ctx *ctx, void *st, size_t i, jt_series *ser, size_t n)
{
    state *s = st;
    size_t si;
    int k, r;
    decode(s, i, &si, &k, &r);
    uint64_t b = s->sizes[si];
    const double *mine; /* rank r's n samples */
    if (by_rounds(s, b)) {
        long key = (long)(si * (size_t)s->n + (size_t)k);
        if (key != s->key) {
            s->key = key;
            s->have = 0;
            memset(s->pos, 0, (size_t)s->n * sizeof *s->pos);
        }
        size_t need = s->pos[r] + n;
        room(&s->cache, &s->cap, need);
        while (s->have < need)
            s->cache[s->have++] = shift_round(ctx, s, k, b);
        mine = s->cache + s->pos[r];
        s->pos[r] += n;
    } else {
        room(&s->tmp, &s->tmpcap, n);
        pair_samples(ctx, s, r, (r + k) % s->n, b, n, s->tmp);
        mine = s->tmp;
    }
    if (r != 0 && s->me == r)
        MPI_Send(mine, (int)n, MPI_DOUBLE, 0, 2, ctx->comm);
    if (s->me != 0)
        return;
    if (r != 0) {
        double *got = room(&s->tmp, &s->tmpcap, n);
        MPI_Recv(got, (int)n, MPI_DOUBLE, r, 2, ctx->comm, MPI_STATUS_IGNORE);
        mine = got;
    }
    for (size_t q = 0; q < n; q++)
        jt_series_push(&ser[0], mine[q]);
}

static void teardown(jt_ctx *ctx, void *st)
{
    state *s = st;
    jt_buffer_free(&ctx->topo, &s->sbuf);
    jt_buffer_free(&ctx->topo, &s->rbuf);
    free(s->sizes);
    free(s->hosts);
    free(s->cache);
    free(s->pos);
    free(s->tmp);
}

static void meta(jt_ctx *ctx, void *st, jt_json *j)
{
    state *s = st;
    (void)ctx;
    jt_json_kstr(j, "pattern", pattern_names[s->pattern]);
    jt_json_kstr(j, "sample", s->pattern == SHIFT
                                  ? "from 64 KiB: from a barrier to the end of the receive, on "
                                    "the receiver; below: half a ping-pong's round trip, one "
                                    "pair at a time, on the sender"
                                  : "half a ping-pong's round trip, on the sender");
}

static const jt_metric_info metric_infos[] = {
    {"latency", "us", JT_LOWER_BETTER},
    {"bandwidth", "MB/s", JT_HIGHER_BETTER},
    {NULL, NULL, 0},
};

const jt_bench jt_bench_shift = {
    .name = "shift",
    .summary = "Every directed link between the ranks (one per node): mpiGraph's shift pattern "
               "(N-1 rounds; in round k rank r sends to r+k, all at once)\nor one pair at a time "
               "(--pattern pairwise); latency and bandwidth of each link per size.",
    .options = options,
    .metrics = metric_infos,
    .default_sizes = "8,1M",
    .thread_level = MPI_THREAD_SINGLE,
    .min_ranks = 2,
    .nseries = 1,
    .label_head = "Size src>dst",
    .state_size = sizeof(state),
    .read = read_options,
    .setup = setup,
    .npoints = npoints,
    .point = point,
    .run = run,
    .teardown = teardown,
    .meta = meta,
};
