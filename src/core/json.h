/* A small JSON writer into a growing buffer: objects, arrays, keys and values, commas placed
 * by nesting depth.  Enough for the records; no parsing is ever done in C. */
#ifndef JT_JSON_H
#define JT_JSON_H

#include <stddef.h>

#define JT_JSON_DEPTH 32

typedef struct jt_json {
    char *buf;
    size_t len, cap;
    int depth;
    int count[JT_JSON_DEPTH];    /* values written at each depth, for commas */
    char closer[JT_JSON_DEPTH];  /* '}' or ']' for each open depth */
    int after_key;
} jt_json;

void jt_json_init(jt_json *j);
void jt_json_free(jt_json *j);
void jt_json_reset(jt_json *j);

void jt_json_object(jt_json *j);
void jt_json_array(jt_json *j);
void jt_json_end(jt_json *j);
void jt_json_key(jt_json *j, const char *key);
void jt_json_str(jt_json *j, const char *s); /* NULL writes null */
void jt_json_num(jt_json *j, double x);      /* NaN/inf write null */
void jt_json_int(jt_json *j, long long x);
void jt_json_bool(jt_json *j, int b);
void jt_json_null(jt_json *j);
void jt_json_raw(jt_json *j, const char *text); /* an already-encoded value */

/* key: value shorthands */
void jt_json_kstr(jt_json *j, const char *key, const char *s);
void jt_json_knum(jt_json *j, const char *key, double x);
void jt_json_kint(jt_json *j, const char *key, long long x);
void jt_json_kbool(jt_json *j, const char *key, int b);
/* an interval as [lo, hi] (NaN ends write null): a value, or its key's */
void jt_json_pair(jt_json *j, double lo, double hi);
void jt_json_kpair(jt_json *j, const char *key, double lo, double hi);

#endif
