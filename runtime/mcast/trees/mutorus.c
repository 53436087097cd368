/* SPDX-License-Identifier: BSD-3-Clause */
/* Mu-torus[:r] (Robinson et al.; Oral & George): uniform partitions. The members in torus
 * order are cut into runs of r (the last may be shorter); the root heads the first, sends to
 * the head of every other, and each member relays to the next of its run. r = 1 is separate
 * addressing, r >= n the S-torus chain. Default r: the first dimension's extent (the paper's
 * best partition length on k-ary tori), or ceil(sqrt(n)) without a torus. */
#include "fastmsg.h"
#include "trees/builder.h"
#include "trees/torus_order.h"

static int default_r(const struct fm_tree_desc *d)
{
    const struct fm_tree_topo *topo = d->topo;
    if (topo && topo->ndims > 0 && topo->dims[0] > 1)
        return topo->dims[0];
    int r = 1;
    while ((long long)r * r < d->n) /* ceil(sqrt(n)) */
        r++;
    return r;
}

static int run_length(const struct fm_tree_desc *d)
{
    return d->param > 0 ? d->param : default_r(d);
}

static void place(const struct fm_tree_desc *d, struct fm_torus_tree *t)
{
    int r = run_length(d);
    for (int i = 1; i < d->n; i++)
        t->parent[i] = i % r ? i - 1 : 0;
}

static int mutorus_check(const struct fm_tree_desc *d)
{
    return d->param >= 0 ? FM_OK : FM_ERR_INVALID;
}

FM_TORUS_CALLS(place)

/* r = 2, 3, 4, 6, 8, 12, 16, ... below n, and the extent default (as 0). */
static int mutorus_candidates(int n, int *params, int cap)
{
    int count = 0;
    if (cap > count)
        params[count] = 0;
    count++;
    for (int r = 2; r < n; r = r < 4 ? r + 1 : r % 3 == 0 ? r / 3 * 4 : r / 2 * 3) {
        if (cap > count)
            params[count] = r;
        count++;
    }
    return count;
}

const struct fm_tree_builder fm_tree_mutorus = {
    .name = "mutorus",
    .param = "r",
    .check = mutorus_check,
    .resolve = run_length,
    .children = torus_children,
    .parent = torus_parent,
    .scratch_size = fm_torus_scratch_size,
    .candidates = mutorus_candidates,
};
