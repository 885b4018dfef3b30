/* The order of a sweep's points; see order.h. */
#include "core/order.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const jt_order_names[] = {"increasing", "decreasing", "shuffled", NULL};

int jt_order_parse(const char *spec, jt_order *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    const char *colon = strchr(spec, ':');
    size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
    for (int k = 0; jt_order_names[k]; k++) {
        if (strlen(jt_order_names[k]) != len || strncmp(spec, jt_order_names[k], len) != 0)
            continue;
        o->kind = (jt_order_kind)k;
        if (!colon)
            return 0;
        char *end;
        errno = 0;
        unsigned long long s = strtoull(colon + 1, &end, 10);
        if (o->kind == JT_ORDER_SHUFFLED && colon[1] >= '0' && colon[1] <= '9' && !*end &&
            errno == 0) {
            o->seeded = 1;
            o->seed = s;
            return 0;
        }
        break;
    }
    snprintf(err, errlen, "--order '%s' is not allowed: expected increasing, decreasing, "
             "shuffled or shuffled:SEED (SEED a non-negative integer)", spec);
    return -1;
}

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void jt_order_permute(const jt_order *o, size_t n, size_t *idx)
{
    for (size_t k = 0; k < n; k++)
        idx[k] = o->kind == JT_ORDER_DECREASING ? n - 1 - k : k;
    if (o->kind != JT_ORDER_SHUFFLED)
        return;
    uint64_t s = o->seed;
    for (size_t k = n; k > 1; k--) { /* Fisher-Yates; the modulo bias is below 2^-40 here */
        size_t j = (size_t)(splitmix64(&s) % k), t = idx[k - 1];
        idx[k - 1] = idx[j];
        idx[j] = t;
    }
}
