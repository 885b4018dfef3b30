/* The JSON writer and the run file: .partial while running, renamed when ok, an interrupted
 * end line written from the signal handler, and a refused output directory. */
#include "check.h"
#include "core/json.h"
#include "core/record.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

int main(void)
{
    jt_json j;
    jt_json_init(&j);
    jt_json_object(&j);
    jt_json_kstr(&j, "s", "a\"b\\c\nd\x01");
    jt_json_key(&j, "a");
    jt_json_array(&j);
    jt_json_int(&j, 1);
    jt_json_num(&j, 0.5);
    jt_json_num(&j, 0.0 / 0.0);
    jt_json_object(&j);
    jt_json_end(&j);
    jt_json_end(&j);
    jt_json_kbool(&j, "t", 1);
    jt_json_end(&j);
    CHECK(strcmp(j.buf, "{\"s\":\"a\\\"b\\\\c\\nd\\u0001\",\"a\":[1,0.5,null,{}],\"t\":true}") == 0);
    if (strcmp(j.buf, "{\"s\":\"a\\\"b\\\\c\\nd\\u0001\",\"a\":[1,0.5,null,{}],\"t\":true}"))
        fprintf(stderr, "got %s\n", j.buf);

    char dir[] = "/tmp/jostle-test-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[700], partial[800];
    snprintf(path, sizeof path, "%s/run.jsonl", dir);
    snprintf(partial, sizeof partial, "%s.partial", path);

    /* A complete run: only the final name remains, ending with an ok line. */
    jt_record r;
    char err[512];
    CHECK(jt_record_open(&r, path, err, sizeof err) == 0);
    CHECK(exists(partial) && !exists(path));
    jt_record_line(&r, &j);
    jt_record_point(&r, &j);
    jt_record_close(&r, "ok", NULL);
    CHECK(exists(path) && !exists(partial));
    char *text = slurp(path);
    CHECK(text && strstr(text, "\"type\":\"end\",\"status\":\"ok\",\"points\":1"));
    CHECK(text && text[strlen(text) - 1] == '\n');

    /* A run killed by SIGINT keeps its .partial file with an interrupted end line. */
    unlink(path);
    pid_t pid = fork();
    if (pid == 0) {
        jt_record c;
        if (jt_record_open(&c, path, err, sizeof err))
            _exit(3);
        jt_record_guard(&c);
        jt_record_point(&c, &j);
        jt_record_point(&c, &j);
        raise(SIGINT);
        _exit(4); /* not reached */
    }
    int status;
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT);
    CHECK(exists(partial) && !exists(path));
    text = slurp(partial);
    CHECK(text && strstr(text, "{\"type\":\"end\",\"status\":\"interrupted\",\"points\":2,\"signal\":2}\n"));

    /* Output directories that cannot be used are refused, naming them. */
    CHECK(jt_record_open(&r, "/nonexistent-dir/x.jsonl", err, sizeof err) == -1);
    CHECK(strstr(err, "/nonexistent-dir") != NULL);
    if (geteuid() != 0) { /* root writes anywhere: only meaningful for others */
        char ro[600];
        snprintf(ro, sizeof ro, "%s/ro", dir);
        mkdir(ro, 0555);
        snprintf(path, sizeof path, "%s/x.jsonl", ro);
        CHECK(jt_record_open(&r, path, err, sizeof err) == -1);
    }
    unlink(partial);
    jt_json_free(&j);
    TEST_END();
}
