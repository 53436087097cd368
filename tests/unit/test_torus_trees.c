/* SPDX-License-Identifier: BSD-3-Clause */
/* The torus builders (sepaddr, utorus, storus, mdtorus, mutorus): trees worked out by hand on
 * a 4x4 and a 2x2x2 torus; every builder spans every member exactly once for random member
 * subsets, roots, list orders and torus shapes, and gives the same tree (in ranks) whatever
 * the list order; each tree's defining property checked on the coordinates directly (S-torus
 * steps forward round the torus, Md-torus keeps rings together, Mu-torus runs of r, U-torus
 * halves); the documented fallbacks without a torus. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "fastmsg.h"
#include "trees/tree.h"

#define NMAX 128

/* Members are ranks of a torus of extents dims, one rank per position: rank p sits at
 * x = p % X, y = p / X % Y, z = p / (X*Y). list[pos] is member pos's rank. */
struct fake {
    int ndims, dims[3];
    const int *list;
};

static void rank_coord(const struct fake *f, int rank, int *c)
{
    c[0] = rank % f->dims[0];
    c[1] = rank / f->dims[0] % f->dims[1];
    c[2] = rank / (f->dims[0] * f->dims[1]);
}

static int fake_host(const void *arg, int pos)
{
    const struct fake *f = arg;
    return f->list[pos];
}

static int fake_coord(const void *arg, int pos, int *c)
{
    const struct fake *f = arg;
    rank_coord(f, f->list[pos], c);
    return FM_OK;
}

static struct fm_tree_topo topo_of(const struct fake *f)
{
    struct fm_tree_topo t = {.arg = f, .ndims = f->ndims, .host = fake_host, .coord = fake_coord};
    memcpy(t.dims, f->dims, sizeof t.dims);
    return t;
}

static struct fm_tree_desc desc(const char *name, int param, int n, int root,
                                const struct fm_tree_topo *t)
{
    int id = fm_tree_lookup(name);
    assert_true(id >= 0);
    return (struct fm_tree_desc){
        .builder = id, .param = param, .n = n, .root = root, .m = 1, .lambda = 1.0, .topo = t};
}

/* The tree by rank: kids[rank][i] and parent[rank] (-1 for the root), from one
 * fm_tree_children and one fm_tree_parent call per member, checked to agree, to span every
 * member exactly once, and to equal fm_tree_layout's. */
struct tree {
    int deg[NMAX], kids[NMAX][NMAX], parent[NMAX], depth[NMAX];
};

static void collect(const struct fm_tree_desc *d, const int *list, struct tree *t)
{
    size_t bytes = fm_tree_scratch_size(d);
    void *scratch = bytes ? malloc(bytes) : NULL;
    int first[NMAX + 1], lay[NMAX], pkids[NMAX], n = d->n;
    for (int r = 0; r < NMAX; r++)
        t->parent[r] = -2;
    assert_int_equal(fm_tree_layout(d, first, lay), FM_OK);
    for (int p = 0; p < n; p++) {
        int deg = fm_tree_children(d, p, pkids, NMAX, scratch), me = list[p];
        assert_in_range(deg, 0, n - 1);
        assert_int_equal(deg, first[p + 1] - first[p]);
        assert_memory_equal(pkids, lay + first[p], (size_t)deg * sizeof(int));
        t->deg[me] = deg;
        for (int i = 0; i < deg; i++) {
            assert_in_range(pkids[i], 0, n - 1);
            assert_int_not_equal(pkids[i], d->root);
            int kid = list[pkids[i]];
            assert_int_equal(t->parent[kid], -2); /* exactly one parent */
            t->parent[kid] = me;
            t->kids[me][i] = kid;
        }
    }
    for (int p = 0; p < n; p++) {
        int parent = -3;
        assert_int_equal(fm_tree_parent(d, p, scratch, &parent), FM_OK);
        assert_int_equal(parent < 0 ? -1 : list[parent], p == d->root ? -1 : t->parent[list[p]]);
    }
    /* Everyone reached from the root, no cycle: depths by a walk. */
    int order[NMAX], len = 0;
    order[len++] = list[d->root];
    t->depth[list[d->root]] = 0;
    for (int i = 0; i < len; i++)
        for (int j = 0; j < t->deg[order[i]]; j++) {
            assert_true(len < n);
            t->depth[t->kids[order[i]][j]] = t->depth[order[i]] + 1;
            order[len++] = t->kids[order[i]][j];
        }
    assert_int_equal(len, n);
    free(scratch);
}

static void kids_are(const struct tree *t, int rank, int count, const int *want)
{
    assert_int_equal(t->deg[rank], count);
    for (int i = 0; i < count; i++)
        assert_int_equal(t->kids[rank][i], want[i]);
}

/* 10 of the 16 ranks of a 4x4 torus, listed in rank order, rooted at rank 5 = (1,1). By hand,
 * relative positions (dx + 4 dy, the + way from (1,1)): 5:0 7:2 9:4 10:5 13:8 15:10 12:11
 * 2:13 3:14 0:15, so the torus order is 5 7 9 10 13 15 12 2 3 0. */
static const int hand_list[] = {0, 2, 3, 5, 7, 9, 10, 12, 13, 15};
enum { HAND_N = 10, HAND_ROOT = 3 };

static struct tree *hand_tree(const char *name, int param)
{
    static struct fake f = {2, {4, 4, 1}, hand_list};
    static struct fm_tree_topo t;
    static struct tree tree;
    t = topo_of(&f);
    struct fm_tree_desc d = desc(name, param, HAND_N, HAND_ROOT, &t);
    collect(&d, hand_list, &tree);
    return &tree;
}

static void hand_4x4(void **state)
{
    (void)state;
    struct tree *t = hand_tree("sepaddr", 0);
    kids_are(t, 5, 9, (int[]){7, 9, 10, 13, 15, 12, 2, 3, 0});

    t = hand_tree("storus", 0); /* one chain in torus order */
    int chain[] = {5, 7, 9, 10, 13, 15, 12, 2, 3, 0};
    for (int i = 0; i + 1 < HAND_N; i++)
        kids_are(t, chain[i], 1, &chain[i + 1]);
    kids_are(t, 0, 0, NULL);

    /* Halving [0,10): the root sends to index 5 (15), 3 (10), 2 (9), 1 (7); 15 heads [5,10)
     * and sends to 8 (3), 7 (2), 6 (12); 3 to 0; 10 to 13. */
    t = hand_tree("utorus", 0);
    kids_are(t, 5, 4, (int[]){15, 10, 9, 7});
    kids_are(t, 15, 3, (int[]){3, 2, 12});
    kids_are(t, 3, 1, (int[]){0});
    kids_are(t, 10, 1, (int[]){13});
    kids_are(t, 9, 0, NULL);

    /* Rings (rows, by dy): {5 7} {9 10} {13 15 12} {2 3 0}; the root sends to its ring's next
     * member and to every other ring's first. */
    t = hand_tree("mdtorus", 0);
    kids_are(t, 5, 4, (int[]){7, 9, 13, 2});
    kids_are(t, 9, 1, (int[]){10});
    kids_are(t, 13, 1, (int[]){15});
    kids_are(t, 15, 1, (int[]){12});
    kids_are(t, 2, 1, (int[]){3});
    kids_are(t, 3, 1, (int[]){0});

    /* Runs of 4: {5 7 9 10} {13 15 12 2} {3 0}; r defaults to the x extent, 4. */
    for (int param = 0; param <= 4; param += 4) {
        t = hand_tree("mutorus", param);
        kids_are(t, 5, 3, (int[]){7, 13, 3});
        kids_are(t, 7, 1, (int[]){9});
        kids_are(t, 9, 1, (int[]){10});
        kids_are(t, 10, 0, NULL);
        kids_are(t, 13, 1, (int[]){15});
        kids_are(t, 2, 0, NULL);
        kids_are(t, 3, 1, (int[]){0});
    }
    t = hand_tree("mutorus", 3); /* {5 7 9} {10 13 15} {12 2 3} {0} */
    kids_are(t, 5, 4, (int[]){7, 10, 12, 0});
    kids_are(t, 10, 1, (int[]){13});
    kids_are(t, 15, 0, NULL);
}

/* The whole 2x2x2 torus from rank 0: order 0..7 (x fastest). Md-torus, three phases: the
 * root to its ring (1), its plane's other ring head (2) and the other plane's head (4); 4 to
 * 5 and to its plane's other ring (6); 2 to 3, 6 to 7. */
static void hand_2x2x2(void **state)
{
    (void)state;
    static const int list[] = {0, 1, 2, 3, 4, 5, 6, 7};
    struct fake f = {3, {2, 2, 2}, list};
    struct fm_tree_topo topo = topo_of(&f);
    struct fm_tree_desc d = desc("mdtorus", 0, 8, 0, &topo);
    static struct tree t;
    collect(&d, list, &t);
    kids_are(&t, 0, 3, (int[]){1, 2, 4});
    kids_are(&t, 4, 2, (int[]){5, 6});
    kids_are(&t, 2, 1, (int[]){3});
    kids_are(&t, 6, 1, (int[]){7});
}

/* Without a torus each builder falls back to its order over the list from the root:
 * sepaddr is flat, storus and mdtorus the chain, mutorus runs of r, utorus halving. */
static void fallbacks(void **state)
{
    (void)state;
    static const int list[] = {0, 1, 2, 3, 4, 5, 6};
    static struct tree t, ref;
    const char *same[][2] = {{"sepaddr", "flat"}, {"storus", "chain"}, {"mdtorus", "chain"}};
    for (int root = 0; root < 7; root++) {
        for (int i = 0; i < 3; i++) {
            struct fm_tree_desc a = desc(same[i][0], 0, 7, root, NULL);
            struct fm_tree_desc b = desc(same[i][1], 0, 7, root, NULL);
            collect(&a, list, &t);
            collect(&b, list, &ref);
            for (int r = 0; r < 7; r++) {
                assert_int_equal(t.parent[r], ref.parent[r]);
                assert_int_equal(t.deg[r], ref.deg[r]);
                assert_memory_equal(t.kids[r], ref.kids[r], (size_t)t.deg[r] * sizeof(int));
            }
        }
        /* mutorus:3 from root: runs {root, +1, +2} {+3, +4, +5} {+6} */
        struct fm_tree_desc d = desc("mutorus", 3, 7, root, NULL);
        collect(&d, list, &t);
        kids_are(&t, root, 3, (int[]){(root + 1) % 7, (root + 3) % 7, (root + 6) % 7});
        kids_are(&t, (root + 4) % 7, 1, (int[]){(root + 5) % 7});
        /* utorus: the root sends to +4 (heads [4,7)), +2, +1 */
        d = desc("utorus", 0, 7, root, NULL);
        collect(&d, list, &t);
        kids_are(&t, root, 3, (int[]){(root + 4) % 7, (root + 2) % 7, (root + 1) % 7});
        kids_are(&t, (root + 4) % 7, 2, (int[]){(root + 6) % 7, (root + 5) % 7});
    }
    /* mutorus without a torus and without r: ceil(sqrt(7)) = 3, as above */
    struct fm_tree_desc d = desc("mutorus", 0, 7, 0, NULL), r;
    assert_int_equal(fm_tree_resolve(&d, &r), FM_OK);
    assert_int_equal(r.param, 3);
}

static unsigned long long rng = 88172645463325252ULL;
static int rnd(int below)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (int)(rng % (unsigned long long)below);
}

/* Relative position of rank b seen from rank a, the + way round, x fastest. */
static int rel_spot(const struct fake *f, int a, int b)
{
    int ca[3], cb[3], spot = 0;
    rank_coord(f, a, ca);
    rank_coord(f, b, cb);
    for (int ax = f->ndims - 1; ax >= 0; ax--)
        spot = spot * f->dims[ax] + (cb[ax] - ca[ax] + f->dims[ax]) % f->dims[ax];
    return spot;
}

static int same_ring(const struct fake *f, int a, int b)
{
    int ca[3], cb[3];
    rank_coord(f, a, ca);
    rank_coord(f, b, cb);
    return ca[1] == cb[1] && ca[2] == cb[2];
}

/* The tree's defining property, checked on coordinates rather than on the builder's order. */
static void property(const char *name, int param, const struct fake *f, int n, int root_rank,
                     const struct tree *t)
{
    int levels = 0;
    while ((1 << levels) < n)
        levels++;
    for (int p = 0; p < n; p++) {
        int me = f->list[p], parent = t->parent[me];
        if (me == root_rank)
            continue;
        if (!strcmp(name, "sepaddr")) {
            assert_int_equal(parent, root_rank);
        } else if (!strcmp(name, "storus")) {
            /* the parent is the member just before, going round from the root */
            int best = -1;
            for (int q = 0; q < n; q++) {
                int o = f->list[q], s = rel_spot(f, root_rank, o);
                if (s < rel_spot(f, root_rank, me) &&
                    (best < 0 || s > rel_spot(f, root_rank, best)))
                    best = o;
            }
            assert_int_equal(parent, best);
        } else if (!strcmp(name, "mdtorus") && f->ndims == 2) {
            /* ring members hang off their ring's member just before them; a ring's first
             * member off the root */
            if (parent != root_rank || !same_ring(f, me, root_rank)) {
                if (same_ring(f, me, parent))
                    assert_true(rel_spot(f, root_rank, parent) < rel_spot(f, root_rank, me));
                else
                    assert_int_equal(parent, root_rank);
            }
            if (parent == root_rank && !same_ring(f, me, root_rank))
                for (int q = 0; q < n; q++) /* no member of its ring comes before it */
                    assert_false(same_ring(f, f->list[q], me) &&
                                 rel_spot(f, root_rank, f->list[q]) < rel_spot(f, root_rank, me));
        } else if (!strcmp(name, "utorus")) {
            assert_true(t->depth[me] <= levels);
        } else if (!strcmp(name, "mutorus")) {
            assert_true(t->depth[me] <= param); /* at most a run's length from the root */
        }
    }
    if (!strcmp(name, "mutorus")) /* the root: its run's next member and every other run's */
        assert_int_equal(t->deg[root_rank], (param > 1 && n > 1) + (n + param - 1) / param - 1);
}

/* Random subsets of random torus shapes, random roots and list orders: every builder spans
 * the members once, its property holds, and the tree by rank does not depend on the list
 * order. */
static void random_subsets(void **state)
{
    (void)state;
    static const char *names[] = {"sepaddr", "utorus", "storus", "mdtorus", "mutorus"};
    static const int shapes[][4] = {{2, 4, 4, 1}, {2, 3, 5, 1}, {2, 8, 8, 1}, {3, 2, 2, 3},
                                    {1, 7, 1, 1}, {2, 2, 2, 1}, {3, 4, 4, 4}};
    static struct tree t, t2;
    for (int trial = 0; trial < 400; trial++) {
        const int *s = shapes[trial % 7];
        struct fake f = {s[0], {s[1], s[2], s[3]}, NULL};
        int spots = s[1] * s[2] * s[3], n = 1 + rnd(spots), pick[NMAX], list[NMAX], list2[NMAX];
        for (int i = 0; i < spots; i++)
            pick[i] = i;
        for (int i = 0; i < n; i++) { /* n distinct ranks, in random order */
            int j = i + rnd(spots - i), tmp = pick[i];
            pick[i] = pick[j];
            pick[j] = tmp;
            list[i] = list2[i] = pick[i];
        }
        for (int i = n - 1; i > 0; i--) { /* the same members in another order */
            int j = rnd(i + 1), tmp = list2[i];
            list2[i] = list2[j];
            list2[j] = tmp;
        }
        int root = rnd(n), root2 = 0;
        while (list2[root2] != list[root])
            root2++;
        for (int b = 0; b < 5; b++) {
            int param = !strcmp(names[b], "mutorus") ? 1 + rnd(6) : 0;
            f.list = list;
            struct fm_tree_topo topo = topo_of(&f);
            struct fm_tree_desc d = desc(names[b], param, n, root, &topo);
            collect(&d, list, &t);
            property(names[b], param, &f, n, list[root], &t);
            f.list = list2;
            struct fm_tree_topo topo2 = topo_of(&f);
            struct fm_tree_desc d2 = desc(names[b], param, n, root2, &topo2);
            collect(&d2, list2, &t2);
            for (int i = 0; i < n; i++) {
                int r = list[i];
                assert_int_equal(t.parent[r], t2.parent[r]);
                assert_int_equal(t.deg[r], t2.deg[r]);
                assert_memory_equal(t.kids[r], t2.kids[r], (size_t)t.deg[r] * sizeof(int));
            }
        }
    }
}

/* mutorus's parameter: 0 and any positive r are fine (r >= n: the chain), a negative one is
 * not; the names parse and the others take no parameter. */
static void parameters(void **state)
{
    (void)state;
    int b, p;
    char err[128];
    assert_int_equal(fm_tree_parse("mutorus:4", &b, &p, err, sizeof err), FM_OK);
    assert_int_equal(p, 4);
    assert_int_equal(fm_tree_parse("storus:2", &b, &p, err, sizeof err), FM_ERR_INVALID);
    struct fm_tree_desc d = desc("mutorus", -1, 5, 0, NULL);
    assert_int_equal(fm_tree_check(&d), FM_ERR_INVALID);
    static const int list[] = {0, 1, 2, 3, 4};
    static struct tree t;
    d = desc("mutorus", 9, 5, 2, NULL);
    collect(&d, list, &t);
    for (int r = 0; r < 4; r++) /* the chain 2 3 4 0 1 */
        kids_are(&t, (2 + r) % 5, 1, (int[]){(3 + r) % 5});
    int cand[32], nc = fm_tree_candidates(fm_tree_lookup("mutorus"), 16, cand, 32);
    assert_int_equal(nc, 7); /* 0 (the default), 2 3 4 6 8 12 below 16 */
    assert_int_equal(cand[0], 0);
    assert_int_equal(cand[6], 12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hand_4x4),       cmocka_unit_test(hand_2x2x2), cmocka_unit_test(fallbacks),
        cmocka_unit_test(random_subsets), cmocka_unit_test(parameters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
