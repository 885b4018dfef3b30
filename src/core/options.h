/* Command-line options: declared in tables (the harness's common ones, then each benchmark's),
 * parsed once, read through getters that check ranges and name the value on error. */
#ifndef JT_OPTIONS_H
#define JT_OPTIONS_H

#include <stdio.h>

typedef struct jt_opt_spec {
    const char *name;    /* long name without "--"; NULL ends a table */
    const char *metavar; /* NULL for a flag */
    const char *def;     /* default value as text, or NULL for none */
    const char *help;
    /* The values allowed, NULL-terminated (jt_opt_choice reads them, --describe lists them),
     * or NULL when the value is not one of a fixed set. */
    const char *const *choices;
} jt_opt_spec;

#define JT_OPTS_MAX 96

typedef struct jt_opts {
    const jt_opt_spec *spec[JT_OPTS_MAX];
    const char *value[JT_OPTS_MAX]; /* points into argv or to the default */
    int given[JT_OPTS_MAX];
    int n;
} jt_opts;

struct jt_json;

void jt_opts_add(jt_opts *o, const jt_opt_spec *table);
/* Parses argv (without the program and benchmark names): "--name value" or "--name=value".
 * Returns 1 if --help was asked for.  Bad options are usage errors (exit 2). */
int jt_opts_parse(jt_opts *o, int argc, char **argv);
/* The help lines of one table of options. */
void jt_opt_table_help(const jt_opt_spec *table, FILE *f);

const char *jt_opt_str(const jt_opts *o, const char *name); /* NULL when unset */
int jt_opt_given(const jt_opts *o, const char *name);
int jt_opt_flag(const jt_opts *o, const char *name);
long jt_opt_long(const jt_opts *o, const char *name, long min, long max);
double jt_opt_double(const jt_opts *o, const char *name, double min, double max);
/* Index of the value in the option's choices (a usage error naming them when it is none). */
int jt_opt_choice(const jt_opts *o, const char *name);

/* One table of options as a JSON array of {"name", "arg", "default", "choices", "help"}
 * (jostle-bench --describe). */
void jt_opt_table_json(const jt_opt_spec *table, struct jt_json *j);

/* Every option with a value or given flag, as a JSON object (for the run metadata). */
void jt_opts_json(const jt_opts *o, struct jt_json *j);

#endif
