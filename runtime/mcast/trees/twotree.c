/* SPDX-License-Identifier: BSD-3-Clause */
/* Two binary trees over the members other than the root, for a split multicast (Sanders,
 * Speck and Traeff's two-tree broadcast): the root sends every other packet down each, and
 * since a member that forwards in one tree is a leaf of the other, every member sends about
 * the message once in all (two copies of half of it), not twice as in one binary tree.
 *
 * The members but the root, i = r - 1 in [0, n'), form tree 0 by their binary digits: i's
 * lowest set bit b puts it at height log2 b, its parent is i with that bit moved one up (or
 * cleared where that is past the end), its children i - b/2 and the largest i + b/2^j that
 * exists; i = 0 is the top. Only even i forward. Tree 1 is tree 0 mirrored (i -> n'-1-i)
 * when n' is even, so its forwarders are the odd i, or shifted by one (i -> i-1 mod n') when
 * n' is odd, so they are the odd i and i = 0 (n' = 3 is mirrored too). Either way no parent-child
 * pair is in both trees (tests/unit/test_trees.c), so the two halves never share a sender's credits
 * at one child. The parameter says which tree (0 or 1); the root has one child in each. */
#include "fastmsg.h"
#include "trees/builder.h"

/* i's lowest set bit, or the smallest power of two >= n for i = 0 (the top). */
static int low_bit(int n, int i)
{
    int b = 1;
    while (b < n && !(b & i))
        b <<= 1;
    return b;
}

/* Tree 0 over n nodes: parent of i (-1 for the top). */
static int bt_parent(int n, int i)
{
    if (i == 0)
        return -1;
    int b = low_bit(n, i), up = (i ^ b) | (b << 1);
    return up < n ? up : i ^ b;
}

/* Tree 0 over n nodes: children of i (at most 2), larger subtree first. */
static int bt_children(int n, int i, int *c)
{
    int h = low_bit(n, i) >> 1, k = 0;
    if (i == 0)
        return n > 1 ? (c[0] = h, 1) : 0;
    if (!h)
        return 0;
    c[k++] = i - h;
    while (h && i + h >= n)
        h >>= 1;
    if (h)
        c[k++] = i + h;
    return k;
}

/* Whether tree 1 is tree 0 mirrored (else shifted). Three nodes shifted would give node 2
 * the same parent in both; mirrored they do not (every node then forwards in both). */
static int mirrored(int n)
{
    return n % 2 == 0 || n == 3;
}

/* Tree `which`'s node i as tree 0's node, and back. */
static int to_base(int n, int which, int i)
{
    return !which ? i : mirrored(n) ? n - 1 - i : (i - 1 + n) % n;
}

static int from_base(int n, int which, int i)
{
    return !which ? i : mirrored(n) ? n - 1 - i : (i + 1) % n;
}

/* The top of tree `which` (the root's child in it). */
static int top(int n, int which)
{
    return from_base(n, which, 0);
}

static int twotree_check(const struct fm_tree_desc *d)
{
    return d->param == 0 || d->param == 1 ? FM_OK : FM_ERR_INVALID;
}

static int twotree_children(const struct fm_tree_desc *d, int r, int *out, int cap, void *scratch)
{
    (void)scratch;
    int n = d->n - 1, c[2], k;
    if (r == 0) {
        k = n > 0;
        c[0] = top(n, d->param);
    } else {
        k = bt_children(n, to_base(n, d->param, r - 1), c);
        for (int j = 0; j < k; j++)
            c[j] = from_base(n, d->param, c[j]);
    }
    for (int j = 0; j < k && j < cap; j++)
        out[j] = c[j] + 1;
    return k;
}

static int twotree_parent(const struct fm_tree_desc *d, int r, void *scratch)
{
    (void)scratch;
    int n = d->n - 1, p = bt_parent(n, to_base(n, d->param, r - 1));
    return p < 0 ? 0 : from_base(n, d->param, p) + 1;
}

const struct fm_tree_builder fm_tree_twotree = {
    .name = "twotree",
    .param = "tree (0 or 1)",
    .check = twotree_check,
    .children = twotree_children,
    .parent = twotree_parent,
};
