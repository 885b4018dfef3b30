#include "topo/xmlcheck.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Objects without sets in hwloc's XML: I/O and Misc objects hang outside the tree of sets. */
static const char *const no_sets[] = {"Bridge", "PCIDev", "OSDev", "Misc", NULL};
static const char *const sets[] = {"cpuset", "complete_cpuset", "nodeset", "complete_nodeset",
                                   NULL};

static char *slurp(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "topology file '%s' cannot be read: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0, r;
    char *buf = malloc(cap + 1);
    while (buf && (r = fread(buf + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            char *b = realloc(buf, 2 * cap + 1);
            if (!b) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = b;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf) {
        snprintf(err, errlen, "topology file '%s' is too large to read", path);
        return NULL;
    }
    buf[n] = '\0';
    if (strlen(buf) != n) {
        snprintf(err, errlen, "topology file '%s' is not an hwloc XML topology: it holds binary "
                 "data", path);
        free(buf);
        return NULL;
    }
    return buf;
}

/* The value of attribute name in the tag text [tag, end), copied to out; -1 when absent. */
static int attr(const char *tag, const char *end, const char *name, char *out, size_t len)
{
    size_t nl = strlen(name);
    for (const char *p = tag; p + nl + 2 < end; p++) {
        if ((p[-1] != ' ' && p[-1] != '\t' && p[-1] != '\n' && p[-1] != '\r') ||
            strncmp(p, name, nl) != 0 || p[nl] != '=' || (p[nl + 1] != '"' && p[nl + 1] != '\''))
            continue;
        const char *v = p + nl + 2, *q = memchr(v, p[nl + 1], (size_t)(end - v));
        if (!q)
            return -1;
        snprintf(out, len, "%.*s", (int)(q - v), v);
        return 0;
    }
    return -1;
}

static int line_of(const char *buf, const char *p)
{
    int l = 1;
    for (const char *c = buf; c < p; c++)
        l += *c == '\n';
    return l;
}

int jt_xml_check(const char *path, char *err, size_t errlen)
{
    char *buf = slurp(path, err, errlen);
    if (!buf)
        return -1;
    int rc = -1, nobj = 0, with_ns = 0, without_ns = 0, first_without = 0;
    char first_type[64] = "";
    const char *top = strstr(buf, "<topology");
    if (!top) {
        snprintf(err, errlen, "'%s' is not an hwloc XML topology: no <topology> element (make one "
                 "with `lstopo --of xml FILE` or `jostle topo --export FILE`)", path);
        goto out;
    }
    /* hwloc 1.x files (no version, or 1.x) may leave out nodesets: hwloc 2 rebuilds them, and
     * refuses a missing cpuset cleanly itself; only a mix of objects with and without a
     * nodeset crashes it (hwloc 2.9). hwloc 2.x files need every set of every object. */
    const char *tag_end = strchr(top, '>');
    char version[16] = "";
    int v1 = !tag_end || attr(top + 1, tag_end, "version", version, sizeof version) != 0 ||
             version[0] == '1';
    for (const char *p = strstr(top, "<object"); p; p = strstr(p + 1, "<object")) {
        const char *end = strchr(p, '>');
        if (!end) {
            snprintf(err, errlen, "'%s' line %d: an <object> tag is not closed (truncated "
                     "file?)", path, line_of(buf, p));
            goto out;
        }
        char type[64] = "", v[8];
        if (attr(p + 1, end, "type", type, sizeof type) != 0) {
            snprintf(err, errlen, "'%s' line %d: an <object> has no type", path, line_of(buf, p));
            goto out;
        }
        nobj++;
        int io = 0;
        for (int k = 0; no_sets[k]; k++)
            io |= strcmp(type, no_sets[k]) == 0;
        if (v1 && !io) {
            if (attr(p + 1, end, "nodeset", v, sizeof v) == 0 && v[0]) {
                with_ns++;
            } else if (!without_ns++) {
                first_without = line_of(buf, p);
                snprintf(first_type, sizeof first_type, "%s", type);
            }
        }
        for (int k = 0; !v1 && !io && sets[k]; k++)
            if (attr(p + 1, end, sets[k], v, sizeof v) != 0 || !v[0]) {
                snprintf(err, errlen, "'%s' line %d: the %s object has no %s (every non-I/O "
                         "object needs cpuset, complete_cpuset, nodeset and complete_nodeset); "
                         "hwloc is not given this file", path, line_of(buf, p), type, sets[k]);
                goto out;
            }
    }
    if (with_ns && without_ns) {
        snprintf(err, errlen, "'%s' line %d: the %s object has no nodeset while %d other(s) "
                 "have one (an hwloc 1.x file gives nodesets to every object or to none; hwloc "
                 "crashes on a mix); hwloc is not given this file", path, first_without,
                 first_type, with_ns);
        goto out;
    }
    if (nobj == 0) {
        snprintf(err, errlen, "'%s' is not an hwloc XML topology: its <topology> has no object",
                 path);
        goto out;
    }
    if (!strstr(top, "</topology>")) {
        snprintf(err, errlen, "'%s' is truncated: no </topology> at the end", path);
        goto out;
    }
    rc = 0;
out:
    free(buf);
    return rc;
}
