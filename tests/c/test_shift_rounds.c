/* The rounds of `jostle-bench shift` (src/bench/shift_rounds.c): --shifts lists, the chunks of
 * --links-per-point, --pairs files, and what each refuses. */
#include "bench/shift_rounds.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>

static jt_shift_rounds shifts(int n, int group, const char *list, const char **err)
{
    static char msg[256];
    jt_shift_rounds r = {.group = group};
    *err = jt_shift_rounds_index(&r, n, list, msg, sizeof msg);
    return r;
}

/* Every rank sends once and receives once in each round of the shift pattern, and the chunks
 * of a round cover its N links once, the last one short when G does not divide N. */
static void test_shift_pattern_rounds_and_chunks(void)
{
    const char *err;
    jt_shift_rounds r = shifts(10, 4, "all", &err);
    CHECK(err == NULL && r.nrounds == 9);
    for (size_t q = 0; q < r.nrounds; q++) {
        int sends[10] = {0}, recvs[10] = {0};
        for (size_t j = 0; j < 10; j++) {
            jt_shift_link l = jt_shift_link_at(&r, q, j);
            CHECKF(l.dst == (l.src + (int)q + 1) % 10, "round %zu: %d>%d", q, l.src, l.dst);
            sends[l.src]++, recvs[l.dst]++;
        }
        for (int i = 0; i < 10; i++)
            CHECK(sends[i] == 1 && recvs[i] == 1);
    }
    CHECK(jt_shift_chunks(&r) == 9 * 3); /* chunks of 4, 4 and 2 links a round */
    size_t covered[9] = {0};
    for (size_t c = 0; c < jt_shift_chunks(&r); c++) {
        size_t q, j0, count;
        jt_shift_chunk(&r, c, &q, &j0, &count);
        CHECK(q < 9 && count >= 1 && count <= 4 && j0 + count <= 10);
        CHECK(j0 == covered[q]); /* in order, no gap, no overlap */
        covered[q] += count;
    }
    for (int q = 0; q < 9; q++)
        CHECK(covered[q] == 10);
    jt_shift_rounds_free(&r);
}

static void test_a_shift_list_runs_those_rounds_only(void)
{
    const char *err;
    jt_shift_rounds r = shifts(8, 1, "3,1,7", &err);
    CHECK(err == NULL && r.nrounds == 3);
    CHECK(jt_shift_link_at(&r, 0, 6).dst == 1 && jt_shift_link_at(&r, 2, 0).dst == 7);
    CHECK(jt_shift_chunks(&r) == 3 * 8);
    jt_shift_rounds_free(&r);
}

static void test_bad_shift_lists_are_named(void)
{
    const char *bad[] = {"0", "8", "2,2", "1,,3", "x", "-1", "3;4"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *err;
        jt_shift_rounds r = shifts(8, 1, bad[i], &err);
        CHECKF(err && strstr(err, "--shifts") && strstr(err, "1 to 7"), "'%s': %s", bad[i],
               err ? err : "accepted");
        jt_shift_rounds_free(&r);
    }
}

static char *pairs_file(const char *text)
{
    static char path[] = "/tmp/jt-test-pairs-XXXXXX";
    strcpy(path, "/tmp/jt-test-pairs-XXXXXX");
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

/* --pairs: rounds as written, a chunk never spans two rounds; a rank twice in a round and a
 * rank beyond the run are refused by the index, with the round named. */
static void test_pairs_file_rounds(void)
{
    jt_shift_rounds r = {.group = 2};
    const char *path = pairs_file("0 0 1\n0 1 2\n0 2 0\n1 3 0\n");
    jt_shift_read_pairs(&r, path);
    unlink(path);
    char msg[256];
    CHECK(r.nlinks == 4 && jt_shift_rounds_index(&r, 4, "all", msg, sizeof msg) == NULL);
    CHECK(r.nrounds == 2 && jt_shift_chunks(&r) == 3); /* round 0: 2 + 1 links, round 1: 1 */
    size_t q, j0, count;
    jt_shift_chunk(&r, 1, &q, &j0, &count);
    CHECK(q == 0 && j0 == 2 && count == 1);
    jt_shift_chunk(&r, 2, &q, &j0, &count);
    CHECK(q == 1 && j0 == 0 && count == 1 && jt_shift_link_at(&r, 1, 0).src == 3);
    jt_shift_rounds_free(&r);

    jt_shift_rounds twice = {.group = 1};
    jt_shift_read_pairs(&twice, path = pairs_file("0 0 1\n0 0 2\n"));
    unlink(path);
    const char *err = jt_shift_rounds_index(&twice, 4, "all", msg, sizeof msg);
    CHECKF(err && strstr(err, "round 0 has rank 0 sending twice"), "%s", err ? err : "accepted");
    jt_shift_rounds_free(&twice);

    jt_shift_rounds beyond = {.group = 1};
    jt_shift_read_pairs(&beyond, path = pairs_file("0 0 5\n"));
    unlink(path);
    err = jt_shift_rounds_index(&beyond, 4, "all", msg, sizeof msg);
    CHECKF(err && strstr(err, "beyond the 4"), "%s", err ? err : "accepted");
    jt_shift_rounds_free(&beyond);
}

static void read_pairs(void *path)
{
    jt_shift_rounds r = {.group = 1};
    jt_shift_read_pairs(&r, path);
    jt_shift_rounds_free(&r);
}

/* A file that cannot be read, a line that is not three integers, a link to itself, rounds out
 * of order: exit 2 with the line named. */
static void test_bad_pairs_files_exit_2(void)
{
    const struct {
        const char *text, *says;
    } bad[] = {{"0 1 1\n", "line 1 '0 1 1' is not allowed"},
               {"0 0 1\n0 1\n", "line 2 is not ROUND SRC DST"},
               {"1 0 1\n0 1 0\n", "round 0 after round 1"},
               {"", "line 1 is not ROUND SRC DST"}};
    char msg[1024];
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *path = pairs_file(bad[i].text);
        int st = jt_test_in_child(read_pairs, path, msg, sizeof msg);
        CHECKF(st == 2 && strstr(msg, bad[i].says), "case %zu: exit %d, %s", i, st, msg);
        unlink(path);
    }
    int st = jt_test_in_child(read_pairs, "/nonexistent/pairs", msg, sizeof msg);
    CHECKF(st == 2 && strstr(msg, "cannot read it"), "exit %d, %s", st, msg);
}

int main(void)
{
    test_shift_pattern_rounds_and_chunks();
    test_a_shift_list_runs_those_rounds_only();
    test_bad_shift_lists_are_named();
    test_pairs_file_rounds();
    test_bad_pairs_files_exit_2();
    TEST_END();
}
