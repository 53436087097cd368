/* SPDX-License-Identifier: BSD-3-Clause */
/* S-torus (Robinson et al.; Oral & George): one chain through the members in torus order,
 * the walk from the root along x, then y, then z, each ring the + way; every hop goes forward
 * round the torus, so the chain never doubles back. Without a torus: the chain. */
#include "trees/builder.h"
#include "trees/torus_order.h"

static void place(const struct fm_tree_desc *d, struct fm_torus_tree *t)
{
    for (int i = 1; i < d->n; i++)
        t->parent[i] = i - 1;
}

FM_TORUS_CALLS(place)

const struct fm_tree_builder fm_tree_storus = {
    .name = "storus",
    .children = torus_children,
    .parent = torus_parent,
    .scratch_size = fm_torus_scratch_size,
};
