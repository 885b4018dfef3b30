/* The benchmarks of jostle-bench, each once: JT_BENCH(id, simgrid) for src/bench/ID.c, which
 * defines jt_bench_ID; simgrid 1 when the SimGrid build (smpicc) has it.  Read by bench.h (the
 * declarations), registry.c (the table, --list, --describe) and CMakeLists.txt (the files the
 * SimGrid build leaves out): keep one entry per line, in the order of --list.  Left out of
 * SimGrid: contention and overlap put compute threads beside MPI calls, which SMPI cannot
 * simulate; tile-kernels, memlat and c2c run their kernels (and c2c its threads) for real. */
JT_BENCH(pingpong, 1)
JT_BENCH(contention, 0)
JT_BENCH(overlap, 0)
JT_BENCH(bcast, 1)
JT_BENCH(cholesky, 1)
JT_BENCH(tile_kernels, 0)
JT_BENCH(shift, 1)
JT_BENCH(memlat, 0)
JT_BENCH(c2c, 0)
