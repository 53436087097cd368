/* SPDX-License-Identifier: BSD-3-Clause */
/* k-binomial trees (Kesavan & Panda): a recursively doubling tree in which no vertex has more
 * than k children. N(s,k) members are covered in s steps; on the member list with the root
 * first, the i-th child of a vertex that has s steps left takes the next block of at most
 * N(s-i,k) members from the right end of the vertex's block and covers it with s-i steps. */
#include "fastmsg.h"
#include "trees/builder.h"
#include "trees/kbinomial.h"

/* N(s,k) for s in [0, s_max] when k >= 2. N(s,2) passes 2^31 by s = 44, so 64 entries cover
 * every int n; k = 1 needs no table (N(s,1) = s + 1). */
struct kbin {
    int k, steps;
    long long cover[64];
};

static long long kbin_cover(const struct kbin *t, int s)
{
    if (s < 0)
        return 0;
    return t->k == 1 ? s + 1LL : t->cover[s];
}

/* N(0) = 1, N(s) = 2 N(s-1) - N(s-1-k) with N(<0) = 0: the difference of the design's sum
 * for s and s-1, valid for every s >= 1. Saturates at FM_TREE_COVER_MAX. */
static long long next_cover(const long long *cover, int s, int k)
{
    long long prev = cover[s - 1], drop = s - 1 - k >= 0 ? cover[s - 1 - k] : 0;
    long long v = prev + (prev - drop);
    return v > FM_TREE_COVER_MAX ? FM_TREE_COVER_MAX : v;
}

/* Fills the table up to t_1(n,k) and records it as t->steps. */
static void kbin_init(struct kbin *t, int n, int k)
{
    t->k = k;
    if (k == 1) {
        t->steps = n - 1;
        return;
    }
    t->cover[0] = 1;
    int s = 0;
    while (t->cover[s] < n) {
        s++;
        t->cover[s] = next_cover(t->cover, s, k);
    }
    t->steps = s;
}

long long fm_tree_kbin_cover(int s, int k)
{
    if (s < 0 || k < 1)
        return 0;
    if (k == 1)
        return s + 1LL;
    long long cover[64] = {1};
    for (int i = 1; i <= s; i++) {
        if (i == 64 || cover[i - 1] >= FM_TREE_COVER_MAX)
            return FM_TREE_COVER_MAX; /* monotone: once saturated, always */
        cover[i] = next_cover(cover, i, k);
    }
    return cover[s];
}

int fm_tree_kbin_steps(int n, int k)
{
    if (n < 1 || k < 1)
        return FM_ERR_INVALID;
    struct kbin t;
    kbin_init(&t, n, k);
    return t.steps;
}

int fm_tree_ceil_log2(int n)
{
    int l = 0;
    while (l < 31 && (1LL << l) < n)
        l++;
    return l;
}

int fm_tree_kbin_optimal_k(int n, int m)
{
    if (n < 1 || m < 1)
        return FM_ERR_INVALID;
    int kmax = fm_tree_ceil_log2(n), best = 1;
    long long best_cost = -1;
    for (int k = 1; k <= (kmax > 1 ? kmax : 1); k++) {
        long long cost = fm_tree_kbin_steps(n, k) + (long long)(m - 1) * k;
        if (best_cost < 0 || cost < best_cost) {
            best_cost = cost;
            best = k;
        }
    }
    return best;
}

/* A vertex and the block of members it covers: [lo, lo + size) with `steps` steps left. */
struct block {
    int lo, size, steps;
};

/* The i-th child block of v, given the members of v's block not yet handed to children 1..i-1
 * (the block's left part after v itself: *remaining of them). Size 0 when there is none. */
static struct block child_block(const struct kbin *t, struct block v, int i, int *remaining)
{
    struct block c = {0, 0, v.steps - i};
    if (i > t->k || i > v.steps || *remaining <= 0)
        return c;
    long long cap = kbin_cover(t, c.steps);
    c.size = cap < *remaining ? (int)cap : *remaining;
    c.lo = v.lo + *remaining - c.size + 1;
    *remaining -= c.size;
    return c;
}

/* Descends from the root to the block whose vertex is r; *parent gets its parent (-1). */
static struct block find(const struct kbin *t, int n, int r, int *parent)
{
    struct block v = {0, n, t->steps};
    *parent = -1;
    while (v.lo != r) {
        int remaining = v.size - 1;
        struct block c;
        for (int i = 1;; i++) {
            c = child_block(t, v, i, &remaining);
            if (c.size == 0 || r >= c.lo)
                break;
        }
        if (c.size == 0) /* cannot happen for r in [0, n): the blocks partition the list */
            return c;
        *parent = v.lo;
        v = c;
    }
    return v;
}

int fm_tree_kbin_children(int n, int k, int r, int *out, int cap)
{
    if (n < 1 || k < 1 || r < 0 || r >= n || cap < 0 || (cap > 0 && !out))
        return FM_ERR_INVALID;
    if (k == 1) { /* the chain: skip a descent of depth n */
        if (r + 1 < n && cap > 0)
            out[0] = r + 1;
        return r + 1 < n;
    }
    struct kbin t;
    kbin_init(&t, n, k);
    int parent, count = 0;
    struct block v = find(&t, n, r, &parent);
    int remaining = v.size - 1;
    for (int i = 1;; i++) {
        struct block c = child_block(&t, v, i, &remaining);
        if (c.size == 0)
            break;
        if (count < cap)
            out[count] = c.lo;
        count++;
    }
    return count;
}

int fm_tree_kbin_parent(int n, int k, int r)
{
    if (n < 1 || k < 1 || r < 0 || r >= n)
        return FM_ERR_INVALID;
    if (k == 1)
        return r - 1;
    struct kbin t;
    kbin_init(&t, n, k);
    int parent;
    find(&t, n, r, &parent);
    return parent;
}

/* The builder: k given as the parameter, or the optimal k for n members and m packets. */
static int kbinomial_k(const struct fm_tree_desc *d)
{
    return d->param > 0 ? d->param : fm_tree_kbin_optimal_k(d->n, d->m);
}

static int kbinomial_resolve(const struct fm_tree_desc *d)
{
    return fm_tree_kbin_optimal_k(d->n, d->m);
}

static int kbinomial_check(const struct fm_tree_desc *d)
{
    return d->param < 0 || (d->param == 0 && d->m < 1) ? FM_ERR_INVALID : FM_OK;
}

static int kbinomial_children(const struct fm_tree_desc *d, int r, int *out, int cap, void *scratch)
{
    (void)scratch;
    return fm_tree_kbin_children(d->n, kbinomial_k(d), r, out, cap);
}

static int kbinomial_parent(const struct fm_tree_desc *d, int r, void *scratch)
{
    (void)scratch;
    return fm_tree_kbin_parent(d->n, kbinomial_k(d), r);
}

/* Auto weighs every k strictly between the chain (k = 1) and the binomial tree
 * (k >= ceil(log2 n)), which are builders of their own; none: the automatic k. */
static int kbinomial_candidates(int n, int *params, int cap)
{
    int count = 0;
    for (int k = 2; k < fm_tree_ceil_log2(n); k++, count++)
        if (count < cap)
            params[count] = k;
    if (count == 0 && cap > 0)
        params[0] = 0;
    return count ? count : 1;
}

const struct fm_tree_builder fm_tree_kbinomial = {
    .name = "kbinomial",
    .param = "k",
    .check = kbinomial_check,
    .resolve = kbinomial_resolve,
    .children = kbinomial_children,
    .parent = kbinomial_parent,
    .candidates = kbinomial_candidates,
};
