/* jostle-bench --describe: what the descriptors say, as JSON, for the Python side (its one
 * source of options, defaults, choices and metrics; docs/cli.md).  No MPI. */
#include "harness/internal.h"

#include "core/errors.h"

#include <string.h>

void jt_describe_common(jt_json *j)
{
    jt_json_object(j);
    jt_json_key(j, "options");
    jt_opt_table_json(jt_common_options, j);
    jt_json_end(j);
}

void jt_describe_bench(const jt_bench *b, int simgrid, jt_json *j)
{
    jt_json_object(j);
    jt_json_kstr(j, "name", b->name);
    jt_json_kstr(j, "summary", b->summary);
    jt_json_kint(j, "min_ranks", b->min_ranks);
    jt_json_kbool(j, "simgrid", simgrid);
    jt_json_kstr(j, "thread_level", jt_thread_level_name(b->thread_level));
    jt_json_kstr(j, "default_sizes", b->default_sizes); /* null: no --sizes */
    jt_json_key(j, "options");
    jt_opt_table_json(b->options, j);
    jt_json_key(j, "metrics");
    jt_json_array(j);
    for (const jt_metric_info *m = b->metrics; m && m->name; m++) {
        jt_json_object(j);
        jt_json_kstr(j, "name", m->name);
        jt_json_kstr(j, "unit", m->unit);
        jt_json_kstr(j, "better", m->better == JT_HIGHER_BETTER ? "higher" : "lower");
        jt_json_end(j);
    }
    jt_json_end(j);
    jt_json_end(j);
}

/* Called for every point: its metrics and values must be declared, with the same unit. */
void jt_check_declared(const jt_bench *b, const jt_point *p)
{
    for (int k = 0; k < p->nmetrics + p->nvalues; k++) {
        const char *name = k < p->nmetrics ? p->metrics[k].name : p->values[k - p->nmetrics].name;
        const char *unit = k < p->nmetrics ? p->metrics[k].unit : p->values[k - p->nmetrics].unit;
        const jt_metric_info *m = b->metrics;
        while (m && m->name && strcmp(m->name, name) != 0)
            m++;
        if (!m || !m->name || strcmp(m->unit, unit) != 0)
            jt_fatal("%s reports metric '%s' (%s) that its descriptor does not declare", b->name,
                     name, unit);
    }
}
