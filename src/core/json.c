#include "core/json.h"

#include "core/errors.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void jt_json_init(jt_json *j)
{
    memset(j, 0, sizeof *j);
}

void jt_json_free(jt_json *j)
{
    free(j->buf);
    jt_json_init(j);
}

void jt_json_reset(jt_json *j)
{
    char *buf = j->buf;
    size_t cap = j->cap;
    jt_json_init(j);
    j->buf = buf;
    j->cap = cap;
    if (buf)
        buf[0] = '\0';
}

static void put(jt_json *j, const char *s, size_t n)
{
    if (j->len + n + 1 > j->cap) {
        size_t cap = j->cap ? j->cap : 256;
        while (j->len + n + 1 > cap)
            cap *= 2;
        char *nb = realloc(j->buf, cap);
        if (!nb)
            jt_fatal("out of memory writing a record");
        j->buf = nb;
        j->cap = cap;
    }
    memcpy(j->buf + j->len, s, n);
    j->len += n;
    j->buf[j->len] = '\0';
}

static void puts_(jt_json *j, const char *s)
{
    put(j, s, strlen(s));
}

/* Before any value: a comma unless it is the first at this depth or follows its key. */
static void sep(jt_json *j)
{
    if (j->after_key) {
        j->after_key = 0;
        return;
    }
    if (j->count[j->depth]++)
        put(j, ",", 1);
}

static void open_(jt_json *j, char c)
{
    sep(j);
    put(j, &c, 1);
    if (++j->depth >= JT_JSON_DEPTH)
        jt_fatal("JSON nesting too deep");
    j->count[j->depth] = 0;
    j->closer[j->depth] = c == '{' ? '}' : ']';
}

void jt_json_object(jt_json *j) { open_(j, '{'); }
void jt_json_array(jt_json *j) { open_(j, '['); }

void jt_json_end(jt_json *j)
{
    if (j->depth == 0)
        jt_fatal("JSON end without an open object or array");
    put(j, &j->closer[j->depth], 1);
    j->depth--;
}

void jt_json_key(jt_json *j, const char *key)
{
    jt_json_str(j, key);
    put(j, ":", 1);
    j->after_key = 1;
}

void jt_json_str(jt_json *j, const char *s)
{
    sep(j);
    if (!s) {
        puts_(j, "null");
        return;
    }
    put(j, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char esc[8];
        switch (*p) {
        case '"': puts_(j, "\\\""); break;
        case '\\': puts_(j, "\\\\"); break;
        case '\n': puts_(j, "\\n"); break;
        case '\t': puts_(j, "\\t"); break;
        case '\r': puts_(j, "\\r"); break;
        default:
            if (*p < 0x20) {
                snprintf(esc, sizeof esc, "\\u%04x", *p);
                puts_(j, esc);
            } else {
                put(j, (const char *)p, 1);
            }
        }
    }
    put(j, "\"", 1);
}

void jt_json_num(jt_json *j, double x)
{
    sep(j);
    if (!isfinite(x)) {
        puts_(j, "null");
        return;
    }
    char b[32];
    snprintf(b, sizeof b, "%.9g", x);
    puts_(j, b);
}

void jt_json_int(jt_json *j, long long x)
{
    sep(j);
    char b[32];
    snprintf(b, sizeof b, "%lld", x);
    puts_(j, b);
}

void jt_json_bool(jt_json *j, int b)
{
    sep(j);
    puts_(j, b ? "true" : "false");
}

void jt_json_null(jt_json *j)
{
    sep(j);
    puts_(j, "null");
}

void jt_json_raw(jt_json *j, const char *text)
{
    sep(j);
    puts_(j, text);
}

void jt_json_kstr(jt_json *j, const char *k, const char *s) { jt_json_key(j, k); jt_json_str(j, s); }
void jt_json_knum(jt_json *j, const char *k, double x) { jt_json_key(j, k); jt_json_num(j, x); }

void jt_json_pair(jt_json *j, double lo, double hi)
{
    jt_json_array(j);
    jt_json_num(j, lo);
    jt_json_num(j, hi);
    jt_json_end(j);
}

void jt_json_kpair(jt_json *j, const char *k, double lo, double hi)
{
    jt_json_key(j, k);
    jt_json_pair(j, lo, hi);
}
void jt_json_kint(jt_json *j, const char *k, long long x) { jt_json_key(j, k); jt_json_int(j, x); }
void jt_json_kbool(jt_json *j, const char *k, int b) { jt_json_key(j, k); jt_json_bool(j, b); }
