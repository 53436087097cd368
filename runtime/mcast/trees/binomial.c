/* SPDX-License-Identifier: BSD-3-Clause */
/* The binomial tree: the k-binomial tree with k = ceil(log2 n), so no vertex's degree limits
 * the recursive doubling and one packet reaches everyone in ceil(log2 n) steps. */
#include "trees/builder.h"
#include "trees/kbinomial.h"

static int binomial_k(const struct fm_tree_desc *d)
{
    int k = fm_tree_ceil_log2(d->n);
    return k > 1 ? k : 1; /* n <= 2: any k gives the same tree, and k must be >= 1 */
}

static int binomial_children(const struct fm_tree_desc *d, int r, int *out, int cap, void *scratch)
{
    (void)scratch;
    return fm_tree_kbin_children(d->n, binomial_k(d), r, out, cap);
}

static int binomial_parent(const struct fm_tree_desc *d, int r, void *scratch)
{
    (void)scratch;
    return fm_tree_kbin_parent(d->n, binomial_k(d), r);
}

const struct fm_tree_builder fm_tree_binomial = {
    .name = "binomial",
    .children = binomial_children,
    .parent = binomial_parent,
};
