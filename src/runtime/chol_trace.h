/* Event trace of one factorization (jt_chol_run), for the analysis of where time goes
 * (scripts/chol-trace.py): off unless the environment names a file prefix in JT_CHOL_TRACE;
 * each rank then writes PREFIX-MODE-rRANK.csv at the end of each run (the last run of a mode
 * wins).  Times are MPI_Wtime (simulated: the simulated clock, common to all ranks). */
#ifndef JT_CHOL_TRACE_H
#define JT_CHOL_TRACE_H

/* Event kinds, one letter each in the file. */
enum {
    JT_TR_START = 'S',   /* task started: a = task kind, b = m, c = n, d = k */
    JT_TR_END = 'E',     /* task ended (seen): same fields */
    JT_TR_POST = 'P',    /* send posted as a root: a = tile, b = first recipient, c = count */
    JT_TR_SENT = 'C',    /* that send complete: a = tile, b = first recipient */
    JT_TR_ARRIVED = 'A', /* a remote tile arrived: a = tile */
    JT_TR_FWDONE = 'F',  /* its receive complete (forwards through here done): a = tile */
    JT_TR_LOOP = 'L',    /* at the end: µs in the loop's MPI work (a), asleep (b), turns (c) */
};

typedef struct jt_chol_trace jt_chol_trace;

/* NULL when JT_CHOL_TRACE is unset or empty (or on allocation failure: no trace). */
jt_chol_trace *jt_chol_trace_open(int rank, const char *mode);
void jt_chol_trace_ev(jt_chol_trace *t, int kind, int a, int b, int c, int d);
/* Writes the file (a warning on stderr if it cannot) and frees; NULL is a no-op. */
void jt_chol_trace_close(jt_chol_trace *t);

#endif
