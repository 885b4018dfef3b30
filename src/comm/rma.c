#include "comm/rma.h"

#include "core/timer.h"

void jt_rma_init(jt_rma *r, jt_p2p *p)
{
    int exposed = p->me >= 0 && p->arena;
    r->p = p;
    MPI_Win_create(exposed ? p->arena : NULL, exposed ? (MPI_Aint)p->arena_bytes : 0, 1,
                   MPI_INFO_NULL, p->comm, &r->win);
    if (p->me == 0)
        MPI_Win_lock_all(MPI_MODE_NOCHECK, r->win);
}

void jt_rma_free(jt_rma *r)
{
    if (!r->p)
        return;
    if (r->p->me == 0)
        MPI_Win_unlock_all(r->win);
    MPI_Win_free(&r->win);
    r->p = NULL;
}

double jt_rma_sample(jt_rma *r, size_t bytes)
{
    jt_p2p *p = r->p;
    double dt = 0.0;
    if (p->me == 0) {
        int n = (int)bytes, w = jt_p2p_window_for(p->mode, p->buffers, p->window, bytes);
        /* Both sides lay out their arenas alike: a slot's offset is the same on the peer. */
        double t0 = jt_now();
        for (int rep = 0; rep < p->reps; rep++) {
            for (int k = 0; k < w; k++) {
                if (p->mode == JT_P2P_PUT) {
                    unsigned char *src = jt_p2p_slot(p, 0, k, bytes);
                    MPI_Aint at = (MPI_Aint)(jt_p2p_slot(p, 1, k, bytes) - p->arena);
                    MPI_Put(src, n, MPI_BYTE, p->peer, at, n, MPI_BYTE, r->win);
                } else {
                    unsigned char *dst = jt_p2p_slot(p, 1, k, bytes);
                    MPI_Aint at = (MPI_Aint)(jt_p2p_slot(p, 0, k, bytes) - p->arena);
                    MPI_Get(dst, n, MPI_BYTE, p->peer, at, n, MPI_BYTE, r->win);
                }
            }
            MPI_Win_flush(p->peer, r->win);
        }
        dt = jt_now() - t0;
    }
    jt_p2p_advance(p); /* the target counts too: cold's frames stay in step */
    return dt;
}
