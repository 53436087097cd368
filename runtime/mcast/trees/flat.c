/* SPDX-License-Identifier: BSD-3-Clause */
/* Flat tree (separate addressing): the root sends to every other member, in list order. */
#include "trees/builder.h"

static int flat_children(const struct fm_tree_desc *d, int r, int *out, int cap, void *scratch)
{
    (void)scratch;
    if (r != 0)
        return 0;
    for (int c = 1; c < d->n && c <= cap; c++)
        out[c - 1] = c;
    return d->n - 1;
}

static int flat_parent(const struct fm_tree_desc *d, int r, void *scratch)
{
    (void)d, (void)r, (void)scratch;
    return 0;
}

const struct fm_tree_builder fm_tree_flat = {
    .name = "flat",
    .children = flat_children,
    .parent = flat_parent,
};
