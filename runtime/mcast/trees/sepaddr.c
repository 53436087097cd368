/* SPDX-License-Identifier: BSD-3-Clause */
/* Separate addressing (Oral & George): the root sends to every member, nearest first along
 * the torus (torus order); without a torus, in list order from the root: the flat tree. */
#include "trees/builder.h"
#include "trees/torus_order.h"

static void place(const struct fm_tree_desc *d, struct fm_torus_tree *t)
{
    for (int i = 1; i < d->n; i++)
        t->parent[i] = 0;
}

static int sepaddr_children(const struct fm_tree_desc *d, int r, int *out, int cap, void *s)
{
    return fm_torus_children(d, r, out, cap, s, place);
}

static int sepaddr_parent(const struct fm_tree_desc *d, int r, void *s)
{
    return fm_torus_parent(d, r, s, place);
}

const struct fm_tree_builder fm_tree_sepaddr = {
    .name = "sepaddr",
    .children = sepaddr_children,
    .parent = sepaddr_parent,
    .scratch_size = fm_torus_scratch_size,
};
