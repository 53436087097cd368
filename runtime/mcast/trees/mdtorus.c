/* SPDX-License-Identifier: BSD-3-Clause */
/* Md-torus (Robinson et al.; Oral & George): dimensional partitioning. The members of one
 * ring of the first dimension (equal in every coordinate but x) form a partition; its head is
 * its first member in torus order (the root heads its own). On a 2D torus the root sends to
 * each ring's head and every head relays along its ring, member to member the + way: two
 * phases. On a 3D torus the root sends to the head of each plane (equal z), which sends to
 * each ring head of its plane: one phase per dimension. On a ring, or without a torus (every
 * member on one ring), it is the chain. */
#include "trees/builder.h"
#include "trees/torus_order.h"

static void place(const struct fm_tree_desc *d, struct fm_torus_tree *t)
{
    int ring = 0, plane = 0; /* the heads of the current ring and plane */
    for (int i = 1; i < d->n; i++) {
        if (fm_torus_same_from(t, i, ring, 1)) {
            t->parent[i] = i - 1; /* along the ring */
            continue;
        }
        ring = i; /* a new ring's head: from its plane's head, or the root for a new plane */
        if (!fm_torus_same_from(t, i, plane, 2)) {
            plane = i;
            t->parent[i] = 0;
        } else {
            t->parent[i] = plane;
        }
    }
}

FM_TORUS_CALLS(place)

const struct fm_tree_builder fm_tree_mdtorus = {
    .name = "mdtorus",
    .children = torus_children,
    .parent = torus_parent,
    .scratch_size = fm_torus_scratch_size,
};
