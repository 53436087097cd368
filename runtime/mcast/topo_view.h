/* SPDX-License-Identifier: BSD-3-Clause */
/* The topology of a multicast's members, as tree builders see it (trees/tree_desc.h): member
 * positions mapped to ranks (a member list, or a descriptor's), and ranks to the job's
 * topology (runtime/topo). */
#ifndef FM_MCAST_TOPO_VIEW_H
#define FM_MCAST_TOPO_VIEW_H

#include "mcast_desc.h"
#include "topo.h"
#include "trees/tree_desc.h"

struct fm_mcast_topo_view {
    struct fm_tree_topo base;
    const fm_topo *topo;
    const int *ranks;          /* member i's rank is ranks[i]; NULL: from desc */
    const fm_mcast_desc *desc; /* a list-mode descriptor, when ranks is NULL */
    int n;                     /* members */
};

/* Fill v for n members whose ranks are ranks[0..n) (or, ranks NULL, desc's list); returns
 * &v->base for a struct fm_tree_desc's topo, or NULL when topo is NULL. */
const struct fm_tree_topo *fm_mcast_topo_view(struct fm_mcast_topo_view *v, const fm_topo *topo,
                                              const int *ranks, const fm_mcast_desc *desc, int n);

#endif
