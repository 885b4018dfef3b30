/*
 * Delivery test of jt_dbcast with real MPI ranks (ctest runs it with 2 ranks), and
 * the stress check run by hand with more ranks and rounds, e.g.
 *   mpirun --oversubscribe -np 4 ./mpitest_dbcast --rounds 50
 *   mpiexec.mpich -n 4 ./mpitest_dbcast --rounds 50
 *   smpirun -np 8 -platform P.xml -hostfile H ./mpitest_dbcast --mode poll
 * Options: --rounds N (random in-flight rounds, default 2), --max-bytes B (largest
 * random broadcast, default 262144), --seed S, --mode thread|poll|both (default both:
 * thread only where MPI_THREAD_MULTIPLE is granted), --verbose. Bad options: exit 2.
 *
 * What it checks, in each progress mode (poll twice: spinning and blocking waits):
 *   routes     every routing x sizes x roots to all others (shuffled), from root or ANY
 *   inflight   random schedules: many broadcasts of different sizes/routings/recipient
 *              subsets in flight at once, receives pre-posted or posted late in random
 *              order, tags reused by the same root (matching must follow send order
 *              even when a later broadcast overtakes an earlier one on another route)
 *   unaware    (>= 3 ranks) a forwarder's application receives the broadcast only after
 *              a message that depends on the forwarding: forwarding needs no receive
 *   quiescent  (>= 3 ranks) a forwarder whose receive has completed owes no forwarding
 *              that needs its engine: it may then sit in MPI_Barrier
 *   truncate   receive buffers too small: error reported, forwarding unaffected
 *   badinput   invalid arguments rejected with a message and no damage
 *   twoctx     two contexts with the same tags do not mix
 */
#define _POSIX_C_SOURCE 200809L
#include "jostle/dbcast.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int rank, size, provided;
    long rounds;
    size_t max_bytes;
    uint64_t seed;
    int want_thread, want_poll;
    int verbose;
} opts_t;

static opts_t O;

#define FAIL(...)                                                                    \
    do {                                                                             \
        fprintf(stderr, "mpitest_dbcast: rank %d: FAIL %s:%d: ", O.rank, __FILE__, __LINE__); \
        fprintf(stderr, __VA_ARGS__);                                                \
        fputc('\n', stderr);                                                         \
        MPI_Abort(MPI_COMM_WORLD, 1);                                                \
    } while (0)

#define CHECK(cond, ...)      \
    do {                      \
        if (!(cond))          \
            FAIL(__VA_ARGS__); \
    } while (0)

/* --------------------------------------------------------------- helpers */

typedef struct {
    uint64_t s;
} rng_t;

static uint64_t rnd(rng_t *r) /* splitmix64: same sequence on every rank */
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static unsigned char pat(int root, int tag, int inst, size_t i)
{
    return (unsigned char)(root * 131 + tag * 7 + inst * 17 + i * 13 + (i >> 8));
}

static void fill(unsigned char *b, size_t n, int root, int tag, int inst)
{
    for (size_t i = 0; i < n; i++)
        b[i] = pat(root, tag, inst, i);
}

static long first_bad(const unsigned char *b, size_t n, int root, int tag, int inst)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != pat(root, tag, inst, i))
            return (long)i;
    return -1;
}

static void shuffle(int *a, int n, rng_t *r)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(rnd(r) % (uint64_t)(i + 1));
        int t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

/* Waits for all requests with test() in random order, as a scheduler would; fails on
 * a deadline instead of hanging. rcs/sts may be NULL. */
static void wait_all(jt_dbcast_ctx *ctx, jt_dbcast_req **reqs, int n, int *rcs,
                     jt_dbcast_status *sts, const char *what)
{
    double t0 = MPI_Wtime();
    int left = 0;
    for (int i = 0; i < n; i++)
        left += reqs[i] != NULL;
    while (left > 0) {
        for (int i = 0; i < n; i++) {
            if (!reqs[i])
                continue;
            int flag = 0;
            jt_dbcast_status st;
            int rc = jt_dbcast_test(ctx, &reqs[i], &flag, &st);
            if (flag) {
                if (rcs)
                    rcs[i] = rc;
                if (sts)
                    sts[i] = st;
                left--;
            } else {
                CHECK(rc == JT_DBCAST_OK, "%s: test failed: %s", what, jt_dbcast_strerror(rc));
            }
        }
        if (MPI_Wtime() - t0 > 120.0)
            FAIL("%s: %d request(s) still pending after 120 s (deadlock?)", what, left);
    }
}

static const jt_dbcast_routing ROUTES[] = {JT_ROUTE_FLAT, JT_ROUTE_BINOMIAL, JT_ROUTE_CHAIN,
                                           JT_ROUTE_PIPELINE_CHAIN, JT_ROUTE_PIPELINE_TREE,
                                           JT_ROUTE_TWO_TREE, JT_ROUTE_KNOMIAL4, JT_ROUTE_KNOMIAL8,
                                           JT_ROUTE_KNOMIAL16, JT_ROUTE_SCATTER_ALLGATHER,
                                           JT_ROUTE_AUTO};
#define NROUTES ((int)(sizeof ROUTES / sizeof ROUTES[0]))

/* ------------------------------------------------------------------ tests */

static void t_routes(jt_dbcast_ctx *ctx)
{
    size_t sizes[] = {0, 1, 8192, 8193, 100003, (size_t)1 << 20};
    int nsizes = O.max_bytes >= ((size_t)1 << 20) ? 6 : 5;
    rng_t rg = {O.seed ^ 0x51};
    int tag = 0;
    int *others = malloc((size_t)O.size * sizeof *others);
    unsigned char *buf = malloc(((size_t)1 << 20) + 16);
    for (int ri = 0; ri < NROUTES; ri++) {
        for (int si = 0; si < nsizes; si++) {
            for (int root = 0; root < O.size; root++) {
                size_t n = sizes[si];
                int k = 0;
                for (int r = 0; r < O.size; r++)
                    if (r != root)
                        others[k++] = r;
                shuffle(others, k, &rg);
                tag++;
                jt_dbcast_req *req = NULL;
                if (O.rank == root) {
                    fill(buf, n, root, tag, 0);
                    int rc = jt_dbcast_send_routed(ctx, buf, n, tag, others, k, ROUTES[ri], &req);
                    CHECK(rc == 0, "routes: send failed: %s", jt_dbcast_strerror(rc));
                    jt_dbcast_status st;
                    rc = jt_dbcast_wait(ctx, &req, &st);
                    CHECK(rc == 0 && req == NULL, "routes: send wait: %s", jt_dbcast_strerror(rc));
                } else {
                    memset(buf, 0xEE, n + 16);
                    int src = (tag % 2) ? root : JT_DBCAST_ANY_SOURCE;
                    int rc = jt_dbcast_recv(ctx, buf, n + 16, src, tag, &req);
                    CHECK(rc == 0, "routes: recv failed: %s", jt_dbcast_strerror(rc));
                    if (tag % 3 == 0) { /* the data is readable before the forwards end */
                        CHECK(jt_dbcast_wait_arrived(ctx, req) == 0 && first_bad(buf, n, root, tag, 0) < 0,
                              "routes: wait_arrived");
                    }
                    jt_dbcast_status st;
                    rc = jt_dbcast_wait(ctx, &req, &st);
                    CHECK(rc == 0, "routes: recv wait: %s", jt_dbcast_strerror(rc));
                    CHECK(st.source == root && st.tag == tag && st.bytes == n && st.error == 0,
                          "routes %s %zu B root %d: status source %d tag %d bytes %zu",
                          jt_dbcast_route_name(ROUTES[ri]), n, root, st.source, st.tag, st.bytes);
                    CHECK(ROUTES[ri] == JT_ROUTE_AUTO ? st.routing != JT_ROUTE_AUTO : st.routing == ROUTES[ri],
                          "routes: status routing %s for %s", jt_dbcast_route_name(st.routing),
                          jt_dbcast_route_name(ROUTES[ri]));
                    long bad = first_bad(buf, n, root, tag, 0);
                    CHECK(bad < 0, "routes %s %zu B root %d: byte %ld wrong",
                          jt_dbcast_route_name(ROUTES[ri]), n, root, bad);
                    CHECK(buf[n] == 0xEE, "routes: wrote past the broadcast size");
                }
            }
        }
    }
    free(others);
    free(buf);
}

typedef struct {
    int root, tag, inst;
    size_t bytes;
    jt_dbcast_routing routing;
    int *recips;
    int nrecips;
} bcast_t;

static void t_inflight(jt_dbcast_ctx *ctx, long round)
{
    rng_t rg = {O.seed * 1000003u + (uint64_t)round};
    int M = 3 * O.size + 2;
    bcast_t *B = calloc((size_t)M, sizeof *B);
    int *lasttag = malloc((size_t)O.size * sizeof *lasttag);
    int *instof = calloc(1, sizeof(int)); /* unused placeholder for clarity */
    for (int r = 0; r < O.size; r++)
        lasttag[r] = -1;
    const size_t menu[] = {0, 3, 100, 8192, 8193, 50000};
    for (int b = 0; b < M; b++) {
        bcast_t *x = &B[b];
        x->root = (int)(rnd(&rg) % (uint64_t)O.size);
        /* a quarter reuse the root's previous tag: matching must follow send order */
        if (lasttag[x->root] >= 0 && rnd(&rg) % 4 == 0)
            x->tag = lasttag[x->root];
        else
            x->tag = 100000 + (int)round * 1000 + b;
        lasttag[x->root] = x->tag;
        x->inst = b;
        uint64_t pick = rnd(&rg) % 8;
        x->bytes = pick < 6 ? menu[pick] : (size_t)(rnd(&rg) % (O.max_bytes + 1));
        x->routing = ROUTES[rnd(&rg) % NROUTES];
        x->recips = malloc((size_t)O.size * sizeof(int));
        for (int r = 0; r < O.size; r++)
            if (r != x->root && rnd(&rg) % 3 != 0)
                x->recips[x->nrecips++] = r;
        if (x->nrecips == 0)
            x->recips[x->nrecips++] = (x->root + 1) % O.size;
        shuffle(x->recips, x->nrecips, &rg);
    }
    free(instof);

    /* my incoming broadcasts, in schedule (= per-root send) order */
    int nin = 0, nout = 0;
    int *in = malloc((size_t)M * sizeof *in);
    int *out = malloc((size_t)M * sizeof *out);
    for (int b = 0; b < M; b++) {
        if (B[b].root == O.rank)
            out[nout++] = b;
        for (int i = 0; i < B[b].nrecips; i++)
            if (B[b].recips[i] == O.rank)
                in[nin++] = b;
    }
    /* order in which receives are posted: random, but for a reused (root, tag) the
     * k-th posted receive must get the k-th sent broadcast: assign expectations in
     * posting order */
    int *post = malloc((size_t)(nin ? nin : 1) * sizeof *post);
    for (int i = 0; i < nin; i++)
        post[i] = i;
    shuffle(post, nin, &rg);
    int *expect = malloc((size_t)(nin ? nin : 1) * sizeof *expect);
    char *taken = calloc((size_t)(nin ? nin : 1), 1);
    for (int p = 0; p < nin; p++) {
        const bcast_t *x = &B[in[post[p]]];
        int e = -1;
        for (int i = 0; i < nin && e < 0; i++)
            if (!taken[i] && B[in[i]].root == x->root && B[in[i]].tag == x->tag)
                e = i;
        taken[e] = 1;
        expect[p] = in[e];
    }
    free(taken);

    jt_dbcast_req **rreq = calloc((size_t)(nin ? nin : 1), sizeof *rreq);
    unsigned char **rbuf = calloc((size_t)(nin ? nin : 1), sizeof *rbuf);
    jt_dbcast_req **sreq = calloc((size_t)(nout ? nout : 1), sizeof *sreq);
    unsigned char **sbuf = calloc((size_t)(nout ? nout : 1), sizeof *sbuf);
    int early = nin / 2;
    for (int p = 0; p < nin; p++) {
        const bcast_t *x = &B[expect[p]];
        rbuf[p] = malloc(x->bytes + 8);
        memset(rbuf[p], 0xEE, x->bytes + 8);
    }
    /* half the receives before anything is sent */
    for (int p = 0; p < early; p++) {
        const bcast_t *x = &B[expect[p]];
        int src = (p % 2) ? x->root : JT_DBCAST_ANY_SOURCE;
        CHECK(jt_dbcast_recv(ctx, rbuf[p], x->bytes + 8, src, x->tag, &rreq[p]) == 0, "inflight: recv");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int o = 0; o < nout; o++) {
        const bcast_t *x = &B[out[o]];
        sbuf[o] = malloc(x->bytes ? x->bytes : 1);
        fill(sbuf[o], x->bytes, x->root, x->tag, x->inst);
        int rc = jt_dbcast_send_routed(ctx, sbuf[o], x->bytes, x->tag, x->recips, x->nrecips,
                                       x->routing, &sreq[o]);
        CHECK(rc == 0, "inflight: send failed: %s", jt_dbcast_strerror(rc));
    }
    /* "compute" for a while: only the progress engine may move data now */
    double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < 0.002)
        if (jt_dbcast_progress_mode_used(ctx) == JT_PROGRESS_POLL)
            jt_dbcast_progress(ctx);
    /* the other half late, many of them unexpected by now */
    for (int p = early; p < nin; p++) {
        const bcast_t *x = &B[expect[p]];
        int src = (p % 2) ? x->root : JT_DBCAST_ANY_SOURCE;
        CHECK(jt_dbcast_recv(ctx, rbuf[p], x->bytes + 8, src, x->tag, &rreq[p]) == 0, "inflight: recv");
    }
    int *rcs = malloc((size_t)(nin ? nin : 1) * sizeof *rcs);
    jt_dbcast_status *sts = malloc((size_t)(nin ? nin : 1) * sizeof *sts);
    wait_all(ctx, rreq, nin, rcs, sts, "inflight receives");
    wait_all(ctx, sreq, nout, NULL, NULL, "inflight sends");
    for (int p = 0; p < nin; p++) {
        const bcast_t *x = &B[expect[p]];
        CHECK(rcs[p] == 0, "inflight: receive %d: %s", p, jt_dbcast_strerror(rcs[p]));
        CHECK(sts[p].source == x->root && sts[p].tag == x->tag && sts[p].bytes == x->bytes,
              "inflight round %ld: receive (root %d tag %d) got source %d tag %d %zu B, expected %zu B",
              round, x->root, x->tag, sts[p].source, sts[p].tag, sts[p].bytes, x->bytes);
        long bad = first_bad(rbuf[p], x->bytes, x->root, x->tag, x->inst);
        CHECK(bad < 0, "inflight round %ld: broadcast %d (root %d tag %d, %zu B, %s): byte %ld wrong "
              "(matched out of send order?)", round, x->inst, x->root, x->tag, x->bytes,
              jt_dbcast_route_name(x->routing), bad);
        CHECK(rbuf[p][x->bytes] == 0xEE, "inflight: wrote past the broadcast");
        free(rbuf[p]);
    }
    for (int o = 0; o < nout; o++)
        free(sbuf[o]);
    for (int b = 0; b < M; b++)
        free(B[b].recips);
    free(B), free(lasttag), free(in), free(out), free(post), free(expect);
    free(rreq), free(rbuf), free(sreq), free(sbuf), free(rcs), free(sts);
}

static void t_unaware(jt_dbcast_ctx *ctx)
{
    if (O.size < 3)
        return;
    /* 0 -> 1 -> 2 (chain): 1 forwards X to 2; 2 then sends Y to 1; 1 asks for Y first. */
    size_t n = 100000;
    unsigned char *x = malloc(n), *y = malloc(64);
    const int TX = 7001, TY = 7002;
    if (O.rank == 0) {
        int rec[2] = {1, 2};
        jt_dbcast_req *r;
        fill(x, n, 0, TX, 0);
        CHECK(jt_dbcast_send_routed(ctx, x, n, TX, rec, 2, JT_ROUTE_CHAIN, &r) == 0, "unaware: send");
        wait_all(ctx, &r, 1, NULL, NULL, "unaware send X");
    } else if (O.rank == 2) {
        jt_dbcast_req *r;
        CHECK(jt_dbcast_recv(ctx, x, n, 0, TX, &r) == 0, "unaware: recv X");
        wait_all(ctx, &r, 1, NULL, NULL, "unaware: 2 receives X through 1");
        CHECK(first_bad(x, n, 0, TX, 0) < 0, "unaware: X corrupted at 2");
        int rec[1] = {1};
        fill(y, 64, 2, TY, 0);
        CHECK(jt_dbcast_send(ctx, y, 64, TY, rec, 1, &r) == 0, "unaware: send Y");
        wait_all(ctx, &r, 1, NULL, NULL, "unaware send Y");
    } else if (O.rank == 1) {
        jt_dbcast_req *r;
        CHECK(jt_dbcast_recv(ctx, y, 64, 2, TY, &r) == 0, "unaware: recv Y");
        wait_all(ctx, &r, 1, NULL, NULL, "unaware: 1 waits for Y, which needs its forwarding of X");
        CHECK(first_bad(y, 64, 2, TY, 0) < 0, "unaware: Y corrupted");
        jt_dbcast_stats s;
        jt_dbcast_get_stats(ctx, &s);
        CHECK(s.unexpected >= 1, "unaware: X should have been unexpected at 1");
        CHECK(jt_dbcast_recv(ctx, x, n, 0, TX, &r) == 0, "unaware: recv X");
        wait_all(ctx, &r, 1, NULL, NULL, "unaware: 1 receives X");
        CHECK(first_bad(x, n, 0, TX, 0) < 0, "unaware: X corrupted at 1");
    }
    free(x);
    free(y);
}

/* A rank whose requests have all completed may sit in an MPI call that does not drive
 * the dbcast engine: it must owe no forwarding that only its engine would post. Chain
 * 0 -> 1 -> 2 in 1 MiB segments (above the eager limits: a forwarded segment completes
 * only once 2 receives it); 2 "computes" without polling while 1 receives the whole
 * message into an internal buffer (its receive posted after the header), waits, and
 * goes into MPI_Barrier. Were 1's receive completed before its forwarding (segments
 * behind the sending window still queued), 2 would never get them. */
static void t_quiescent(MPI_Comm comm, jt_dbcast_progress_mode mode, jt_dbcast_wait_mode wait)
{
    if (O.size < 3)
        return;
    jt_dbcast_cfg cfg;
    jt_dbcast_cfg_default(&cfg);
    cfg.progress = mode;
    cfg.wait = wait;
    cfg.segment_bytes = (size_t)1 << 20;
    jt_dbcast_ctx *ctx = jt_dbcast_init(comm, &cfg);
    CHECK(ctx, "quiescent: init");
    const size_t n = (size_t)4 << 20;
    const int tag = 9001;
    unsigned char *b = O.rank <= 2 ? malloc(n) : NULL;
    jt_dbcast_req *r = NULL;
    if (O.rank == 0) {
        int rec[2] = {1, 2};
        fill(b, n, 0, tag, 0);
        CHECK(jt_dbcast_send_routed(ctx, b, n, tag, rec, 2, JT_ROUTE_CHAIN, &r) == 0, "quiescent: send");
        wait_all(ctx, &r, 1, NULL, NULL, "quiescent send");
    } else if (O.rank == 1) {
        jt_dbcast_stats s;
        double t0 = MPI_Wtime();
        do { /* the header first: the data lands in an internal buffer */
            jt_dbcast_progress(ctx);
            jt_dbcast_get_stats(ctx, &s);
            CHECK(MPI_Wtime() - t0 < 120.0, "quiescent: no header after 120 s");
        } while (s.headers_received == 0);
        CHECK(jt_dbcast_recv(ctx, b, n, 0, tag, &r) == 0, "quiescent: recv at 1");
        wait_all(ctx, &r, 1, NULL, NULL, "quiescent: 1 receives");
        CHECK(first_bad(b, n, 0, tag, 0) < 0, "quiescent: data at 1");
    } else if (O.rank == 2) {
        double t0 = MPI_Wtime();
        while (MPI_Wtime() - t0 < 0.3) /* busy elsewhere: no dbcast progress */
            ;
        CHECK(jt_dbcast_recv(ctx, b, n, 0, tag, &r) == 0, "quiescent: recv at 2");
        wait_all(ctx, &r, 1, NULL, NULL, "quiescent: 2 receives (1 sits in MPI_Barrier)");
        CHECK(first_bad(b, n, 0, tag, 0) < 0, "quiescent: data at 2");
    }
    MPI_Barrier(comm); /* drives MPI, not dbcast */
    CHECK(jt_dbcast_finalize(ctx) == 0, "quiescent: finalize");
    free(b);
}

static void t_truncate(jt_dbcast_ctx *ctx)
{
    /* chain through every rank, then scatter-allgather (every rank forwards); each
     * receiver's buffer is too small, yet everyone downstream must still get the data */
    const size_t sizes[] = {1000, 300000, 1000, 300000};
    for (int si = 0; si < 4; si++) {
        size_t n = sizes[si];
        int tag = 8000 + si;
        jt_dbcast_routing how = si < 2 ? JT_ROUTE_CHAIN : JT_ROUTE_SCATTER_ALLGATHER;
        unsigned char *b = malloc(n);
        jt_dbcast_req *r;
        if (O.rank == 0) {
            int *rec = malloc((size_t)O.size * sizeof *rec);
            for (int i = 1; i < O.size; i++)
                rec[i - 1] = i;
            fill(b, n, 0, tag, 0);
            CHECK(jt_dbcast_send_routed(ctx, b, n, tag, rec, O.size - 1, how, &r) == 0, "truncate: send");
            wait_all(ctx, &r, 1, NULL, NULL, "truncate send");
            free(rec);
        } else {
            memset(b, 0xEE, n);
            CHECK(jt_dbcast_recv(ctx, b, n / 2, 0, tag, &r) == 0, "truncate: recv");
            jt_dbcast_status st;
            int rc = jt_dbcast_wait(ctx, &r, &st);
            CHECK(rc == JT_DBCAST_ETRUNC && st.error == JT_DBCAST_ETRUNC && st.bytes == n,
                  "truncate: expected ETRUNC with %zu bytes, got %d (%s), %zu bytes", n, rc,
                  jt_dbcast_strerror(rc), st.bytes);
            CHECK(b[n / 2] == 0xEE, "truncate: wrote past the receive buffer");
        }
        free(b);
    }
}

static void t_badinput(MPI_Comm comm)
{
    jt_dbcast_cfg cfg;
    jt_dbcast_cfg_default(&cfg);
    cfg.quiet = O.rank != 0; /* rank 0 shows what the messages look like */
    cfg.progress = JT_PROGRESS_POLL;
    jt_dbcast_cfg badcfg = cfg;
    badcfg.routing = (jt_dbcast_routing)77;
    CHECK(jt_dbcast_init(comm, &badcfg) == NULL, "badinput: unknown routing accepted");
    badcfg = cfg;
    badcfg.segment_bytes = (size_t)4 << 30;
    CHECK(jt_dbcast_init(comm, &badcfg) == NULL, "badinput: 4 GiB segment accepted");
    badcfg = cfg;
    badcfg.model.bandwidth = 0;
    CHECK(jt_dbcast_init(comm, &badcfg) == NULL, "badinput: zero bandwidth in the model accepted");
    badcfg = cfg;
    badcfg.wait = (jt_dbcast_wait_mode)9;
    CHECK(jt_dbcast_init(comm, &badcfg) == NULL, "badinput: unknown wait mode accepted");
    badcfg = cfg;
    badcfg.progress = JT_PROGRESS_THREAD;
    if (O.provided != MPI_THREAD_MULTIPLE)
        CHECK(jt_dbcast_init(comm, &badcfg) == NULL, "badinput: thread mode without THREAD_MULTIPLE");

    jt_dbcast_ctx *ctx = jt_dbcast_init(comm, &cfg);
    CHECK(ctx, "badinput: init");
    unsigned char b[16] = {0};
    jt_dbcast_req *r = (jt_dbcast_req *)&r; /* must be reset to NULL on error */
    int me = O.rank, other = (O.rank + 1) % O.size, far = O.size + 3;
    int dup[2] = {other, other};
    CHECK(jt_dbcast_send(ctx, b, 16, 1, &far, 1, &r) == JT_DBCAST_EINVAL && r == NULL, "badinput: rank out of range");
    CHECK(jt_dbcast_send(ctx, b, 16, 1, &me, 1, &r) == JT_DBCAST_EINVAL, "badinput: root in its list");
    if (O.size > 2)
        CHECK(jt_dbcast_send(ctx, b, 16, 1, dup, 2, &r) == JT_DBCAST_EINVAL, "badinput: duplicate");
    CHECK(jt_dbcast_send(ctx, b, 16, -5, &other, 1, &r) == JT_DBCAST_EINVAL, "badinput: negative tag");
    CHECK(jt_dbcast_send(ctx, NULL, 16, 1, &other, 1, &r) == JT_DBCAST_EINVAL, "badinput: NULL buffer");
    CHECK(jt_dbcast_send(ctx, b, 16, 1, &other, -1, &r) == JT_DBCAST_EINVAL, "badinput: negative count");
    CHECK(jt_dbcast_send_routed(ctx, b, 16, 1, &other, 1, JT_ROUTE_COUNT_, &r) == JT_DBCAST_EINVAL,
          "badinput: unknown routing per message");
    CHECK(jt_dbcast_recv(ctx, b, 16, far, 1, &r) == JT_DBCAST_EINVAL, "badinput: source out of range");
    CHECK(jt_dbcast_recv(ctx, b, 16, me, 1, &r) == JT_DBCAST_EINVAL, "badinput: receive from self");
    CHECK(jt_dbcast_recv(ctx, b, 16, other, -7, &r) == JT_DBCAST_EINVAL, "badinput: bad tag");
    CHECK(jt_dbcast_wait(ctx, NULL, NULL) == JT_DBCAST_EINVAL, "badinput: wait on NULL");
    /* nothing was disturbed: a real broadcast still works */
    if (O.rank == 0) {
        int *rec = malloc((size_t)O.size * sizeof *rec);
        for (int i = 1; i < O.size; i++)
            rec[i - 1] = i;
        fill(b, 16, 0, 1, 0);
        CHECK(jt_dbcast_send(ctx, b, 16, 1, rec, O.size - 1, &r) == 0, "badinput: good send");
        free(rec);
    } else {
        CHECK(jt_dbcast_recv(ctx, b, 16, 0, 1, &r) == 0, "badinput: good recv");
    }
    CHECK(jt_dbcast_wait(ctx, &r, NULL) == 0, "badinput: good wait");
    if (O.rank != 0)
        CHECK(first_bad(b, 16, 0, 1, 0) < 0, "badinput: data");
    CHECK(jt_dbcast_finalize(ctx) == 0, "badinput: finalize");
}

static void t_twoctx(jt_dbcast_ctx *a, jt_dbcast_ctx *b)
{
    size_t n = 20000;
    unsigned char *ba = malloc(n), *bb = malloc(n);
    jt_dbcast_req *ra, *rb;
    if (O.rank == 0) {
        int *rec = malloc((size_t)O.size * sizeof *rec);
        for (int i = 1; i < O.size; i++)
            rec[i - 1] = i;
        fill(ba, n, 0, 5, 1);
        fill(bb, n, 0, 5, 2);
        CHECK(jt_dbcast_send(a, ba, n, 5, rec, O.size - 1, &ra) == 0, "twoctx: send a");
        CHECK(jt_dbcast_send(b, bb, n, 5, rec, O.size - 1, &rb) == 0, "twoctx: send b");
        free(rec);
    } else {
        CHECK(jt_dbcast_recv(b, bb, n, 0, 5, &rb) == 0, "twoctx: recv b");
        CHECK(jt_dbcast_recv(a, ba, n, JT_DBCAST_ANY_SOURCE, JT_DBCAST_ANY_TAG, &ra) == 0, "twoctx: recv a");
    }
    wait_all(b, &rb, 1, NULL, NULL, "twoctx b");
    wait_all(a, &ra, 1, NULL, NULL, "twoctx a");
    if (O.rank != 0) {
        CHECK(first_bad(ba, n, 0, 5, 1) < 0, "twoctx: context a got the wrong data");
        CHECK(first_bad(bb, n, 0, 5, 2) < 0, "twoctx: context b got the wrong data");
    }
    free(ba);
    free(bb);
}

/* Poll mode runs twice: waits spinning on the engine, and waits blocking in MPI_Waitany. */
static void suite(jt_dbcast_progress_mode mode, jt_dbcast_wait_mode wait)
{
    const char *mname = mode == JT_PROGRESS_THREAD ? "thread"
                        : wait == JT_WAIT_BLOCK    ? "poll, blocking waits"
                                                   : "poll, spinning waits";
    jt_dbcast_cfg cfg;
    jt_dbcast_cfg_default(&cfg);
    cfg.progress = mode;
    cfg.wait = wait;
    cfg.segment_bytes = 4096; /* many segments for the pipelined routings */
    jt_dbcast_ctx *ctx = jt_dbcast_init(MPI_COMM_WORLD, &cfg);
    CHECK(ctx, "init (%s)", mname);
    CHECK(jt_dbcast_progress_mode_used(ctx) == mode, "progress mode");
    /* the probe at init fitted a usable model, the same on every rank */
    jt_dbcast_model md;
    jt_dbcast_get_model(ctx, &md);
    double lat = md.latency, lat0 = 0;
    MPI_Allreduce(&lat, &lat0, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    CHECK(md.fitted == 1 && md.npieces > 1 && md.latency > 0 && md.bandwidth > 0 &&
          md.duplex >= 0 && md.duplex <= 1 && lat0 == lat, "fitted model (latency %g s, "
          "bandwidth %g B/s, duplex %g, %d pieces)", md.latency, md.bandwidth, md.duplex,
          md.npieces);
    double t0 = MPI_Wtime();
    t_routes(ctx);
    MPI_Barrier(MPI_COMM_WORLD);
    if (O.rank == 0 && O.verbose)
        printf("  [%s] routes ok (%.2f s)\n", mname, MPI_Wtime() - t0);
    for (long r = 0; r < O.rounds; r++) {
        t_inflight(ctx, r);
        if (O.rank == 0 && O.verbose && (r + 1) % 10 == 0)
            printf("  [%s] inflight round %ld ok\n", mname, r + 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t_unaware(ctx);
    t_quiescent(MPI_COMM_WORLD, mode, wait);
    t_truncate(ctx);
    jt_dbcast_cfg cfg2 = cfg;
    cfg2.routing = JT_ROUTE_BINOMIAL;
    cfg2.probe = 0; /* a pinned model is kept as given */
    cfg2.model.latency = 7e-6;
    jt_dbcast_ctx *ctx2 = jt_dbcast_init(MPI_COMM_WORLD, &cfg2);
    CHECK(ctx2, "second context");
    jt_dbcast_get_model(ctx2, &md);
    CHECK(md.fitted == 0 && md.latency == 7e-6, "pinned model changed");
    t_twoctx(ctx, ctx2);
    jt_dbcast_stats s;
    jt_dbcast_get_stats(ctx, &s);
    CHECK(jt_dbcast_finalize(ctx2) == 0, "finalize ctx2");
    CHECK(jt_dbcast_finalize(ctx) == 0, "finalize (%s)", mname);
    unsigned long long loc[3] = {s.forwarded_msgs, s.unexpected, s.reordered}, tot[3];
    MPI_Reduce(loc, tot, 3, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (O.rank == 0)
        printf("mpitest_dbcast: [%s] ok with %d ranks, %ld rounds (%.2f s; forwarded %llu, "
               "unexpected %llu, reordered %llu)\n", mname, O.size, O.rounds, MPI_Wtime() - t0,
               tot[0], tot[1], tot[2]);
}

static void usage_exit(const char *msg, const char *arg)
{
    if (O.rank == 0)
        fprintf(stderr, "mpitest_dbcast: %s%s%s\nusage: mpitest_dbcast [--rounds N] [--max-bytes B] "
                        "[--seed S] [--mode thread|poll|both] [--verbose]\n",
                msg, arg ? ": " : "", arg ? arg : "");
    MPI_Finalize();
    exit(2);
}

static long long parse_num(const char *opt, const char *s, long long lo, long long hi)
{
    if (!s)
        usage_exit("missing value for", opt);
    char *end;
    long long v = strtoll(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < lo || v > hi) {
        char m[160];
        snprintf(m, sizeof m, "%s expects an integer in [%lld, %lld]", opt, lo, hi);
        usage_exit(m, s);
    }
    return v;
}

int main(int argc, char **argv)
{
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &O.provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &O.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &O.size);
    O.rounds = 2;
    O.max_bytes = 262144;
    O.seed = 12345;
    O.want_thread = O.want_poll = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--rounds"))
            O.rounds = (long)parse_num(a, i + 1 < argc ? argv[++i] : NULL, 0, 1000000);
        else if (!strcmp(a, "--max-bytes"))
            O.max_bytes = (size_t)parse_num(a, i + 1 < argc ? argv[++i] : NULL, 0, 1LL << 30);
        else if (!strcmp(a, "--seed"))
            O.seed = (uint64_t)parse_num(a, i + 1 < argc ? argv[++i] : NULL, 0, 1LL << 62);
        else if (!strcmp(a, "--mode")) {
            const char *m = i + 1 < argc ? argv[++i] : NULL;
            if (m && !strcmp(m, "thread"))
                O.want_poll = 0;
            else if (m && !strcmp(m, "poll"))
                O.want_thread = 0;
            else if (!m || strcmp(m, "both"))
                usage_exit("--mode expects thread, poll or both, not", m ? m : "(nothing)");
        } else if (!strcmp(a, "--verbose"))
            O.verbose = 1;
        else
            usage_exit("unknown option", a);
    }
    if (O.size < 2)
        usage_exit("needs at least 2 ranks", NULL);
    if (O.want_thread && O.provided != MPI_THREAD_MULTIPLE) {
        if (!O.want_poll)
            usage_exit("--mode thread needs MPI_THREAD_MULTIPLE, which this MPI did not grant", NULL);
        if (O.rank == 0)
            printf("mpitest_dbcast: MPI_THREAD_MULTIPLE not granted (level %d): poll mode only\n", O.provided);
        O.want_thread = 0;
    }
#ifdef SMPI_H
    O.want_thread = 0; /* SimGrid forbids MPI calls from extra threads */
#endif
    t_badinput(MPI_COMM_WORLD);
    if (O.want_thread)
        suite(JT_PROGRESS_THREAD, JT_WAIT_AUTO);
    if (O.want_poll) {
        suite(JT_PROGRESS_POLL, JT_WAIT_SPIN);
        suite(JT_PROGRESS_POLL, JT_WAIT_BLOCK);
    }
    MPI_Finalize();
    return 0;
}
