/* Size lists: the seed's sweeps (every byte to 1 KiB, powers of two to 1 GiB), suffixes, and
 * the bad inputs that must be refused with the value named. */
#include "check.h"
#include "core/sizes.h"

#include <stdlib.h>
#include <string.h>

static int parses(const char *spec, uint64_t **v, size_t *n)
{
    char err[256];
    return jt_sizes_parse(spec, v, n, err, sizeof err) == 0;
}

static void refused(const char *spec, const char *must_contain)
{
    uint64_t *v;
    size_t n;
    char err[256] = "";
    int rc = jt_sizes_parse(spec, &v, &n, err, sizeof err);
    CHECK(rc == -1);
    CHECK(v == NULL && n == 0);
    if (!strstr(err, must_contain)) {
        fprintf(stderr, "message for '%s' lacks '%s': %s\n", spec, must_contain, err);
        jt_test_failures++;
    }
}

int main(void)
{
    uint64_t *v;
    size_t n;
    CHECK(parses("1:1024:1", &v, &n));
    CHECK(n == 1024 && v[0] == 1 && v[1023] == 1024);
    free(v);
    CHECK(parses("1K:1G", &v, &n));
    CHECK(n == 21 && v[0] == 1024 && v[20] == ((uint64_t)1 << 30));
    for (size_t i = 1; i < n; i++)
        CHECK(v[i] == 2 * v[i - 1]);
    free(v);
    CHECK(parses("0:4", &v, &n));
    CHECK(n == 4 && v[0] == 0 && v[1] == 1 && v[2] == 2 && v[3] == 4);
    free(v);
    CHECK(parses("0,4,64K,1MiB,2M", &v, &n));
    CHECK(n == 5 && v[0] == 0 && v[1] == 4 && v[2] == 65536 && v[3] == 1048576 && v[4] == 2097152);
    free(v);
    CHECK(parses("16:20K:16", &v, &n)); /* the seed's figure 2: every 16th byte to 20 KiB */
    CHECK(n == 1280 && v[1279] == 20480);
    free(v);

    refused("-4", "'-4'");
    refused("abc", "'abc'");
    refused("4X", "'4X'");
    refused("", "empty");
    refused("8:4", "empty");
    refused("1:10:0", "step");
    refused("2T", "too large");
    refused("1:2:3:4", "1:2:3:4");
    refused("0:1T:1", "more than");

    char b[32];
    jt_format_bytes(65536, b, sizeof b);
    CHECK(strcmp(b, "64K") == 0);
    jt_format_bytes(1000, b, sizeof b);
    CHECK(strcmp(b, "1000") == 0);
    TEST_END();
}
