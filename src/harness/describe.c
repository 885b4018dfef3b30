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

static void metric_json(jt_json *j, const char *name, const char *unit, jt_better better)
{
    jt_json_object(j);
    jt_json_kstr(j, "name", name);
    jt_json_kstr(j, "unit", unit);
    jt_json_kstr(j, "better", better == JT_HIGHER_BETTER ? "higher" : "lower");
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
    for (const jt_metric *m = b->metrics; m && m->name; m++)
        metric_json(j, m->name, m->unit, m->better);
    for (const jt_point_value *v = b->values; v && v->name; v++)
        metric_json(j, v->name, v->unit, v->better);
    jt_json_end(j);
    jt_json_end(j);
}

const jt_metric *jt_metric_find(const jt_bench *b, const char *name)
{
    for (const jt_metric *m = b->metrics; m && m->name; m++)
        if (strcmp(m->name, name) == 0)
            return m;
    jt_fatal("%s has no metric '%s' in its table", b->name, name);
}

/* Called for every point: each metric and value an entry of the benchmark's table (by name
 * and unit), so that a metric built by hand in a point cannot escape --describe. */
void jt_check_declared(const jt_bench *b, const jt_point *p)
{
    for (int k = 0; k < p->nmetrics; k++) {
        const jt_metric *m = b->metrics;
        while (m && m->name && strcmp(m->name, p->metrics[k].name) != 0)
            m++;
        if (!m || !m->name || strcmp(m->unit, p->metrics[k].unit) != 0)
            jt_fatal("%s reports metric '%s' (%s) that its table does not declare", b->name,
                     p->metrics[k].name, p->metrics[k].unit);
    }
    for (int k = 0; k < p->nvalues; k++) {
        const jt_point_value *v = b->values;
        while (v && v->name && strcmp(v->name, p->values[k].name) != 0)
            v++;
        if (!v || !v->name || strcmp(v->unit, p->values[k].unit) != 0)
            jt_fatal("%s reports value '%s' (%s) that its table does not declare", b->name,
                     p->values[k].name, p->values[k].unit);
    }
}
