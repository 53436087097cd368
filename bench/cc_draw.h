/* SPDX-License-Identifier: BSD-3-Clause */
/* What the concurrent multicast benchmarks share (fastmsg-bench-mcast --concurrent K in
 * mc_concurrent.c, bench/mpi's fastmsg-bench-mpi-concurrent-*): the destination draw (which K
 * ranks each root sends to in a round) and rank 0's reduction of a round. Plain C (no fastmsg,
 * no MPI), so that both programs draw exactly the same sets for the same round numbers, every
 * rank can work out every root's set by itself, and both report alike. */
#ifndef CC_DRAW_H
#define CC_DRAW_H

#include <stdint.h>

/* The seed both programs use (they have no option for another). */
#define CC_DRAW_SEED 0x5eedull

/* Which r of the n ranks (0 < r <= n) are roots in round `round`: is_root[0..n) set to 1 for
 * them, 0 for the others. r = n: every rank, no draw (the rounds of a run without --roots).
 * Otherwise a partial Fisher-Yates shuffle of 0..n-1, driven by splitmix64 from (seed, round)
 * on a stream no root's destination draw uses. scratch holds n ints. */
void cc_draw_roots(uint64_t seed, int round, int n, int r, int *scratch, unsigned char *is_root);

/* Root's k destinations (0 < k < n) in round `round` of an n-rank job into out[0..k), in the
 * order drawn (not sorted), none of them root: a partial Fisher-Yates shuffle of the n - 1 other
 * ranks, driven by splitmix64 from (seed, round, root). scratch holds n - 1 ints. */
void cc_draw(uint64_t seed, int round, int root, int n, int k, int *scratch, int *out);

/* Rank 0's reduction of one round, the same in both programs: reports holds every rank's
 * report, n rows of n + 1 (its start, then when each root's copy was complete here, -1 when not
 * a member); is_root says which ranks multicast this round (cc_draw_roots). Each multicast's
 * completion (its slowest member less its root's start) goes to each[*ne], each[*ne + 1], ...
 * (*ne advanced by the number of roots), and the round's (the last copy anywhere less the
 * earliest root's start) to *T. */
void cc_reduce_round(const double *reports, int n, const unsigned char *is_root, double *each,
                     long *ne, double *T);

#endif
