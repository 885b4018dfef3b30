/* One-sided streams, built on comm/p2p.h's pair, arena and slots (p2p.c knows nothing of
 * them): MPI-3 passive target, a window over each side's arena, locked once by the initiator
 * (rank 0); one sample = a window of MPI_Put into the target's receiving slots, or of MPI_Get
 * from its sending slots into the initiator's receiving slots, then MPI_Win_flush (complete at
 * the target for put, landed for get).  One slot per message, as osu_put_bw and osu_get_bw
 * address theirs.  The target makes no call while it happens: what is measured is the NIC and
 * memory path alone. */
#ifndef JT_RMA_H
#define JT_RMA_H

#include "comm/p2p.h"

typedef struct jt_rma {
    jt_p2p *p; /* mode put or get */
    MPI_Win win;
} jt_rma;

/* Collective over p->comm (ranks outside the pair expose nothing). */
void jt_rma_init(jt_rma *r, jt_p2p *p);
void jt_rma_free(jt_rma *r);
/* Duration in seconds on the initiator, 0 on the target (which waits in the harness). */
double jt_rma_sample(jt_rma *r, size_t bytes);

#endif
