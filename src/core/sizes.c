#include "core/sizes.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char allowed[] =
    "a byte count >= 0 with an optional K/M/G/T suffix (powers of 1024), "
    "a power-of-two range lo:hi, or a linear range lo:hi:step";

int jt_parse_bytes(const char *s, uint64_t *out, char *err, size_t errlen)
{
    const char *p = s;
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '-' || !isdigit((unsigned char)*p)) {
        snprintf(err, errlen, "size '%s' is not allowed: expected %s", s, allowed);
        return -1;
    }
    errno = 0;
    char *end;
    unsigned long long v = strtoull(p, &end, 10);
    if (errno == ERANGE) {
        snprintf(err, errlen, "size '%s' is too large: at most %llu bytes (1T)", s,
                 (unsigned long long)JT_SIZE_MAX_BYTES);
        return -1;
    }
    unsigned shift = 0;
    switch (toupper((unsigned char)*end)) {
    case 'K': shift = 10; end++; break;
    case 'M': shift = 20; end++; break;
    case 'G': shift = 30; end++; break;
    case 'T': shift = 40; end++; break;
    default: break;
    }
    if (shift && (strcasecmp(end, "iB") == 0 || strcasecmp(end, "B") == 0))
        end += strlen(end);
    else if (!shift && strcasecmp(end, "B") == 0)
        end++;
    if (*end != '\0') {
        snprintf(err, errlen, "size '%s' is not allowed: expected %s", s, allowed);
        return -1;
    }
    if (v > (JT_SIZE_MAX_BYTES >> shift)) {
        snprintf(err, errlen, "size '%s' is too large: at most %llu bytes (1T)", s,
                 (unsigned long long)JT_SIZE_MAX_BYTES);
        return -1;
    }
    *out = (uint64_t)v << shift;
    return 0;
}

static int push(uint64_t **v, size_t *n, size_t *cap, uint64_t x, const char *spec, char *err,
                size_t errlen)
{
    if (*n >= JT_SIZES_MAX_POINTS) {
        snprintf(err, errlen, "sizes '%s' give more than %d points: use a coarser step", spec,
                 JT_SIZES_MAX_POINTS);
        return -1;
    }
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        uint64_t *nv = realloc(*v, *cap * sizeof **v);
        if (!nv) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        *v = nv;
    }
    (*v)[(*n)++] = x;
    return 0;
}

static int parse_item(char *item, const char *spec, uint64_t **v, size_t *n, size_t *cap,
                      char *err, size_t errlen)
{
    char *parts[3] = {item, NULL, NULL};
    int np = 1;
    for (char *c = item; *c; c++)
        if (*c == ':') {
            if (np == 3) {
                snprintf(err, errlen, "size range '%s' is not allowed: expected %s", spec, allowed);
                return -1;
            }
            *c = '\0';
            parts[np++] = c + 1;
        }
    uint64_t x[3] = {0, 0, 0};
    for (int i = 0; i < np; i++)
        if (jt_parse_bytes(parts[i], &x[i], err, errlen))
            return -1;
    if (np == 1)
        return push(v, n, cap, x[0], spec, err, errlen);
    if (x[1] < x[0]) {
        snprintf(err, errlen, "size range in '%s' is empty: its end is below its start", spec);
        return -1;
    }
    if (np == 3) {
        if (x[2] == 0) {
            snprintf(err, errlen, "size range step in '%s' must be at least 1 byte", spec);
            return -1;
        }
        for (uint64_t s = x[0]; s <= x[1]; s += x[2])
            if (push(v, n, cap, s, spec, err, errlen))
                return -1;
        return 0;
    }
    if (x[0] == 0 && push(v, n, cap, 0, spec, err, errlen))
        return -1;
    for (uint64_t s = x[0] ? x[0] : 1; s <= x[1]; s *= 2)
        if (push(v, n, cap, s, spec, err, errlen))
            return -1;
    return 0;
}

int jt_sizes_parse(const char *spec, uint64_t **sizes, size_t *n, char *err, size_t errlen)
{
    *sizes = NULL;
    *n = 0;
    size_t cap = 0;
    if (!spec || !*spec) {
        snprintf(err, errlen, "sizes '' are empty: expected %s", allowed);
        return -1;
    }
    char *copy = strdup(spec), *save = NULL;
    int rc = 0;
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save))
        if ((rc = parse_item(item, spec, sizes, n, &cap, err, errlen)))
            break;
    free(copy);
    if (!rc && *n == 0) {
        snprintf(err, errlen, "sizes '%s' give no size: expected %s", spec, allowed);
        rc = -1;
    }
    if (rc) {
        free(*sizes);
        *sizes = NULL;
        *n = 0;
    }
    return rc;
}

void jt_format_bytes(uint64_t b, char *buf, size_t len)
{
    static const char suffix[] = "KMGT";
    int k = -1;
    while (b >= 1024 && b % 1024 == 0 && k < 3) {
        b /= 1024;
        k++;
    }
    if (k < 0)
        snprintf(buf, len, "%llu", (unsigned long long)b);
    else
        snprintf(buf, len, "%llu%c", (unsigned long long)b, suffix[k]);
}
