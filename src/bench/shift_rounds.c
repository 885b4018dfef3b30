#include "bench/shift_rounds.h"

#include "core/errors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void jt_shift_read_pairs(jt_shift_rounds *r, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        jt_usage_error("--pairs '%s': cannot read it", path);
    size_t cap = 0;
    long q, a, b;
    int got;
    while ((got = fscanf(f, "%ld %ld %ld", &q, &a, &b)) == 3) {
        if (q < 0 || a < 0 || b < 0 || a == b || q > 1 << 30 || a > 1 << 30 || b > 1 << 30)
            jt_usage_error("--pairs '%s': line %zu '%ld %ld %ld' is not allowed; expected ROUND "
                           "SRC DST, ranks >= 0, SRC != DST", path, r->nlinks + 1, q, a, b);
        if (r->nlinks && q < r->links[r->nlinks - 1].round)
            jt_usage_error("--pairs '%s': line %zu: round %ld after round %d; rounds in order",
                           path, r->nlinks + 1, q, r->links[r->nlinks - 1].round);
        if (r->nlinks == cap) {
            cap = cap ? 2 * cap : 64;
            r->links = realloc(r->links, cap * sizeof *r->links);
            if (!r->links)
                jt_fatal("out of memory for --pairs");
        }
        r->links[r->nlinks++] = (jt_shift_link){(int)q, (int)a, (int)b};
    }
    int bad = got != EOF || ferror(f);
    fclose(f);
    if (bad || r->nlinks == 0)
        jt_usage_error("--pairs '%s': line %zu is not ROUND SRC DST (three integers)", path,
                       r->nlinks + 1);
}

static const char *parse_shifts(jt_shift_rounds *r, const char *text, char *msg, size_t len)
{
    int n = r->n;
    r->shifts = calloc((size_t)n, sizeof *r->shifts);
    if (strcmp(text, "all") == 0) {
        for (int k = 1; k < n; k++)
            r->shifts[r->nrounds++] = k;
        return NULL;
    }
    char *seen = calloc((size_t)n, 1);
    const char *p = text, *err = NULL;
    while (*p && !err) {
        char *end;
        long k = strtol(p, &end, 10);
        if (end == p || (*end && *end != ',') || k < 1 || k > n - 1 || seen[k]) {
            snprintf(msg, len, "--shifts '%s': '%.*s' is not allowed; expected distances from 1 "
                     "to %d (the ranks - 1), comma-separated, each once", text,
                     (int)strcspn(p, ","), p, n - 1);
            err = msg;
        } else {
            seen[k] = 1;
            r->shifts[r->nrounds++] = (int)k;
            p = *end ? end + 1 : end;
        }
    }
    free(seen);
    return err ? err : r->nrounds ? NULL : "--shifts: no shift given";
}

static const char *index_pairs(jt_shift_rounds *r, char *msg, size_t len)
{
    r->round_at = malloc((r->nlinks + 1) * sizeof *r->round_at);
    r->chunk_at = malloc((r->nlinks + 1) * sizeof *r->chunk_at);
    char *sends = calloc((size_t)r->n, 1), *recvs = calloc((size_t)r->n, 1);
    const char *err = NULL;
    for (size_t i = 0; i < r->nlinks && !err; i++) {
        const jt_shift_link *l = &r->links[i];
        int first = i == 0 || l->round != r->links[i - 1].round;
        if (first) {
            r->round_at[r->nrounds++] = i;
            memset(sends, 0, (size_t)r->n);
            memset(recvs, 0, (size_t)r->n);
        }
        if (first || i - r->chunk_at[r->nchunks - 1] == (size_t)r->group)
            r->chunk_at[r->nchunks++] = i;
        if (l->src >= r->n || l->dst >= r->n) {
            snprintf(msg, len, "--pairs: link %d>%d of round %d names a rank beyond the %d of "
                     "this run", l->src, l->dst, l->round, r->n);
            err = msg;
        } else if (sends[l->src]++ || recvs[l->dst]++) {
            snprintf(msg, len, "--pairs: round %d has rank %d %s twice; a rank sends once and "
                     "receives once a round", l->round, sends[l->src] > 1 ? l->src : l->dst,
                     sends[l->src] > 1 ? "sending" : "receiving");
            err = msg;
        }
    }
    r->round_at[r->nrounds] = r->nlinks;
    r->chunk_at[r->nchunks] = r->nlinks;
    free(sends);
    free(recvs);
    return err;
}

const char *jt_shift_rounds_index(jt_shift_rounds *r, int n, const char *shifts, char *msg,
                                  size_t len)
{
    r->n = n;
    return r->links ? index_pairs(r, msg, len) : parse_shifts(r, shifts, msg, len);
}

jt_shift_link jt_shift_link_at(const jt_shift_rounds *r, size_t q, size_t j)
{
    if (r->shifts) {
        int k = r->shifts[q];
        return (jt_shift_link){k, (int)j, (int)((j + (size_t)k) % (size_t)r->n)};
    }
    return r->links[r->round_at[q] + j];
}

/* The shift pattern's rounds all have N links: its chunks are counted, not kept (a million
 * of them at 1024 ranks, on every rank). */
static size_t per_round(const jt_shift_rounds *r)
{
    return ((size_t)r->n + (size_t)r->group - 1) / (size_t)r->group;
}

size_t jt_shift_chunks(const jt_shift_rounds *r)
{
    return r->shifts ? r->nrounds * per_round(r) : r->nchunks;
}

void jt_shift_chunk(const jt_shift_rounds *r, size_t c, size_t *q, size_t *j0, size_t *count)
{
    if (r->shifts) {
        *q = c / per_round(r);
        *j0 = c % per_round(r) * (size_t)r->group;
        *count = (size_t)r->n - *j0 < (size_t)r->group ? (size_t)r->n - *j0 : (size_t)r->group;
        return;
    }
    size_t at = r->chunk_at[c];
    *q = 0;
    while (r->round_at[*q + 1] <= at)
        (*q)++;
    *j0 = at - r->round_at[*q];
    *count = r->chunk_at[c + 1] - at;
}

void jt_shift_rounds_free(jt_shift_rounds *r)
{
    free(r->shifts);
    free(r->links);
    free(r->round_at);
    free(r->chunk_at);
}
