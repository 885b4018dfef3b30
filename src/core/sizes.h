/* Message-size lists: "4,64,1K", powers of two "1K:1G", linear ranges "1:1024:1". */
#ifndef JT_SIZES_H
#define JT_SIZES_H

#include <stddef.h>
#include <stdint.h>

#define JT_SIZE_MAX_BYTES ((uint64_t)1 << 40) /* beyond any message an MPI count can hold */
#define JT_SIZES_MAX_POINTS 100000

/* Parses one byte count with an optional binary suffix (K, M, G, T; KiB… accepted).
 * Returns 0, or -1 with a message in err naming the value. */
int jt_parse_bytes(const char *s, uint64_t *out, char *err, size_t errlen);

/* Parses a comma-separated list of items, each "N", "lo:hi" (lo, 2lo, 4lo, … ≤ hi; from 0:
 * 0, 1, 2, 4, …) or "lo:hi:step" (every step bytes).  *sizes is malloc'ed, in the order
 * given.  Returns 0, or -1 with a message in err. */
int jt_sizes_parse(const char *spec, uint64_t **sizes, size_t *n, char *err, size_t errlen);

/* Formats a byte count the way tables and messages show it (4, 1K, 64M, 1G, 1000). */
void jt_format_bytes(uint64_t b, char *buf, size_t len);

#endif
