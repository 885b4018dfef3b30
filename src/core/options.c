#include "core/options.h"

#include "core/errors.h"
#include "core/json.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void jt_opts_add(jt_opts *o, const jt_opt_spec *table)
{
    for (const jt_opt_spec *s = table; s && s->name; s++) {
        if (o->n == JT_OPTS_MAX)
            jt_fatal("too many options declared (JT_OPTS_MAX)");
        o->spec[o->n] = s;
        o->value[o->n] = s->def;
        o->given[o->n] = 0;
        o->n++;
    }
}

static int find(const jt_opts *o, const char *name, size_t len)
{
    for (int i = 0; i < o->n; i++)
        if (strlen(o->spec[i]->name) == len && strncmp(o->spec[i]->name, name, len) == 0)
            return i;
    return -1;
}

static int must_find(const jt_opts *o, const char *name)
{
    int i = find(o, name, strlen(name));
    if (i < 0)
        jt_fatal("option --%s read but never declared", name);
    return i;
}

int jt_opts_parse(jt_opts *o, int argc, char **argv)
{
    for (int a = 0; a < argc; a++) {
        const char *arg = argv[a];
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0)
            return 1;
        if (strncmp(arg, "--", 2) != 0)
            jt_usage_error("unexpected argument '%s': options start with -- (see --help)", arg);
        const char *name = arg + 2, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        int i = find(o, name, len);
        if (i < 0)
            jt_usage_error("unknown option '%.*s' (see --help for the options of this benchmark)",
                           (int)len + 2, arg);
        o->given[i] = 1;
        if (!o->spec[i]->metavar) {
            if (eq)
                jt_usage_error("option --%s is a flag and takes no value (got '%s')",
                               o->spec[i]->name, eq + 1);
            o->value[i] = "1";
        } else if (eq) {
            o->value[i] = eq + 1;
        } else if (a + 1 < argc && strncmp(argv[a + 1], "--", 2) != 0) {
            o->value[i] = argv[++a];
        } else if (a + 1 < argc) { /* a trailing --sizes must not take --output for its value */
            jt_usage_error("option --%s needs a value (%s), got the option '%s' (a value that "
                           "starts with -- is written --%s=VALUE)", o->spec[i]->name,
                           o->spec[i]->metavar, argv[a + 1], o->spec[i]->name);
        } else {
            jt_usage_error("option --%s needs a value (%s)", o->spec[i]->name, o->spec[i]->metavar);
        }
    }
    return 0;
}

void jt_opt_table_help(const jt_opt_spec *table, FILE *f)
{
    for (const jt_opt_spec *s = table; s && s->name; s++) {
        char left[64];
        snprintf(left, sizeof left, "--%s%s%s", s->name, s->metavar ? " " : "",
                 s->metavar ? s->metavar : "");
        fprintf(f, "  %-24s %s", left, s->help);
        if (s->def && s->metavar)
            fprintf(f, " [%s]", s->def);
        fputc('\n', f);
    }
}

const char *jt_opt_str(const jt_opts *o, const char *name)
{
    return o->value[must_find(o, name)];
}

int jt_opt_given(const jt_opts *o, const char *name)
{
    return o->given[must_find(o, name)];
}

int jt_opt_flag(const jt_opts *o, const char *name)
{
    const char *v = jt_opt_str(o, name);
    return v && strcmp(v, "0") != 0;
}

long jt_opt_long(const jt_opts *o, const char *name, long min, long max)
{
    const char *v = jt_opt_str(o, name);
    if (!v)
        jt_fatal("option --%s has no default", name);
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end != '\0' || x < min || x > max)
        jt_usage_error("--%s '%s' is not allowed: expected an integer from %ld to %ld", name, v,
                       min, max);
    return x;
}

double jt_opt_double(const jt_opts *o, const char *name, double min, double max)
{
    const char *v = jt_opt_str(o, name);
    if (!v)
        jt_fatal("option --%s has no default", name);
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || *end != '\0' || !isfinite(x) || x < min || x > max)
        jt_usage_error("--%s '%s' is not allowed: expected a number from %g to %g", name, v, min,
                       max);
    return x;
}

int jt_opt_choice(const jt_opts *o, const char *name)
{
    const char *const *choices = o->spec[must_find(o, name)]->choices;
    if (!choices)
        jt_fatal("option --%s read as a choice but declared without choices", name);
    const char *v = jt_opt_str(o, name);
    char list[256] = "";
    for (int i = 0; choices[i]; i++) {
        if (v && strcmp(v, choices[i]) == 0)
            return i;
        strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
        strncat(list, choices[i], sizeof list - strlen(list) - 1);
    }
    jt_usage_error("--%s '%s' is not allowed: expected one of %s", name, v ? v : "", list);
}

void jt_opts_json(const jt_opts *o, jt_json *j)
{
    jt_json_object(j);
    for (int i = 0; i < o->n; i++) {
        const jt_opt_spec *s = o->spec[i];
        if (!o->value[i] || strcmp(s->name, "help") == 0)
            continue;
        jt_json_key(j, s->name);
        if (s->metavar)
            jt_json_str(j, o->value[i]);
        else
            jt_json_bool(j, jt_opt_flag(o, s->name));
    }
    jt_json_end(j);
}

void jt_opt_table_json(const jt_opt_spec *table, jt_json *j)
{
    jt_json_array(j);
    for (const jt_opt_spec *s = table; s && s->name; s++) {
        jt_json_object(j);
        jt_json_kstr(j, "name", s->name);
        jt_json_kstr(j, "arg", s->metavar); /* NULL: null */
        jt_json_kstr(j, "default", s->def);
        jt_json_key(j, "choices");
        if (s->choices) {
            jt_json_array(j);
            for (const char *const *c = s->choices; *c; c++)
                jt_json_str(j, *c);
            jt_json_end(j);
        } else {
            jt_json_null(j);
        }
        jt_json_kstr(j, "help", s->help);
        jt_json_end(j);
    }
    jt_json_end(j);
}
