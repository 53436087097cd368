/* SPDX-License-Identifier: BSD-3-Clause */
/* Chain: each member sends to the next one in list order (the 1-binomial tree). */
#include "trees/builder.h"

static int chain_children(const struct fm_tree_desc *d, int r, int *out, int cap, void *scratch)
{
    (void)scratch;
    if (r + 1 >= d->n)
        return 0;
    if (cap > 0)
        out[0] = r + 1;
    return 1;
}

static int chain_parent(const struct fm_tree_desc *d, int r, void *scratch)
{
    (void)d, (void)scratch;
    return r - 1;
}

const struct fm_tree_builder fm_tree_chain = {
    .name = "chain",
    .children = chain_children,
    .parent = chain_parent,
};

/* The two-stage multicast ("ipmc", mcast/ipmc/) is not a tree: its root reaches every member
 * with one datagram a chunk, and repairs follow the ring of the members from the root, which
 * is this chain (member r repairs r + 1). As a builder it is that ring: what members wait on
 * when datagrams are lost. mcast.c sends it through ipmc/, never down these edges. */
const struct fm_tree_builder fm_tree_ipmc = {
    .name = "ipmc",
    .children = chain_children,
    .parent = chain_parent,
};
