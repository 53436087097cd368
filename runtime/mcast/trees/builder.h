/* SPDX-License-Identifier: BSD-3-Clause */
/* The builder interface: what one tree builder file provides (the registry lists them). */
#ifndef FM_TREE_BUILDER_H
#define FM_TREE_BUILDER_H

#include <stddef.h>

#include "trees/tree_desc.h"

/* One builder: one file under runtime/mcast/trees/ and one line in registry.c's table. Its
 * functions see a checked descriptor and relative indices (root = 0). */
struct fm_tree_builder {
    const char *name;
    const char *param; /* what its parameter means ("k", "lambda"), NULL when it takes none */
    /* Builder-specific checks of d (param, m, lambda); NULL when there are none. */
    int (*check)(const struct fm_tree_desc *d);
    /* The parameter to use when d->param is 0; NULL when it stays 0. */
    int (*resolve)(const struct fm_tree_desc *d);
    /* Children of relative index r in send order, snprintf-style count. */
    int (*children)(const struct fm_tree_desc *d, int r, int *out, int cap, void *scratch);
    /* Parent relative index of r > 0. */
    int (*parent)(const struct fm_tree_desc *d, int r, void *scratch);
    /* Scratch bytes needed; NULL when none. */
    size_t (*scratch_size)(const struct fm_tree_desc *d);
    /* Optional: relative parent of every r (parent[0] = -1) in one pass, for a builder whose
     * children are in increasing relative order and whose per-call cost is O(n). */
    int (*parents)(const struct fm_tree_desc *d, int *parent, void *scratch);
    /* Optional: the children of every r at once (relative indices, send order: r's are
     * kids[first[r]] .. kids[first[r+1] - 1]; first has n + 1 entries, kids n - 1), for a
     * builder whose per-call cost repeats work every member shares (node: grouping the
     * members by host, O(n log n) a call). */
    int (*layout)(const struct fm_tree_desc *d, int *first, int *kids, void *scratch);
    /* Optional: the parameters FM_TREE=auto weighs for n members, into params[0..cap),
     * snprintf-style count; NULL: the parameter 0 alone (resolved automatically). */
    int (*candidates)(int n, int *params, int cap);
};

#endif
