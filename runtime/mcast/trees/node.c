/* SPDX-License-Identifier: BSD-3-Clause */
/* The node-aware tree, node[:k]: one leader per host (the root on its own host, elsewhere the
 * member nearest the root in list order), a k-binomial tree among the leaders (k = 1: a
 * chain; 0, the default: binomial), and under each leader every other member of its host
 * (flat). Every host but the root's gets the message exactly once over the network, and the
 * copies within a host go through shared memory (the hybrid provider), where the leader
 * writes each packet once and every member of its host reads it (sm's shared payloads). A
 * leader sends to the other hosts first (their subtrees are the larger and slower), then
 * within its host.
 * Without hosts (no topology, or a member whose host is unknown) every member is a host of its
 * own: the k-binomial tree over all of them. */
#include <stdlib.h>

#include "fastmsg.h"
#include "trees/builder.h"
#include "trees/kbinomial.h"

/* The members grouped by host, in scratch: hosts in the order of their leaders' relative
 * index (the root's first), and each host's members in relative index order. */
struct hosts {
    int n, nhosts;
    long long *key; /* n: sort keys */
    int *member;    /* n: relative indices, host by host */
    int *start;     /* nhosts + 1: where each host's members begin in member[] */
    int *host;      /* n: host (in leader order) of relative index r */
    int *index;     /* n: position of relative index r among its host's members */
};

static size_t node_scratch_size(const struct fm_tree_desc *d)
{
    return (size_t)d->n * (2 * sizeof(long long) + 4 * sizeof(int)) + sizeof(int);
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* Host of relative index r as the topology says, or -1 - r (a host of its own) without. */
static long long host_key(const struct fm_tree_desc *d, int r)
{
    const struct fm_tree_topo *t = d->topo;
    int h = t && t->host ? t->host(t->arg, (r + d->root) % d->n) : -1;
    return h >= 0 ? h : -1LL - r;
}

static void carve(const struct fm_tree_desc *d, void *scratch, struct hosts *h)
{
    size_t n = (size_t)d->n;
    h->n = d->n;
    h->key = scratch;
    h->member = (int *)(h->key + 2 * n);
    h->host = h->member + n;
    h->index = h->host + n;
    h->start = h->index + n;
}

/* Groups the members: sorted by (host, relative index), then the hosts ordered by their
 * first (lowest) relative index. O(n log n), the same on every member. */
static void group(const struct fm_tree_desc *d, struct hosts *h)
{
    int n = d->n;
    long long *key = h->key, *lead = h->key + n;
    long long min = 0;
    for (int r = 0; r < n; r++) {
        long long k = host_key(d, r);
        min = k < min ? k : min;
        key[r] = k;
    }
    for (int r = 0; r < n; r++) /* (non-negative, so that r fits below) */
        key[r] = (key[r] - min) * n + r;
    qsort(key, (size_t)n, sizeof *key, cmp_ll);
    int groups = 0;
    for (int i = 0; i < n; i++) {
        int r = (int)(key[i] % n);
        if (i == 0 || key[i] / n != key[i - 1] / n)
            lead[groups++] = (long long)r * n + i; /* the leader's r, where its host starts */
    }
    qsort(lead, (size_t)groups, sizeof *lead, cmp_ll);
    h->nhosts = groups;
    int at = 0;
    for (int g = 0; g < groups; g++) {
        int first = (int)(lead[g] % n);
        h->start[g] = at;
        for (int i = first; i < n && (i == first || key[i] / n == key[first] / n); i++) {
            int r = (int)(key[i] % n);
            h->member[at] = r;
            h->host[r] = g;
            h->index[r] = at - h->start[g];
            at++;
        }
    }
    h->start[groups] = at;
}

static int leader_k(const struct fm_tree_desc *d, int nhosts)
{
    if (d->param > 0)
        return d->param;
    int k = fm_tree_ceil_log2(nhosts);
    return k > 1 ? k : 1;
}

/* r's children, the members grouped (h). */
static int children_in(const struct fm_tree_desc *d, const struct hosts *h, int r, int *out,
                       int cap)
{
    int g = h->host[r], size = h->start[g + 1] - h->start[g];
    if (h->index[r] > 0)
        return 0; /* a member under its leader: the leader serves the whole host */
    /* a leader: the other hosts' leaders first */
    int count = fm_tree_kbin_children(h->nhosts, leader_k(d, h->nhosts), g, out, cap);
    if (count < 0)
        return count;
    for (int c = 0; c < count && c < cap; c++)
        out[c] = h->member[h->start[out[c]]];
    for (int j = 1; j < size; j++, count++) /* (out may be NULL: a count only) */
        if (out && count < cap)
            out[count] = h->member[h->start[g] + j];
    return count;
}

static int node_children(const struct fm_tree_desc *d, int r, int *out, int cap, void *scratch)
{
    struct hosts h;
    if (!scratch)
        return FM_ERR_INVALID;
    carve(d, scratch, &h);
    group(d, &h);
    return children_in(d, &h, r, out, cap);
}

/* Every member's children, grouping the members once (the model lays out whole trees). */
static int node_layout(const struct fm_tree_desc *d, int *first, int *kids, void *scratch)
{
    struct hosts h;
    if (!scratch)
        return FM_ERR_INVALID;
    carve(d, scratch, &h);
    group(d, &h);
    first[0] = 0;
    for (int r = 0; r < d->n; r++) { /* n - 1 edges in all, so never past kids[n-2] */
        int room = d->n - 1 - first[r];
        int count = children_in(d, &h, r, room ? kids + first[r] : NULL, room);
        if (count < 0 || count > room)
            return count < 0 ? count : FM_ERR_INTERNAL;
        first[r + 1] = first[r] + count;
    }
    return FM_OK;
}

static int node_parent(const struct fm_tree_desc *d, int r, void *scratch)
{
    struct hosts h;
    if (!scratch)
        return FM_ERR_INVALID;
    carve(d, scratch, &h);
    group(d, &h);
    int g = h.host[r], i = h.index[r];
    if (i > 0)
        return h.member[h.start[g]]; /* its host's leader */
    int pg = fm_tree_kbin_parent(h.nhosts, leader_k(d, h.nhosts), g);
    return pg < 0 ? pg : h.member[h.start[pg]];
}

static int node_check(const struct fm_tree_desc *d)
{
    return d->param < 0 ? FM_ERR_INVALID : FM_OK;
}

/* Auto weighs a chain of hosts (long messages: each host's link carries the message once
 * each way), k = 2, and the binomial tree of hosts (short ones: fewest steps). */
static int node_candidates(int n, int *params, int cap)
{
    static const int ks[] = {1, 2, 0};
    int count = n > 2 ? 3 : 1;
    for (int i = 0; i < count && i < cap; i++)
        params[i] = n > 2 ? ks[i] : 0;
    return count;
}

const struct fm_tree_builder fm_tree_node = {
    .name = "node",
    .param = "k",
    .check = node_check,
    .children = node_children,
    .parent = node_parent,
    .scratch_size = node_scratch_size,
    .layout = node_layout,
    .candidates = node_candidates,
};
