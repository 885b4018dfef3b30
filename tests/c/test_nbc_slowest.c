/* Serial unit test of jt_nbc_slowest: which rank's samples a batch keeps. */
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
    TEST_END();
}
