/* The clock model (core/clocksync.h) recovers an offset and a drift injected into a simulated
 * clock, through exchanges whose one-way delays are random and unequal: the offset within the
 * model's own error bound at every time of the span, the drift within 1 ppm, and a reading of
 * the other clock mapped back to true time within the bound. */
#include "check.h"
#include "core/clocksync.h"

#include <stdint.h>

static uint64_t rng = 42;

static double uniform(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

/* A one-way delay: 1.5 us of wire and software, plus queueing (exponential, mean 0.5 us), plus
 * now and then a long stall (an interrupt: 50 us). */
static double delay(void)
{
    return 1.5e-6 - 0.5e-6 * log(uniform()) + (uniform() < 0.02 ? 50e-6 : 0.0);
}

/* The other process's clock at true time t: the reference's clock is true time. */
static double other_clock(double t, double offset, double drift) { return offset + t * (1 + drift); }

static void check_recovery(double offset, double drift)
{
    enum { NWIN = 20, PER = 10 };
    jt_clock_exchange ex[NWIN * PER];
    double t = 5.0; /* true time: the reference has run a while */
    for (int w = 0; w < NWIN; w++) {
        for (int k = 0; k < PER; k++) {
            jt_clock_exchange *e = &ex[w * PER + k];
            e->t0 = t;
            t += delay();
            e->tr = other_clock(t, offset, drift);
            t += delay();
            e->t1 = t;
        }
        t += 0.01; /* windows 10 ms apart */
    }
    jt_clock_model m;
    jt_clock_fit(ex, NWIN, PER, &m);
    printf("injected offset %.6g s, drift %.3g ppm: recovered drift %.4g ppm, residual %.3g us, "
           "error bound %.3g us over %.3g s\n", offset, drift * 1e6, m.drift * 1e6,
           m.residual * 1e6, m.error * 1e6, m.span);
    CHECK(m.fitpoints == NWIN && m.span > 0.19);
    CHECK(m.error < 5e-6); /* the least round trips are a few us */
    CHECK_NEAR(m.drift, drift, 1e-6);
    for (double tt = ex[0].t0; tt <= ex[NWIN * PER - 1].t1; tt += 0.005) {
        double truth = other_clock(tt, offset, drift) - tt;
        CHECK_NEAR(jt_clock_offset_at(&m, tt), truth, m.error);
        CHECK_NEAR(jt_clock_to_reference(&m, other_clock(tt, offset, drift)), tt, m.error);
    }
}

int main(void)
{
    check_recovery(3e-3, 20e-6);     /* 3 ms ahead, gaining 20 us per second */
    check_recovery(-0.75, -50e-6);   /* 0.75 s behind, losing 50 us per second */
    check_recovery(0.0, 0.0);        /* one clock (two ranks of one host) */

    /* One window: the offset at its time, no drift claimed. */
    jt_clock_exchange one[3] = {{1.0, 1.0 + 2e-3 + 1e-6, 1.0 + 2e-6},
                                {1.1, 1.1 + 2e-3 + 9e-6, 1.1 + 20e-6},
                                {1.2, 1.2 + 2e-3 + 3e-6, 1.2 + 8e-6}};
    jt_clock_model m;
    jt_clock_fit(one, 1, 3, &m);
    CHECK(m.drift == 0.0 && m.fitpoints == 1);
    CHECK_NEAR(m.offset, 2e-3, 1e-6);
    CHECK_NEAR(m.error, 1e-6, 1e-12); /* half the least round trip */
    TEST_END();
}
