/* The offset of every rank's clock to rank 0's; see clock_offset.h. */
#include "bench/clock_offset.h"

#include "core/timer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { EXCHANGES = 16, TAG_EXCHANGE = 11, TAG_OFFSET = 12 };

void jt_clock_offset_measure(jt_ctx *ctx, jt_clock_offset *out)
{
    memset(out, 0, sizeof *out);
    char root_host[sizeof ctx->host];
    memcpy(root_host, ctx->host, sizeof root_host);
    MPI_Bcast(root_host, (int)sizeof root_host, MPI_CHAR, 0, ctx->comm);
    int remote = strcmp(root_host, ctx->host) != 0, *flags = NULL;
    if (ctx->rank == 0)
        flags = calloc((size_t)ctx->size, sizeof *flags);
    MPI_Gather(&remote, 1, MPI_INT, flags, 1, MPI_INT, 0, ctx->comm);
    if (ctx->rank == 0) {
        for (int r = 1; r < ctx->size; r++) {
            if (!flags[r])
                continue;
            double best = INFINITY, off = 0, t;
            for (int q = 0; q < EXCHANGES; q++) {
                double t0 = jt_now();
                MPI_Send(&t0, 1, MPI_DOUBLE, r, TAG_EXCHANGE, ctx->comm);
                MPI_Recv(&t, 1, MPI_DOUBLE, r, TAG_EXCHANGE, ctx->comm, MPI_STATUS_IGNORE);
                double t1 = jt_now();
                if (t1 - t0 < best) {
                    best = t1 - t0;
                    off = t - 0.5 * (t0 + t1);
                }
            }
            MPI_Send(&off, 1, MPI_DOUBLE, r, TAG_OFFSET, ctx->comm);
            out->corrected++;
            out->max_error = fmax(out->max_error, best / 2);
            out->max_offset = fmax(out->max_offset, fabs(off));
        }
        free(flags);
    } else if (remote) {
        for (int q = 0; q < EXCHANGES; q++) {
            double t;
            MPI_Recv(&t, 1, MPI_DOUBLE, 0, TAG_EXCHANGE, ctx->comm, MPI_STATUS_IGNORE);
            t = jt_now();
            MPI_Send(&t, 1, MPI_DOUBLE, 0, TAG_EXCHANGE, ctx->comm);
        }
        MPI_Recv(&out->offset, 1, MPI_DOUBLE, 0, TAG_OFFSET, ctx->comm, MPI_STATUS_IGNORE);
    }
}
