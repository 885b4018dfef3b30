/* The run file: JSON Lines written to <path>.partial, one write(2) per line so that a
 * signal never leaves half a line, renamed to <path> when the run ends well. */
#ifndef JT_RECORD_H
#define JT_RECORD_H

#include <stddef.h>

struct jt_json;

typedef struct jt_record {
    int fd;             /* -1 when closed or not writing */
    char path[4096];    /* final name */
    char partial[4110]; /* name while running */
    long points;        /* point lines written */
    double t0;
    int samples_fd;              /* --keep-samples: <path>.samples (.partial while running) */
    char samples_path[4200];
    long long samples_at;        /* bytes written to it */
    char *held;         /* the lines of the point being written (jt_record_point_begin) */
    size_t held_len, held_cap;
    long held_points;
    int holding;
} jt_record;

/* Opens <path>.partial for writing; refuses a directory that does not exist or is not
 * writable, with a message in err naming it.  Returns 0 or -1. */
int jt_record_open(jt_record *r, const char *path, char *err, size_t errlen);
/* What jt_record_open checks before it creates anything: the path's length, its directory
 * (exists, writable), the path not a directory.  0, or -1 with the message. */
int jt_record_check_path(const char *path, char *err, size_t errlen);
void jt_record_line(jt_record *r, const struct jt_json *j);
void jt_record_point(jt_record *r, const struct jt_json *j); /* a line that counts as a point */
/* --keep-samples: opens <path>.samples.partial beside the run file (format: docs/records.md,
 * "Samples").  Returns 0 or -1 with err. */
int jt_record_samples_open(jt_record *r, char *err, size_t errlen);
/* Appends n samples as little-endian IEEE-754 binary64; returns their byte offset. */
long long jt_record_samples(jt_record *r, const double *x, size_t n);
/* The samples file's name without its directory (what the meta line names). */
const char *jt_record_samples_name(const jt_record *r);

/* The lines of one point, between these two calls, reach the file in one write(2): a run
 * stopped by any signal holds whole points only (jostle resumes it from its last point). */
void jt_record_point_begin(jt_record *r);
void jt_record_point_end(jt_record *r);
/* Writes the end line; renames to the final name only when status is "ok". */
void jt_record_close(jt_record *r, const char *status, const char *message);

/* On SIGINT, SIGTERM or SIGHUP: append an "interrupted" end line, keep the .partial file,
 * and die of the signal.  Only one record can be guarded at a time (signals are global). */
void jt_record_guard(jt_record *r);
void jt_record_unguard(void);

#endif
