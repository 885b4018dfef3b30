/* The context's messages, collective input checks, gathers to rank 0, and the bindings a
 * benchmark's setup registers for the metadata. */
#include "harness/internal.h"

#include "core/errors.h"
#include "topo/bind.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void jt_warn(jt_ctx *ctx, const char *fmt, ...)
{
    if (ctx->nwarn == JT_WARN_MAX)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->warn[ctx->nwarn++], sizeof ctx->warn[0], fmt, ap);
    va_end(ap);
}

/* Input that only some ranks can judge (their host's topology, rank 0's output directory):
 * the lowest rank that found something wrong says it, and every rank leaves with status 2. */
void jt_check_all(jt_ctx *ctx, const char *err)
{
    int mine = err ? ctx->rank : INT_MAX, first;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, ctx->comm);
    if (first == INT_MAX)
        return;
    if (ctx->rank == first) {
        fprintf(stderr, "jostle-bench: error: %s\n", err);
        fflush(stderr);
    }
    MPI_Finalize();
    exit(JT_EXIT_USAGE);
}

/* Gathers one string per rank on rank 0 (out[r] malloc'ed there, NULL elsewhere). */
char **jt_gather_text(jt_ctx *ctx, const char *s)
{
    int len = (int)strlen(s) + 1;
    int *lens = NULL, *displs = NULL;
    char *all = NULL, **out = NULL;
    if (ctx->rank == 0)
        lens = calloc((size_t)ctx->size, sizeof *lens);
    MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, ctx->comm);
    if (ctx->rank == 0) {
        displs = calloc((size_t)ctx->size, sizeof *displs);
        long total = 0;
        for (int r = 0; r < ctx->size; r++) {
            displs[r] = (int)total;
            total += lens[r];
        }
        all = malloc((size_t)total);
    }
    MPI_Gatherv(s, len, MPI_CHAR, all, lens, displs, MPI_CHAR, 0, ctx->comm);
    if (ctx->rank == 0) {
        out = calloc((size_t)ctx->size, sizeof *out);
        for (int r = 0; r < ctx->size; r++)
            out[r] = strdup(all + displs[r]);
        free(all);
        free(lens);
        free(displs);
    }
    return out;
}

void jt_free_text(jt_ctx *ctx, char **t)
{
    if (!t)
        return;
    for (int r = 0; r < ctx->size; r++)
        free(t[r]);
    free(t);
}

static void bound_entry(jt_ctx *ctx, jt_json *j, const jt_binding *b, const jt_buffer *buf)
{
    jt_json_object(j);
    jt_binding_json(b, j);
    if (buf)
        jt_buffer_json(buf, j);
    jt_json_end(j);
    if (b->ok && ctx->nbound < (int)(sizeof ctx->bound / sizeof ctx->bound[0]))
        ctx->bound[ctx->nbound++] = b->core;
    if (!b->ok && ctx->topo.this_system)
        jt_warn(ctx, "rank %d: %s", ctx->rank, b->note);
    if (buf && buf->note[0] && ctx->topo.this_system)
        jt_warn(ctx, "rank %d: %s", ctx->rank, buf->note);
}

void jt_ctx_bound_comm(jt_ctx *ctx, const jt_binding *b, const jt_buffer *buf)
{
    jt_json_reset(&ctx->bind_comm);
    bound_entry(ctx, &ctx->bind_comm, b, buf);
}

void jt_ctx_bound_compute(jt_ctx *ctx, const jt_binding *b, const jt_buffer *buf)
{
    /* An array whose closing bracket is added when the metadata is written. */
    if (!ctx->bind_compute.buf)
        jt_json_array(&ctx->bind_compute);
    bound_entry(ctx, &ctx->bind_compute, b, buf);
}

void jt_ctx_bound_role(jt_ctx *ctx, const char *role, const jt_binding *b, const jt_buffer *buf)
{
    /* An object of roles whose members gather_meta splices into the rank's binding. */
    if (!ctx->bind_roles.buf)
        jt_json_object(&ctx->bind_roles);
    jt_json_key(&ctx->bind_roles, role);
    bound_entry(ctx, &ctx->bind_roles, b, buf);
}
