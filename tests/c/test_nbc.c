/* Serial unit tests of the overlap benchmark's pure parts: which rank's samples a batch keeps
 * (jt_nbc_slowest) and the overlap ratios on known times (jt_nbc_overlap). */
#include "comm/nbc.h"

#include "check.h"

int main(void)
{
    /* 3 ranks, 2 batches of 2 samples, 2 series interleaved (step 2); series 0 below. */
    const double all[3 * 8] = {
        /* rank 0 */ 5, 0, 1, 0, /**/ 1, 0, 1, 0,
        /* rank 1 */ 2, 0, 3, 0, /**/ 9, 0, 9, 0,
        /* rank 2 */ 3, 0, 3, 0, /**/ 1, 0, 2, 0,
    };
    double out[2];
    /* batch 0: totals 6, 5, 6: the first largest (rank 0), whose samples are not the maxima */
    jt_nbc_slowest(all, 3, 8, 2, 2, out);
    CHECK(out[0] == 5 && out[1] == 1);
    /* batch 1 (offset 4): rank 1 */
    jt_nbc_slowest(all + 4, 3, 8, 2, 2, out);
    CHECK(out[0] == 9 && out[1] == 9);
    /* b = 1 is the maximum over ranks */
    jt_nbc_slowest(all + 2, 3, 8, 2, 1, out);
    CHECK(out[0] == 3);
    /* Overlap on known times: pure 10, cpu 10, ovrl 12 hides 8 of 10 either way; pure 10,
     * cpu 5, ovrl 12 hides 3: 3/5 by the seed's min, 3/10 by IMB-NBC's max. */
    CHECK_NEAR(jt_nbc_overlap(10, 10, 12, 0), 0.8, 1e-12);
    CHECK_NEAR(jt_nbc_overlap(10, 10, 12, 1), 0.8, 1e-12);
    CHECK_NEAR(jt_nbc_overlap(10, 5, 12, 0), 0.6, 1e-12);
    CHECK_NEAR(jt_nbc_overlap(10, 5, 12, 1), 0.3, 1e-12);
    CHECK(jt_nbc_overlap(10, 5, 20, 0) == 0.0); /* slower than both in a row: none */
    CHECK(jt_nbc_overlap(10, 5, 4, 0) == 1.0);  /* faster than the longer alone: clamped */
    CHECK(jt_nbc_overlap(10, 10, 10, 0) == 1.0);
    CHECK(isnan(jt_nbc_overlap(0, 5, 5, 0)));
    TEST_END();
}
