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

FM_TORUS_CALLS(place)

const struct fm_tree_builder fm_tree_sepaddr = {
    .name = "sepaddr",
    .children = torus_children,
    .parent = torus_parent,
    .scratch_size = fm_torus_scratch_size,
};
