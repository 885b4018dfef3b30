#include "core/record.h"

#include "core/errors.h"
#include "core/json.h"
#include "core/timer.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

int jt_record_check_path(const char *path, char *err, size_t errlen)
{
    jt_record r;
    if (strlen(path) >= sizeof r.path) {
        snprintf(err, errlen, "output path '%s' is too long", path);
        return -1;
    }
    char dir[sizeof r.path];
    snprintf(dir, sizeof dir, "%s", path);
    const char *d = dirname(dir);
    struct stat st;
    if (stat(d, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "output directory '%s' does not exist: create it first", d);
        return -1;
    }
    if (access(d, W_OK | X_OK) != 0) {
        snprintf(err, errlen, "output directory '%s' is not writable", d);
        return -1;
    }
    if (path[0] == '\0' || path[strlen(path) - 1] == '/' || (stat(path, &st) == 0 &&
                                                             S_ISDIR(st.st_mode))) {
        snprintf(err, errlen, "output '%s' is a directory: give a file name (FILE.jsonl)", path);
        return -1;
    }
    return 0;
}

int jt_record_open(jt_record *r, const char *path, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->fd = -1;
    r->samples_fd = -1;
    if (jt_record_check_path(path, err, errlen))
        return -1;
    snprintf(r->path, sizeof r->path, "%s", path);
    snprintf(r->partial, sizeof r->partial, "%s.partial", path);
    r->fd = open(r->partial, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (r->fd < 0) {
        snprintf(err, errlen, "cannot write output file '%s': %s (the directory must be writable)",
                 r->partial, strerror(errno));
        return -1;
    }
    /* Held until the process ends, however it ends: jostle waits for it before it gives a
     * file whose writer was killed (a launcher's SIGKILL beats the signal handler) its end
     * line, so that the two never both write one. Advisory; a file system without locks
     * (some NFS set-ups) only loses that wait. */
    (void)flock(r->fd, LOCK_EX | LOCK_NB);
    r->t0 = jt_now();
    return 0;
}

static void write_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            jt_fatal("writing the run file failed: %s", strerror(errno));
        s += w;
        n -= (size_t)w;
    }
}

/* A signal may be taken by any thread of the process (MPI libraries run threads of their own),
 * so the handler must not write its end line while the writing thread is inside a line: the
 * writer marks itself busy (with the signals blocked on its own thread, so that the handler never
 * waits for the thread it interrupted), and skips its line once the handler has begun. */
static atomic_int busy, closing;

/* Appends a line to the point being held (not yet written). */
static void hold_line(jt_record *r, const jt_json *j, int point)
{
    if (r->held_len + j->len + 1 > r->held_cap) {
        size_t cap = 2 * (r->held_len + j->len + 1);
        char *p = realloc(r->held, cap);
        if (!p)
            jt_fatal("out of memory for a point's record lines");
        r->held = p;
        r->held_cap = cap;
    }
    memcpy(r->held + r->held_len, j->buf, j->len);
    r->held[r->held_len + j->len] = '\n';
    r->held_len += j->len + 1;
    r->held_points += point;
}

/* Writes BUF (whole lines) and counts POINTS of them, safe from the signal handler. */
static void write_lines(jt_record *r, const char *buf, size_t len, long points)
{
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    atomic_store(&busy, 1);
    if (r->fd >= 0 && !atomic_load(&closing)) {
        /* One write for the lines: a signal cannot split them. */
        write_all(r->fd, buf, len);
        r->points += points; /* the lines and their count change together */
    }
    atomic_store(&busy, 0);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void write_line(jt_record *r, const jt_json *j, int point)
{
    if (r->holding && r->fd >= 0) {
        hold_line(r, j, point);
        return;
    }
    char *line = j->buf;
    line[j->len] = '\n';
    write_lines(r, line, j->len + 1, point);
    line[j->len] = '\0';
}

void jt_record_point_begin(jt_record *r)
{
    r->holding = 1;
    r->held_len = 0;
    r->held_points = 0;
}

void jt_record_point_end(jt_record *r)
{
    r->holding = 0;
    if (r->held_len)
        write_lines(r, r->held, r->held_len, r->held_points);
    r->held_len = 0;
}

void jt_record_line(jt_record *r, const jt_json *j) { write_line(r, j, 0); }

int jt_record_samples_open(jt_record *r, char *err, size_t errlen)
{
    snprintf(r->samples_path, sizeof r->samples_path, "%s.samples.partial", r->path);
    r->samples_fd = open(r->samples_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (r->samples_fd < 0) {
        snprintf(err, errlen, "cannot write samples file '%s': %s", r->samples_path,
                 strerror(errno));
        return -1;
    }
    r->samples_path[strlen(r->samples_path) - strlen(".partial")] = '\0';
    return 0;
}

long long jt_record_samples(jt_record *r, const double *x, size_t n)
{
    long long at = r->samples_at;
    if (r->samples_fd < 0)
        return at;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    for (size_t i = 0; i < n; i++) {
        unsigned char b[8];
        memcpy(b, &x[i], 8);
        for (int k = 0; k < 4; k++) {
            unsigned char t = b[k];
            b[k] = b[7 - k];
            b[7 - k] = t;
        }
        write_all(r->samples_fd, (const char *)b, 8);
    }
#else
    write_all(r->samples_fd, (const char *)x, n * sizeof *x);
#endif
    r->samples_at += (long long)(n * sizeof *x);
    return at;
}

const char *jt_record_samples_name(const jt_record *r)
{
    const char *slash = strrchr(r->samples_path, '/');
    return slash ? slash + 1 : r->samples_path;
}

void jt_record_point(jt_record *r, const jt_json *j) { write_line(r, j, 1); }

void jt_record_close(jt_record *r, const char *status, const char *message)
{
    if (r->fd < 0)
        return;
    jt_record_unguard();
    jt_json j;
    jt_json_init(&j);
    jt_json_object(&j);
    jt_json_kstr(&j, "type", "end");
    jt_json_kstr(&j, "status", status);
    jt_json_kint(&j, "points", r->points);
    jt_json_knum(&j, "elapsed_s", jt_now() - r->t0);
    if (message)
        jt_json_kstr(&j, "message", message);
    jt_json_end(&j);
    jt_record_line(r, &j);
    jt_json_free(&j);
    int ok = strcmp(status, "ok") == 0;
    if (r->samples_fd >= 0) { /* the samples first: a complete run file names complete samples */
        char partial[4220];
        snprintf(partial, sizeof partial, "%s.partial", r->samples_path);
        fsync(r->samples_fd);
        close(r->samples_fd);
        r->samples_fd = -1;
        if (ok && rename(partial, r->samples_path) != 0)
            jt_fatal("cannot rename '%s' to '%s': %s", partial, r->samples_path, strerror(errno));
    }
    fsync(r->fd);
    close(r->fd);
    r->fd = -1;
    free(r->held);
    r->held = NULL;
    if (ok && rename(r->partial, r->path) != 0)
        jt_fatal("cannot rename '%s' to '%s': %s", r->partial, r->path, strerror(errno));
}

/* Signals are process-wide, so the record they close must be reachable from the handler. */
static jt_record *volatile guarded;

static size_t fmt_long(char *b, long v)
{
    char t[24];
    size_t n = 0, k = 0;
    if (v < 0)
        v = 0;
    do
        t[n++] = (char)('0' + v % 10);
    while ((v /= 10) > 0);
    while (n)
        b[k++] = t[--n];
    return k;
}

static void on_signal(int sig)
{
    jt_record *r = guarded;
    atomic_store(&closing, 1);
    while (atomic_load(&busy)) /* another thread is inside a line: let it finish */
        ;
    if (r && r->fd >= 0) {
        /* Only async-signal-safe calls here: write(2), no stdio. */
        char line[160] = "{\"type\":\"end\",\"status\":\"interrupted\",\"points\":";
        size_t n = strlen(line);
        n += fmt_long(line + n, r->points);
        const char *mid = ",\"signal\":";
        memcpy(line + n, mid, strlen(mid));
        n += strlen(mid);
        n += fmt_long(line + n, sig);
        line[n++] = '}';
        line[n++] = '\n';
        if (write(r->fd, line, n) < 0) { /* nothing more can be done in a handler */
        }
        r->fd = -1;
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

void jt_record_guard(jt_record *r)
{
    guarded = r;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

void jt_record_unguard(void)
{
    guarded = NULL;
}
