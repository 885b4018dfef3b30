/* What a reference program prints on rank 0 (the bench/ scripts read it), in seconds: "bare"
 * the median over blocks of the bare loop's block time, "jostle" the median of jostle's
 * samples (blocks × reps, block-major), "jostle_blockmean" the median over blocks of their
 * mean. */
#ifndef JT_REF_REPORT_H
#define JT_REF_REPORT_H

#include "core/stats.h"

#include <stdio.h>
#include <stdlib.h>

static inline void ref_report(double *bare, double *mine, int blocks, int reps)
{
    double *means = calloc((size_t)blocks, sizeof *means);
    for (int b = 0; means && b < blocks; b++)
        for (int r = 0; r < reps; r++)
            means[b] += mine[(size_t)b * reps + r] / reps;
    jt_stats sb, sm, smm = {0};
    jt_stats_compute(bare, (size_t)blocks, &sb);
    if (means)
        jt_stats_compute(means, (size_t)blocks, &smm);
    jt_stats_compute(mine, (size_t)blocks * reps, &sm);
    printf("bare %.12g\njostle %.12g\njostle_blockmean %.12g\n", sb.median, sm.median,
           smm.median);
    free(means);
}

#endif
