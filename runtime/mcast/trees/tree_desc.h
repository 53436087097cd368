/* The tree descriptor: what a member needs to know to find its place in a tree (tree.h). */
#ifndef FM_TREE_DESC_H
#define FM_TREE_DESC_H

/* Everything a member needs to know to find its place in the tree. Every member of a multicast
 * must use the same descriptor. */
struct fm_tree_desc {
    int builder;   /* registry id, from fm_tree_lookup() or fm_tree_parse() */
    int param;     /* kbinomial: k; postal: lambda in steps; 0 = choose automatically */
    int n;         /* members, >= 1 */
    int root;      /* root position in [0, n) */
    int m;         /* packets per message: only for kbinomial's automatic k (then >= 1) */
    double lambda; /* postal's lambda in steps when param is 0 (then >= 1) */
};

#endif
