/* shift: every directed link between the ranks of a job, for `jostle scan` (one rank per node).
 *
 * The pattern is mpiGraph's (Moody, LLNL): N-1 rounds; in round k every rank r sends to r+k and
 * receives from r-k at once (mod N), so each round also loads the switch.  A sample of link
 * (r-k -> r) is the time from a barrier to the completion of r's receive, taken on r (a send
 * may complete when its data is buffered, long before it arrives).  Below SHIFT_PINGPONG bytes
 * the ranks leave a barrier further apart than a message takes, so a small size is measured
 * pair by pair as in --pattern pairwise: a ping-pong of one pair at a time, RTT/2 on the sender.
 * --shifts k1,k2,… runs those rounds only (every rank still sends and receives once a round);
 * --pairs FILE runs FILE's rounds instead (the links a scan measures again, fewer at once).
 *
 * A point is --links-per-point links of one round at one size (params: round, src, dst and
 * their hosts, a line each).  The rank that times a link sends its samples to rank 0, whose
 * series the harness reports.  The links of a round take their samples from the same rounds,
 * kept per rank: more rounds run only when a point needs more samples than were taken.
 * Several links a point cost less at hundreds of simulated ranks (every rank walks every
 * point). */
#include "bench/bench.h"
#include "bench/shift_rounds.h"

#include "core/errors.h"
#include "core/timer.h"
#include "topo/bind.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Simulated (SimGrid), the payloads are SMPI_SHARED_MALLOC: memory stays bounded at thousands
 * of ranks, and jt_buffer_alloc's read of /proc/self/smaps (one process holds every rank's
 * mappings there) took minutes at 1024 ranks. */
#if defined(JT_SMPI) || defined(SMPI_H)
#define SHIFT_SIMULATED 1
#else
#define SHIFT_SIMULATED 0
#define SMPI_SHARED_MALLOC(n) NULL
#define SMPI_SHARED_FREE(p) (void)(p)
#endif

enum { SHIFT, PAIRWISE };
static const char *const pattern_names[] = {"shift", "pairwise", NULL};

static const jt_opt_spec options[] = {
    {"pattern", "P", "shift", "shift (mpiGraph's: in round k every rank sends to rank+k at once) "
                              "or pairwise (one pair at a time, a ping-pong; no contention)",
     pattern_names},
    {"shifts", "LIST", "all", "the rounds of the shift pattern to run: their distances k (1 to "
                              "ranks-1), comma-separated, each once; all: the N-1 rounds", NULL},
    {"pairs", "FILE", NULL, "the rounds of FILE instead of the shifts: one link a line, ROUND SRC "
                            "DST (ranks); in a round a rank sends once and receives once at most",
     NULL},
    {"links-per-point", "G", "1", "links one point reports (1 to 32), a line each in the records",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

#define HOSTLEN 64
#define SHIFT_PINGPONG 65536
#define GROUP_MAX 32

typedef struct state {
    uint64_t *sizes;
    size_t nsizes;
    int pattern, n, me, group;
    const char *shifts_text; /* --shifts, judged in setup against the ranks */
    jt_shift_rounds r;
    int *to, *from;     /* this rank's peer in each round, -1 none */
    char *hosts;        /* n x HOSTLEN: every rank's host, for the params */
    jt_buffer sbuf, rbuf;
    double *cache;      /* round pattern: this rank's samples of the current (size, round) */
    size_t have, cap;   /* samples taken of it */
    size_t *pos;        /* per measuring rank: how many of them it has reported */
    long key;           /* the (size, round) the cache holds, -1 none */
    double *tmp, *got;
    size_t tmpcap, gotcap;
    jt_metric m[2 * GROUP_MAX];
    char extra[2 * GROUP_MAX][2 * HOSTLEN + 96];
    const char *extras[2 * GROUP_MAX];
} state;

/* arg[0] = bytes of one message, one way */
static const jt_metric metrics[] = {
    {"latency", "us", "Latency(us)", JT_LOWER_BETTER, 0, jt_metric_us},
    {"bandwidth", "MB/s", "Bandwidth(MB/s)", JT_HIGHER_BETTER, 0, jt_metric_mbps},
    {NULL, NULL, NULL, 0, 0, NULL},
};

static void read_options(const jt_opts *o, const jt_topo *tp, void *st)
{
    state *s = st;
    (void)tp;
    s->nsizes = jt_bench_sizes(o, &jt_bench_shift, &s->sizes);
    s->pattern = jt_opt_choice(o, "pattern");
    s->group = s->r.group = (int)jt_opt_long(o, "links-per-point", 1, GROUP_MAX);
    s->shifts_text = jt_opt_str(o, "shifts");
    const char *pairs = jt_opt_str(o, "pairs");
    if (pairs && strcmp(s->shifts_text, "all") != 0)
        jt_usage_error("--shifts '%s' and --pairs both name the rounds; give one", s->shifts_text);
    if (pairs)
        jt_shift_read_pairs(&s->r, pairs);
}

/* Link j of round q. */
static jt_shift_link link_at(const state *s, size_t q, size_t j)
{
    return jt_shift_link_at(&s->r, q, j);
}

static void setup(jt_ctx *ctx, void *st)
{
    state *s = st;
    s->n = ctx->size;
    s->me = ctx->rank;
    s->key = -1;
    char msg[512];
    jt_check_all(ctx, jt_shift_rounds_index(&s->r, s->n, s->shifts_text, msg, sizeof msg));
    const jt_shift_rounds *r = &s->r;
    uint64_t biggest = 0;
    for (size_t i = 0; i < s->nsizes; i++)
        biggest = s->sizes[i] > biggest ? s->sizes[i] : biggest;
    snprintf(msg, sizeof msg, "--sizes: the largest size needs %llu MiB per rank, more than "
             "host %s has available", (unsigned long long)(2 * biggest >> 20), ctx->host);
    jt_check_all(ctx, 2 * biggest > jt_bench_memory_per_rank(ctx) * 8 / 10 ? msg : NULL);
    if (ctx->local_size > 1 && ctx->rank == 0)
        jt_warn(ctx, "%d ranks share a host: their links are shared memory, not the network "
                "(shift is meant for one rank per node)", ctx->local_size);
    s->to = malloc(r->nrounds * sizeof *s->to);
    s->from = malloc(r->nrounds * sizeof *s->from);
    for (size_t q = 0; q < r->nrounds; q++) {
        int k = r->shifts ? r->shifts[q] : 0;
        s->to[q] = r->shifts ? (s->me + k) % s->n : -1;
        s->from[q] = r->shifts ? (s->me - k + s->n) % s->n : -1;
        for (size_t j = r->shifts ? 0 : r->round_at[q]; !r->shifts && j < r->round_at[q + 1]; j++) {
            s->to[q] = r->links[j].src == s->me ? r->links[j].dst : s->to[q];
            s->from[q] = r->links[j].dst == s->me ? r->links[j].src : s->from[q];
        }
    }
    jt_binding b;
    jt_bind_thread(&ctx->topo, ctx->comm_core, &b);
    size_t bytes = biggest > 0 ? (size_t)biggest : 1;
    jt_buffer *bufs[2] = {&s->sbuf, &s->rbuf};
    for (int k = 0; k < 2; k++) {
        if (!SHIFT_SIMULATED) {
            jt_buffer_alloc(&ctx->topo, bufs[k], bytes, ctx->comm_mem);
            continue;
        }
        *bufs[k] = (jt_buffer){.p = SMPI_SHARED_MALLOC(bytes), .bytes = bytes, .numa = -1,
                               .requested_numa = ctx->comm_mem, .huge = -1};
        snprintf(bufs[k]->note, sizeof bufs[k]->note, "simulated: shared, not bound");
    }
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
    return s->nsizes * jt_shift_chunks(&s->r);
}

/* Point i: size index, round q, the chunk's first link j0 and its links. */
static void decode(const state *s, size_t i, size_t *si, size_t *q, size_t *j0, size_t *count)
{
    *si = i / jt_shift_chunks(&s->r);
    jt_shift_chunk(&s->r, i % jt_shift_chunks(&s->r), q, j0, count);
}

/* Whether size b is measured by rounds (else pair by pair). */
static int by_rounds(const state *s, uint64_t b) { return s->pattern == SHIFT && b >= SHIFT_PINGPONG; }

/* The rank that times link l at size b: the receiver of a round, the sender of a ping-pong. */
static int timer_of(const state *s, uint64_t b, jt_shift_link l) { return by_rounds(s, b) ? l.dst : l.src; }

static void link_params(const state *s, jt_shift_link l, jt_json *j)
{
    jt_json_kint(j, "src", l.src);
    jt_json_kint(j, "dst", l.dst);
    jt_json_kstr(j, "src_host", s->hosts + (size_t)l.src * HOSTLEN); /* NUL-terminated */
    jt_json_kstr(j, "dst_host", s->hosts + (size_t)l.dst * HOSTLEN);
}

static void point(void *st, size_t i, jt_point *p)
{
    state *s = st;
    size_t si, q, j0, count;
    decode(s, i, &si, &q, &j0, &count);
    uint64_t b = s->sizes[si];
    jt_shift_link first = link_at(s, q, j0);
    char label[64];
    snprintf(label, sizeof label, "%llu %d>%d", (unsigned long long)b, first.src, first.dst);
    snprintf(p->label, sizeof p->label, "%.31s", label);
    p->arg[0] = (double)(b > 0 ? b : 1);
    jt_json_kint(p->params, "size", (long long)b);
    jt_json_kstr(p->params, "pattern", pattern_names[s->pattern]);
    jt_json_kint(p->params, "round", first.round);
    if (s->group == 1) { /* as before the chunks: the link in the point's own params */
        p->metrics = metrics;
        p->nmetrics = 2;
        link_params(s, first, p->params);
        return;
    }
    jt_json one;
    jt_json_init(&one);
    for (size_t j = 0; j < count; j++) {
        jt_json_reset(&one);
        jt_json_object(&one);
        link_params(s, link_at(s, q, j0 + j), &one);
        jt_json_end(&one);
        /* the members without the braces: the harness adds them to the params */
        snprintf(s->extra[2 * j], sizeof s->extra[0], "%.*s", (int)strlen(one.buf) - 2,
                 one.buf + 1);
        for (int k = 0; k < 2; k++) {
            s->m[2 * j + k] = metrics[k];
            s->m[2 * j + k].series = (int)j;
            s->extras[2 * j + k] = s->extra[2 * j];
        }
    }
    jt_json_free(&one);
    p->metrics = s->m;
    p->nmetrics = 2 * (int)count;
    p->params_extra = s->extras;
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

/* One round q on every rank; returns this rank's receive time (0 when it receives nothing). */
static double one_round(jt_ctx *ctx, state *s, size_t q, uint64_t b)
{
    MPI_Request rq[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int from = s->from[q], to = s->to[q];
    MPI_Barrier(ctx->comm);
    double t0 = jt_now(), dt = 0.0;
    if (from >= 0)
        MPI_Irecv(s->rbuf.p, (int)b, MPI_BYTE, from, 3, ctx->comm, &rq[0]);
    if (to >= 0)
        MPI_Isend(s->sbuf.p, (int)b, MPI_BYTE, to, 3, ctx->comm, &rq[1]);
    if (from >= 0) {
        MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
        dt = jt_now() - t0;
    }
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
    size_t si, q, j0, count;
    decode(s, i, &si, &q, &j0, &count);
    uint64_t b = s->sizes[si];
    const double *mine = NULL; /* this rank's n samples of the link it times, if any */
    room(&s->tmp, &s->tmpcap, n);
    if (by_rounds(s, b)) {
        long key = (long)(si * s->r.nrounds + q);
        if (key != s->key) {
            s->key = key;
            s->have = 0;
            memset(s->pos, 0, (size_t)s->n * sizeof *s->pos);
        }
        size_t need = 0;
        for (size_t j = 0; j < count; j++) {
            size_t at = s->pos[link_at(s, q, j0 + j).dst] + n;
            need = at > need ? at : need;
        }
        room(&s->cache, &s->cap, need);
        while (s->have < need)
            s->cache[s->have++] = one_round(ctx, s, q, b);
        for (size_t j = 0; j < count; j++) {
            int d = link_at(s, q, j0 + j).dst;
            if (d == s->me)
                mine = s->cache + s->pos[d];
            s->pos[d] += n;
        }
    } else {
        /* pair by pair, in the chunk's order on every rank: no two ranks wait on each other */
        for (size_t j = 0; j < count; j++) {
            jt_shift_link l = link_at(s, q, j0 + j);
            pair_samples(ctx, s, l.src, l.dst, b, n, s->tmp);
            if (l.src == s->me)
                mine = s->tmp;
        }
    }
    if (s->me != 0 && mine)
        MPI_Send(mine, (int)n, MPI_DOUBLE, 0, 2, ctx->comm);
    if (s->me != 0)
        return;
    for (size_t j = 0; j < count; j++) {
        int t = timer_of(s, b, link_at(s, q, j0 + j));
        const double *v = mine;
        if (t != 0) {
            v = room(&s->got, &s->gotcap, n);
            MPI_Recv(s->got, (int)n, MPI_DOUBLE, t, 2, ctx->comm, MPI_STATUS_IGNORE);
        }
        for (size_t k = 0; k < n; k++)
            jt_series_push(&ser[s->group == 1 ? 0 : j], v[k]);
    }
}

static void teardown(jt_ctx *ctx, void *st)
{
    state *s = st;
    jt_buffer *bufs[2] = {&s->sbuf, &s->rbuf};
    for (int k = 0; k < 2; k++) {
        if (SHIFT_SIMULATED)
            SMPI_SHARED_FREE(bufs[k]->p);
        else
            jt_buffer_free(&ctx->topo, bufs[k]);
    }
    jt_shift_rounds_free(&s->r);
    void *owned[] = {s->sizes, s->hosts, s->cache, s->pos, s->tmp, s->got, s->to, s->from};
    for (size_t k = 0; k < sizeof owned / sizeof *owned; k++)
        free(owned[k]);
}

static void meta(jt_ctx *ctx, void *st, jt_json *j)
{
    state *s = st;
    (void)ctx;
    jt_json_kstr(j, "pattern", pattern_names[s->pattern]);
    jt_json_kint(j, "rounds", (long long)s->r.nrounds);
    jt_json_kstr(j, "rounds_from", s->r.shifts ? "shifts" : "pairs");
    jt_json_kstr(j, "sample", s->pattern == SHIFT
                                  ? "from 64 KiB: from a barrier to the end of the receive, on "
                                    "the receiver; below: half a ping-pong's round trip, one "
                                    "pair at a time, on the sender"
                                  : "half a ping-pong's round trip, on the sender");
}

const jt_bench jt_bench_shift = {
    .name = "shift",
    .summary = "Every directed link between the ranks (one per node): mpiGraph's shift pattern "
               "(N-1 rounds, or --shifts; in round k rank r sends to r+k, all at once)\nor one "
               "pair at a time (--pattern pairwise), or the rounds of --pairs FILE; latency and "
               "bandwidth of each link per size.",
    .options = options,
    .metrics = metrics,
    .default_sizes = "8,1M",
    .thread_level = MPI_THREAD_SINGLE,
    .min_ranks = 2,
    .nseries = GROUP_MAX,
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
