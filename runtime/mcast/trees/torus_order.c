/* SPDX-License-Identifier: BSD-3-Clause */
/* Members in torus order (torus_order.h) and the children / parent calls over a tree laid on
 * that order. Each call sorts the members (O(n log n) in the caller's scratch) and lets the
 * builder place every member, like postal and prefix: no node keeps the tree. */
#include <stdlib.h>

#include "fastmsg.h"
#include "trees/torus_order.h"

size_t fm_torus_scratch_size(const struct fm_tree_desc *d)
{
    size_t n = (size_t)d->n;
    return n * (sizeof(long long) + (3 + 2 * FM_TORUS_DIMS) * sizeof(int));
}

/* The scratch, carved: keys first (8-byte aligned), then the int arrays. */
static void carve(const struct fm_tree_desc *d, void *scratch, struct fm_torus_tree *t)
{
    size_t n = (size_t)d->n;
    t->n = d->n;
    t->key = scratch;
    t->rel = (int *)(t->key + n);
    t->parent = t->rel + n;
    t->slot = t->parent + n;
    t->coord = t->slot + n;
    t->abs = t->coord + n * FM_TORUS_DIMS;
}

/* The extents: the topology's where it gives them, else (or where a member lies beyond them)
 * the largest coordinate + 1. Every member sees the same list, so all agree. ndims stays 0
 * when any member has no coordinates. */
static void find_dims(const struct fm_tree_desc *d, struct fm_torus_tree *t)
{
    const struct fm_tree_topo *topo = d->topo;
    t->ndims = topo && topo->ndims > 0 && topo->ndims <= FM_TORUS_DIMS ? topo->ndims : 0;
    for (int a = 0; a < FM_TORUS_DIMS; a++)
        t->dims[a] = t->ndims && topo->dims[a] > 0 ? topo->dims[a] : 1;
    for (int r = 0; t->ndims && r < d->n; r++) {
        int pos = (r + d->root) % d->n, *c = t->abs + (size_t)r * FM_TORUS_DIMS;
        c[0] = c[1] = c[2] = 0;
        if (topo->coord(topo->arg, pos, c) != FM_OK) {
            t->ndims = 0;
            break;
        }
        for (int a = 0; a < t->ndims; a++) {
            c[a] = c[a] < 0 ? 0 : c[a];
            t->dims[a] = c[a] >= t->dims[a] ? c[a] + 1 : t->dims[a];
        }
    }
    if (!t->ndims)
        t->dims[0] = t->dims[1] = t->dims[2] = 1;
}

static int cmp_key(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* Member r's coordinate on axis a relative to the root's, the + way round. */
static int rel_coord(const struct fm_torus_tree *t, int r, int a)
{
    if (a >= t->ndims)
        return 0;
    int c = t->abs[(size_t)r * FM_TORUS_DIMS + a], c0 = t->abs[a];
    return (c - c0 + t->dims[a]) % t->dims[a];
}

/* Sorts the members: key = (position relative to the root, x fastest) * n + relative index,
 * so members at one position keep their list order and the root comes first. Without
 * coordinates every position is 0: the list order from the root. */
static void sort_members(const struct fm_tree_desc *d, struct fm_torus_tree *t)
{
    int n = d->n;
    for (int r = 0; r < n; r++) {
        long long spot = 0;
        for (int a = t->ndims - 1; a >= 0; a--)
            spot = spot * t->dims[a] + rel_coord(t, r, a);
        t->key[r] = spot * n + r;
    }
    qsort(t->key, (size_t)n, sizeof *t->key, cmp_key);
    for (int i = 0; i < n; i++) {
        t->rel[i] = (int)(t->key[i] % n);
        for (int a = 0; a < FM_TORUS_DIMS; a++)
            t->coord[(size_t)i * FM_TORUS_DIMS + a] = rel_coord(t, t->rel[i], a);
    }
}

int fm_torus_build(const struct fm_tree_desc *d, void *scratch, fm_torus_place_fn place,
                   struct fm_torus_tree *t)
{
    if (!scratch)
        return FM_ERR_INVALID;
    carve(d, scratch, t);
    find_dims(d, t);
    sort_members(d, t);
    for (int i = 0; i < d->n; i++) {
        t->parent[i] = -1;
        t->slot[i] = i;
    }
    place(d, t);
    return FM_OK;
}

int fm_torus_same_from(const struct fm_torus_tree *t, int i, int j, int axis)
{
    for (int a = axis; a < t->ndims; a++)
        if (t->coord[(size_t)i * FM_TORUS_DIMS + a] != t->coord[(size_t)j * FM_TORUS_DIMS + a])
            return 0;
    return 1;
}

/* Order index of relative index r (the keys hold the order: rel[i] == r). */
static int index_of(const struct fm_torus_tree *t, int r)
{
    for (int i = 0; i < t->n; i++)
        if (t->rel[i] == r)
            return i;
    return -1;
}

int fm_torus_children(const struct fm_tree_desc *d, int r, int *out, int cap, void *scratch,
                      fm_torus_place_fn place)
{
    struct fm_torus_tree t;
    int rc = fm_torus_build(d, scratch, place, &t), me = rc == FM_OK ? index_of(&t, r) : -1;
    if (me < 0)
        return rc < 0 ? rc : FM_ERR_INVALID;
    /* The children's slots, then their relative indices, sorted by slot: the keys are free
     * now (slot * n + order index fits: both < n). */
    int count = 0;
    for (int i = 0; i < t.n; i++)
        if (t.parent[i] == me)
            t.key[count++] = (long long)t.slot[i] * t.n + i;
    qsort(t.key, (size_t)count, sizeof *t.key, cmp_key);
    for (int k = 0; k < count && k < cap; k++)
        out[k] = t.rel[t.key[k] % t.n];
    return count;
}

int fm_torus_parent(const struct fm_tree_desc *d, int r, void *scratch, fm_torus_place_fn place)
{
    struct fm_torus_tree t;
    int me = fm_torus_build(d, scratch, place, &t) == FM_OK ? index_of(&t, r) : -1;
    return me > 0 && t.parent[me] >= 0 ? t.rel[t.parent[me]] : 0;
}
