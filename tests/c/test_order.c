/* --order: parsing (bad values named), and the permutations it gives. */
#include "check.h"
#include "core/order.h"

#include <string.h>

static int same(const size_t *a, const size_t *b, size_t n) { return memcmp(a, b, n * sizeof *a) == 0; }

int main(void)
{
    char err[256];
    jt_order o;
    CHECK(jt_order_parse("increasing", &o, err, sizeof err) == 0 && o.kind == JT_ORDER_INCREASING);
    CHECK(jt_order_parse("decreasing", &o, err, sizeof err) == 0 && o.kind == JT_ORDER_DECREASING);
    CHECK(jt_order_parse("shuffled", &o, err, sizeof err) == 0 && o.kind == JT_ORDER_SHUFFLED &&
          !o.seeded);
    CHECK(jt_order_parse("shuffled:7", &o, err, sizeof err) == 0 && o.seeded && o.seed == 7);
    static const char *const bad[] = {"random", "shuffled:", "shuffled:x", "shuffled:-1",
                                      "increasing:3", "shuffle", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK(jt_order_parse(bad[i], &o, err, sizeof err) == -1);
        CHECK(strstr(err, bad[i]) != NULL && strstr(err, "shuffled:SEED") != NULL);
    }

    enum { N = 50 };
    size_t a[N], b[N], seen[N];
    jt_order_parse("decreasing", &o, err, sizeof err);
    jt_order_permute(&o, N, a);
    CHECK(a[0] == N - 1 && a[N - 1] == 0);
    /* shuffled:7 twice: the same order; a permutation; not the identity; another seed differs */
    jt_order_parse("shuffled:7", &o, err, sizeof err);
    jt_order_permute(&o, N, a);
    jt_order_permute(&o, N, b);
    CHECK(same(a, b, N));
    memset(seen, 0, sizeof seen);
    int moved = 0;
    for (size_t k = 0; k < N; k++) {
        seen[a[k]]++;
        moved += a[k] != k;
    }
    for (size_t k = 0; k < N; k++)
        CHECK(seen[k] == 1);
    CHECK(moved > N / 2);
    jt_order_parse("shuffled:8", &o, err, sizeof err);
    jt_order_permute(&o, N, b);
    CHECK(!same(a, b, N));
    TEST_END();
}
