/*
 * jt_dbcast, the probe at init: a few messages between two ranks measure what the cost
 * model needs (dbcast_model.c fits it), so that the segment size and the automatic routing
 * follow the platform rather than assumed constants. docs/dbcast.md, "Cost model".
 *
 * Between rank 0 and rank size/2 (on a cluster, likely two nodes), per probe size s:
 *   one_way(s)  half the least of PROBE_REPS round trips (blocking ping-pong);
 *   gap(s)      W messages posted at once, the receiver's ack when all are in: the time
 *               beyond one message, per extra message;
 * and at the largest size, gap_both: both ranks stream W messages to each other at once
 * (a link shared by both directions takes twice as long). Rank 0 fits the model and every
 * rank gets it (MPI_Bcast), so that every root decides alike. Cost: about 30 messages of
 * at most 64 KiB, about a millisecond on a 10 Gbit/s network.
 */
#include "comm/dbcast_internal.h"

#include <math.h>
#include <stdlib.h>

#define PROBE_TAG 0 /* the header receive (TAG_HDR) is posted after the probe */
#define PROBE_REPS 2
#define W 4

/* Sizes 2 to 4 times apart, denser where a network changes regime (SMPI's factors have five
 * pieces below 8 KiB; a real network's eager protocols), then the candidate segments. A
 * probed size stands for the sizes nearest it (in ratio): SMPI's pieces start at 257,
 * 732, 1426, 3484, 5776, 9376 and 15424 B, near the geometric means of these. */
static const size_t probe_bytes[JT_DBCAST_PROBE_SIZES] = {8,    128,  512,   1024, 2048,
                                                          4096, 8192, 16384, 65536};

static void measure(jt_dbcast_ctx *ctx, int peer, int lead, unsigned char *buf,
                    jt_dbcast_probe *p)
{
    MPI_Comm c = ctx->comm;
    MPI_Request rq[2 * W];
    MPI_Status sts[2 * W]; /* a real array: MPICH's header warns about MPI_STATUSES_IGNORE */
    for (int k = 0; k < JT_DBCAST_PROBE_SIZES; k++) {
        int s = (int)probe_bytes[k];
        double best = INFINITY;
        for (int rep = 0; rep < PROBE_REPS; rep++) {
            double t0 = MPI_Wtime();
            if (lead) {
                MPICHECK(ctx, MPI_Send(buf, s, MPI_BYTE, peer, PROBE_TAG, c));
                MPICHECK(ctx, MPI_Recv(buf, s, MPI_BYTE, peer, PROBE_TAG, c, MPI_STATUS_IGNORE));
            } else {
                MPICHECK(ctx, MPI_Recv(buf, s, MPI_BYTE, peer, PROBE_TAG, c, MPI_STATUS_IGNORE));
                MPICHECK(ctx, MPI_Send(buf, s, MPI_BYTE, peer, PROBE_TAG, c));
            }
            double dt = MPI_Wtime() - t0;
            best = dt < best ? dt : best;
        }
        p->bytes[k] = probe_bytes[k];
        p->one_way[k] = best / 2;
        double t0 = MPI_Wtime();
        for (int i = 0; i < W; i++) {
            if (lead)
                MPICHECK(ctx, MPI_Isend(buf + (size_t)i * s, s, MPI_BYTE, peer, PROBE_TAG, c, &rq[i]));
            else
                MPICHECK(ctx, MPI_Irecv(buf + (size_t)i * s, s, MPI_BYTE, peer, PROBE_TAG, c, &rq[i]));
        }
        MPICHECK(ctx, MPI_Waitall(W, rq, sts));
        if (lead)
            MPICHECK(ctx, MPI_Recv(NULL, 0, MPI_BYTE, peer, PROBE_TAG, c, MPI_STATUS_IGNORE));
        else
            MPICHECK(ctx, MPI_Send(NULL, 0, MPI_BYTE, peer, PROBE_TAG, c));
        p->gap[k] = (MPI_Wtime() - t0 - p->one_way[k] - p->one_way[0]) / (W - 1);
    }
    /* both directions at once, largest size */
    int s = (int)probe_bytes[JT_DBCAST_PROBE_SIZES - 1];
    double t0 = MPI_Wtime();
    if (lead)
        MPICHECK(ctx, MPI_Send(NULL, 0, MPI_BYTE, peer, PROBE_TAG, c));
    else
        MPICHECK(ctx, MPI_Recv(NULL, 0, MPI_BYTE, peer, PROBE_TAG, c, MPI_STATUS_IGNORE));
    for (int i = 0; i < W; i++) {
        MPICHECK(ctx, MPI_Irecv(buf + (size_t)i * s, s, MPI_BYTE, peer, PROBE_TAG + 1, c, &rq[i]));
        MPICHECK(ctx, MPI_Isend(buf + (size_t)(W + i) * s, s, MPI_BYTE, peer, PROBE_TAG + 1, c,
                                &rq[W + i]));
    }
    MPICHECK(ctx, MPI_Waitall(2 * W, rq, sts));
    int last = JT_DBCAST_PROBE_SIZES - 1;
    p->gap_both = (MPI_Wtime() - t0 - p->one_way[0] - p->one_way[last]) / (W - 1);
}

/* The model as doubles, for MPI_Bcast between hosts of any byte order. */
enum { NV = 6 + 3 * JT_DBCAST_MODEL_PIECES };

static void pack(const jt_dbcast_model *m, double *v)
{
    v[0] = m->latency, v[1] = m->overhead, v[2] = m->bandwidth, v[3] = m->forward_delay;
    v[4] = m->duplex, v[5] = m->npieces;
    for (int k = 0; k < JT_DBCAST_MODEL_PIECES; k++) {
        v[6 + 3 * k] = (double)m->piece_bytes[k];
        v[7 + 3 * k] = m->piece_latency[k];
        v[8 + 3 * k] = m->piece_bandwidth[k];
    }
}

static void unpack(const double *v, jt_dbcast_model *m)
{
    m->latency = v[0], m->overhead = v[1], m->bandwidth = v[2], m->forward_delay = v[3];
    m->duplex = v[4], m->npieces = (int)v[5];
    for (int k = 0; k < JT_DBCAST_MODEL_PIECES; k++) {
        m->piece_bytes[k] = (size_t)v[6 + 3 * k];
        m->piece_latency[k] = v[7 + 3 * k];
        m->piece_bandwidth[k] = v[8 + 3 * k];
    }
    m->fitted = 1;
}

void jt_dbcast_probe_fit(jt_dbcast_ctx *ctx)
{
    if (ctx->size < 2)
        return;
    int lead = ctx->rank == 0, peer = lead ? ctx->size / 2 : 0;
    double v[NV + 1] = {0}; /* v[NV]: 1 if the fit is usable */
    if (lead || ctx->rank == ctx->size / 2) {
        size_t cap = 2 * W * probe_bytes[JT_DBCAST_PROBE_SIZES - 1];
        unsigned char *buf = jt_dbcast_xcalloc(ctx, cap, 1);
        jt_dbcast_probe p;
        measure(ctx, peer, lead, buf, &p);
        free(buf);
        if (lead) {
            jt_dbcast_model m = ctx->model;
            jt_dbcast_model_fit(&p, &m);
            pack(&m, v);
            v[NV] = jt_dbcast_model_check(&m, NULL) == 0;
        }
    }
    MPICHECK(ctx, MPI_Bcast(v, NV + 1, MPI_DOUBLE, 0, ctx->comm));
    if (v[NV] == 1.0) /* else the measure was unusable (a clock step?): keep cfg's model */
        unpack(v, &ctx->model);
}
