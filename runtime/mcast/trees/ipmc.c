/* SPDX-License-Identifier: BSD-3-Clause */
/* The two-stage multicast ("ipmc", mcast/ipmc/) is not a tree: its root reaches every member
 * with one datagram a chunk, and the repairs follow the ring of the members from the root.
 * As a builder it describes that ring (member r repairs r + 1), which is what the members
 * wait on when datagrams are lost; mcast.c sends it through ipmc/, never down these edges. */
#include "trees/builder.h"

static int ring_children(const struct fm_tree_desc *d, int r, int *out, int cap, void *scratch)
{
    (void)scratch;
    if (r + 1 >= d->n)
        return 0;
    if (cap > 0)
        out[0] = r + 1;
    return 1;
}

static int ring_parent(const struct fm_tree_desc *d, int r, void *scratch)
{
    (void)d, (void)scratch;
    return r - 1;
}

const struct fm_tree_builder fm_tree_ipmc = {
    .name = "ipmc",
    .children = ring_children,
    .parent = ring_parent,
};
