/* Clock synchronisation between two processes whose clocks differ by an offset that drifts:
 * a linear model fitted to windows of ping-pong exchanges, as Hunold and Carpen-Amarie's HCA
 * ("Hierarchical clock synchronization in MPI", IEEE Cluster 2018; the linear model of
 * Jones & Koenig, "Clock synchronization in high-end computing environments", J. Supercomput.
 * 2013) and ReproMPI's window-based schemes (Hunold & Carpen-Amarie, "Reproducible MPI
 * benchmarking is still not as easy as you think", IEEE TPDS 27(8), 2016).
 *
 * Each window of exchanges gives one fit point: the exchange of least round trip (the least
 * queueing, hence the least asymmetry) estimates the offset at its midpoint as Cristian's
 * method does, tr - (t0 + t1)/2, within half its round trip.  A least-squares line through
 * the fit points gives the offset at a reference time and its drift.  No MPI here: the caller
 * makes the exchanges, so that a unit test can feed it a simulated clock. */
#ifndef JT_CLOCKSYNC_H
#define JT_CLOCKSYNC_H

/* One exchange, read on the reference's clock (t0: sent, t1: reply received) and on the
 * other's (tr: when it replied). */
typedef struct jt_clock_exchange {
    double t0, tr, t1;
} jt_clock_exchange;

typedef struct jt_clock_model {
    double offset;   /* the other's clock minus the reference's at t_ref, s */
    double drift;    /* d offset / dt, s per s */
    double t_ref;    /* the reference time of the fit points' centre, s */
    double residual; /* RMS distance of the fit points to the line, s */
    double error;    /* bound on the model's error over the fitted span: the largest half
                        round trip of a fit point plus twice the residual, s */
    double span;     /* reference time between the first and last fit point, s */
    int fitpoints;
} jt_clock_model;

/* Fits the model to nwin windows of per_win exchanges each, window after window in ex[]. */
void jt_clock_fit(const jt_clock_exchange *ex, int nwin, int per_win, jt_clock_model *m);

/* The other's offset at reference time t. */
double jt_clock_offset_at(const jt_clock_model *m, double t);

/* A reading of the other's clock mapped to the reference's time. */
double jt_clock_to_reference(const jt_clock_model *m, double t_other);

#endif
