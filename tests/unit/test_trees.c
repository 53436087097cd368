/* SPDX-License-Identifier: BSD-3-Clause */
/* Tree builders: every builder spans every member exactly once, from every root; degree bounds;
 * largest subtree first; the k-binomial and binomial trees against an independent reference
 * (the broadcast played step by step) and the greedy postal tree against one written straight
 * from DESIGN.md; pipelined and one-packet optima; the "name[:param]" parser. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "fastmsg.h"
#include "model.h"
#include "trees/builder.h"
#include "trees/kbinomial.h"
#include "trees/tree.h"

#define NMAX 200
#define NBIG 100003 /* the largest member count the k-binomial reference is run on */

static struct fm_tree_desc desc(const char *name, int param, int n, int root)
{
    int id = fm_tree_lookup(name);
    assert_true(id >= 0);
    return (struct fm_tree_desc){
        .builder = id, .param = param, .n = n, .root = root, .m = 1, .lambda = 1.0};
}

/* The tree as every member would see it, one fm_tree_children call per member. */
struct tree {
    int n, root;
    int deg[NMAX], kids[NMAX][NMAX], parent[NMAX], size[NMAX];
};

static void *scratch_for(const struct fm_tree_desc *d)
{
    size_t bytes = fm_tree_scratch_size(d);
    return bytes ? malloc(bytes) : NULL;
}

static void collect(const struct fm_tree_desc *d, struct tree *t)
{
    void *scratch = scratch_for(d);
    t->n = d->n;
    t->root = d->root;
    for (int p = 0; p < d->n; p++)
        t->parent[p] = -2;
    for (int p = 0; p < d->n; p++) {
        t->deg[p] = fm_tree_children(d, p, t->kids[p], NMAX, scratch);
        assert_in_range(t->deg[p], 0, d->n - 1);
        for (int i = 0; i < t->deg[p]; i++) {
            int c = t->kids[p][i];
            assert_in_range(c, 0, d->n - 1);
            assert_int_not_equal(c, d->root);
            assert_int_equal(t->parent[c], -2); /* exactly one parent */
            t->parent[c] = p;
        }
    }
    for (int p = 0; p < d->n; p++) { /* fm_tree_parent agrees with the children lists */
        int parent = -3;
        assert_int_equal(fm_tree_parent(d, p, scratch, &parent), FM_OK);
        assert_int_equal(parent, p == d->root ? -1 : t->parent[p]);
    }
    free(scratch);
}

/* Subtree sizes by a walk from the root; fails unless the root reaches all n (no cycles). */
static void sizes_from_root(struct tree *t)
{
    int order[NMAX], len = 0;
    order[len++] = t->root;
    for (int i = 0; i < len; i++)
        for (int j = 0; j < t->deg[order[i]]; j++) {
            assert_true(len < t->n);
            order[len++] = t->kids[order[i]][j];
        }
    assert_int_equal(len, t->n);
    for (int i = len - 1; i >= 0; i--) {
        int p = order[i];
        t->size[p] = 1;
        for (int j = 0; j < t->deg[p]; j++)
            t->size[p] += t->size[t->kids[p][j]];
    }
}

/* fm_tree_layout gives the same tree as the per-member calls. */
static void layout_matches(const struct fm_tree_desc *d, const struct tree *t)
{
    int first[NMAX + 1], kids[NMAX];
    assert_int_equal(fm_tree_layout(d, first, kids), FM_OK);
    for (int p = 0; p < d->n; p++) {
        assert_int_equal(first[p + 1] - first[p], t->deg[p]);
        assert_memory_equal(kids + first[p], t->kids[p], t->deg[p] * sizeof(int));
    }
}

/* A spanning tree of every member, rooted where asked, within the degree bound, largest
 * subtree first, and the root-0 tree rotated by the root. */
static void check_tree(const struct fm_tree_desc *d, int max_deg)
{
    static struct tree t, t0;
    collect(d, &t);
    sizes_from_root(&t);
    layout_matches(d, &t);
    for (int p = 0; p < d->n; p++) {
        assert_true(t.deg[p] <= max_deg);
        for (int i = 1; i < t.deg[p]; i++)
            assert_true(t.size[t.kids[p][i - 1]] >= t.size[t.kids[p][i]]);
    }
    struct fm_tree_desc d0 = *d;
    d0.root = 0;
    collect(&d0, &t0);
    for (int r = 0; r < d->n; r++) {
        int p = (r + d->root) % d->n;
        assert_int_equal(t.deg[p], t0.deg[r]);
        for (int i = 0; i < t0.deg[r]; i++)
            assert_int_equal(t.kids[p][i], (t0.kids[r][i] + d->root) % d->n);
    }
}

/* Calls fn(n, root) for n in 1..NMAX and roots 0, 1, n-1 and n/2. */
static void every_n_and_root(void (*fn)(int n, int root))
{
    for (int n = 1; n <= NMAX; n++) {
        int roots[] = {0, 1 % n, n - 1, n / 2};
        for (int i = 0; i < 4; i++)
            fn(n, roots[i]);
    }
}

static void flat_one(int n, int root)
{
    struct fm_tree_desc d = desc("flat", 0, n, root);
    check_tree(&d, n - 1);
    assert_int_equal(fm_tree_children(&d, root, NULL, 0, NULL), n - 1);
}

static void chain_one(int n, int root)
{
    struct fm_tree_desc d = desc("chain", 0, n, root);
    check_tree(&d, 1);
}

static void binomial_one(int n, int root)
{
    struct fm_tree_desc d = desc("binomial", 0, n, root);
    check_tree(&d, fm_tree_ceil_log2(n));
}

static void kbinomial_one(int n, int root)
{
    for (int k = 1; k <= 9; k++) {
        struct fm_tree_desc d = desc("kbinomial", k, n, root);
        check_tree(&d, k);
    }
    struct fm_tree_desc d = desc("kbinomial", 0, n, root); /* automatic k */
    d.m = 5;
    check_tree(&d, fm_tree_kbin_optimal_k(n, 5));
}

static void postal_one(int n, int root)
{
    for (int lambda = 1; lambda <= 4; lambda++) {
        struct fm_tree_desc d = desc("postal", lambda, n, root);
        check_tree(&d, n - 1);
    }
    double lambdas[] = {1.5, 2.25, 3.7};
    for (int i = 0; i < 3; i++) {
        struct fm_tree_desc d = desc("postal", 0, n, root);
        d.lambda = lambdas[i];
        check_tree(&d, n - 1);
    }
}

/* Digits of n - 1 in base b: the prefix tree's id length without a topology. */
static int digits(int n, int b)
{
    int m = 1;
    for (long long span = b; span < n; span *= b)
        m++;
    return m;
}

static void prefix_one(int n, int root)
{
    static const int bases[] = {2, 3, 4, 16};
    for (int i = 0; i < 4; i++) {
        struct fm_tree_desc d = desc("prefix", bases[i], n, root);
        check_tree(&d, (bases[i] - 1) * digits(n, bases[i]));
    }
    struct fm_tree_desc d = desc("prefix", 0, n, root); /* the default base, 4 */
    check_tree(&d, 3 * digits(n, 4));
}

/* Each prefix call builds the whole tree (O(n m^2)), so a tree of n members costs n of them:
 * every n to 64, then a few larger (the test runs under valgrind too). */
static void prefix_spans(void **state)
{
    (void)state;
    static const int big[] = {97, 128, 200};
    for (int n = 1; n <= 64; n++) {
        int roots[] = {0, 1 % n, n - 1, n / 2};
        for (int i = 0; i < 4; i++)
            prefix_one(n, roots[i]);
    }
    for (int i = 0; i < 3; i++)
        prefix_one(big[i], big[i] / 3);
}

/* A topology for prefix trees: member p is on host host_of[p]; its first coordinate (a rack)
 * is rack_of_host[its host]. */
struct fake_topo {
    const int *host_of, *rack_of_host;
};

static int fake_host(const void *arg, int pos)
{
    return ((const struct fake_topo *)arg)->host_of[pos];
}

static int fake_coord(const void *arg, int pos, int *coord)
{
    const struct fake_topo *f = arg;
    coord[0] = f->rack_of_host[f->host_of[pos]];
    coord[1] = 0;
    return FM_OK;
}

/* Copies that cross from one group to another, where group_of[p] names member p's group. */
static int crossings(const struct tree *t, const int *group_of)
{
    int count = 0;
    for (int p = 0; p < t->n; p++)
        if (p != t->root && group_of[t->parent[p]] != group_of[p])
            count++;
    return count;
}

/* The node-aware tree on random placements (1 to 12 hosts, uneven, members interleaved at
 * random), every root, k = 0 (binomial among hosts), 1 (a chain of hosts), 2 and 3: a spanning
 * tree in which each host other than the root's gets exactly one copy from outside, that copy
 * goes to the host's member nearest the root in list order (its leader; the root leads its own
 * host), every other member's parent is its host's leader, a leader sends to other hosts
 * before its own, and within a host only the leader has children: every other member of it;
 * between hosts at most k children (k > 0). Without a topology: the k-binomial tree. */
static void node_one_copy_per_host(void **state)
{
    (void)state;
    static struct tree t, ref;
    unsigned seed = 12345;
    for (int trial = 0; trial < 60; trial++) {
        seed = seed * 1103515245u + 12345u;
        int n = 1 + (int)((seed >> 8) % 70), nh = 1 + (int)((seed >> 20) % 12), host_of[NMAX];
        for (int p = 0; p < n; p++) {
            seed = seed * 1103515245u + 12345u;
            host_of[p] = (int)((seed >> 10) % (unsigned)nh) * 3 + 5; /* (any host numbers) */
        }
        struct fake_topo f = {host_of, NULL};
        struct fm_tree_topo hosts = {.arg = &f, .host = fake_host};
        int distinct = 0;
        for (int p = 0; p < n; p++) {
            int seen = 0;
            for (int q = 0; q < p; q++)
                seen |= host_of[q] == host_of[p];
            distinct += !seen;
        }
        static const int ks[] = {0, 1, 2, 3};
        for (int ki = 0; ki < 4; ki++)
            for (int root = 0; root < n; root += 1 + n / 7) {
                struct fm_tree_desc d = desc("node", ks[ki], n, root);
                d.topo = &hosts;
                collect(&d, &t);
                sizes_from_root(&t);
                layout_matches(&d, &t); /* node's own whole layout (builder.h: layout) */
                assert_int_equal(crossings(&t, host_of), distinct - 1);
                for (int p = 0; p < n; p++) {
                    /* the leader: first in list order from the root among its host's */
                    int lead = -1;
                    for (int r = 0; r < n && lead < 0; r++)
                        if (host_of[(root + r) % n] == host_of[p])
                            lead = (root + r) % n;
                    if (p != root)
                        assert_int_equal(host_of[t.parent[p]] != host_of[p], p == lead);
                    if (p != lead) /* under its leader */
                        assert_int_equal(t.parent[p], lead);
                    int local = 0, remote = 0, size = 0;
                    for (int q = 0; q < n; q++)
                        size += host_of[q] == host_of[p];
                    for (int i = 0; i < t.deg[p]; i++) {
                        int other = host_of[t.kids[p][i]] != host_of[p];
                        assert_false(other && local); /* other hosts first */
                        remote += other;
                        local += !other;
                    }
                    assert_int_equal(local, p == lead ? size - 1 : 0);
                    assert_true(ks[ki] == 0 || remote <= ks[ki]);
                }
                d.topo = NULL; /* no hosts: the k-binomial tree (binomial for k = 0) */
                collect(&d, &t);
                int k = ks[ki], log2n = 0;
                while ((1 << log2n) < n)
                    log2n++;
                k = k ? k : log2n;
                struct fm_tree_desc r = desc("kbinomial", k > 0 ? k : 1, n, root);
                collect(&r, &ref);
                for (int p = 0; p < n; p++) {
                    assert_int_equal(t.deg[p], ref.deg[p]);
                    assert_memory_equal(t.kids[p], ref.kids[p], (size_t)t.deg[p] * sizeof(int));
                }
            }
    }
}

/* 24 members on 6 hosts (4 each, interleaved in the list: member p on host p % 6), hosts in 3
 * racks of 2: from every root, with or without racks, each host gets exactly one copy from
 * outside it, and with racks each rack one from outside it; a flat tree sends 20 across hosts. */
static void prefix_one_copy_per_host(void **state)
{
    (void)state;
    enum { N = 24, HOSTS = 6 };
    int host_of[N], rack_of_host[HOSTS] = {0, 0, 1, 1, 2, 2}, rack_of[N];
    for (int p = 0; p < N; p++) {
        host_of[p] = p % HOSTS;
        rack_of[p] = rack_of_host[host_of[p]];
    }
    struct fake_topo f = {host_of, rack_of_host};
    struct fm_tree_topo hosts = {.arg = &f, .host = fake_host},
                        racks = {.arg = &f, .ndims = 2, .host = fake_host, .coord = fake_coord};
    static struct tree t;
    for (int root = 0; root < N; root++) {
        struct fm_tree_desc d = desc("prefix", 2, N, root);
        d.topo = &hosts;
        collect(&d, &t);
        sizes_from_root(&t);
        assert_int_equal(crossings(&t, host_of), HOSTS - 1);
        d.topo = &racks;
        collect(&d, &t);
        sizes_from_root(&t);
        assert_int_equal(crossings(&t, host_of), HOSTS - 1);
        assert_int_equal(crossings(&t, rack_of), 3 - 1);
        d = desc("flat", 0, N, root);
        collect(&d, &t);
        assert_int_equal(crossings(&t, host_of), N - N / HOSTS);
    }
}

/* The two trees of a split multicast: each spans every member with at most two children, no
 * deeper than a binary tree needs; a member forwards in one of them (two copies of its half),
 * but for one member when n - 1 is odd (two of three when it is 3); no parent-child pair is in both
 * (their halves would share the pair's credits). */
static void twotree_one(int n, int root)
{
    static struct tree t[2];
    for (int w = 0; w < 2; w++) {
        struct fm_tree_desc d = desc("twotree", w, n, root);
        check_tree(&d, 2);
        collect(&d, &t[w]);
        for (int p = 0, depth; p < n; p++) { /* depth <= 1 + floor(log2(n - 1)) + 1 */
            int q = p;
            for (depth = 0; q != root; depth++)
                q = t[w].parent[q];
            int lg = 0;
            while ((2 << lg) <= n - 1)
                lg++;
            assert_true(depth <= lg + 2);
        }
    }
    assert_true(n < 2 || t[0].deg[root] == 1);
    int both = 0;
    for (int p = 0; p < n; p++) {
        if (p == root)
            continue;
        both += t[0].deg[p] && t[1].deg[p];
        assert_true(t[0].deg[p] + t[1].deg[p] <= 3);
        if (t[0].parent[p] == t[1].parent[p])
            assert_true(n <= 2); /* (one member: the root is its parent in both) */
    }
    assert_true(both <= (n == 4 ? 2 : (n - 1) % 2 ? 1 : 0));
}

/* n = 7 by hand: tree 0 over the six non-root members by their bits, tree 1 its mirror. */
static void twotree_seven(void **state)
{
    (void)state;
    static const int kids[2][7][2] = {
        {{1, -1}, {5, -1}, {-1, -1}, {2, 4}, {-1, -1}, {3, 6}, {-1, -1}},
        {{6, -1}, {-1, -1}, {4, 1}, {-1, -1}, {5, 3}, {-1, -1}, {2, -1}}};
    for (int w = 0; w < 2; w++) {
        struct fm_tree_desc d = desc("twotree", w, 7, 0);
        for (int p = 0; p < 7; p++) {
            int out[2] = {-1, -1}, k = fm_tree_children(&d, p, out, 2, NULL);
            assert_int_equal(k, (kids[w][p][0] >= 0) + (kids[w][p][1] >= 0));
            assert_memory_equal(out, kids[w][p], sizeof out);
        }
    }
    struct fm_tree_desc bad = desc("twotree", 2, 7, 0);
    assert_int_equal(fm_tree_check(&bad), FM_ERR_INVALID);
}

static void twotree_spans(void **state)
{
    (void)state;
    every_n_and_root(twotree_one);
}

static void flat_spans(void **state)
{
    (void)state;
    every_n_and_root(flat_one);
}

static void chain_spans(void **state)
{
    (void)state;
    every_n_and_root(chain_one);
}

static void binomial_spans(void **state)
{
    (void)state;
    every_n_and_root(binomial_one);
}

static void kbinomial_spans(void **state)
{
    (void)state;
    every_n_and_root(kbinomial_one);
}

static void postal_spans(void **state)
{
    (void)state;
    every_n_and_root(postal_one);
}

/* n = 1: the root alone. */
static void single_member(void **state)
{
    (void)state;
    for (int b = 0; b < fm_tree_count(); b++) {
        struct fm_tree_desc d = {.builder = b, .n = 1, .root = 0, .m = 1, .lambda = 1};
        void *scratch = scratch_for(&d);
        int out[1] = {-7}, parent = 0;
        assert_int_equal(fm_tree_children(&d, 0, out, 1, scratch), 0);
        assert_int_equal(out[0], -7);
        assert_int_equal(fm_tree_parent(&d, 0, scratch, &parent), FM_OK);
        assert_int_equal(parent, -1);
        free(scratch);
    }
}

/* The worked binomial tree of DESIGN.md's 8-member example, and chain/flat by hand. */
static void exact_small_trees(void **state)
{
    (void)state;
    struct tree t;
    struct fm_tree_desc d = desc("binomial", 0, 8, 0);
    collect(&d, &t);
    int deg[8] = {3, 0, 1, 0, 2, 0, 1, 0};
    int kids[8][3] = {{4, 2, 1}, {0}, {3}, {0}, {6, 5}, {0}, {7}, {0}};
    for (int p = 0; p < 8; p++) {
        assert_int_equal(t.deg[p], deg[p]);
        assert_memory_equal(t.kids[p], kids[p], deg[p] * sizeof(int));
    }
    d = desc("binomial", 0, 8, 5); /* rotated: 5 -> 1 7 6, 1 -> 3 2, 7 -> 0, 3 -> 4 */
    collect(&d, &t);
    int r5[3] = {1, 7, 6}, r1[2] = {3, 2};
    assert_int_equal(t.deg[5], 3);
    assert_memory_equal(t.kids[5], r5, sizeof r5);
    assert_memory_equal(t.kids[1], r1, sizeof r1);
    assert_int_equal(t.kids[7][0], 0);
    d = desc("chain", 0, 5, 3);
    collect(&d, &t);
    assert_int_equal(t.kids[3][0], 4);
    assert_int_equal(t.kids[4][0], 0);
    assert_int_equal(t.deg[2], 0);
    d = desc("flat", 0, 4, 2);
    collect(&d, &t);
    int flat[3] = {3, 0, 1};
    assert_memory_equal(t.kids[2], flat, sizeof flat);
}

/* Reference k-binomial tree that uses nothing of kbinomial.c, so that a mistake there cannot
 * repeat here. N(s,k) comes from DESIGN.md's defining sum (kbinomial.c uses a difference
 * recurrence), T = t_1(n,k) from its definition, and the tree from playing the broadcast
 * forward in time, as Kesavan & Panda describe the construction (kbinomial.c descends blocks
 * recursively): on relative indices (root 0), in step t = 1..T every member that got the
 * message before step t and still has members to cover sends it to the member N(T-t,k) places
 * left of the end of the range it still covers (or to its right neighbour, when fewer are
 * left), which takes over the members from there to that end. Nothing here limits a degree to
 * k: that every member is reached in T steps with at most k children each is checked. */
#define REF_CAP (1LL << 40) /* beyond any n tested: keeps the sums finite */

struct ref_kbin {
    int n, k, steps;
    int *parent, *step, *deg; /* step: when the member first has the message (root: 0) */
};

/* cover[s] = N(s,k) for s = 0.. until it reaches n; returns t_1(n,k), the last s filled. */
static int ref_cover(int n, int k, long long *cover, int max)
{
    for (int s = 0; s < max; s++) {
        if (s <= k) {
            cover[s] = s < 40 ? 1LL << s : REF_CAP;
        } else {
            cover[s] = 1;
            for (int i = 1; i <= k; i++)
                cover[s] = cover[s] + cover[s - i] < REF_CAP ? cover[s] + cover[s - i] : REF_CAP;
        }
        if (cover[s] >= n)
            return s;
    }
    fail_msg("N(s,%d) stays below %d for s < %d", k, n, max);
    return -1;
}

static void ref_kbin_build(struct ref_kbin *r, int n, int k)
{
    long long *cover = malloc((size_t)n * sizeof *cover);
    int *end = malloc((size_t)n * sizeof *end); /* one past the last member v still covers */
    int *active = malloc((size_t)n * sizeof *active), *next = malloc((size_t)n * sizeof *next);
    assert_non_null(cover);
    assert_non_null(end);
    assert_non_null(active);
    assert_non_null(next);
    r->n = n;
    r->k = k;
    r->steps = ref_cover(n, k, cover, n); /* t_1 <= n - 1 (the chain) */
    for (int v = 0; v < n; v++) {
        r->parent[v] = -2;
        r->step[v] = -1;
        r->deg[v] = 0;
    }
    r->parent[0] = -1;
    r->step[0] = 0;
    end[0] = n;
    int nactive = n > 1, reached = 1;
    active[0] = 0;
    for (int t = 1; t <= r->steps; t++) {
        int nnext = 0;
        for (int j = 0; j < nactive; j++) {
            int v = active[j];
            long long left = end[v] - cover[r->steps - t];
            int c = left > v + 1 ? (int)left : v + 1;
            assert_int_equal(r->step[c], -1); /* ranges never overlap */
            r->parent[c] = v;
            r->step[c] = t;
            r->deg[v]++;
            end[c] = end[v];
            end[v] = c;
            reached++;
            if (end[v] > v + 1)
                next[nnext++] = v;
            if (end[c] > c + 1)
                next[nnext++] = c;
        }
        memcpy(active, next, (size_t)nnext * sizeof *active);
        nactive = nnext;
    }
    assert_int_equal(nactive, 0); /* all covered in t_1 steps */
    assert_int_equal(reached, n);
    for (int v = 0; v < n; v++)
        assert_true(r->deg[v] <= k);
    free(cover);
    free(end);
    free(active);
    free(next);
}

static int ref_ceil_log2(int n)
{
    int l = 0;
    while ((1LL << l) < n)
        l++;
    return l;
}

struct ref_arrays {
    int parent[NBIG], step[NBIG], deg[NBIG], out[NBIG];
};

/* Every member's children (in send order) and parent from the builder, root anywhere, against
 * the reference rotated to that root. */
static void compare_kbin(const struct fm_tree_desc *d, const struct ref_kbin *r, int *out)
{
    int n = d->n;
    const char *name = fm_tree_name(d->builder);
    for (int rel = 0; rel < n; rel++) {
        int p = (rel + d->root) % n;
        int deg = fm_tree_children(d, p, out, n, NULL);
        if (deg != r->deg[rel])
            fail_msg("%s n=%d k=%d root=%d: member %d has %d children, the reference %d", name, n,
                     r->k, d->root, p, deg, r->deg[rel]);
        for (int i = 0; i < deg; i++) {
            assert_in_range(out[i], 0, n - 1);
            int c = (out[i] - d->root + n) % n;
            /* the reference's children of rel, each once, in the order it sends to them */
            if (r->parent[c] != rel ||
                (i > 0 && r->step[c] <= r->step[(out[i - 1] - d->root + n) % n]))
                fail_msg("%s n=%d k=%d root=%d: child %d of member %d is %d, not the "
                         "reference's",
                         name, n, r->k, d->root, i, p, out[i]);
        }
        int parent = -3;
        assert_int_equal(fm_tree_parent(d, p, NULL, &parent), FM_OK);
        int want = rel == 0 ? -1 : (r->parent[rel] + d->root) % n;
        if (parent != want)
            fail_msg("%s n=%d k=%d root=%d: parent of %d is %d, the reference's %d", name, n, r->k,
                     d->root, p, parent, want);
    }
}

/* The reference against trees worked by hand from DESIGN.md (relative indices, root 0):
 * children lists in send order, -1 ending each. */
static void ref_matches_hand(struct ref_kbin *r, int n, int k, int steps, const int (*kids)[4])
{
    ref_kbin_build(r, n, k);
    assert_int_equal(r->steps, steps);
    for (int v = 0; v < n; v++) {
        int deg = 0;
        while (deg < 4 && kids[v][deg] >= 0) {
            assert_int_equal(r->parent[kids[v][deg]], v);
            if (deg > 0)
                assert_true(r->step[kids[v][deg]] > r->step[kids[v][deg - 1]]);
            deg++;
        }
        assert_int_equal(r->deg[v], deg);
    }
}

static void kbinomial_reference(void **state)
{
    (void)state;
    static struct ref_arrays a;
    struct ref_kbin r = {.parent = a.parent, .step = a.step, .deg = a.deg};

    /* 15 = N(4,3) members, k = 3: 0 -> 7 (8 members), 3 (4), 1 (2); 7 -> 11, 9, 8; ... */
    static const int full15[15][4] = {
        {7, 3, 1, -1}, {2, -1},  {-1}, {5, 4, -1},   {-1}, {6, -1},  {-1}, {11, 9, 8, -1},
        {-1},          {10, -1}, {-1}, {13, 12, -1}, {-1}, {14, -1}, {-1}};
    ref_matches_hand(&r, 15, 3, 4, full15);
    /* 10 members, k = 2 (N(3,2) = 7 < 10 <= N(4,2) = 12): blocks of at most 7, 4, 2, 1 from
     * the right; the root's second child gets what is left, 2 members. */
    static const int part10[10][4] = {{3, 1, -1}, {2, -1},    {-1}, {6, 4, -1}, {5, -1},
                                      {-1},       {8, 7, -1}, {-1}, {9, -1},    {-1}};
    ref_matches_hand(&r, 10, 2, 4, part10);
    /* ... and the builder on it, rooted at 7 (absolute indices: relative + 7 mod 10) */
    struct fm_tree_desc d = desc("kbinomial", 2, 10, 7);
    int out[10];
    int rooted7[10][3] = {{3, 1, -1}, {2, -1}, {-1},       {5, 4, -1}, {-1},
                          {6, -1},    {-1},    {0, 8, -1}, {9, -1},    {-1}};
    for (int p = 0; p < 10; p++) {
        int deg = 0;
        while (rooted7[p][deg] >= 0)
            deg++;
        assert_int_equal(fm_tree_children(&d, p, out, 10, NULL), deg);
        assert_memory_equal(out, rooted7[p], (size_t)deg * sizeof(int));
    }

    /* N(s,k) and t_1(n,k) of kbinomial.c against the definition */
    for (int k = 2; k <= 10; k++) {
        long long cover[64];
        int top = ref_cover(1 << 30, k, cover, 64);
        for (int s = 0; s <= top; s++)
            assert_true(fm_tree_kbin_cover(s, k) == cover[s]);
    }

    /* Every n to NMAX, k from the chain to past log2 n, every root for small n and five roots
     * otherwise; the binomial builder (k = ceil(log2 n)); the automatic k, the smallest k in
     * [1, ceil(log2 n)] minimising t_1 + (m-1)k, for several m. */
    for (int n = 1; n <= NMAX; n++) {
        int roots[] = {0, 1 % n, n / 2, n - 1, 2 * n / 3}, nroots = n <= 40 ? n : 5;
        int steps[11];
        for (int k = 1; k <= 10; k++) {
            ref_kbin_build(&r, n, k);
            steps[k] = r.steps;
            assert_int_equal(fm_tree_kbin_steps(n, k), r.steps);
            for (int i = 0; i < nroots; i++) {
                d = desc("kbinomial", k, n, n <= 40 ? i : roots[i]);
                compare_kbin(&d, &r, a.out);
            }
        }
        int lg = ref_ceil_log2(n), kb = lg > 1 ? lg : 1;
        ref_kbin_build(&r, n, kb);
        d = desc("binomial", 0, n, n / 2);
        compare_kbin(&d, &r, a.out);
        int ms[] = {1, 2, 3, 8, 64, 1000};
        for (int j = 0; j < 6; j++) {
            int best = 1;
            for (int k = 2; k <= lg && k <= 10; k++)
                if (steps[k] + (long long)(ms[j] - 1) * k <
                    steps[best] + (long long)(ms[j] - 1) * best)
                    best = k;
            ref_kbin_build(&r, n, best);
            d = desc("kbinomial", 0, n, n - 1);
            d.m = ms[j];
            compare_kbin(&d, &r, a.out);
        }
    }

    /* Large member counts, where the tables run deep */
    int bign[] = {1000, 4096, 4097, 65535, NBIG};
    int bigk[] = {2, 3, 5, 17};
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 4; j++) {
            ref_kbin_build(&r, bign[i], bigk[j]);
            d = desc("kbinomial", bigk[j], bign[i], bign[i] / 3);
            compare_kbin(&d, &r, a.out);
        }
}

/* N(s,k), t_1(n,k) and the optimal k. */
static void kbinomial_arithmetic(void **state)
{
    (void)state;
    assert_int_equal(fm_tree_kbin_cover(-1, 3), 0);
    assert_int_equal(fm_tree_kbin_cover(0, 3), 1);
    assert_int_equal(fm_tree_kbin_cover(3, 3), 8);
    assert_int_equal(fm_tree_kbin_cover(4, 3), 15); /* 1 + 8 + 4 + 2 */
    assert_int_equal(fm_tree_kbin_cover(4, 2), 12);
    assert_int_equal(fm_tree_kbin_cover(8, 2), 88);
    assert_int_equal(fm_tree_kbin_cover(9, 1), 10);
    assert_int_equal(fm_tree_kbin_cover(5, 9), 32);
    assert_true(fm_tree_kbin_cover(200, 2) == FM_TREE_COVER_MAX);
    assert_true(fm_tree_kbin_cover(70, 70) == FM_TREE_COVER_MAX);
    for (int k = 1; k <= 6; k++) /* the recurrence itself */
        for (int s = k + 1; s < 30; s++) {
            long long sum = 1;
            for (int i = 1; i <= k; i++)
                sum += fm_tree_kbin_cover(s - i, k);
            assert_true(fm_tree_kbin_cover(s, k) == sum);
        }
    assert_int_equal(fm_tree_kbin_steps(64, 6), 6);
    assert_int_equal(fm_tree_kbin_steps(64, 5), 7);
    assert_int_equal(fm_tree_kbin_steps(64, 1), 63);
    assert_int_equal(fm_tree_kbin_steps(1, 4), 0);
    assert_int_equal(fm_tree_kbin_steps(13, 2), 5);
    assert_int_equal(fm_tree_kbin_steps(12, 2), 4);
    assert_int_equal(fm_tree_ceil_log2(1), 0);
    assert_int_equal(fm_tree_ceil_log2(2), 1);
    assert_int_equal(fm_tree_ceil_log2(64), 6);
    assert_int_equal(fm_tree_ceil_log2(65), 7);
    assert_int_equal(fm_tree_kbin_optimal_k(64, 64), 1);  /* 63 + 63 beats 8 + 126 */
    assert_int_equal(fm_tree_kbin_optimal_k(64, 1), 6);   /* one packet: the binomial tree */
    assert_int_equal(fm_tree_kbin_optimal_k(4, 3), 1);    /* chain 5 < binomial 6 */
    assert_int_equal(fm_tree_kbin_optimal_k(8, 3), 2);    /* 4 + 4 beats 3 + 6 and 7 + 2 */
    assert_int_equal(fm_tree_kbin_optimal_k(1000, 4), 2); /* 14 + 6, tied with 11 + 9 */
    assert_int_equal(fm_tree_kbin_optimal_k(1, 9), 1);
    assert_int_equal(fm_tree_kbin_optimal_k(0, 1), FM_ERR_INVALID);
}

/* On full k-binomial trees (n = N(s,k)) FPFS with lambda = 1 takes t_1 + (m-1) d_root steps,
 * where the root has d_root = min(k, s) children (fewer than k when s < k). */
static void kbinomial_pipelined_steps(void **state)
{
    (void)state;
    int ms[] = {1, 2, 3, 7, 16};
    for (int k = 1; k <= 5; k++)
        for (int s = 0; fm_tree_kbin_cover(s, k) <= 1000; s++) {
            int n = (int)fm_tree_kbin_cover(s, k), d_root = s < k ? s : k;
            struct fm_tree_desc d = desc("kbinomial", k, n, n / 3);
            assert_int_equal(fm_tree_children(&d, n / 3, NULL, 0, NULL), d_root);
            assert_int_equal(fm_tree_kbin_steps(n, k), s);
            for (int i = 0; i < 5; i++) {
                double T;
                assert_int_equal(fm_model_steps(&d, ms[i], 1.0, FM_MODEL_FPFS, &T, NULL), FM_OK);
                assert_true(T == s + (ms[i] - 1) * d_root);
            }
        }
}

/* One packet down the binomial tree: ceil(log2 n) steps; down a k-binomial tree: t_1. */
static void one_packet_steps(void **state)
{
    (void)state;
    for (int n = 1; n <= NMAX; n++) {
        double T;
        struct fm_tree_desc d = desc("binomial", 0, n, n - 1);
        assert_int_equal(fm_model_steps(&d, 1, 1.0, FM_MODEL_FPFS, &T, NULL), FM_OK);
        assert_true(T == fm_tree_ceil_log2(n));
        for (int k = 1; k <= 4; k++) {
            d = desc("kbinomial", k, n, 0);
            assert_int_equal(fm_model_steps(&d, 1, 1.0, FM_MODEL_FPFS, &T, NULL), FM_OK);
            assert_true(T == fm_tree_kbin_steps(n, k));
        }
    }
}

/* The greedy postal tree for one packet meets the postal optimum: the least t with
 * F(t) >= n, F(t) = 1 for t < lambda, F(t) = F(t-1) + F(t-lambda) otherwise. */
static void postal_one_packet_optimum(void **state)
{
    (void)state;
    for (int lambda = 1; lambda <= 4; lambda++) {
        long long F[NMAX + 1]; /* capped past NMAX: only F(t) >= n matters */
        for (int t = 0; t <= NMAX; t++) {
            F[t] = t < lambda ? 1 : F[t - 1] + F[t - lambda];
            F[t] = F[t] > NMAX ? NMAX + 1 : F[t];
        }
        for (int n = 1; n <= NMAX; n++) {
            int best = 0;
            while (F[best] < n)
                best++;
            struct fm_tree_desc d = desc("postal", lambda, n, n / 2);
            double T;
            assert_int_equal(fm_model_steps(&d, 1, lambda, FM_MODEL_FPFS, &T, NULL), FM_OK);
            assert_true(T == best);
            d.param = 0; /* the same tree from the descriptor's lambda */
            d.lambda = lambda;
            assert_int_equal(fm_model_steps(&d, 1, lambda, FM_MODEL_FPFS, &T, NULL), FM_OK);
            assert_true(T == best);
        }
    }
}

/* Reference greedy postal with explicit queues of (member, time), straight from DESIGN.md. */
static void ref_postal(int n, double lambda, int *parent)
{
    int qn[NMAX], qo[NMAX], hn = 0, tn = 0, ho = 0, to = 0;
    double tnew[NMAX], told[NMAX];
    qn[tn] = 0;
    tnew[tn++] = 0;
    for (int p = 1; p < n; p++) {
        int q;
        double t;
        if (ho < to && (hn == tn || told[ho] <= tnew[hn] + 1e-9)) {
            q = qo[ho];
            t = told[ho++];
        } else {
            q = qn[hn];
            t = tnew[hn++];
        }
        parent[p] = q;
        qn[tn] = p;
        tnew[tn++] = t + lambda;
        qo[to] = q;
        told[to++] = t + 1;
    }
}

static void postal_construction(void **state)
{
    (void)state;
    static struct tree t;
    double lambdas[] = {1, 2, 3, 4, 1.5, 2.5};
    for (int i = 0; i < 6; i++)
        for (int n = 1; n <= NMAX; n++) {
            int parent[NMAX];
            ref_postal(n, lambdas[i], parent);
            struct fm_tree_desc d = desc("postal", 0, n, 0);
            d.lambda = lambdas[i];
            collect(&d, &t);
            for (int p = 1; p < n; p++)
                assert_int_equal(t.parent[p], parent[p]);
        }
    /* postal:2 on 10 members, worked by hand */
    struct fm_tree_desc d = desc("postal", 2, 10, 0);
    collect(&d, &t);
    int root[5] = {1, 2, 3, 5, 8}, one[3] = {4, 6, 9};
    assert_int_equal(t.deg[0], 5);
    assert_memory_equal(t.kids[0], root, sizeof root);
    assert_int_equal(t.deg[1], 3);
    assert_memory_equal(t.kids[1], one, sizeof one);
    assert_int_equal(t.deg[2], 1);
    assert_int_equal(t.kids[2][0], 7);
}

/* Resolving fixes kbinomial's automatic k and changes nothing else, nor the tree. */
static void resolve(void **state)
{
    (void)state;
    struct fm_tree_desc d = desc("kbinomial", 0, 64, 5), r;
    static struct tree t, tr;
    d.m = 64;
    assert_int_equal(fm_tree_resolve(&d, &r), FM_OK);
    assert_int_equal(r.param, 1);
    assert_int_equal(r.root, 5);
    assert_int_equal(r.m, 64);
    collect(&d, &t);
    collect(&r, &tr);
    assert_memory_equal(t.kids, tr.kids, sizeof t.kids);
    d.m = 1;
    assert_int_equal(fm_tree_resolve(&d, &r), FM_OK);
    assert_int_equal(r.param, 6);
    d.param = 4;
    assert_int_equal(fm_tree_resolve(&d, &r), FM_OK);
    assert_int_equal(r.param, 4);
    d = desc("postal", 0, 10, 0);
    d.lambda = 2.5;
    assert_int_equal(fm_tree_resolve(&d, &r), FM_OK);
    assert_int_equal(r.param, 0);
    assert_true(r.lambda == 2.5);
    d = desc("binomial", 0, 10, 0);
    assert_int_equal(fm_tree_resolve(&d, &r), FM_OK);
    assert_int_equal(r.param, 0);
    d.n = 0;
    assert_int_equal(fm_tree_resolve(&d, &r), FM_ERR_INVALID);
}

/* Children are counted like snprintf: never more than cap written. */
static void children_cap(void **state)
{
    (void)state;
    struct fm_tree_desc d = desc("flat", 0, 10, 0);
    int out[4] = {-1, -1, -1, -1};
    assert_int_equal(fm_tree_children(&d, 0, out, 2, NULL), 9);
    assert_int_equal(out[0], 1);
    assert_int_equal(out[1], 2);
    assert_int_equal(out[2], -1);
    d = desc("binomial", 0, 64, 0);
    out[1] = out[2] = -1;
    assert_int_equal(fm_tree_children(&d, 0, out, 3, NULL), 6);
    assert_int_equal(out[3], -1);
    d = desc("postal", 1, 64, 0);
    void *scratch = scratch_for(&d);
    out[1] = -1;
    assert_int_equal(fm_tree_children(&d, 0, out, 1, scratch), 6);
    assert_int_equal(out[1], -1);
    free(scratch);
}

static void bad_descriptors(void **state)
{
    (void)state;
    int out[8], parent, first[9], kids[8];
    struct fm_tree_desc good = desc("kbinomial", 2, 8, 0), d;
    assert_int_equal(fm_tree_check(&good), FM_OK);
    assert_int_equal(fm_tree_check(NULL), FM_ERR_INVALID);
#define BAD(change)                                                                                \
    do {                                                                                           \
        d = good;                                                                                  \
        change;                                                                                    \
        assert_int_equal(fm_tree_check(&d), FM_ERR_INVALID);                                       \
        assert_int_equal(fm_tree_children(&d, 0, out, 8, NULL), FM_ERR_INVALID);                   \
        assert_int_equal(fm_tree_parent(&d, 0, NULL, &parent), FM_ERR_INVALID);                    \
        assert_int_equal(fm_tree_layout(&d, first, kids), FM_ERR_INVALID);                         \
    } while (0)
    BAD(d.n = 0);
    BAD(d.root = 8);
    BAD(d.root = -1);
    BAD(d.builder = -1);
    BAD(d.builder = fm_tree_count());
    BAD(d.param = -1);
    BAD((d.param = 0, d.m = 0)); /* automatic k, no m */
    BAD((d.builder = fm_tree_lookup("postal"), d.param = 0, d.lambda = 0.5)); /* lambda < 1 */
    BAD((d.builder = fm_tree_lookup("postal"), d.param = -2));
    /* bad positions, arguments and missing scratch */
    assert_int_equal(fm_tree_children(&good, 8, out, 8, NULL), FM_ERR_INVALID);
    assert_int_equal(fm_tree_children(&good, -1, out, 8, NULL), FM_ERR_INVALID);
    assert_int_equal(fm_tree_children(&good, 0, NULL, 8, NULL), FM_ERR_INVALID);
    assert_int_equal(fm_tree_children(&good, 0, out, -1, NULL), FM_ERR_INVALID);
    assert_int_equal(fm_tree_parent(&good, 0, NULL, NULL), FM_ERR_INVALID);
    d = desc("postal", 2, 8, 0);
    assert_true(fm_tree_scratch_size(&d) >= 8 * (sizeof(double) + sizeof(int)));
    assert_int_equal(fm_tree_scratch_size(&good), 0);
    assert_int_equal(fm_tree_children(&d, 0, out, 8, NULL), FM_ERR_INVALID);
    assert_int_equal(fm_tree_parent(&d, 1, NULL, &parent), FM_ERR_INVALID);
}

static void parse_ok(const char *spec, const char *name, int param)
{
    int b = -1, p = -1;
    char err[200] = "";
    assert_int_equal(fm_tree_parse(spec, &b, &p, err, sizeof err), FM_OK);
    assert_string_equal(fm_tree_name(b), name);
    assert_int_equal(p, param);
}

static void parse_bad(const char *spec, const char *says)
{
    int b = -1, p = -1;
    char err[200] = "";
    assert_int_equal(fm_tree_parse(spec, &b, &p, err, sizeof err), FM_ERR_INVALID);
    assert_int_equal(b, -1); /* nothing set on error */
    assert_int_equal(p, -1);
    if (!strstr(err, says))
        fail_msg("'%s' gave message '%s', expected it to mention '%s'", spec, err, says);
}

static void parser(void **state)
{
    (void)state;
    parse_ok("binomial", "binomial", 0);
    parse_ok("flat", "flat", 0);
    parse_ok("chain", "chain", 0);
    parse_ok("kbinomial", "kbinomial", 0);
    parse_ok("kbinomial:3", "kbinomial", 3);
    parse_ok("kbinomial:017", "kbinomial", 17);
    parse_ok("postal:2", "postal", 2);
    parse_ok("postal", "postal", 0);
    parse_bad("", "unknown tree ''");
    parse_bad("star",
              "unknown tree 'star' (known: flat, chain, binomial, kbinomial, postal, prefix, ipmc, "
              "sepaddr, utorus, storus, mdtorus, mutorus, node, twotree)");
    parse_bad("Binomial", "unknown");
    parse_bad("binomia", "unknown");
    parse_bad("binomial:3", "takes no parameter");
    parse_bad("flat:1", "takes no parameter");
    parse_bad("kbinomial:", "not ''");
    parse_bad("kbinomial:0", "not '0'");
    parse_bad("kbinomial:-1", "not '-1'");
    parse_bad("kbinomial:+3", "not '+3'");
    parse_bad("kbinomial: 3", "not ' 3'");
    parse_bad("kbinomial:3x", "not '3x'");
    parse_bad("kbinomial:x", "k must be");
    parse_bad("kbinomial:3:4", "not '3:4'");
    parse_bad("kbinomial:1.5", "not '1.5'");
    parse_bad("kbinomial:99999999999", "not '99999999999'");
    parse_bad("postal:0", "lambda must be");
    assert_int_equal(fm_tree_parse(NULL, &(int){0}, &(int){0}, NULL, 0), FM_ERR_INVALID);
    assert_int_equal(fm_tree_parse("star", &(int){0}, &(int){0}, NULL, 0), FM_ERR_INVALID);
    assert_int_equal(fm_tree_lookup("postal"), 4);
    assert_int_equal(fm_tree_lookup("nope"), FM_ERR_INVALID);
    assert_null(fm_tree_name(fm_tree_count()));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(flat_spans),
        cmocka_unit_test(chain_spans),
        cmocka_unit_test(binomial_spans),
        cmocka_unit_test(kbinomial_spans),
        cmocka_unit_test(postal_spans),
        cmocka_unit_test(twotree_spans),
        cmocka_unit_test(twotree_seven),
        cmocka_unit_test(prefix_spans),
        cmocka_unit_test(prefix_one_copy_per_host),
        cmocka_unit_test(single_member),
        cmocka_unit_test(exact_small_trees),
        cmocka_unit_test(kbinomial_reference),
        cmocka_unit_test(kbinomial_arithmetic),
        cmocka_unit_test(kbinomial_pipelined_steps),
        cmocka_unit_test(one_packet_steps),
        cmocka_unit_test(postal_one_packet_optimum),
        cmocka_unit_test(postal_construction),
        cmocka_unit_test(resolve),
        cmocka_unit_test(children_cap),
        cmocka_unit_test(bad_descriptors),
        cmocka_unit_test(parser),
        cmocka_unit_test(node_one_copy_per_host),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
