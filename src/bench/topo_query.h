/* The no-MPI queries of jostle-bench about the machine, for `jostle topo` and `jostle place`:
 * each prints one JSON document on stdout, or exits 2 with a message on bad input. */
#ifndef JT_TOPO_QUERY_H
#define JT_TOPO_QUERY_H

/* jostle-bench --topo [--topology FILE.xml] [--export OUT.xml] */
int jt_query_topo(int argc, char **argv);
/* jostle-bench --place [--topology FILE.xml] [--nic NAME] [--favor latency|bandwidth]
 *                      [--threads K] */
int jt_query_place(int argc, char **argv);
/* jostle-bench --latency-matrix [--topology FILE.xml] [--bytes B] [--accesses N] [--rounds R]
 *                               [--no-bandwidth] */
int jt_query_latency(int argc, char **argv);
/* jostle-bench --stream [--topology FILE.xml] [--bytes B] [--rounds R] [--seconds S] */
int jt_query_stream(int argc, char **argv);

/* jostle-bench --place-ranks [--topology FILE.xml] [--ranks N|A:B] [--policy packed|scatter|numa]
 *                            [--progress bind|next|numa] */
int jt_query_place_ranks(int argc, char **argv);

#endif
