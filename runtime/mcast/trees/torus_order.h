/* SPDX-License-Identifier: BSD-3-Clause */
/* The members of a multicast in torus order, and trees laid over that order: what the five
 * torus builders (Oral & George: sepaddr, utorus, storus, mdtorus, mutorus) share.
 *
 * Torus order: each member's coordinates relative to the root's, going round the + way of
 * every ring ((c - c_root) mod extent), read row-major with x fastest: the order in which a
 * walk from the root visits the torus along x, then y, then z. On a unidirectional torus with
 * dimension-ordered routing (x first) a hop to the next member in this order never goes
 * backwards. Members at one position (ranks of one host) follow each other in relative-index
 * order. Without coordinates (no torus described, or a member without any) the order is the
 * member list from the root (relative index order), which is each builder's documented
 * fallback. */
#ifndef FM_TREE_TORUS_ORDER_H
#define FM_TREE_TORUS_ORDER_H

#include <stddef.h>

#include "trees/tree_desc.h"

#define FM_TORUS_DIMS 3

/* The order of the members, and a tree over it. Index i is the i-th member in torus order
 * (i = 0: the root); rel[i] its relative index. A builder fills parent[i] (an order index,
 * -1 for the root) and slot[i] (siblings are sent to in increasing slot). */
struct fm_torus_tree {
    int n, ndims;            /* ndims 0: no coordinates, the fallback order */
    int dims[FM_TORUS_DIMS]; /* extents (1 on unused axes) */
    int *rel;                /* n */
    int *coord;              /* n x FM_TORUS_DIMS: coordinates relative to the root's */
    int *parent, *slot;      /* n each, the builder's */
    long long *key;          /* n: sort keys */
    int *abs;                /* n x FM_TORUS_DIMS: coordinates by relative index */
};

/* Fills parent and slot of t for d (t's order and coordinates are set). */
typedef void (*fm_torus_place_fn)(const struct fm_tree_desc *d, struct fm_torus_tree *t);

/* Scratch bytes the torus builders need for d. */
size_t fm_torus_scratch_size(const struct fm_tree_desc *d);
/* The members in torus order and the tree place() lays over them, in scratch. FM_OK, or
 * FM_ERR_INVALID when scratch is NULL. */
int fm_torus_build(const struct fm_tree_desc *d, void *scratch, fm_torus_place_fn place,
                   struct fm_torus_tree *t);
/* Children of relative index r in slot order, snprintf-style count (builder.h's children). */
int fm_torus_children(const struct fm_tree_desc *d, int r, int *out, int cap, void *scratch,
                      fm_torus_place_fn place);
/* Parent relative index of r > 0 (builder.h's parent). */
int fm_torus_parent(const struct fm_tree_desc *d, int r, void *scratch, fm_torus_place_fn place);

/* A torus builder's children and parent calls (builder.h), over the tree its place() lays:
 * torus_children and torus_parent, for its struct fm_tree_builder. */
#define FM_TORUS_CALLS(place)                                                                      \
    static int torus_children(const struct fm_tree_desc *d, int r, int *out, int cap, void *s)     \
    {                                                                                              \
        return fm_torus_children(d, r, out, cap, s, place);                                        \
    }                                                                                              \
    static int torus_parent(const struct fm_tree_desc *d, int r, void *s)                          \
    {                                                                                              \
        return fm_torus_parent(d, r, s, place);                                                    \
    }

/* 1 when order indices i and j agree on every axis from axis on (axis 1: one ring of the first
 * dimension; axis 2: one plane); without coordinates, always. */
int fm_torus_same_from(const struct fm_torus_tree *t, int i, int j, int axis);

#endif
