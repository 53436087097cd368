/* SPDX-License-Identifier: BSD-3-Clause */
/* The tree interface over the registry: checks a descriptor, rotates positions to relative
 * indices (root = 0) for the builder and back, and assembles whole trees for the model. */
#include <stdlib.h>

#include "fastmsg.h"
#include "trees/builder.h"
#include "trees/registry.h"
#include "trees/tree.h"

int fm_tree_check(const struct fm_tree_desc *d)
{
    if (!d)
        return FM_ERR_INVALID;
    const struct fm_tree_builder *b = fm_tree_builder_get(d->builder);
    if (!b || d->n < 1 || d->root < 0 || d->root >= d->n)
        return FM_ERR_INVALID;
    return b->check ? b->check(d) : FM_OK;
}

size_t fm_tree_scratch_size(const struct fm_tree_desc *d)
{
    if (fm_tree_check(d) != FM_OK)
        return 0;
    const struct fm_tree_builder *b = fm_tree_builder_get(d->builder);
    return b->scratch_size ? b->scratch_size(d) : 0;
}

int fm_tree_resolve(const struct fm_tree_desc *d, struct fm_tree_desc *out)
{
    if (fm_tree_check(d) != FM_OK || !out)
        return FM_ERR_INVALID;
    const struct fm_tree_builder *b = fm_tree_builder_get(d->builder);
    *out = *d;
    if (d->param == 0 && b->resolve)
        out->param = b->resolve(d);
    return FM_OK;
}

static int to_rel(const struct fm_tree_desc *d, int pos)
{
    return (int)(((long long)pos - d->root + d->n) % d->n);
}

static int to_pos(const struct fm_tree_desc *d, int rel)
{
    return (int)(((long long)rel + d->root) % d->n);
}

/* Checks d, pos and scratch for one call; the builder on success, NULL otherwise. */
static const struct fm_tree_builder *call_ok(const struct fm_tree_desc *d, int pos, void *scratch)
{
    if (fm_tree_check(d) != FM_OK || pos < 0 || pos >= d->n)
        return NULL;
    const struct fm_tree_builder *b = fm_tree_builder_get(d->builder);
    if (b->scratch_size && b->scratch_size(d) > 0 && !scratch)
        return NULL;
    return b;
}

int fm_tree_children(const struct fm_tree_desc *d, int pos, int *out, int cap, void *scratch)
{
    const struct fm_tree_builder *b = call_ok(d, pos, scratch);
    if (!b || cap < 0 || (cap > 0 && !out))
        return FM_ERR_INVALID;
    int count = b->children(d, to_rel(d, pos), out, cap, scratch);
    for (int i = 0; i < count && i < cap; i++)
        out[i] = to_pos(d, out[i]);
    return count;
}

int fm_tree_parent(const struct fm_tree_desc *d, int pos, void *scratch, int *parent)
{
    const struct fm_tree_builder *b = call_ok(d, pos, scratch);
    if (!b || !parent)
        return FM_ERR_INVALID;
    int r = to_rel(d, pos);
    *parent = r == 0 ? -1 : to_pos(d, b->parent(d, r, scratch));
    return FM_OK;
}

/* Children lists from every member's parent, for builders whose children are in increasing
 * relative order: a counting sort by parent, scanning members in relative order. */
static void layout_from_parents(const struct fm_tree_desc *d, const int *parent, int *first,
                                int *kids)
{
    int n = d->n;
    for (int p = 0; p <= n; p++)
        first[p] = 0;
    for (int r = 1; r < n; r++)
        first[to_pos(d, parent[r]) + 1]++;
    for (int p = 0; p < n; p++)
        first[p + 1] += first[p];
    for (int r = 1; r < n; r++) /* first[p] is p's next free slot, ending at p + 1's start */
        kids[first[to_pos(d, parent[r])]++] = to_pos(d, r);
    for (int p = n; p > 0; p--)
        first[p] = first[p - 1];
    first[0] = 0;
}

/* The builder's own whole layout (relative indices) turned into positions. */
static int layout_whole(const struct fm_tree_desc *d, const struct fm_tree_builder *b, int *first,
                        int *kids, void *scratch)
{
    int n = d->n;
    int *rfirst = malloc((size_t)(n + 1) * sizeof *rfirst);
    int *rkids = malloc((size_t)(n > 1 ? n - 1 : 1) * sizeof *rkids);
    int rc = rfirst && rkids ? b->layout(d, rfirst, rkids, scratch) : FM_ERR_NOMEM;
    first[0] = 0;
    for (int p = 0; rc == FM_OK && p < n; p++) {
        int r = to_rel(d, p), count = rfirst[r + 1] - rfirst[r];
        for (int c = 0; c < count; c++)
            kids[first[p] + c] = to_pos(d, rkids[rfirst[r] + c]);
        first[p + 1] = first[p] + count;
    }
    free(rfirst);
    free(rkids);
    return rc;
}

int fm_tree_layout(const struct fm_tree_desc *given, int *first, int *kids)
{
    struct fm_tree_desc resolved, *d = &resolved; /* choose k once, not in n calls */
    if (fm_tree_resolve(given, &resolved) != FM_OK || !first || !kids)
        return FM_ERR_INVALID;
    const struct fm_tree_builder *b = fm_tree_builder_get(d->builder);
    size_t bytes = b->scratch_size ? b->scratch_size(d) : 0;
    void *scratch = bytes ? malloc(bytes) : NULL;
    int *parent = b->parents ? malloc((size_t)d->n * sizeof *parent) : NULL;
    int rc = FM_OK;
    if ((bytes && !scratch) || (b->parents && !parent)) {
        rc = FM_ERR_NOMEM;
    } else if (b->parents) {
        rc = b->parents(d, parent, scratch);
        if (rc == FM_OK)
            layout_from_parents(d, parent, first, kids);
    } else if (b->layout) {
        rc = layout_whole(d, b, first, kids, scratch);
    } else {
        first[0] = 0;
        for (int p = 0; p < d->n; p++) { /* n - 1 edges in all, so never past kids[n-2] */
            int count = fm_tree_children(d, p, kids + first[p], d->n - 1 - first[p], scratch);
            if (count < 0 || count > d->n - 1 - first[p]) {
                rc = count < 0 ? count : FM_ERR_INTERNAL;
                break;
            }
            first[p + 1] = first[p] + count;
        }
    }
    free(scratch);
    free(parent);
    return rc;
}
