/* SPDX-License-Identifier: BSD-3-Clause */
/* Prefix: the tree that topology-id prefix routing (mcast/prefix, the DAG-scheduling paper)
 * gives a multicast to every member. Members get ids of m digits in base b (the parameter,
 * default PREFIX_BASE) from where they are: the first coordinate when the topology has
 * coordinates (a rack, with cluster.sh's rack layout), the host, the place among the members
 * on that host. Each member sends to one member of each group of its split (the one whose
 * remaining digits are nearest its own), the group farthest from it first, so a rack or host
 * gets one copy from outside and passes it on inside. Without a topology every member is its
 * own host: the ids are relative indices in base b.
 *
 * Each call computes the whole tree in the caller's scratch: O(n m^2) for one member's
 * children or parent (tree.h). */
#include <stdint.h>
#include <stdlib.h>

#include "fastmsg.h"
#include "prefix/prefix_route.h"
#include "trees/builder.h"

#define PREFIX_BASE 2

/* The scratch, carved: per member (relative index) its fields, parent and slot, the sort keys,
 * the ids, and fm_prefix_tree's own. */
struct carve {
    int *fields, *parent, *slot;
    uint64_t *keys;
    uint8_t *ids;
    void *tree;
};

static int base_of(const struct fm_tree_desc *d)
{
    return d->param ? d->param : PREFIX_BASE;
}

static size_t prefix_scratch_size(const struct fm_tree_desc *d)
{
    size_t n = (size_t)d->n;
    return n * (5 * sizeof(int) + sizeof(uint64_t) + FM_PREFIX_MAX_DIGITS) +
           fm_prefix_tree_scratch_size(d->n, FM_PREFIX_MAX_DIGITS, base_of(d)) + 16;
}

static struct carve carve(const struct fm_tree_desc *d, void *scratch)
{
    size_t n = (size_t)d->n;
    struct carve c;
    c.keys = scratch; /* 8-byte aligned first */
    c.fields = (int *)(c.keys + n);
    c.parent = c.fields + 3 * n;
    c.slot = c.parent + n;
    c.ids = (uint8_t *)(c.slot + n);
    c.tree = (void *)(((uintptr_t)(c.ids + n * FM_PREFIX_MAX_DIGITS) + 15) & ~(uintptr_t)15);
    return c;
}

static int prefix_check(const struct fm_tree_desc *d)
{
    return d->param == 0 || (d->param >= 2 && d->param <= FM_PREFIX_MAX_BASE) ? FM_OK
                                                                              : FM_ERR_INVALID;
}

static int prefix_resolve(const struct fm_tree_desc *d)
{
    return base_of(d);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Fields of relative member r: (first coordinate or 0, host, place on the host). */
static void fill_fields(const struct fm_tree_desc *d, struct carve *c)
{
    const struct fm_tree_topo *t = d->topo;
    int n = d->n, known = -1;
    for (int p = 0; t && p < n; p++) {
        int h = t->host(t->arg, p);
        known = h > known ? h : known;
    }
    for (int r = 0; r < n; r++) {
        int pos = (r + d->root) % n, host = t ? t->host(t->arg, pos) : -1, xyz[3] = {0, 0, 0};
        if (host < 0) /* unknown: a host of its own (no topology: the tree rotates with the root,
                       * as every builder's does) */
            host = known + 1 + (t ? pos : r);
        if (t && t->ndims > 0 && t->coord(t->arg, pos, xyz) != FM_OK)
            xyz[0] = 0;
        c->fields[3 * r] = xyz[0] > 0 ? xyz[0] : 0;
        c->fields[3 * r + 1] = host;
        c->keys[r] = (uint64_t)(uint32_t)host << 32 | (uint32_t)pos;
    }
    /* The place on a host: members of one host in position order (the same whatever the root). */
    qsort(c->keys, (size_t)n, sizeof *c->keys, cmp_u64);
    for (int i = 0, place = 0; i < n; i++) {
        place = i > 0 && c->keys[i] >> 32 == c->keys[i - 1] >> 32 ? place + 1 : 0;
        int pos = (int)(uint32_t)c->keys[i];
        c->fields[3 * ((pos - d->root + n) % n) + 2] = place;
    }
}

/* The whole tree into c->parent / c->slot (relative indices, root 0). */
static int build(const struct fm_tree_desc *d, void *scratch, struct carve *c)
{
    if (!scratch)
        return FM_ERR_INVALID;
    *c = carve(d, scratch);
    fill_fields(d, c);
    int m, b = base_of(d);
    int rc = fm_prefix_ids_from_fields(d->n, 3, c->fields, b, c->ids,
                                       (size_t)d->n * FM_PREFIX_MAX_DIGITS, &m, NULL);
    if (rc == FM_OK)
        rc = fm_prefix_tree(c->ids, d->n, m, b, 0, FM_PREFIX_NEAREST, 0, c->parent, c->slot,
                            c->tree);
    return rc < 0 ? FM_ERR_INVALID : FM_OK;
}

static int prefix_children(const struct fm_tree_desc *d, int r, int *out, int cap, void *scratch)
{
    struct carve c;
    int rc = build(d, scratch, &c), count = 0;
    if (rc != FM_OK)
        return rc;
    for (int k = 0; k < d->n; k++)
        if (c.parent[k] == r) {
            if (c.slot[k] < cap)
                out[c.slot[k]] = k; /* slots of one parent are 0 .. count - 1 */
            count++;
        }
    return count;
}

/* (build cannot fail on a checked descriptor: fields give distinct ids within 32 digits.) */
static int prefix_parent(const struct fm_tree_desc *d, int r, void *scratch)
{
    struct carve c;
    return build(d, scratch, &c) == FM_OK ? c.parent[r] : 0;
}

const struct fm_tree_builder fm_tree_prefix = {
    .name = "prefix",
    .param = "b",
    .check = prefix_check,
    .resolve = prefix_resolve,
    .children = prefix_children,
    .parent = prefix_parent,
    .scratch_size = prefix_scratch_size,
};
