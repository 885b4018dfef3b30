/* Options: values, defaults, and bad input leaving with status 2 and the value named. */
#include "check.h"
#include "core/json.h"
#include "core/options.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const modes[] = {"pingpong", "stream", NULL};
static const jt_opt_spec table[] = {
    {"reps", "N", "100", "repetitions", NULL},
    {"mode", "M", "pingpong", "mode", modes},
    {"precision", "F", "0.01", "precision", NULL},
    {"check", NULL, NULL, "flag", NULL},
    {"out", "FILE", NULL, "no \"default\"", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static void parse_and_read(void *arg)
{
    char **argv = arg;
    jt_opts o = {0};
    jt_opts_add(&o, table);
    int argc = 0;
    while (argv[argc])
        argc++;
    jt_opts_parse(&o, argc, argv);
    jt_opt_long(&o, "reps", 1, 1000);
    jt_opt_choice(&o, "mode");
    jt_opt_double(&o, "precision", 1e-6, 1);
}

static void expect_usage(const char **args, const char *must_contain)
{
    char msg[1024];
    int rc = jt_test_in_child(parse_and_read, (void *)args, msg, sizeof msg);
    CHECK(rc == 2);
    if (!strstr(msg, must_contain)) {
        fprintf(stderr, "message lacks '%s': %s\n", must_contain, msg);
        jt_test_failures++;
    }
}

int main(void)
{
    jt_opts o = {0};
    jt_opts_add(&o, table);
    char *argv[] = {"--reps", "7", "--mode=stream", "--check", NULL};
    CHECK(jt_opts_parse(&o, 4, argv) == 0);
    CHECK(jt_opt_long(&o, "reps", 1, 1000) == 7);
    CHECK(jt_opt_choice(&o, "mode") == 1);
    CHECK(jt_opt_flag(&o, "check"));
    CHECK(jt_opt_given(&o, "reps") && !jt_opt_given(&o, "precision"));
    CHECK_NEAR(jt_opt_double(&o, "precision", 0, 1), 0.01, 1e-15);
    CHECK(jt_opt_str(&o, "out") == NULL);
    char *help[] = {"--help", NULL};
    CHECK(jt_opts_parse(&o, 1, help) == 1);

    /* --describe's form of a table: every field, null where absent, the choices listed. */
    jt_json j;
    jt_json_init(&j);
    jt_opt_table_json(table, &j);
    CHECKF(strstr(j.buf, "{\"name\":\"mode\",\"arg\":\"M\",\"default\":\"pingpong\","
                         "\"choices\":[\"pingpong\",\"stream\"],\"help\":\"mode\"}") != NULL,
           "%s", j.buf);
    CHECKF(strstr(j.buf, "{\"name\":\"check\",\"arg\":null,\"default\":null,\"choices\":null,")
               != NULL, "%s", j.buf);
    CHECKF(strstr(j.buf, "\"help\":\"no \\\"default\\\"\"") != NULL, "%s", j.buf);
    jt_json_free(&j);

    expect_usage((const char *[]){"--reps", "-5", NULL}, "'-5'");
    expect_usage((const char *[]){"--reps", "ten", NULL}, "'ten'");
    expect_usage((const char *[]){"--mode", "pong", NULL}, "pingpong, stream");
    expect_usage((const char *[]){"--precision", "2", NULL}, "'2'");
    expect_usage((const char *[]){"--bogus", NULL}, "--bogus");
    expect_usage((const char *[]){"--reps", NULL}, "needs a value");
    /* a trailing option without its value does not take the next option for it */
    expect_usage((const char *[]){"--reps", "--mode", "pingpong", NULL}, "needs a value");
    expect_usage((const char *[]){"--check=1", NULL}, "flag");
    TEST_END();
}
