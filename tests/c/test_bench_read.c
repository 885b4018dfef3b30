/* Each benchmark's read (jt_bench.read): its options read and checked alone, with no MPI and
 * no binding, against a fake machine (share/topologies/henri.xml: 4 NUMA nodes, 36 cores,
 * NICs ib0 and mlx5_0); and --validate's placement checks.  A bad value leaves with status 2 and a message
 * naming it; a good command line returns.  Each case runs in a child (an error exits). */
#include "check.h"

#include "bench/bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static jt_topo tp;

typedef struct job {
    const char *name;
    const char **argv;
} job;

/* Reads argv for benchmark `name` as the driver does, then --validate's placement checks. */
static void read_args(void *arg)
{
    const job *jb = arg;
    const jt_bench *b = NULL;
    for (int i = 0; jt_benches[i]; i++)
        if (strcmp(jt_benches[i]->name, jb->name) == 0)
            b = jt_benches[i];
    if (!b)
        _exit(99);
    jt_opts o = {0};
    jt_opts_add(&o, jt_common_options);
    jt_opts_add(&o, b->options);
    int argc = 0;
    while (jb->argv[argc])
        argc++;
    jt_opts_parse(&o, argc, (char **)jb->argv);
    void *st = calloc(1, b->state_size);
    b->read(&o, &tp, st);
    jt_validate_placement(&o, &tp);
}

static void expect(const char *name, const char **argv, int rc, const char *must_contain)
{
    char msg[2048];
    job jb = {name, argv};
    int got = jt_test_in_child(read_args, &jb, msg, sizeof msg);
    CHECKF(got == rc, "%s %s...: exit %d, expected %d (%s)", name, argv[0] ? argv[0] : "", got,
           rc, msg);
    if (must_contain)
        CHECKF(strstr(msg, must_contain) != NULL, "%s: message lacks '%s': %s", name,
               must_contain, msg);
    if (rc == 2) /* one line */
        CHECKF(strchr(msg, '\n') == msg + strlen(msg) - 1, "%s: not one line: %s", name, msg);
}

#define ARGS(...) ((const char *[]){__VA_ARGS__, NULL})

int main(void)
{
    const char *s = getenv("JOSTLE_SOURCE_DIR");
    char path[4096], err[1024];
    snprintf(path, sizeof path, "%s/share/topologies/henri.xml", s ? s : ".");
    if (jt_topo_load(&tp, path, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    /* Good command lines of every benchmark return. */
    expect("pingpong", ARGS("--mode", "stream", "--sizes", "4:64"), 0, NULL);
    expect("contention", ARGS("--kernel", "copy", "--compute-mem", "1", "--phases", "comm"), 0,
           NULL);
    expect("overlap", ARGS("--collectives", "ibcast,iallreduce", "--thread-core", "35"), 0, NULL);
    expect("bcast", ARGS("--routing", "flat,binomial", "--sizes", "1K"), 0, NULL);
    expect("pingpong", ARGS("--comm-core", "0,35,near", "--comm-mem", "1,interleave", "--nic",
                            "mlx5_0"), 0, NULL);

    /* Each benchmark's own values, refused by name. */
    expect("pingpong", ARGS("--mode", "pong"), 2, "'pong'");
    expect("pingpong", ARGS("--window", "0"), 2, "--window '0'");
    expect("pingpong", ARGS("--mode", "put", "--check"), 2, "--check");
    expect("pingpong", ARGS("--buffers", "echo", "--mode", "stream"), 2, "--buffers echo");
    expect("pingpong", ARGS("--sizes", "3G"), 2, "--sizes");
    expect("contention", ARGS("--compute-mem", "4"), 2, "--compute-mem '4'");
    expect("contention", ARGS("--ai", "0.5", "--kernel", "copy"), 2, "--ai");
    expect("contention", ARGS("--phases", "compute,sleep"), 2, "--phases 'compute,sleep'");
    expect("contention", ARGS("--array-bytes", "1K"), 2, "--array-bytes '1K'");
    expect("overlap", ARGS("--thread-core", "36"), 2, "--thread-core '36'");
    expect("overlap", ARGS("--collectives", "ialltoall,nosuch"), 2, "'nosuch'");
    expect("overlap", ARGS("--policy", "random"), 2, "--policy 'random'");
    expect("bcast", ARGS("--routing", "flat,nosuch"), 2, "nosuch");
    expect("bcast", ARGS("--inline", "2M"), 2, "--inline '2M'");
    expect("tile-kernels", ARGS("--tile", "0"), 2, "--tile '0'");
    expect("cholesky", ARGS("--n", "100", "--tile", "30"), 2, "--tile 30 does not divide");
    expect("cholesky", ARGS("--grid", "2by2"), 2, "--grid '2by2'");
    expect("cholesky", ARGS("--routing", "nosuch"), 2, "--routing 'nosuch'");

    /* --validate's placement: against the topology, every entry of a list. */
    expect("pingpong", ARGS("--comm-core", "36"), 2, "--comm-core '36'");
    expect("pingpong", ARGS("--comm-core", "0,x"), 2, "'x'");
    expect("pingpong", ARGS("--comm-mem", "near,4"), 2, "--comm-mem 'near,4'");
    expect("pingpong", ARGS("--nic", "nosuch"), 2, "nosuch");
    jt_topo_destroy(&tp);
    TEST_END();
}
