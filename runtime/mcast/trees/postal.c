/* SPDX-License-Identifier: BSD-3-Clause */
/* Greedy postal tree (Bar-Noy & Kipnis; Bruck et al.'s top-down greedy), optimal for one
 * packet when a send occupies its sender 1 step and the packet can be forwarded lambda steps
 * after the send started. Two queues, *new* (just informed) and *old* (has sent before); the
 * root starts in new at time 0. Each next member p becomes the next child of the queued node q
 * with the least time t (ties: old first); p joins new at t + lambda, q rejoins old at t + 1.
 *
 * Both queues are FIFO, because t never decreases: the new queue holds members 0, 1, 2, ... in
 * list order, and the old queue holds one entry per earlier step p, (from[p], t[p] + 1). So the
 * greedy needs only t[] and from[] per member, in the caller's scratch: O(n) time per call. */
#include <math.h>

#include "fastmsg.h"
#include "trees/builder.h"

static double postal_lambda(const struct fm_tree_desc *d)
{
    return d->param > 0 ? d->param : d->lambda;
}

/* Equal times must tie the same way whatever order the additions were made in (1 + 1.5 vs
 * 1.5 + 1 is exact, 1 + 1.1 vs 1.1 + 1 need not be), so compare with a small tolerance. */
static int not_later(double a, double b)
{
    return a <= b + 1e-9 * (1.0 + b); /* times are >= 0 */
}

/* Hands out members 1..upto-1: from[p] = p's parent, t[p] = when it sends to p. */
static void greedy(const struct fm_tree_desc *d, int upto, double *t, int *from)
{
    double lambda = postal_lambda(d);
    int old_head = 1, new_head = 0; /* old: the entry of step old_head; new: member new_head */
    for (int p = 1; p < upto; p++) {
        double t_new = new_head == 0 ? 0.0 : t[new_head] + lambda;
        int use_old = old_head < p && (new_head == p || not_later(t[old_head] + 1, t_new));
        if (use_old) {
            from[p] = from[old_head];
            t[p] = t[old_head] + 1;
            old_head++;
        } else {
            from[p] = new_head;
            t[p] = t_new;
            new_head++;
        }
    }
}

static size_t postal_scratch_size(const struct fm_tree_desc *d)
{
    return (size_t)d->n * (sizeof(double) + sizeof(int));
}

static int postal_check(const struct fm_tree_desc *d)
{
    if (d->param < 0)
        return FM_ERR_INVALID;
    if (d->param == 0 && !(d->lambda >= 1.0 && isfinite(d->lambda)))
        return FM_ERR_INVALID;
    return FM_OK;
}

static int postal_children(const struct fm_tree_desc *d, int r, int *out, int cap, void *scratch)
{
    double *t = scratch;
    int *from = (int *)(t + d->n), count = 0;
    greedy(d, d->n, t, from);
    for (int p = r + 1; p < d->n; p++) { /* children are handed out after their parent */
        if (from[p] != r)
            continue;
        if (count < cap)
            out[count] = p;
        count++;
    }
    return count;
}

static int postal_parent(const struct fm_tree_desc *d, int r, void *scratch)
{
    double *t = scratch;
    int *from = (int *)(t + d->n);
    greedy(d, r + 1, t, from);
    return from[r];
}

/* Children are handed out in increasing order, so every parent at once defines the tree. */
static int postal_parents(const struct fm_tree_desc *d, int *parent, void *scratch)
{
    parent[0] = -1;
    greedy(d, d->n, scratch, parent);
    return FM_OK;
}

/* Auto weighs the model's own lambda (parameter 0) and a few whole ones below n (lambda = 1 is
 * the binomial tree). */
static int postal_candidates(int n, int *params, int cap)
{
    static const int lambdas[] = {0, 2, 3, 4, 6, 8};
    int count = 0;
    for (size_t i = 0; i < sizeof lambdas / sizeof *lambdas; i++)
        if (lambdas[i] < n) {
            if (count < cap)
                params[count] = lambdas[i];
            count++;
        }
    return count;
}

const struct fm_tree_builder fm_tree_postal = {
    .name = "postal",
    .param = "lambda",
    .check = postal_check,
    .children = postal_children,
    .parent = postal_parent,
    .scratch_size = postal_scratch_size,
    .parents = postal_parents,
    .candidates = postal_candidates,
};
