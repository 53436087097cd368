/* SPDX-License-Identifier: BSD-3-Clause */
/* Multicast trees: which members a member sends to, computed from a small descriptor alone.
 *
 * Members are positions 0..n-1 of an ordered member list; the caller maps positions to ranks.
 * No node holds the whole tree: each member asks for its own children (and parent). Builders
 * work on the relative index r = (pos - root + n) % n, so the root is r = 0 and every tree is
 * rotated by its root. Children come in send order, largest subtree first.
 *
 * Cost of one fm_tree_children / fm_tree_parent call, with no heap allocation:
 *   flat, chain              O(1) (flat's root: O(n) to list its children)
 *   binomial, kbinomial      O(depth * k) descent from the root (depth <= 45 for k >= 2; k = 1
 *                            is the chain, O(1)), with a 64-entry table on the stack; kbinomial
 *                            without k adds O(log^2 n) to choose k (fm_tree_resolve: once)
 *   postal                   O(n) greedy over the whole member list, in the caller's scratch of
 *                            fm_tree_scratch_size() bytes (n doubles and n ints)
 * Every call returns a count >= 0 or FM_OK, or a negative FM_ERR_* code (fastmsg.h):
 * FM_ERR_INVALID for a bad descriptor, position or missing scratch. */
#ifndef FM_TREE_H
#define FM_TREE_H

#include <stddef.h>

#include "trees/registry.h"
#include "trees/tree_desc.h"

/* Children of position pos in send order, into out[0..cap). Returns how many children pos has,
 * like snprintf: when that exceeds cap only cap are written (cap 0 with out NULL counts).
 * scratch: fm_tree_scratch_size(d) bytes, suitably aligned for doubles (malloc'd memory is);
 * may be NULL when that size is 0. */
int fm_tree_children(const struct fm_tree_desc *d, int pos, int *out, int cap, void *scratch);
/* Parent position of pos into *parent, -1 for the root. Returns FM_OK or FM_ERR_INVALID. */
int fm_tree_parent(const struct fm_tree_desc *d, int pos, void *scratch, int *parent);
/* Scratch bytes the children/parent calls need for d (0 for all builders but postal). */
size_t fm_tree_scratch_size(const struct fm_tree_desc *d);
/* FM_OK when d describes a tree: known builder, n >= 1, root in range, and the builder's own
 * needs (param >= 0, m >= 1 for automatic k, lambda >= 1 for postal without param). */
int fm_tree_check(const struct fm_tree_desc *d);

/* *out = d with an automatic parameter chosen (kbinomial's k; postal keeps param 0 and its
 * lambda). The tree is the same; the point is to choose once, e.g. at the root before sending
 * the descriptor, instead of in every call. FM_OK or FM_ERR_INVALID. */
int fm_tree_resolve(const struct fm_tree_desc *d, struct fm_tree_desc *out);

/* The whole tree at once, for the model and tests (it allocates, unlike the calls above):
 * children of position p are kids[first[p]] .. kids[first[p+1] - 1], in send order.
 * first has n + 1 entries, kids n - 1 (at least 1). FM_OK, FM_ERR_INVALID or FM_ERR_NOMEM. */
int fm_tree_layout(const struct fm_tree_desc *d, int *first, int *kids);

#endif
