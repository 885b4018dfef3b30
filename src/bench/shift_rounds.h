/* The rounds of a shift run (src/bench/shift.c): the shift pattern's (round k: every rank r
 * sends to r+k), all of them or --shifts k1,k2,…, or the explicit rounds of --pairs FILE; and
 * the chunks of --links-per-point links a point measures.  A round never makes a rank send
 * twice or receive twice. */
#ifndef JT_BENCH_SHIFT_ROUNDS_H
#define JT_BENCH_SHIFT_ROUNDS_H

#include <stddef.h>

typedef struct jt_shift_link {
    int round, src, dst;
} jt_shift_link;

typedef struct jt_shift_rounds {
    int n, group;           /* ranks; links a chunk */
    int *shifts;            /* the shift pattern's distances, one a round; NULL: --pairs */
    jt_shift_link *links;   /* --pairs: by round */
    size_t nlinks;
    size_t *round_at;       /* --pairs: round q's links are round_at[q] .. round_at[q+1]-1 */
    size_t nrounds;
    size_t *chunk_at;       /* --pairs: chunk c's first link; a chunk never spans two rounds */
    size_t nchunks;
} jt_shift_rounds;

/* --pairs FILE, one link a line (ROUND SRC DST, rounds in order), read before MPI starts:
 * a file that cannot be read or a line that is not allowed is a usage error (exit 2). */
void jt_shift_read_pairs(jt_shift_rounds *r, const char *path);
/* The rounds for N ranks, from --shifts SHIFTS ("all" or a list) or the links read; NULL, or
 * MSG (LEN bytes) naming what is not allowed. */
const char *jt_shift_rounds_index(jt_shift_rounds *r, int n, const char *shifts, char *msg,
                                  size_t len);
/* Link j of round q. */
jt_shift_link jt_shift_link_at(const jt_shift_rounds *r, size_t q, size_t j);
size_t jt_shift_chunks(const jt_shift_rounds *r);
/* Chunk c: its round q, its first link j0 and how many links. */
void jt_shift_chunk(const jt_shift_rounds *r, size_t c, size_t *q, size_t *j0, size_t *count);
void jt_shift_rounds_free(jt_shift_rounds *r);

#endif
