/* SPDX-License-Identifier: BSD-3-Clause */
/* U-torus (Robinson et al.; Oral & George): recursive halving over the members in torus
 * order. A member heading the block [lo, hi) sends to the member halfway along it, which
 * heads the far half, and keeps the near half: ceil(log2 n) steps, the far (never larger)
 * half first. Blocks are runs of the torus order, so the messages of one step travel disjoint
 * stretches of the walk. Each message's block is what the paper's partition information
 * carries; here every member works it out from the descriptor. Without a torus: the same
 * halving over the list from the root. */
#include "trees/builder.h"
#include "trees/torus_order.h"

/* Places the block [lo, hi) headed by lo; its children get slots 0, 1, ... farthest first. */
static void halve(struct fm_torus_tree *t, int lo, int hi)
{
    for (int slot = 0; hi - lo > 1; slot++) {
        int mid = lo + (hi - lo + 1) / 2;
        t->parent[mid] = lo;
        t->slot[mid] = slot;
        halve(t, mid, hi);
        hi = mid;
    }
}

static void place(const struct fm_tree_desc *d, struct fm_torus_tree *t)
{
    halve(t, 0, d->n);
}

FM_TORUS_CALLS(place)

const struct fm_tree_builder fm_tree_utorus = {
    .name = "utorus",
    .children = torus_children,
    .parent = torus_parent,
    .scratch_size = fm_torus_scratch_size,
};
