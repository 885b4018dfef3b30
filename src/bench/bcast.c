/* bcast: time until the last of k recipients holds the data of a broadcast from rank 0, for
 * each routing of the dynamic broadcast (jt_dbcast: flat, binomial, chain, pipeline-chain,
 * pipeline-tree, auto) and for MPI_Bcast on a communicator of root + recipients built in
 * setup (the reference a dynamic broadcast cannot use: every member must call it).
 *
 * One sample (docs/dbcast.md, "The benchmark"):
 *   every recipient posts its receive (dbcast) ... MPI_Barrier ... the root reads t0 and
 *   starts; each recipient reads its clock as soon as it sees the data in its buffer
 *   (jt_dbcast_wait_arrived; MPI_Bcast: when the call returns), converts it to the root's
 *   clock, and MPI_Reduce(MAX) brings the latest to the root: sample = max(t_r) - t0.
 * The reduction is outside the timed interval.  Clocks: ranks on the root's host share
 * CLOCK_MONOTONIC (no correction); under SimGrid the simulated clock is global; a rank on
 * another host has its offset to the root estimated once in setup (clock_offset.h).
 *
 * Recipients: k ranks among 1..P-1, spread evenly (rank 1 + floor(i (P-1) / k)), in
 * increasing order (the order of the routing list).  Payloads: an hwloc-bound buffer, or
 * SMPI_SHARED_MALLOC under SimGrid (memory stays bounded whatever the simulated size). */
#include "bench/bench.h"
#include "bench/clock_offset.h"

#include "comm/dbcast_route.h"
#include "core/errors.h"
#include "core/sizes.h"
#include "core/timer.h"
#include "jostle/dbcast.h"
#include "topo/bind.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(JT_SMPI) || defined(SMPI_H)
#define BC_SIMULATED 1
#define BC_THREAD_LEVEL MPI_THREAD_SINGLE
#else
#define BC_SIMULATED 0
#define BC_THREAD_LEVEL MPI_THREAD_MULTIPLE
#endif

#define R_MPI JT_ROUTE_COUNT_ /* the MPI_Bcast reference, after the dbcast routings */
#define NROUTES (JT_ROUTE_COUNT_ + 1)
#define BC_TAG 7

static const char *const progress_names[] = {"auto", "thread", "poll", NULL};
static const jt_opt_spec options[] = {
    {"routing", "LIST", "all", "routings, comma-separated: flat, binomial, chain, pipeline-chain, "
                               "pipeline-tree, two-tree, knomial-4, knomial-8, knomial-16, "
                               "scatter-allgather, auto, mpi_bcast (MPI_Bcast on a prebuilt "
                               "communicator), or all", NULL},
    {"recipients", "LIST", "all", "numbers k of recipients, comma-separated, 1 to P-1, or all "
                                  "(P-1); ranks spread evenly over 1..P-1", NULL},
    {"segment", "BYTES", "0", "segment size of the pipelined routings (0: the model's choice)", NULL},
    {"inline", "BYTES", "8192", "payloads up to this size travel inside the header message", NULL},
    {"progress-mode", "MODE", "auto", "dbcast forwarding: thread, poll (the waiting rank drives "
                                      "it) or auto (thread when MPI_THREAD_MULTIPLE and not "
                                      "SimGrid)", progress_names},
    {"check", NULL, NULL, "verify every payload at every recipient (outside the timed interval)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

typedef struct kset {
    int k;
    int *ranks;      /* the recipients, increasing */
    int member;      /* this rank is one of them */
    MPI_Comm sub;    /* root + recipients (MPI_COMM_NULL elsewhere), root is rank 0 there */
} kset;

typedef struct state {
    int routes[NROUTES];
    char mpi_name[64]; /* "mpi_bcast", or "smpi:ALG": smpirun's --cfg=smpi/bcast:ALG chose it */
    int nroutes;
    uint64_t *sizes;
    size_t nsizes;
    kset *ks;
    int nks;
    size_t segment, inline_bytes;
    int check, mode; /* --check, --progress-mode */
    jt_dbcast_ctx *db;
    jt_dbcast_cfg cfg;
    jt_dbcast_model model;
    jt_buffer buf;   /* native */
    void *shared;    /* SimGrid: SMPI_SHARED_MALLOC */
    unsigned char *data;
    size_t cap;
    jt_clock_offset clock;          /* this rank's clock to the root's (root: the worst) */
    unsigned long sample;           /* samples taken (payload pattern under --check) */
} state;

static const char *route_name(const state *s, int r)
{
    return r == R_MPI ? s->mpi_name : jt_dbcast_route_name((jt_dbcast_routing)r);
}


static const jt_metric metrics[] = {
    {"time", "us", "Time(us)", JT_LOWER_BETTER, 0, jt_metric_us},
    {"bandwidth", "MB/s", "Size/time(MB/s)", JT_HIGHER_BETTER, 0, jt_metric_mbps},
    {NULL, NULL, NULL, 0, 0, NULL},
};

/* ---- options ------------------------------------------------------------------------- */

static void parse_routes(state *s, const char *spec)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", spec);
    s->nroutes = 0;
    snprintf(s->mpi_name, sizeof s->mpi_name, "mpi_bcast");
    int plain_mpi = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int r[NROUTES], n = 0;
        jt_dbcast_routing x;
        if (strcmp(t, "all") == 0) {
            for (int q = JT_ROUTE_FLAT; q < JT_ROUTE_COUNT_; q++)
                r[n++] = q;
            r[n++] = JT_ROUTE_AUTO;
            r[n++] = R_MPI;
            plain_mpi = 1;
        } else if (strcmp(t, "mpi_bcast") == 0 || strcmp(t, "mpi") == 0) {
            r[n++] = R_MPI;
            plain_mpi = 1;
        } else if (strncmp(t, "smpi:", 5) == 0) {
            /* MPI_Bcast as SimGrid's algorithm ALG: the algorithm is a setting of the whole
             * smpirun launch (--cfg=smpi/bcast:ALG, which jostle bcast --simulate adds), so
             * the name is recorded, and one such routing is a run of its own. */
            if (!BC_SIMULATED || t[5] == '\0' || strlen(t) >= sizeof s->mpi_name ||
                (strcmp(s->mpi_name, "mpi_bcast") != 0 && strcmp(s->mpi_name, t) != 0))
                jt_usage_error("--routing: '%s' is not allowed here: smpi:ALG names the MPI_Bcast "
                               "that smpirun --cfg=smpi/bcast:ALG selected (SimGrid build only, "
                               "one per run)", t);
            snprintf(s->mpi_name, sizeof s->mpi_name, "%s", t);
            r[n++] = R_MPI;
        } else if (jt_dbcast_route_parse(t, &x) == 0) {
            r[n++] = (int)x;
        } else {
            jt_usage_error("--routing: '%s' is not a routing; expected flat, binomial, chain, "
                           "pipeline-chain, pipeline-tree, two-tree, knomial-4, knomial-8, "
                           "knomial-16, scatter-allgather, auto, mpi_bcast or all", t);
        }
        for (int q = 0; q < n; q++) {
            int dup = 0;
            for (int i = 0; i < s->nroutes; i++)
                dup |= s->routes[i] == r[q];
            if (!dup && s->nroutes < NROUTES)
                s->routes[s->nroutes++] = r[q];
        }
    }
    if (s->nroutes == 0)
        jt_usage_error("--routing '%s' names no routing", spec);
    if (plain_mpi && strcmp(s->mpi_name, "mpi_bcast") != 0)
        jt_usage_error("--routing '%s': mpi_bcast and %s are the same MPI_Bcast in one smpirun "
                       "launch; run %s alone", spec, s->mpi_name, s->mpi_name);
}

static void parse_ks(state *s, const char *spec, int P)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", spec);
    s->ks = calloc((size_t)P + 1, sizeof *s->ks);
    s->nks = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        long k;
        char *end;
        if (strcmp(t, "all") == 0) {
            k = P - 1;
        } else {
            k = strtol(t, &end, 10);
            if (end == t || *end)
                jt_usage_error("--recipients: '%s' is not a number of recipients; expected 1 to "
                               "%d (the job has %d ranks) or all", t, P - 1, P);
            if (k < 1 || k > P - 1)
                jt_usage_error("--recipients: %s recipients is not allowed with %d ranks: "
                               "expected 1 to %d (every rank but the root)", t, P, P - 1);
        }
        int dup = 0;
        for (int i = 0; i < s->nks; i++)
            dup |= s->ks[i].k == (int)k;
        if (!dup && s->nks < P)
            s->ks[s->nks++].k = (int)k;
    }
    if (s->nks == 0)
        jt_usage_error("--recipients '%s' names no number of recipients", spec);
}

static size_t bytes_option(const jt_opts *o, const char *name, uint64_t max)
{
    const char *v = jt_opt_str(o, name);
    uint64_t b;
    char err[256];
    if (jt_parse_bytes(v, &b, err, sizeof err))
        jt_usage_error("--%s: %s", name, err);
    if (b > max)
        jt_usage_error("--%s '%s' is too large: at most %llu bytes", name, v,
                       (unsigned long long)max);
    return (size_t)b;
}

/* ---- setup --------------------------------------------------------------------------- */

static void read_options(const jt_opts *o, const jt_topo *tp, void *st)
{
    state *s = st;
    (void)tp;
    s->nsizes = jt_bench_sizes(o, &jt_bench_bcast, &s->sizes);
    for (size_t i = 0; i < s->nsizes; i++)
        s->cap = s->sizes[i] > s->cap ? (size_t)s->sizes[i] : s->cap;
    parse_routes(s, jt_opt_str(o, "routing"));
    s->segment = bytes_option(o, "segment", JT_DBCAST_MAX_SEGMENT);
    if (s->segment > s->cap)
        jt_usage_error("--segment '%s' is larger than the largest size of --sizes (%zu bytes)",
                       jt_opt_str(o, "segment"), s->cap);
    s->inline_bytes = bytes_option(o, "inline", 1 << 20);
    s->mode = jt_opt_choice(o, "progress-mode");
    s->check = jt_opt_flag(o, "check");
    if (BC_SIMULATED && s->mode == 1)
        jt_usage_error("--progress-mode thread is not allowed under SimGrid, which forbids MPI "
                       "calls from extra threads: use poll or auto");
}

static void setup(jt_ctx *ctx, void *st)
{
    state *s = st;
    int mode = s->mode;
    parse_ks(s, jt_opt_str(&ctx->opts, "recipients"), ctx->size);
    if (BC_SIMULATED && s->check) {
        if (ctx->rank == 0)
            jt_warn(ctx, "--check ignored under SimGrid: payloads are shared (SMPI_SHARED_MALLOC) "
                         "and hold no data");
        s->check = 0;
    }
    if (!BC_SIMULATED) {
        size_t avail = jt_bench_memory_per_rank(ctx);
        char msg[512];
        char b[32];
        jt_format_bytes(s->cap, b, sizeof b);
        snprintf(msg, sizeof msg, "--sizes: size '%s' is too large for host %s: a %s buffer per rank "
                 "and the host has %zu MiB available per rank", b, ctx->host, b, avail >> 20);
        jt_check_all(ctx, s->cap > avail * 8 / 10 ? msg : NULL);
    }

    /* Recipient sets (spread over 1..P-1) and the MPI_Bcast communicators. */
    int P = ctx->size;
    for (int i = 0; i < s->nks; i++) {
        kset *k = &s->ks[i];
        k->ranks = malloc((size_t)k->k * sizeof *k->ranks);
        for (int q = 0; q < k->k; q++) {
            k->ranks[q] = 1 + (int)((long long)q * (P - 1) / k->k);
            k->member |= k->ranks[q] == ctx->rank;
        }
        MPI_Comm_split(ctx->comm, ctx->rank == 0 || k->member ? 0 : MPI_UNDEFINED, ctx->rank,
                       &k->sub);
    }

    size_t bytes = s->cap ? s->cap : 1;
#if BC_SIMULATED
    s->shared = SMPI_SHARED_MALLOC(bytes);
    s->data = s->shared;
#else
    jt_binding bnd;
    jt_bind_thread(&ctx->topo, ctx->comm_core, &bnd);
    jt_buffer_alloc(&ctx->topo, &s->buf, bytes, ctx->comm_mem);
    jt_ctx_bound_comm(ctx, &bnd, &s->buf);
    s->data = s->buf.p;
#endif
    if (!s->data)
        jt_fatal("rank %d: cannot allocate %zu bytes for the payload", ctx->rank, bytes);

    jt_dbcast_cfg_default(&s->cfg);
    s->cfg.segment_bytes = s->segment;
    s->cfg.inline_bytes = s->inline_bytes;
    s->cfg.progress = mode == 1 ? JT_PROGRESS_THREAD : mode == 2 ? JT_PROGRESS_POLL
                                                                 : JT_PROGRESS_AUTO;
    s->model = s->cfg.model;
    if (mode == 1 && ctx->thread_level < MPI_THREAD_MULTIPLE)
        jt_usage_error("--progress-mode thread needs MPI_THREAD_MULTIPLE, which this MPI "
                       "library did not grant");
    s->db = jt_dbcast_init(ctx->comm, &s->cfg);
    jt_check_all(ctx, s->db ? NULL : "jt_dbcast_init refused the configuration (see above)");
    jt_dbcast_get_model(s->db, &s->model); /* fitted by the probe at init */
    if (!BC_SIMULATED) /* under SimGrid every rank reads the one simulated clock */
        jt_clock_offset_measure(ctx, &s->clock);
}

/* ---- points -------------------------------------------------------------------------- */

static size_t npoints(void *st)
{
    state *s = st;
    return (size_t)s->nroutes * s->nsizes * (size_t)s->nks;
}

/* Point i: routing outermost, then recipients, then size. */
static void split(const state *s, size_t i, int *route, size_t *size, int *ki)
{
    *size = i % s->nsizes;
    i /= s->nsizes;
    *ki = (int)(i % (size_t)s->nks);
    *route = s->routes[i / (size_t)s->nks];
}

static void point(void *st, size_t i, jt_point *p)
{
    state *s = st;
    int r, ki;
    size_t si;
    split(s, i, &r, &si, &ki);
    uint64_t b = s->sizes[si];
    int k = s->ks[ki].k;
    char hb[32];
    jt_format_bytes(b, hb, sizeof hb);
    snprintf(p->label, sizeof p->label, "%.14s %.6s k=%d", route_name(s, r), hb, k % 1000000);
    p->arg[0] = (double)b;
    p->metrics = metrics;
    p->nmetrics = 2;
    int used = r;
    size_t seg = 0;
    if (r == JT_ROUTE_AUTO)
        used = (int)jt_dbcast_route_choose((size_t)b, k, s->segment, &s->model, &seg);
    else if (r != R_MPI)
        seg = jt_dbcast_route_segment((jt_dbcast_routing)r, (size_t)b, k, s->segment, &s->model);
    jt_json_kstr(p->params, "routing", route_name(s, r));
    jt_json_kint(p->params, "size", (long long)b);
    jt_json_kint(p->params, "recipients", k);
    if (r != R_MPI) {
        jt_json_kstr(p->params, "chosen", route_name(s, used));
        if (jt_dbcast_route_is_pipelined((jt_dbcast_routing)used))
            jt_json_kint(p->params, "segment", (long long)seg);
        jt_json_kbool(p->params, "inline", b <= s->inline_bytes);
    }
}

/* ---- one sample ----------------------------------------------------------------------- */

static unsigned char pattern(unsigned long sample, size_t j)
{
    return (unsigned char)((sample * 131u + j * 7u + (j >> 8)) & 0xff);
}

static void verify(jt_ctx *ctx, const state *s, int r, size_t bytes)
{
    for (size_t j = 0; j < bytes; j++)
        if (s->data[j] != pattern(s->sample, j))
            jt_fatal("rank %d: routing %s, %zu bytes: byte %zu is %u, expected %u (the data "
                     "was not delivered)", ctx->rank, route_name(s, r), bytes, j, s->data[j],
                     pattern(s->sample, j));
}

static void run(jt_ctx *ctx, void *st, size_t i, jt_series *ser, size_t n)
{
    state *s = st;
    int r, ki;
    size_t si;
    split(s, i, &r, &si, &ki);
    size_t bytes = (size_t)s->sizes[si];
    const kset *k = &s->ks[ki];
    int root = ctx->rank == 0, member = k->member;
    for (size_t q = 0; q < n; q++, s->sample++) {
        jt_dbcast_req *req = NULL;
        if (s->check && root)
            for (size_t j = 0; j < bytes; j++)
                s->data[j] = pattern(s->sample, j);
        else if (s->check && member)
            memset(s->data, 0, bytes);
        /* The receive is posted before the start, as a runtime posts it when it schedules
         * the task that needs the data. */
        if (member && r != R_MPI &&
            jt_dbcast_recv(s->db, s->data, bytes, 0, BC_TAG, &req) != JT_DBCAST_OK)
            jt_fatal("rank %d: jt_dbcast_recv failed", ctx->rank);
        MPI_Barrier(ctx->comm);
        double t0 = 0, t_done = -INFINITY;
        if (root) {
            t0 = jt_now();
            if (r == R_MPI) {
                MPI_Bcast(s->data, (int)bytes, MPI_BYTE, 0, k->sub);
            } else {
                int rc = jt_dbcast_send_routed(s->db, s->data, bytes, BC_TAG, k->ranks, k->k,
                                               (jt_dbcast_routing)r, &req);
                if (rc == JT_DBCAST_OK)
                    rc = jt_dbcast_wait(s->db, &req, NULL);
                if (rc != JT_DBCAST_OK)
                    jt_fatal("rank 0: broadcast (%s) failed: %s", route_name(s, r),
                             jt_dbcast_strerror(rc));
            }
        } else if (member) {
            if (r == R_MPI) {
                MPI_Bcast(s->data, (int)bytes, MPI_BYTE, 0, k->sub);
                t_done = jt_clock_offset_now(&s->clock);
            } else {
                int rc = jt_dbcast_wait_arrived(s->db, req);
                t_done = jt_clock_offset_now(&s->clock);
                jt_dbcast_status stt;
                if (rc == JT_DBCAST_OK)
                    rc = jt_dbcast_wait(s->db, &req, &stt);
                if (rc != JT_DBCAST_OK || stt.bytes != bytes)
                    jt_fatal("rank %d: receive of a %zu-byte broadcast (%s) failed: %s",
                             ctx->rank, bytes, route_name(s, r), jt_dbcast_strerror(rc));
            }
            if (s->check)
                verify(ctx, s, r, bytes);
        }
        double last = 0;
        MPI_Reduce(&t_done, &last, 1, MPI_DOUBLE, MPI_MAX, 0, ctx->comm);
        if (root)
            jt_series_push(&ser[0], last - t0);
    }
}

static void teardown(jt_ctx *ctx, void *st)
{
    state *s = st;
    if (jt_dbcast_finalize(s->db) != JT_DBCAST_OK)
        jt_fatal("rank %d: jt_dbcast_finalize failed", ctx->rank);
    for (int i = 0; i < s->nks; i++) {
        if (s->ks[i].sub != MPI_COMM_NULL)
            MPI_Comm_free(&s->ks[i].sub);
        free(s->ks[i].ranks);
    }
#if BC_SIMULATED
    SMPI_SHARED_FREE(s->shared);
#else
    jt_buffer_free(&ctx->topo, &s->buf);
#endif
    free(s->ks);
    free(s->sizes);
}

static void meta(jt_ctx *ctx, void *st, jt_json *j)
{
    state *s = st;
    jt_json_key(j, "bcast");
    jt_json_object(j);
    jt_json_kint(j, "root", 0);
    jt_json_kstr(j, "recipients_choice", "spread: rank 1 + floor(i (P-1) / k), i < k");
    jt_json_kstr(j, "completion",
                 "barrier; root reads t0 and starts; each recipient reads its clock when the "
                 "data is in its buffer (jt_dbcast_wait_arrived; MPI_Bcast: on return); "
                 "sample = max over recipients - t0 (MPI_Reduce MAX, untimed)");
    jt_json_kstr(j, "progress_mode",
                 jt_dbcast_progress_mode_used(s->db) == JT_PROGRESS_THREAD ? "thread" : "poll");
    jt_json_kbool(j, "simulated", BC_SIMULATED);
    jt_json_kstr(j, "payload", BC_SIMULATED ? "SMPI_SHARED_MALLOC" : "hwloc buffer");
    jt_clock_offset_json(&s->clock, BC_SIMULATED, j);
    jt_json_key(j, "model");
    jt_json_object(j);
    jt_json_knum(j, "latency_s", s->model.latency);
    jt_json_knum(j, "overhead_s", s->model.overhead);
    jt_json_knum(j, "bandwidth_Bps", s->model.bandwidth);
    jt_json_knum(j, "forward_delay_s", s->model.forward_delay);
    jt_json_knum(j, "duplex", s->model.duplex);
    jt_json_kstr(j, "source", s->model.fitted ? "probe at init (docs/dbcast.md, Cost model)"
                                              : "given (jt_dbcast_cfg.model)");
    jt_json_key(j, "pieces"); /* [from_bytes, latency_s, bandwidth_Bps] */
    jt_json_array(j);
    for (int k = 0; k < s->model.npieces; k++) {
        jt_json_array(j);
        jt_json_int(j, (long long)s->model.piece_bytes[k]);
        jt_json_num(j, s->model.piece_latency[k]);
        jt_json_num(j, s->model.piece_bandwidth[k]);
        jt_json_end(j);
    }
    jt_json_end(j);
    jt_json_end(j);
    jt_json_kint(j, "segment_cfg", (long long)s->segment);
    jt_json_kint(j, "inline_bytes", (long long)s->inline_bytes);
    jt_json_end(j);
    (void)ctx;
}

const jt_bench jt_bench_bcast = {
    .name = "bcast",
    .summary = "Broadcast from rank 0 to k recipients: time until the last recipient holds the "
               "data, for each routing of the dynamic broadcast (jt_dbcast) and for MPI_Bcast\n"
               "on a communicator of root + recipients built beforehand.",
    .options = options,
    .metrics = metrics,
    .default_sizes = "8,1K,64K,1M,16M",
    .thread_level = BC_THREAD_LEVEL,
    .min_ranks = 2,
    .nseries = 1,
    .label_head = "Point",
    .state_size = sizeof(state),
    .read = read_options,
    .setup = setup,
    .npoints = npoints,
    .point = point,
    .run = run,
    .teardown = teardown,
    .meta = meta,
};
