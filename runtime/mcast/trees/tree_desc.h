/* SPDX-License-Identifier: BSD-3-Clause */
/* The tree descriptor: what a member needs to know to find its place in a tree (tree.h). */
#ifndef FM_TREE_DESC_H
#define FM_TREE_DESC_H

/* Where the members are, for builders that place members by host or coordinates (torus and
 * prefix trees); the others ignore it. Every member derives the same view from the job's
 * topology (agreed at fm_init) and the member list, so nothing more travels on the wire. */
struct fm_tree_topo {
    const void *arg;
    int ndims;                                          /* coordinates per member, 0: none */
    int (*host)(const void *arg, int pos);              /* host index of member pos, or < 0 */
    int (*coord)(const void *arg, int pos, int *coord); /* FM_OK, or < 0 without coordinates */
    int dims[3]; /* extent of each axis (the torus's size); 0: the largest coordinate + 1 */
};

/* Everything a member needs to know to find its place in the tree. Every member of a multicast
 * must use the same descriptor. */
struct fm_tree_desc {
    int builder;   /* registry id, from fm_tree_lookup() or fm_tree_parse() */
    int param;     /* kbinomial: k; postal: lambda in steps; 0 = choose automatically */
    int n;         /* members, >= 1 */
    int root;      /* root position in [0, n) */
    int m;         /* packets per message: only for kbinomial's automatic k (then >= 1) */
    double lambda; /* postal's lambda in steps when param is 0 (then >= 1) */
    const struct fm_tree_topo *topo; /* where the members are; NULL: unknown */
};

#endif
