/* SPDX-License-Identifier: BSD-3-Clause */
/* Topology-id prefix routing (runtime/mcast/prefix): ids from topology fields with and without
 * racks; tables checked cell by cell against a brute-force scan, for both choices; whole
 * multicasts played hop by hop from random roots over random sparse ids (every destination
 * reached once, no rank visited twice, at most m hops, the common prefix with every remaining
 * destination strictly growing); the destination-set encoding, its round trips and its
 * rejection of truncated, extended and corrupted input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fastmsg.h"
#include "prefix/prefix_route.h"

#define NMAX 300

static uint64_t rng_state;

static uint32_t rnd(uint32_t n) /* uniform enough in [0, n) for tests */
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)((rng_state >> 33) % n);
}

static int lcp(const uint8_t *ids, int m, int x, int y)
{
    int i = 0;
    while (i < m && ids[x * m + i] == ids[y * m + i])
        i++;
    return i;
}

/* ---- ids ---- */

/* 3 hosts holding 4, 1 and 3 ranks, ranks interleaved over hosts. */
static const int topo_host[8] = {0, 1, 2, 0, 2, 0, 2, 0};
static const int topo_local[8] = {0, 0, 0, 1, 1, 2, 2, 3};

static void check_host_prefixes(const uint8_t *ids, int m, int nranks, const int *host, int width)
{
    for (int x = 0; x < nranks; x++)
        for (int y = 0; y < nranks; y++) {
            if (x == y)
                continue;
            if (host[x] == host[y])
                assert_true(lcp(ids, m, x, y) >= width);
            else
                assert_true(lcp(ids, m, x, y) < width);
        }
}

static void ids_without_racks(void **state)
{
    (void)state;
    uint8_t ids[8 * FM_PREFIX_MAX_DIGITS];
    int m = 0, w[3] = {-1, -1, -1};
    /* Base 2: hosts 0..2 need 2 digits, local positions 0..3 need 2. */
    assert_int_equal(
        fm_prefix_ids_from_topo(8, topo_host, topo_local, NULL, 2, ids, sizeof ids, &m, w), FM_OK);
    assert_int_equal(m, 4);
    assert_int_equal(w[0], 0);
    assert_int_equal(w[1], 2);
    assert_int_equal(w[2], 2);
    const uint8_t r4[4] = {1, 0, 0, 1}; /* rank 4: host 2 = 10, local 1 = 01 */
    assert_memory_equal(ids + 4 * m, r4, 4);
    check_host_prefixes(ids, m, 8, topo_host, 2);

    /* Base 4: one digit each. */
    assert_int_equal(
        fm_prefix_ids_from_topo(8, topo_host, topo_local, NULL, 4, ids, sizeof ids, &m, w), FM_OK);
    assert_int_equal(m, 2);
    assert_int_equal(w[1], 1);
    assert_int_equal(w[2], 1);
    assert_int_equal(ids[7 * m], 0);
    assert_int_equal(ids[7 * m + 1], 3);
    check_host_prefixes(ids, m, 8, topo_host, 1);
}

static void ids_with_racks(void **state)
{
    (void)state;
    /* 5 hosts, 1 or 2 ranks each; racks {0, 0, 1, 1, 1}: positions in rack {0, 1, 0, 1, 2}. */
    const int host[8] = {0, 1, 2, 3, 4, 4, 2, 0};
    const int local[8] = {0, 0, 0, 0, 0, 1, 1, 1};
    const int rack[5] = {0, 0, 1, 1, 1};
    uint8_t ids[8 * FM_PREFIX_MAX_DIGITS];
    int m = 0, w[3];
    assert_int_equal(fm_prefix_ids_from_topo(8, host, local, rack, 2, ids, sizeof ids, &m, w),
                     FM_OK);
    assert_int_equal(w[0], 1); /* racks 0..1 */
    assert_int_equal(w[1], 2); /* positions in a rack 0..2 */
    assert_int_equal(w[2], 1); /* local 0..1 */
    assert_int_equal(m, 4);
    const uint8_t r5[4] = {1, 1, 0, 1}; /* host 4: rack 1, position 2 = 10; local 1 */
    assert_memory_equal(ids + 5 * m, r5, 4);
    for (int x = 0; x < 8; x++)
        for (int y = 0; y < 8; y++) {
            if (x == y)
                continue;
            int l = lcp(ids, m, x, y);
            if (host[x] == host[y])
                assert_true(l >= 3);
            else if (rack[host[x]] == rack[host[y]])
                assert_true(l >= 1 && l < 3);
            else
                assert_int_equal(l, 0);
        }
    /* The same rack indices written as raw fields give the same ids. */
    int values[8 * 3];
    const int pos[5] = {0, 1, 0, 1, 2};
    for (int r = 0; r < 8; r++) {
        values[r * 3] = rack[host[r]];
        values[r * 3 + 1] = pos[host[r]];
        values[r * 3 + 2] = local[r];
    }
    uint8_t raw[8 * FM_PREFIX_MAX_DIGITS];
    int m2 = 0;
    assert_int_equal(fm_prefix_ids_from_fields(8, 3, values, 2, raw, sizeof raw, &m2, NULL), FM_OK);
    assert_int_equal(m2, m);
    assert_memory_equal(raw, ids, (size_t)8 * m);
}

static void ids_errors(void **state)
{
    (void)state;
    uint8_t ids[8 * FM_PREFIX_MAX_DIGITS];
    int m = -1, w[3];
    const int *h = topo_host, *l = topo_local;
    assert_int_equal(fm_prefix_ids_from_topo(8, h, l, NULL, 1, ids, sizeof ids, &m, w),
                     FM_ERR_INVALID);
    assert_int_equal(fm_prefix_ids_from_topo(8, h, l, NULL, 257, ids, sizeof ids, &m, w),
                     FM_ERR_INVALID);
    assert_int_equal(fm_prefix_ids_from_topo(0, h, l, NULL, 2, ids, sizeof ids, &m, w),
                     FM_ERR_INVALID);
    assert_int_equal(fm_prefix_ids_from_topo(8, NULL, l, NULL, 2, ids, sizeof ids, &m, w),
                     FM_ERR_INVALID);
    assert_int_equal(fm_prefix_ids_from_topo(8, h, l, NULL, 2, ids, sizeof ids, NULL, w),
                     FM_ERR_INVALID);
    const int neg[2] = {0, -1}, zero[2] = {0, 0}, one[2] = {0, 1};
    assert_int_equal(fm_prefix_ids_from_topo(2, neg, zero, NULL, 2, ids, sizeof ids, &m, w),
                     FM_ERR_INVALID);
    /* Two ranks at the same host and position. */
    assert_int_equal(fm_prefix_ids_from_topo(2, zero, zero, NULL, 2, ids, sizeof ids, &m, w),
                     FM_ERR_INVALID);
    const int bad_rack[1] = {-1};
    assert_int_equal(fm_prefix_ids_from_topo(2, zero, one, bad_rack, 2, ids, sizeof ids, &m, w),
                     FM_ERR_INVALID);
    /* Too small a buffer: m is reported so the caller can size it. */
    m = -1;
    assert_int_equal(fm_prefix_ids_from_topo(8, h, l, NULL, 2, ids, 31, &m, w), FM_ERR_TOO_LONG);
    assert_int_equal(m, 4);
    assert_int_equal(fm_prefix_ids_from_topo(8, h, l, NULL, 2, NULL, 0, &m, w), FM_ERR_TOO_LONG);
    assert_int_equal(fm_prefix_ids_from_topo(8, h, l, NULL, 2, ids, 32, &m, w), FM_OK);
    /* More digits than FM_PREFIX_MAX_DIGITS: 31 binary digits for the host, 1 for local, 1 for
     * a second field. */
    const int big[3] = {0x7fffffff, 1, 1};
    assert_int_equal(fm_prefix_ids_from_fields(1, 3, big, 2, ids, sizeof ids, &m, NULL),
                     FM_ERR_TOO_LONG);
    assert_int_equal(m, 33);
    assert_int_equal(fm_prefix_ids_from_fields(1, 2, big, 2, ids, sizeof ids, &m, NULL), FM_OK);
    assert_int_equal(m, 32);
    /* One rank: every field constant, one zero digit. */
    assert_int_equal(fm_prefix_ids_from_topo(1, zero, zero, NULL, 2, ids, sizeof ids, &m, w),
                     FM_OK);
    assert_int_equal(m, 1);
    assert_int_equal(ids[0], 0);

    /* Raw ids. */
    const uint8_t raw[6] = {0, 1, 1, 1, 1, 1};
    assert_int_equal(fm_prefix_ids_check(raw, 3, 2, 2), FM_ERR_INVALID); /* 11 twice */
    assert_int_equal(fm_prefix_ids_check(raw, 2, 2, 2), FM_OK);
    assert_int_equal(fm_prefix_ids_check(raw, 2, 3, 2), FM_OK); /* 011, 111 */
    const uint8_t raw3[6] = {1, 0, 1, 1, 0, 1};
    assert_int_equal(fm_prefix_ids_check(raw3, 2, 3, 2), FM_ERR_INVALID); /* 101 twice */
    const uint8_t digit[4] = {0, 1, 2, 0};
    assert_int_equal(fm_prefix_ids_check(digit, 2, 2, 2), FM_ERR_INVALID); /* digit 2, base 2 */
    assert_int_equal(fm_prefix_ids_check(digit, 2, 2, 3), FM_OK);
    assert_int_equal(fm_prefix_ids_check(raw, 2, 33, 2), FM_ERR_INVALID);
    assert_int_equal(fm_prefix_ids_check(NULL, 2, 2, 2), FM_ERR_INVALID);
}

/* ---- tables ---- */

/* nranks distinct random ids of m digits in base b, from a space of b^m >= nranks ids. */
static void random_ids(uint8_t *ids, int nranks, int m, int b)
{
    for (int r = 0; r < nranks; r++) {
        int fresh;
        do {
            for (int i = 0; i < m; i++)
                ids[r * m + i] = (uint8_t)rnd((uint32_t)b);
            fresh = 1;
            for (int q = 0; q < r && fresh; q++)
                fresh = memcmp(ids + q * m, ids + r * m, (size_t)m) != 0;
        } while (!fresh);
    }
}

/* Least m with b^m >= 2 * nranks: the id space is at least half empty, so tables have holes. */
static int sparse_digits(int nranks, int b)
{
    int m = 1;
    for (long long space = b; space < 2LL * nranks; space *= b)
        m++;
    return m;
}

/* The brute-force nearest: longest common prefix with self after position i, lowest rank. */
static int brute_nearest(const uint8_t *ids, int nranks, int m, int self, int i, int j)
{
    int best = -1, best_tail = -1;
    for (int r = 0; r < nranks; r++) {
        if (lcp(ids, m, self, r) != i || ids[r * m + i] != j)
            continue;
        int tail = 0;
        while (i + 1 + tail < m && ids[r * m + i + 1 + tail] == ids[self * m + i + 1 + tail])
            tail++;
        if (tail > best_tail) {
            best = r;
            best_tail = tail;
        }
    }
    return best;
}

/* Every cell against its definition, by scanning every rank. */
static void check_table(const uint8_t *ids, int nranks, int m, int b, int self, int choice,
                        const int *t)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < b; j++) {
            int e = t[i * b + j];
            if (j == ids[self * m + i]) {
                assert_int_equal(e, self);
                continue;
            }
            int candidates = 0;
            for (int r = 0; r < nranks; r++) {
                int ok = r != self;
                for (int k = 0; ok && k < i; k++)
                    ok = ids[r * m + k] == ids[self * m + k];
                candidates += ok && ids[r * m + i] == j;
            }
            if (!candidates) {
                assert_int_equal(e, FM_PREFIX_HOLE);
                continue;
            }
            assert_in_range(e, 0, nranks - 1);
            assert_int_not_equal(e, self);
            for (int k = 0; k < i; k++)
                assert_int_equal(ids[e * m + k], ids[self * m + k]);
            assert_int_equal(ids[e * m + i], j);
            if (choice == FM_PREFIX_NEAREST)
                assert_int_equal(e, brute_nearest(ids, nranks, m, self, i, j));
        }
}

static void table_definition(void **state)
{
    (void)state;
    static const int bases[3] = {2, 4, 16};
    static uint8_t ids[NMAX * FM_PREFIX_MAX_DIGITS];
    static int t[FM_PREFIX_MAX_DIGITS * 16];
    for (int seed = 1; seed <= 4; seed++)
        for (int bi = 0; bi < 3; bi++) {
            rng_state = (uint64_t)seed * 1000 + (uint64_t)bi;
            int b = bases[bi], nranks = 2 + (int)rnd(120), m = sparse_digits(nranks, b) + 1;
            random_ids(ids, nranks, m, b);
            assert_int_equal(fm_prefix_ids_check(ids, nranks, m, b), FM_OK);
            int holes = 0;
            for (int self = 0; self < nranks; self++)
                for (int choice = FM_PREFIX_RANDOM; choice <= FM_PREFIX_NEAREST; choice++) {
                    assert_int_equal(
                        fm_prefix_table_build(ids, nranks, m, b, self, choice, (uint64_t)seed, t),
                        FM_OK);
                    check_table(ids, nranks, m, b, self, choice, t);
                    for (int c = 0; c < m * b; c++)
                        holes += t[c] == FM_PREFIX_HOLE;
                }
            assert_true(holes > 0); /* sparse ids: the hole path was exercised */
        }
}

/* A hand-made example: nearest picks the mirror position, then the lowest rank. */
static void table_nearest_example(void **state)
{
    (void)state;
    /* base 4, m 2: rank -> id: 0:00 1:01 2:02 3:10 4:11 5:12 6:31 7:33 */
    const uint8_t ids[16] = {0, 0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 2, 3, 1, 3, 3};
    int t[8];
    assert_int_equal(fm_prefix_table_build(ids, 8, 2, 4, 1, FM_PREFIX_NEAREST, 0, t), FM_OK);
    const int want[8] = {1, 4, FM_PREFIX_HOLE, 6, 0, 1, 2, FM_PREFIX_HOLE};
    assert_memory_equal(t, want, sizeof want);
    /* Rank 2 (02): 12 (rank 5) mirrors it under 1; nothing mirrors it under 3 (31, 33), so
     * the lower rank, 6. */
    assert_int_equal(fm_prefix_table_build(ids, 8, 2, 4, 2, FM_PREFIX_NEAREST, 0, t), FM_OK);
    assert_int_equal(t[1], 5);
    assert_int_equal(t[3], 6);
}

/* Random choice: deterministic per seed, and every candidate of a cell wins for some seed. */
static void table_random_spread(void **state)
{
    (void)state;
    const uint8_t ids[16] = {0, 0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 2, 3, 1, 3, 3};
    int t[8], t2[8], won[8] = {0};
    for (uint64_t seed = 0; seed < 200; seed++) {
        assert_int_equal(fm_prefix_table_build(ids, 8, 2, 4, 0, FM_PREFIX_RANDOM, seed, t), FM_OK);
        assert_int_equal(fm_prefix_table_build(ids, 8, 2, 4, 0, FM_PREFIX_RANDOM, seed, t2), FM_OK);
        assert_memory_equal(t, t2, sizeof t);
        won[t[1]]++; /* cell (0, 1): ranks 3, 4, 5 */
    }
    for (int r = 3; r <= 5; r++)
        assert_true(won[r] > 30);
    assert_int_equal(won[3] + won[4] + won[5], 200);
}

static void table_errors(void **state)
{
    (void)state;
    const uint8_t ids[6] = {0, 1, 1, 0, 0, 1}; /* ranks 0 and 2 share an id */
    int t[4];
    assert_int_equal(fm_prefix_table_build(ids, 3, 2, 2, 0, FM_PREFIX_RANDOM, 0, t),
                     FM_ERR_INVALID);
    assert_int_equal(fm_prefix_table_build(ids, 2, 2, 2, 0, FM_PREFIX_RANDOM, 0, t), FM_OK);
    assert_int_equal(fm_prefix_table_build(ids, 2, 2, 2, 2, FM_PREFIX_RANDOM, 0, t), FM_ERR_RANK);
    assert_int_equal(fm_prefix_table_build(ids, 2, 2, 2, -1, FM_PREFIX_RANDOM, 0, t), FM_ERR_RANK);
    assert_int_equal(fm_prefix_table_build(ids, 2, 2, 2, 0, 7, 0, t), FM_ERR_INVALID);
    assert_int_equal(fm_prefix_table_build(ids, 2, 2, 1, 0, FM_PREFIX_RANDOM, 0, t),
                     FM_ERR_INVALID);
    assert_int_equal(fm_prefix_table_build(ids, 2, 0, 2, 0, FM_PREFIX_RANDOM, 0, t),
                     FM_ERR_INVALID);
    assert_int_equal(fm_prefix_table_build(NULL, 2, 2, 2, 0, FM_PREFIX_RANDOM, 0, t),
                     FM_ERR_INVALID);
    assert_int_equal(fm_prefix_table_build(ids, 2, 2, 2, 0, FM_PREFIX_RANDOM, 0, NULL),
                     FM_ERR_INVALID);
    const uint8_t big[4] = {0, 1, 0, 2}; /* digit 2 in base 2 */
    assert_int_equal(fm_prefix_table_build(big, 2, 2, 2, 0, FM_PREFIX_RANDOM, 0, t),
                     FM_ERR_INVALID);
}

/* ---- split and whole multicasts ---- */

struct sim {
    const uint8_t *ids;
    int nranks, m, b;
    const int *tables; /* nranks tables of m * b */
    int visited[NMAX], delivered[NMAX], is_dest[NMAX];
    int max_hops, relays; /* over every multicast: the deepest route, ranks that only relay */
};

/* Rank x, reached after `hops` hops from parent (-1 for the root), must cover dests[0..n). */
static void visit(struct sim *s, int parent, int x, const int *dests, int n, int hops)
{
    assert_int_equal(s->visited[x], 0); /* no rank twice: the routes form a tree */
    s->visited[x] = 1;
    assert_true(hops <= s->m);
    if (hops > s->max_hops)
        s->max_hops = hops;
    s->relays += !s->is_dest[x] && parent >= 0;
    int *rest = malloc((size_t)(n ? n : 1) * sizeof *rest), nrest = 0;
    assert_non_null(rest);
    for (int k = 0; k < n; k++) {
        if (parent >= 0) /* every hop lengthens the common prefix with every destination */
            assert_true(lcp(s->ids, s->m, x, dests[k]) > lcp(s->ids, s->m, parent, dests[k]));
        if (dests[k] == x)
            s->delivered[x]++;
        else
            rest[nrest++] = dests[k];
    }
    int *order = malloc((size_t)(nrest ? nrest : 1) * sizeof *order);
    struct fm_prefix_hop *hops_out = malloc((size_t)(nrest ? nrest : 1) * sizeof *hops_out);
    void *scratch = malloc(fm_prefix_split_scratch_size(nrest, s->m, s->b));
    assert_true(order && hops_out && scratch);
    const int *t = s->tables + (size_t)x * s->m * s->b;
    int nh = fm_prefix_split(s->ids, s->nranks, s->m, s->b, x, t, rest, nrest, order, hops_out,
                             nrest, scratch);
    assert_true(nh >= 0 && nh <= nrest && nh <= s->m * (s->b - 1));
    int covered = 0;
    for (int h = 0; h < nh; h++) {
        struct fm_prefix_hop hp = hops_out[h];
        assert_int_equal(hp.offset, covered);
        assert_true(hp.count >= 1);
        assert_int_equal(hp.next, t[hp.level * s->b + hp.digit]);
        if (h > 0) /* groups in (level, digit) order */
            assert_true(hops_out[h - 1].level * s->b + hops_out[h - 1].digit <
                        hp.level * s->b + hp.digit);
        for (int k = hp.offset; k < hp.offset + hp.count; k++) {
            assert_int_equal(lcp(s->ids, s->m, x, order[k]), hp.level);
            assert_int_equal(s->ids[order[k] * s->m + hp.level], hp.digit);
            if (k > hp.offset)
                assert_true(order[k - 1] < order[k]);
        }
        covered += hp.count;
    }
    assert_int_equal(covered, nrest);
    free(rest);
    free(scratch);
    for (int h = 0; h < nh; h++)
        visit(s, x, hops_out[h].next, order + hops_out[h].offset, hops_out[h].count, hops + 1);
    free(order);
    free(hops_out);
}

static void multicast_once(struct sim *s, int root, const int *dests, int n)
{
    memset(s->visited, 0, sizeof s->visited);
    memset(s->delivered, 0, sizeof s->delivered);
    memset(s->is_dest, 0, sizeof s->is_dest);
    for (int k = 0; k < n; k++)
        s->is_dest[dests[k]] = 1;
    visit(s, -1, root, dests, n, 0);
    for (int r = 0; r < s->nranks; r++)
        assert_int_equal(s->delivered[r], s->is_dest[r]);
}

/* n distinct ranks other than root, into dests. */
static int random_dests(int nranks, int root, int *dests)
{
    int perm[NMAX], n = 0;
    for (int r = 0; r < nranks; r++)
        if (r != root)
            perm[n++] = r;
    for (int k = n - 1; k > 0; k--) {
        int j = (int)rnd((uint32_t)k + 1), tmp = perm[k];
        perm[k] = perm[j];
        perm[j] = tmp;
    }
    int want = (int)rnd(4) == 0 ? n : 1 + (int)rnd((uint32_t)n); /* sometimes everyone */
    memcpy(dests, perm, (size_t)want * sizeof *dests);
    return want;
}

static struct sim s;

static void simulate(const uint8_t *ids, int nranks, int m, int b, int choice, int trials)
{
    static int tables[NMAX * FM_PREFIX_MAX_DIGITS * 16];
    int max_hops = s.max_hops, relays = s.relays;
    assert_true(nranks <= NMAX && m * b <= FM_PREFIX_MAX_DIGITS * 16);
    for (int r = 0; r < nranks; r++)
        assert_int_equal(
            fm_prefix_table_build(ids, nranks, m, b, r, choice, 42, tables + (size_t)r * m * b),
            FM_OK);
    s = (struct sim){.ids = ids,
                     .nranks = nranks,
                     .m = m,
                     .b = b,
                     .tables = tables,
                     .max_hops = max_hops,
                     .relays = relays};
    int dests[NMAX];
    for (int trial = 0; trial < trials; trial++) {
        int root = (int)rnd((uint32_t)nranks);
        int n = random_dests(nranks, root, dests);
        multicast_once(&s, root, dests, n);
    }
}

static void multicast_random_ids(void **state)
{
    (void)state;
    s.max_hops = s.relays = 0;
    static const int bases[3] = {2, 4, 16};
    static uint8_t ids[NMAX * FM_PREFIX_MAX_DIGITS];
    for (int seed = 1; seed <= 5; seed++)
        for (int bi = 0; bi < 3; bi++) {
            rng_state = (uint64_t)seed * 7919 + (uint64_t)bi;
            int b = bases[bi];
            int nranks = seed == 5 ? NMAX : 2 + (int)rnd(NMAX - 1);
            int m = sparse_digits(nranks, b) + (int)rnd(2);
            random_ids(ids, nranks, m, b);
            for (int choice = FM_PREFIX_RANDOM; choice <= FM_PREFIX_NEAREST; choice++)
                simulate(ids, nranks, m, b, choice, 40);
        }
    /* The runs went deep and through ranks that are not destinations ("virtual masters"). */
    assert_true(s.max_hops >= 4);
    assert_true(s.relays > 0);
}

/* Ids from a topology (racks of hosts of ranks), full and with ranks missing. */
static void multicast_topo_ids(void **state)
{
    (void)state;
    static uint8_t ids[NMAX * FM_PREFIX_MAX_DIGITS];
    static int host[NMAX], local[NMAX], rack[NMAX];
    rng_state = 99;
    for (int b = 2; b <= 16; b *= 2) {
        int nranks = 0, nhosts = 37;
        for (int h = 0; h < nhosts; h++) {
            rack[h] = h / 5;
            int per = 1 + (int)rnd(8);
            for (int k = 0; k < per && nranks < NMAX; k++) {
                host[nranks] = h;
                local[nranks++] = k;
            }
        }
        int m = 0, w[3];
        assert_int_equal(
            fm_prefix_ids_from_topo(nranks, host, local, rack, b, ids, sizeof ids, &m, w), FM_OK);
        simulate(ids, nranks, m, b, FM_PREFIX_NEAREST, 30);
        simulate(ids, nranks, m, b, FM_PREFIX_RANDOM, 30);
        assert_int_equal(
            fm_prefix_ids_from_topo(nranks, host, local, NULL, b, ids, sizeof ids, &m, w), FM_OK);
        simulate(ids, nranks, m, b, FM_PREFIX_RANDOM, 30);
    }
}

/* ---- routed multicasts: each rank knows only the members and who sent it the message ---- */

struct rsim {
    const uint8_t *ids;
    int nranks, m, b, choice;
    const int *tables;
    const int *members;
    int n;
    int got[NMAX], member[NMAX];
    int max_hops;
};

/* Rank x got the multicast from src (-1: x is the root) after `hops` hops; returns how many ranks
 * its subtree reached, x included. */
static int route_visit(struct rsim *r, int x, int src, int hops)
{
    assert_true(r->member[x]); /* relays are members: no rank gets what it did not ask for */
    assert_int_equal(r->got[x]++, 0);
    assert_true(hops <= r->m);
    if (hops > r->max_hops)
        r->max_hops = hops;
    int kids[NMAX], reached = 1, prev = NMAX + 1;
    void *scratch = malloc(fm_prefix_route_scratch_size(r->n, r->m, r->b));
    assert_non_null(scratch);
    const int *t = r->tables + (size_t)x * r->m * r->b;
    int nk = fm_prefix_route(r->ids, r->nranks, r->m, r->b, t, x, r->choice, 42, r->members, r->n,
                             src, kids, scratch);
    free(scratch);
    assert_true(nk >= 0 && nk <= r->n);
    int floor = src < 0 ? 0 : lcp(r->ids, r->m, x, src) + 1;
    for (int i = 0; i < nk; i++) {
        int k = kids[i], l = lcp(r->ids, r->m, x, k);
        assert_true(l >= floor && l < r->m); /* deeper into x's own prefix at every hop */
        int entry = t[l * r->b + r->ids[k * r->m + l]];
        if (r->member[entry]) /* the table's entry whenever it is a member of that group */
            assert_int_equal(k, entry);
        int size = route_visit(r, k, x, hops + 1);
        assert_true(size <= prev); /* largest subtree first */
        prev = size;
        reached += size;
    }
    return reached;
}

static void route_once(struct rsim *r, int root, const int *dests, int nd)
{
    int members[NMAX];
    memset(r->got, 0, sizeof r->got);
    memset(r->member, 0, sizeof r->member);
    members[0] = root;
    memcpy(members + 1, dests, (size_t)nd * sizeof *dests);
    for (int i = 0; i <= nd; i++)
        r->member[members[i]] = 1;
    r->members = members;
    r->n = nd + 1;
    assert_int_equal(route_visit(r, root, -1, 0), nd + 1);
    for (int q = 0; q < r->nranks; q++) /* every member exactly once, nobody else */
        assert_int_equal(r->got[q], r->member[q]);
}

static void route_random_sets(void **state)
{
    (void)state;
    static uint8_t ids[NMAX * FM_PREFIX_MAX_DIGITS];
    static int tables[NMAX * FM_PREFIX_MAX_DIGITS * 16];
    static const int bases[3] = {2, 4, 16};
    int deepest = 0;
    for (int seed = 1; seed <= 4; seed++)
        for (int bi = 0; bi < 3; bi++) {
            rng_state = (uint64_t)seed * 104729 + (uint64_t)bi;
            int b = bases[bi], nranks = seed == 4 ? NMAX : 2 + (int)rnd(NMAX - 1);
            int m = sparse_digits(nranks, b) + (int)rnd(2);
            random_ids(ids, nranks, m, b);
            for (int choice = FM_PREFIX_RANDOM; choice <= FM_PREFIX_NEAREST; choice++) {
                for (int q = 0; q < nranks; q++)
                    assert_int_equal(fm_prefix_table_build(ids, nranks, m, b, q, choice, 42,
                                                           tables + (size_t)q * m * b),
                                     FM_OK);
                struct rsim r = {.ids = ids,
                                 .nranks = nranks,
                                 .m = m,
                                 .b = b,
                                 .choice = choice,
                                 .tables = tables};
                int dests[NMAX];
                for (int trial = 0; trial < 40; trial++) {
                    int root = (int)rnd((uint32_t)nranks);
                    route_once(&r, root, dests, random_dests(nranks, root, dests));
                }
                deepest = r.max_hops > deepest ? r.max_hops : deepest;
            }
        }
    assert_true(deepest >= 3); /* the runs went several hops deep */
}

/* Bad arguments, a sender outside the members, a table from other ids. */
static void route_errors(void **state)
{
    (void)state;
    const uint8_t ids[8] = {0, 0, 0, 1, 1, 0, 1, 1}; /* 4 ranks, 2 binary digits */
    int t[4], kids[4], members[3] = {0, 1, 3};
    char scratch[1024];
    assert_true(fm_prefix_route_scratch_size(3, 2, 2) <= sizeof scratch);
    assert_int_equal(fm_prefix_table_build(ids, 4, 2, 2, 1, FM_PREFIX_NEAREST, 0, t), FM_OK);
    /* rank 1 (01) got it from 0 (00, level 1): nothing deeper to cover */
    assert_int_equal(fm_prefix_route(ids, 4, 2, 2, t, 1, 1, 0, members, 3, 0, kids, scratch), 0);
    /* rank 1 as the root: 0 at level 1, then the group {3} at level 0 (its table has 2 there,
     * which is not a member: 3 takes its place) */
    int nk = fm_prefix_route(ids, 4, 2, 2, t, 1, 1, 0, members, 3, -1, kids, scratch);
    assert_int_equal(nk, 2);
    assert_true((kids[0] == 0 && kids[1] == 3) || (kids[0] == 3 && kids[1] == 0));
    assert_int_equal(fm_prefix_route(ids, 4, 2, 2, t, 1, 1, 0, members, 3, 2, kids, scratch),
                     FM_ERR_INVALID); /* 2 sent it but is no member */
    assert_int_equal(fm_prefix_route(ids, 4, 2, 2, t, 1, 1, 0, members, 3, 1, kids, scratch),
                     FM_ERR_RANK); /* from itself */
    assert_int_equal(fm_prefix_route(ids, 4, 2, 2, t, 1, 7, 0, members, 3, -1, kids, scratch),
                     FM_ERR_INVALID); /* unknown choice */
    assert_int_equal(fm_prefix_route(ids, 4, 2, 2, NULL, 1, 1, 0, members, 3, -1, kids, scratch),
                     FM_ERR_INVALID);
    int bad[2] = {1, 9};
    assert_int_equal(fm_prefix_route(ids, 4, 2, 2, t, 1, 1, 0, bad, 2, -1, kids, scratch),
                     FM_ERR_RANK);
    int other[4];
    assert_int_equal(fm_prefix_table_build(ids, 4, 2, 2, 2, FM_PREFIX_NEAREST, 0, other), FM_OK);
    assert_int_equal(fm_prefix_route(ids, 4, 2, 2, other, 1, 1, 0, members, 3, -1, kids, scratch),
                     FM_ERR_INTERNAL); /* rank 2's table used by rank 1 */
}

/* The paper's figure: 8 ids of 3 binary digits, 001 sends to {010, 100, 101}. */
/* ---- the whole tree ---- */

/* A tree from root against its definition, by brute force over every rank: every route ends at
 * the root within m hops with the common prefix growing towards its rank at every hop; a
 * member reached over a hop of level l (root: -1) has, for each cell (i, j) with i > l that
 * holds any rank, exactly one child there, the nearest of that cell (brute_nearest), and its
 * children come largest subtree first, then in cell order. */
static int subtree(const int *parent, int nranks, int x)
{
    int size = 1;
    for (int c = 0; c < nranks; c++)
        if (parent[c] == x)
            size += subtree(parent, nranks, c);
    return size;
}

static void check_tree(const uint8_t *ids, int nranks, int m, int b, int root, const int *parent,
                       const int *slot)
{
    assert_int_equal(parent[root], -1);
    for (int r = 0; r < nranks; r++) {
        int hops = 0;
        for (int y = r; y != root; y = parent[y]) {
            assert_true(parent[y] >= 0 && parent[y] < nranks);
            assert_true(lcp(ids, m, parent[y], r) < lcp(ids, m, y, r));
            assert_true(++hops <= m);
        }
    }
    for (int x = 0; x < nranks; x++) {
        int reached = x == root ? -1 : lcp(ids, m, parent[x], x);
        int kids = 0, order[64], size[64];
        for (int i = reached + 1; i < m; i++)
            for (int j = 0; j < b; j++) {
                if (j == ids[x * m + i])
                    continue;
                int want = brute_nearest(ids, nranks, m, x, i, j), got = -1;
                for (int c = 0; c < nranks; c++)
                    if (parent[c] == x && lcp(ids, m, x, c) == i && ids[c * m + i] == j) {
                        assert_int_equal(got, -1); /* one child per cell */
                        got = c;
                    }
                assert_int_equal(got, want);
                if (got < 0)
                    continue;
                assert_true(kids < 64 && slot[got] >= 0 && slot[got] < 64);
                order[kids] = slot[got];
                size[kids++] = subtree(parent, nranks, got);
            }
        int all = 0;
        for (int c = 0; c < nranks; c++)
            all += parent[c] == x;
        assert_int_equal(all, kids); /* no child outside those cells */
        /* kids are in cell order here: slot a before slot b iff larger, or as large and first */
        for (int a = 0; a < kids; a++)
            for (int c = a + 1; c < kids; c++)
                assert_true((order[a] < order[c]) == (size[a] >= size[c]));
    }
}

static void tree_random_ids(void **state)
{
    (void)state;
    static const int bases[] = {2, 4, 16};
    rng_state = 7;
    for (size_t bi = 0; bi < sizeof bases / sizeof bases[0]; bi++)
        for (int nranks = 1; nranks <= 120; nranks += 17) {
            int b = bases[bi], m = sparse_digits(nranks, b);
            uint8_t *ids = malloc((size_t)nranks * (size_t)m);
            int *parent = malloc(sizeof(int) * (size_t)nranks);
            int *slot = malloc(sizeof(int) * (size_t)nranks);
            void *scratch = malloc(fm_prefix_tree_scratch_size(nranks, m, b));
            assert_non_null(ids && parent && slot && scratch);
            random_ids(ids, nranks, m, b);
            for (int root = 0; root < nranks; root += 1 + nranks / 7) {
                assert_int_equal(fm_prefix_tree(ids, nranks, m, b, root, FM_PREFIX_NEAREST, 0,
                                                parent, slot, scratch),
                                 FM_OK);
                check_tree(ids, nranks, m, b, root, parent, slot);
            }
            free(ids);
            free(parent);
            free(slot);
            free(scratch);
        }
}

static void tree_errors(void **state)
{
    (void)state;
    uint8_t ids[6] = {0, 1, 1, 0, 0, 1}; /* 3 ranks, 2 digits, base 2; rank 2 repeats rank 0 */
    int parent[3], slot[3];
    char scratch[256];
    assert_true(fm_prefix_tree_scratch_size(3, 2, 2) <= sizeof scratch);
    assert_int_equal(fm_prefix_tree(ids, 3, 2, 2, 0, FM_PREFIX_NEAREST, 0, parent, slot, scratch),
                     FM_ERR_INVALID);
    ids[4] = 1;
    ids[5] = 0; /* rank 2 = 10 repeats rank 1 */
    assert_int_equal(fm_prefix_tree(ids, 3, 2, 2, 0, FM_PREFIX_NEAREST, 0, parent, slot, scratch),
                     FM_ERR_INVALID);
    ids[5] = 1; /* 01, 10, 11 */
    assert_int_equal(fm_prefix_tree(ids, 3, 2, 2, 0, FM_PREFIX_NEAREST, 0, parent, slot, scratch),
                     FM_OK);
    check_tree(ids, 3, 2, 2, 0, parent, slot);
    assert_int_equal(fm_prefix_tree(ids, 3, 2, 2, 3, FM_PREFIX_NEAREST, 0, parent, slot, scratch),
                     FM_ERR_RANK);
    assert_int_equal(fm_prefix_tree(ids, 3, 2, 2, 0, 9, 0, parent, slot, scratch), FM_ERR_INVALID);
    assert_int_equal(fm_prefix_tree(ids, 3, 2, 2, 0, FM_PREFIX_NEAREST, 0, NULL, slot, scratch),
                     FM_ERR_INVALID);
    ids[1] = 2; /* a digit not below the base */
    assert_int_equal(fm_prefix_tree(ids, 3, 2, 2, 0, FM_PREFIX_NEAREST, 0, parent, slot, scratch),
                     FM_ERR_INVALID);
    assert_int_equal(fm_prefix_tree_scratch_size(0, 2, 2), 0);
}

static void split_paper_example(void **state)
{
    (void)state;
    uint8_t ids[24];
    for (int r = 0; r < 8; r++)
        for (int i = 0; i < 3; i++)
            ids[r * 3 + i] = (uint8_t)((r >> (2 - i)) & 1);
    int t[6], order[3];
    struct fm_prefix_hop hops[3];
    int scratch[32];
    assert_true(fm_prefix_split_scratch_size(3, 3, 2) <= sizeof scratch);
    assert_int_equal(fm_prefix_table_build(ids, 8, 3, 2, 1, FM_PREFIX_NEAREST, 0, t), FM_OK);
    /* Row 0 column 1: 101 shares "01" after the first digit. Row 1 column 1: 011. */
    assert_int_equal(t[1], 5);
    assert_int_equal(t[3], 3);
    assert_int_equal(t[4], 0);
    const int dests[3] = {5, 4, 2};
    assert_int_equal(fm_prefix_split(ids, 8, 3, 2, 1, t, dests, 3, order, hops, 3, scratch), 2);
    assert_int_equal(hops[0].next, 5); /* level 0: {100, 101} through 101, itself a target */
    assert_int_equal(hops[0].level, 0);
    assert_int_equal(hops[0].count, 2);
    assert_int_equal(order[0], 4);
    assert_int_equal(order[1], 5);
    assert_int_equal(hops[1].next, 3); /* level 1: {010} through 011 */
    assert_int_equal(hops[1].count, 1);
    assert_int_equal(order[2], 2);
}

static void split_errors(void **state)
{
    (void)state;
    uint8_t ids[24];
    for (int r = 0; r < 8; r++)
        for (int i = 0; i < 3; i++)
            ids[r * 3 + i] = (uint8_t)((r >> (2 - i)) & 1);
    int t[6], order[4], scratch[64];
    struct fm_prefix_hop hops[4];
    assert_int_equal(fm_prefix_table_build(ids, 8, 3, 2, 0, FM_PREFIX_RANDOM, 3, t), FM_OK);
    const int dup[3] = {4, 6, 4}, self[2] = {3, 0}, out[2] = {3, 8}, neg[1] = {-1};
    assert_int_equal(fm_prefix_split(ids, 8, 3, 2, 0, t, dup, 3, order, hops, 4, scratch),
                     FM_ERR_DUPLICATE);
    assert_int_equal(fm_prefix_split(ids, 8, 3, 2, 0, t, self, 2, order, hops, 4, scratch),
                     FM_ERR_SELF);
    assert_int_equal(fm_prefix_split(ids, 8, 3, 2, 0, t, out, 2, order, hops, 4, scratch),
                     FM_ERR_RANK);
    assert_int_equal(fm_prefix_split(ids, 8, 3, 2, 0, t, neg, 1, order, hops, 4, scratch),
                     FM_ERR_RANK);
    assert_int_equal(fm_prefix_split(ids, 8, 3, 2, 8, t, neg, 1, order, hops, 4, scratch),
                     FM_ERR_RANK);
    assert_int_equal(fm_prefix_split(ids, 8, 3, 2, 0, t, NULL, 1, order, hops, 4, scratch),
                     FM_ERR_INVALID);
    assert_int_equal(fm_prefix_split(ids, 8, 3, 2, 0, t, dup, 1, order, NULL, 4, scratch),
                     FM_ERR_INVALID);
    assert_int_equal(fm_prefix_split(ids, 8, 3, 2, 0, t, dup, 1, order, hops, 4, NULL),
                     FM_ERR_INVALID);
    assert_int_equal(fm_prefix_split(ids, 8, 3, 2, 0, t, NULL, 0, NULL, NULL, 0, NULL), 0);
    /* snprintf-style: 3 hops (levels 0, 1, 2), room for 1. */
    const int three[3] = {4, 2, 1};
    hops[1].next = -7;
    assert_int_equal(fm_prefix_split(ids, 8, 3, 2, 0, t, three, 3, order, hops, 1, scratch), 3);
    assert_int_equal(hops[1].next, -7);
    assert_int_equal(order[0], 4);
    assert_int_equal(order[1], 2);
    assert_int_equal(order[2], 1);
    assert_int_equal(fm_prefix_split(ids, 8, 3, 2, 0, t, three, 3, order, NULL, 0, scratch), 3);
    /* A table that contradicts the ids: a hole, then a rank in the wrong cell. */
    int bad[6];
    memcpy(bad, t, sizeof bad);
    bad[1] = FM_PREFIX_HOLE;
    assert_int_equal(fm_prefix_split(ids, 8, 3, 2, 0, bad, three, 3, order, hops, 4, scratch),
                     FM_ERR_INTERNAL);
    bad[1] = 2; /* 010 does not start with 1 */
    assert_int_equal(fm_prefix_split(ids, 8, 3, 2, 0, bad, three, 3, order, hops, 4, scratch),
                     FM_ERR_INTERNAL);
    bad[1] = 0; /* self */
    assert_int_equal(fm_prefix_split(ids, 8, 3, 2, 0, bad, three, 3, order, hops, 4, scratch),
                     FM_ERR_INTERNAL);
    bad[1] = 99;
    assert_int_equal(fm_prefix_split(ids, 8, 3, 2, 0, bad, three, 3, order, hops, 4, scratch),
                     FM_ERR_INTERNAL);
    /* A destination with self's id. */
    uint8_t same[6] = {0, 1, 0, 1};
    int t2[4] = {0, FM_PREFIX_HOLE, FM_PREFIX_HOLE, 0};
    const int one[1] = {1};
    assert_int_equal(fm_prefix_split(same, 2, 2, 2, 0, t2, one, 1, order, hops, 4, scratch),
                     FM_ERR_INVALID);
}

/* ---- destination sets ---- */

static int vlen(int v)
{
    int n = 1;
    for (; v >= 128; v >>= 7)
        n++;
    return n;
}

static void check_roundtrip(const int *ranks, int n, int nranks)
{
    int sorted[NMAX], out[NMAX];
    memcpy(sorted, ranks, (size_t)n * sizeof *sorted);
    for (int i = 1; i < n; i++) /* insertion sort: the expected decode order */
        for (int k = i; k > 0 && sorted[k - 1] > sorted[k]; k--) {
            int tmp = sorted[k];
            sorted[k] = sorted[k - 1];
            sorted[k - 1] = tmp;
        }
    uint8_t buf[8 * NMAX];
    int need = fm_prefix_dests_encode(ranks, n, nranks, NULL, 0);
    assert_true(need >= 2);
    int len = fm_prefix_dests_encode(ranks, n, nranks, buf, sizeof buf);
    assert_int_equal(len, need);
    /* The smaller form (the list on a tie), sizes counted here independently. */
    int list = 1 + vlen(n);
    for (int k = 0; k < n; k++)
        list += vlen(k ? sorted[k] - sorted[k - 1] - 1 : sorted[0]);
    int bitmap = n ? 1 + vlen(sorted[0]) + vlen(sorted[n - 1] - sorted[0] + 1) +
                         (sorted[n - 1] - sorted[0] + 8) / 8
                   : list + 1;
    assert_int_equal(len, list <= bitmap ? list : bitmap);
    assert_int_equal(buf[0], list <= bitmap ? FM_PREFIX_DESTS_LIST : FM_PREFIX_DESTS_BITMAP);
    assert_int_equal(fm_prefix_dests_decode(buf, (size_t)len, nranks, out, NMAX), n);
    assert_memory_equal(out, sorted, (size_t)n * sizeof *out);
    if (len > 1)
        assert_int_equal(fm_prefix_dests_encode(ranks, n, nranks, buf, (size_t)len - 1),
                         FM_ERR_TOO_LONG);
}

static void dests_roundtrip(void **state)
{
    (void)state;
    rng_state = 5;
    int ranks[NMAX] = {0};
    check_roundtrip(ranks, 0, 1);
    ranks[0] = 0;
    check_roundtrip(ranks, 1, 1);
    for (int trial = 0; trial < 400; trial++) {
        int nranks = 1 + (int)rnd(trial % 2 ? NMAX : 100000);
        int n = (int)rnd((uint32_t)(nranks < NMAX ? nranks : NMAX) + 1), k = 0;
        int dense = nranks <= NMAX ? (int)rnd(2) : 0;
        if (dense) { /* a random subset of all ranks */
            for (int r = 0; r < nranks && k < n; r++)
                if ((int)rnd((uint32_t)nranks) < 2 * n)
                    ranks[k++] = r;
        } else {
            while (k < n) {
                int r = (int)rnd((uint32_t)nranks), fresh = 1;
                for (int q = 0; q < k && fresh; q++)
                    fresh = ranks[q] != r;
                if (fresh)
                    ranks[k++] = r;
            }
        }
        check_roundtrip(ranks, k, nranks);
    }
}

static void dests_exact_bytes(void **state)
{
    (void)state;
    uint8_t buf[32];
    const int run[8] = {10, 3, 4, 5, 6, 7, 8, 9};
    const uint8_t bitmap[4] = {FM_PREFIX_DESTS_BITMAP, 3, 8, 0xff};
    assert_int_equal(fm_prefix_dests_encode(run, 8, 100, buf, sizeof buf), 4);
    assert_memory_equal(buf, bitmap, 4);
    const int far[2] = {1000, 0};
    const uint8_t list[5] = {FM_PREFIX_DESTS_LIST, 2, 0, 0xe7, 0x07}; /* gap 999 */
    assert_int_equal(fm_prefix_dests_encode(far, 2, 1001, buf, sizeof buf), 5);
    assert_memory_equal(buf, list, 5);
    const uint8_t empty[2] = {FM_PREFIX_DESTS_LIST, 0};
    assert_int_equal(fm_prefix_dests_encode(NULL, 0, 5, buf, sizeof buf), 2);
    assert_memory_equal(buf, empty, 2);
    /* A tie (list 01 02 00 06, bitmap 02 00 08 81): the list. */
    const int tie[2] = {7, 0};
    const uint8_t tie_list[4] = {FM_PREFIX_DESTS_LIST, 2, 0, 6};
    assert_int_equal(fm_prefix_dests_encode(tie, 2, 8, buf, sizeof buf), 4);
    assert_memory_equal(buf, tie_list, 4);

    const int dup[2] = {3, 3}, out[2] = {3, 6}, neg[1] = {-1};
    assert_int_equal(fm_prefix_dests_encode(dup, 2, 6, buf, sizeof buf), FM_ERR_DUPLICATE);
    assert_int_equal(fm_prefix_dests_encode(out, 2, 6, buf, sizeof buf), FM_ERR_RANK);
    assert_int_equal(fm_prefix_dests_encode(neg, 1, 6, buf, sizeof buf), FM_ERR_RANK);
    assert_int_equal(fm_prefix_dests_encode(NULL, 1, 6, buf, sizeof buf), FM_ERR_INVALID);
    assert_int_equal(fm_prefix_dests_encode(dup, 1, 0, buf, sizeof buf), FM_ERR_INVALID);
    assert_int_equal(fm_prefix_dests_encode(dup, 1, 6, NULL, 4), FM_ERR_INVALID);
}

static void dests_malformed(void **state)
{
    (void)state;
    int out[16];
    struct {
        uint8_t bytes[12];
        size_t len;
    } bad[] = {
        {{0}, 1},                                  /* unknown tag 0 */
        {{3, 0}, 2},                               /* unknown tag 3 */
        {{0xff, 1, 1}, 3},                         /* unknown tag */
        {{1}, 1},                                  /* no count */
        {{1, 1}, 2},                               /* count 1, no rank */
        {{1, 1, 10}, 3},                           /* rank 10 of 10 */
        {{1, 2, 3, 6}, 4},                         /* 3, then 3 + 6 + 1 = 10 */
        {{1, 11}, 2},                              /* more ranks than the job */
        {{1, 1, 0x80, 0x00}, 4},                   /* overlong varint */
        {{1, 1, 0x81, 0x80, 0x80, 0x80, 0x80}, 7}, /* 6-byte varint */
        {{1, 1, 0xff, 0xff, 0xff, 0xff, 0x1f}, 7}, /* over 32 bits */
        {{1, 1, 0x83, 0x80, 0x80, 0x80, 0x10}, 7}, /* 2^32 + 3, not 3 */
        {{1, 1, 0x85}, 3},                         /* truncated varint */
        {{1, 0, 0}, 3},                            /* trailing byte */
        {{2, 0, 0}, 3},                            /* span 0 */
        {{2, 0, 3, 0x05, 0}, 5},                   /* a byte past the span */
        {{2, 0, 3}, 3},                            /* bitmap bytes missing */
        {{2, 0, 3, 0x06}, 4},                      /* first bit clear */
        {{2, 0, 3, 0x03}, 4},                      /* last bit clear */
        {{2, 0, 3, 0x0d}, 4},                      /* a bit past the span */
        {{2, 5, 6, 0x21}, 4},                      /* 5 + 6 > 10 */
        {{2, 10, 1, 1}, 4},                        /* lo out of range */
        {{2, 0x80, 0x80, 0x80, 0x80, 0x10}, 6},    /* lo over 32 bits */
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
        assert_int_equal(fm_prefix_dests_decode(bad[k].bytes, bad[k].len, 10, out, 16),
                         FM_ERR_INVALID);
    const uint8_t ok[4] = {2, 0, 3, 0x05};
    assert_int_equal(fm_prefix_dests_decode(ok, 4, 10, out, 16), 2);
    assert_int_equal(out[1], 2);
    /* snprintf-style counts: validated in full, one written. */
    out[1] = -9;
    assert_int_equal(fm_prefix_dests_decode(ok, 4, 10, out, 1), 2);
    assert_int_equal(out[0], 0);
    assert_int_equal(out[1], -9);
    assert_int_equal(fm_prefix_dests_decode(ok, 4, 10, NULL, 0), 2);
    assert_int_equal(fm_prefix_dests_decode(ok, 4, 10, NULL, 1), FM_ERR_INVALID);
    assert_int_equal(fm_prefix_dests_decode(ok, 0, 10, out, 16), FM_ERR_INVALID);
    assert_int_equal(fm_prefix_dests_decode(NULL, 4, 10, out, 16), FM_ERR_INVALID);
    assert_int_equal(fm_prefix_dests_decode(ok, 4, 0, out, 16), FM_ERR_INVALID);
    assert_int_equal(fm_prefix_dests_decode(ok, 4, 10, out, -1), FM_ERR_INVALID);
}

/* A decode that succeeds must give a valid set that survives a round trip. */
static void check_decoded(const uint8_t *buf, size_t len, int nranks)
{
    int out[NMAX], again[NMAX];
    uint8_t re[8 * NMAX];
    int n = fm_prefix_dests_decode(buf, len, nranks, out, NMAX);
    if (n < 0) {
        assert_int_equal(n, FM_ERR_INVALID);
        return;
    }
    assert_true(n <= nranks && n <= NMAX);
    for (int k = 0; k < n; k++) {
        assert_in_range(out[k], 0, nranks - 1);
        if (k > 0)
            assert_true(out[k - 1] < out[k]);
    }
    int relen = fm_prefix_dests_encode(out, n, nranks, re, sizeof re);
    assert_true(relen > 0 && (size_t)relen <= len); /* the encoder's form is the smaller */
    assert_int_equal(fm_prefix_dests_decode(re, (size_t)relen, nranks, again, NMAX), n);
    assert_memory_equal(again, out, (size_t)n * sizeof *out);
}

static void dests_truncated_and_flipped(void **state)
{
    (void)state;
    rng_state = 17;
    int ranks[NMAX];
    uint8_t buf[8 * NMAX], copy[8 * NMAX + 1];
    for (int trial = 0; trial < 60; trial++) {
        int nranks = 2 + (int)rnd(trial % 3 ? NMAX - 1 : 5000);
        int n = 1 + (int)rnd(40), k = 0;
        if (n > nranks)
            n = nranks;
        int lo = (int)rnd((uint32_t)nranks), step = 1 + (int)rnd(trial % 2 ? 2 : 300);
        for (int r = lo; k < n; r = (r + step) % nranks) { /* runs or spread-out ranks */
            for (int q = 0; q < k; q++)
                if (ranks[q] == r) { /* taken: the next rank up, from the start */
                    r = (r + 1) % nranks;
                    q = -1;
                }
            ranks[k++] = r;
        }
        int len = fm_prefix_dests_encode(ranks, k, nranks, buf, sizeof buf);
        assert_true(len > 0);
        /* Every strict prefix is short of what its own counts announce. */
        for (int cut = 0; cut < len; cut++) {
            memcpy(copy, buf, (size_t)cut);
            assert_int_equal(fm_prefix_dests_decode(copy, (size_t)cut, nranks, NULL, 0),
                             FM_ERR_INVALID);
        }
        memcpy(copy, buf, (size_t)len);
        copy[len] = 0;
        assert_int_equal(fm_prefix_dests_decode(copy, (size_t)len + 1, nranks, NULL, 0),
                         FM_ERR_INVALID);
        /* Every single-bit flip, and random bytes at random places. */
        for (int pos = 0; pos < len; pos++)
            for (int bit = 0; bit < 8; bit++) {
                memcpy(copy, buf, (size_t)len);
                copy[pos] ^= (uint8_t)(1u << bit);
                check_decoded(copy, (size_t)len, nranks);
            }
        for (int t = 0; t < 50; t++) {
            memcpy(copy, buf, (size_t)len);
            copy[rnd((uint32_t)len)] = (uint8_t)rnd(256);
            check_decoded(copy, (size_t)len, nranks);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ids_without_racks),
        cmocka_unit_test(ids_with_racks),
        cmocka_unit_test(ids_errors),
        cmocka_unit_test(table_definition),
        cmocka_unit_test(table_nearest_example),
        cmocka_unit_test(table_random_spread),
        cmocka_unit_test(table_errors),
        cmocka_unit_test(tree_random_ids),
        cmocka_unit_test(tree_errors),
        cmocka_unit_test(split_paper_example),
        cmocka_unit_test(split_errors),
        cmocka_unit_test(multicast_random_ids),
        cmocka_unit_test(multicast_topo_ids),
        cmocka_unit_test(route_random_sets),
        cmocka_unit_test(route_errors),
        cmocka_unit_test(dests_roundtrip),
        cmocka_unit_test(dests_exact_bytes),
        cmocka_unit_test(dests_malformed),
        cmocka_unit_test(dests_truncated_and_flipped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
