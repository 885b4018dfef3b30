/* Every rank's clock mapped to rank 0's; see clock_offset.h. */
#include "bench/clock_offset.h"

#include "core/timer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* 10 windows 5 ms apart, 8 exchanges each: a fit over ~50 ms, which sees a drift of a few
 * ppm (the least round trip of a window is within ~0.1 us of the others here). */
enum { WINDOWS = 10, PER_WINDOW = 8, TAG_EXCHANGE = 11, TAG_MODEL = 12 };
#define GAP_S 0.005

static void pause_between_windows(void)
{
    struct timespec ts = {0, (long)(GAP_S * 1e9)};
    nanosleep(&ts, NULL);
}

void jt_clock_offset_measure(jt_ctx *ctx, jt_clock_offset *out)
{
    memset(out, 0, sizeof *out);
    char root_host[sizeof ctx->host];
    memcpy(root_host, ctx->host, sizeof root_host);
    MPI_Bcast(root_host, (int)sizeof root_host, MPI_CHAR, 0, ctx->comm);
    out->remote = strcmp(root_host, ctx->host) != 0;
    int P = ctx->size, *flags = NULL;
    if (ctx->rank == 0)
        flags = calloc((size_t)P, sizeof *flags);
    MPI_Gather(&out->remote, 1, MPI_INT, flags, 1, MPI_INT, 0, ctx->comm);
    if (ctx->rank == 0) {
        /* window by window, every rank in turn: one pause per window for all of them */
        jt_clock_exchange *ex = malloc((size_t)P * WINDOWS * PER_WINDOW * sizeof *ex);
        for (int w = 0; w < WINDOWS; w++) {
            for (int r = 1; r < P; r++)
                for (int q = 0; q < PER_WINDOW; q++) {
                    jt_clock_exchange *e = &ex[((size_t)r * WINDOWS + w) * PER_WINDOW + q];
                    e->t0 = jt_now();
                    MPI_Send(&e->t0, 1, MPI_DOUBLE, r, TAG_EXCHANGE, ctx->comm);
                    MPI_Recv(&e->tr, 1, MPI_DOUBLE, r, TAG_EXCHANGE, ctx->comm, MPI_STATUS_IGNORE);
                    e->t1 = jt_now();
                }
            if (w + 1 < WINDOWS)
                pause_between_windows();
        }
        for (int r = 1; r < P; r++) {
            jt_clock_model m;
            jt_clock_fit(&ex[(size_t)r * WINDOWS * PER_WINDOW], WINDOWS, PER_WINDOW, &m);
            MPI_Send(&m, (int)sizeof m, MPI_BYTE, r, TAG_MODEL, ctx->comm);
            out->measured++;
            out->corrected += flags[r];
            out->max_error = fmax(out->max_error, m.error);
            out->max_offset = fmax(out->max_offset, fabs(m.offset));
            out->max_drift = fmax(out->max_drift, fabs(m.drift));
            out->max_residual = fmax(out->max_residual, m.residual);
            out->span = m.span;
        }
        free(ex);
        free(flags);
    } else {
        for (int q = 0; q < WINDOWS * PER_WINDOW; q++) {
            double t;
            MPI_Recv(&t, 1, MPI_DOUBLE, 0, TAG_EXCHANGE, ctx->comm, MPI_STATUS_IGNORE);
            t = jt_now();
            MPI_Send(&t, 1, MPI_DOUBLE, 0, TAG_EXCHANGE, ctx->comm);
        }
        MPI_Recv(&out->model, (int)sizeof out->model, MPI_BYTE, 0, TAG_MODEL, ctx->comm,
                 MPI_STATUS_IGNORE);
    }
}

double jt_clock_offset_now(const jt_clock_offset *c)
{
    double t = jt_now();
    return c->remote ? jt_clock_to_reference(&c->model, t) : t;
}

void jt_clock_offset_json(const jt_clock_offset *c, int simulated, jt_json *j)
{
    jt_json_key(j, "clock");
    jt_json_object(j);
    jt_json_kstr(j, "method", simulated ? "simulated clock (global)"
                 : c->corrected ? "same host: shared CLOCK_MONOTONIC; other hosts: offset and "
                                  "drift fitted to 10 windows of 8 exchanges (HCA)"
                                : "one host: shared CLOCK_MONOTONIC (the model fitted to 10 "
                                  "windows of 8 exchanges is recorded, not applied)");
    jt_json_kint(j, "corrected_ranks", c->corrected);
    jt_json_kint(j, "measured_ranks", c->measured);
    jt_json_knum(j, "max_error_s", c->max_error);
    jt_json_knum(j, "max_offset_s", c->max_offset);
    jt_json_knum(j, "max_drift_ppm", c->max_drift * 1e6);
    jt_json_knum(j, "max_residual_s", c->max_residual);
    jt_json_knum(j, "fit_span_s", c->span);
    jt_json_end(j);
}
