/* SPDX-License-Identifier: BSD-3-Clause */
/* k-binomial arithmetic (kbinomial.c), shared by the binomial and kbinomial builders. */
#ifndef FM_TREE_KBINOMIAL_H
#define FM_TREE_KBINOMIAL_H

/* Kesavan & Panda. */
long long fm_tree_kbin_cover(int s, int k); /* N(s,k), saturating at FM_TREE_COVER_MAX */
int fm_tree_kbin_steps(int n, int k);       /* t_1(n,k): least s with N(s,k) >= n */
/* The k in [1, ceil(log2 n)] minimising t_1(n,k) + (m-1)k; the smallest such k on ties. */
int fm_tree_kbin_optimal_k(int n, int m);
int fm_tree_ceil_log2(int n); /* ceil(log2 n) for n >= 1 */
int fm_tree_kbin_children(int n, int k, int r, int *out, int cap);
int fm_tree_kbin_parent(int n, int k, int r);
#define FM_TREE_COVER_MAX (1LL << 62)

#endif
