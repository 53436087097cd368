/* SPDX-License-Identifier: BSD-3-Clause */
/* The destination draw of the concurrent multicast benchmarks (fastmsg-bench-mcast --concurrent K
 * in mc_concurrent.c, bench/mpi's fastmsg-bench-mpi-concurrent-*): which K ranks each root sends
 * to in a round. Plain C (no fastmsg, no MPI), so that both programs draw exactly the same sets
 * for the same round numbers and every rank can work out every root's set by itself. */
#ifndef CC_DRAW_H
#define CC_DRAW_H

#include <stdint.h>

/* The seed both programs use (they have no option for another). */
#define CC_DRAW_SEED 0x5eedull

/* Root's k destinations (0 < k < n) in round `round` of an n-rank job into out[0..k), in the
 * order drawn (not sorted), none of them root: a partial Fisher-Yates shuffle of the n - 1 other
 * ranks, driven by splitmix64 from (seed, round, root). scratch holds n - 1 ints. */
void cc_draw(uint64_t seed, int round, int root, int n, int k, int *scratch, int *out);

#endif
