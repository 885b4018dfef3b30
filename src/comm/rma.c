#include "comm/rma.h"

#include "core/timer.h"

void jt_rma_init(jt_p2p *p)
{
    int exposed = p->me >= 0 && p->arena;
    MPI_Win_create(exposed ? p->arena : NULL, exposed ? (MPI_Aint)p->arena_bytes : 0, 1,
                   MPI_INFO_NULL, p->comm, &p->win);
    if (p->me == 0)
        MPI_Win_lock_all(MPI_MODE_NOCHECK, p->win);
    p->rma = 1;
}

void jt_rma_free(jt_p2p *p)
{
    if (!p->rma)
        return;
    if (p->me == 0)
        MPI_Win_unlock_all(p->win);
    MPI_Win_free(&p->win);
    p->rma = 0;
}

double jt_rma_sample(jt_p2p *p, size_t bytes)
{
    if (p->me != 0)
        return 0.0;
    int n = (int)bytes, w = jt_p2p_window_for(p->mode, p->window, bytes);
    /* Both sides lay out their arenas alike: a slot's offset is the same on the peer. */
    double t0 = jt_now();
    for (int k = 0; k < w; k++) {
        if (p->mode == JT_P2P_PUT) {
            unsigned char *src = jt_p2p_slot(p, 0, k, bytes);
            MPI_Aint at = (MPI_Aint)(jt_p2p_slot(p, 1, k, bytes) - p->arena);
            MPI_Put(src, n, MPI_BYTE, p->peer, at, n, MPI_BYTE, p->win);
        } else {
            unsigned char *dst = jt_p2p_slot(p, 1, k, bytes);
            MPI_Aint at = (MPI_Aint)(jt_p2p_slot(p, 0, k, bytes) - p->arena);
            MPI_Get(dst, n, MPI_BYTE, p->peer, at, n, MPI_BYTE, p->win);
        }
    }
    MPI_Win_flush(p->peer, p->win);
    return jt_now() - t0;
}
