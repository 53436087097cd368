/* SPDX-License-Identifier: BSD-3-Clause */
/* Topology-id prefix routing: ids, the per-rank table, the split of a destination set into next
 * hops, and the destination-set encoding. Definitions in prefix_route.h, reasons in README.md. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "fastmsg.h"
#include "mix.h"
#include "prefix/prefix_route.h"

static int base_ok(int b)
{
    return b >= 2 && b <= FM_PREFIX_MAX_BASE;
}

static int digits_ok(int m)
{
    return m >= 1 && m <= FM_PREFIX_MAX_DIGITS;
}

static const uint8_t *id_of(const uint8_t *ids, int m, int r)
{
    return ids + (size_t)r * (size_t)m;
}

int fm_prefix_lcp(const uint8_t *x, const uint8_t *y, int m)
{
    int i = 0;
    if (!x || !y)
        return 0;
    while (i < m && x[i] == y[i])
        i++;
    return i;
}

/* ---- ids ---- */

/* Fewest base-b digits that hold v (0 for v == 0: a constant field distinguishes nothing). */
static int width_for(int v, int b)
{
    int w = 0;
    for (; v > 0; v /= b)
        w++;
    return w;
}

static void put_digits(uint8_t *out, int v, int w, int b)
{
    for (int k = w - 1; k >= 0; k--) {
        out[k] = (uint8_t)(v % b);
        v /= b;
    }
}

int fm_prefix_ids_check(const uint8_t *ids, int nranks, int m, int b)
{
    if (!ids || nranks < 1 || !digits_ok(m) || !base_ok(b))
        return FM_ERR_INVALID;
    size_t total = (size_t)nranks * (size_t)m;
    for (size_t k = 0; k < total; k++)
        if (ids[k] >= b)
            return FM_ERR_INVALID;
    if (nranks == 1)
        return FM_OK;
    /* LSD radix sort of rank indices by id, then equal ids are neighbours. */
    int *idx = malloc((size_t)nranks * sizeof *idx);
    int *tmp = malloc((size_t)nranks * sizeof *tmp);
    int *count = malloc(((size_t)b + 1) * sizeof *count);
    int rc = FM_OK;
    if (!idx || !tmp || !count) {
        rc = FM_ERR_NOMEM;
        goto out;
    }
    for (int r = 0; r < nranks; r++)
        idx[r] = r;
    for (int pos = m - 1; pos >= 0; pos--) {
        memset(count, 0, ((size_t)b + 1) * sizeof *count);
        for (int r = 0; r < nranks; r++)
            count[id_of(ids, m, r)[pos] + 1]++;
        for (int d = 0; d < b; d++)
            count[d + 1] += count[d];
        for (int k = 0; k < nranks; k++)
            tmp[count[id_of(ids, m, idx[k])[pos]]++] = idx[k];
        int *swap = idx;
        idx = tmp;
        tmp = swap;
    }
    for (int k = 1; k < nranks; k++)
        if (!memcmp(id_of(ids, m, idx[k - 1]), id_of(ids, m, idx[k]), (size_t)m)) {
            rc = FM_ERR_INVALID;
            break;
        }
out:
    free(idx);
    free(tmp);
    free(count);
    return rc;
}

int fm_prefix_ids_from_fields(int nranks, int nfields, const int *values, int b, uint8_t *ids,
                              size_t cap, int *m_out, int *widths)
{
    if (nranks < 1 || nfields < 1 || nfields > FM_PREFIX_MAX_DIGITS || !values || !base_ok(b) ||
        !m_out || (!ids && cap))
        return FM_ERR_INVALID;
    int w[FM_PREFIX_MAX_DIGITS] = {0};
    int m = 0;
    for (int f = 0; f < nfields; f++) {
        int max = 0;
        for (int r = 0; r < nranks; r++) {
            int v = values[(size_t)r * (size_t)nfields + (size_t)f];
            if (v < 0)
                return FM_ERR_INVALID;
            if (v > max)
                max = v;
        }
        w[f] = width_for(max, b);
        m += w[f];
    }
    if (m == 0)
        m = 1; /* one rank: a single zero digit keeps the table non-empty */
    *m_out = m;
    if (widths)
        memcpy(widths, w, (size_t)nfields * sizeof *widths);
    if (m > FM_PREFIX_MAX_DIGITS || cap / (size_t)m < (size_t)nranks)
        return FM_ERR_TOO_LONG;
    for (int r = 0; r < nranks; r++) {
        uint8_t *out = ids + (size_t)r * (size_t)m;
        out[0] = 0; /* the m == 1 padding digit when every width is 0 */
        for (int f = 0; f < nfields; f++) {
            put_digits(out, values[(size_t)r * (size_t)nfields + (size_t)f], w[f], b);
            out += w[f];
        }
    }
    return fm_prefix_ids_check(ids, nranks, m, b);
}

/* Position of each host among the hosts of its rack, in host order, into pos[0..nhosts). */
static int hosts_within_racks(const int *rack_of_host, int nhosts, int *pos)
{
    int nracks = 0;
    for (int h = 0; h < nhosts; h++) {
        if (rack_of_host[h] < 0)
            return FM_ERR_INVALID;
        if (rack_of_host[h] >= nracks)
            nracks = rack_of_host[h] + 1;
    }
    int *seen = calloc((size_t)nracks, sizeof *seen);
    if (!seen)
        return FM_ERR_NOMEM;
    for (int h = 0; h < nhosts; h++)
        pos[h] = seen[rack_of_host[h]]++;
    free(seen);
    return FM_OK;
}

int fm_prefix_ids_from_topo(int nranks, const int *host, const int *local, const int *rack_of_host,
                            int b, uint8_t *ids, size_t cap, int *m_out, int *widths)
{
    if (nranks < 1 || !host || !local || !base_ok(b) || !m_out || (!ids && cap))
        return FM_ERR_INVALID;
    int nhosts = 0;
    for (int r = 0; r < nranks; r++) {
        if (host[r] < 0 || local[r] < 0)
            return FM_ERR_INVALID;
        if (host[r] >= nhosts)
            nhosts = host[r] + 1;
    }
    int nfields = rack_of_host ? 3 : 2;
    int *values = malloc((size_t)nranks * (size_t)nfields * sizeof *values);
    int *pos = rack_of_host ? malloc((size_t)nhosts * sizeof *pos) : NULL;
    int rc = FM_ERR_NOMEM, w[3] = {0};
    if (!values || (rack_of_host && !pos))
        goto out;
    if (rack_of_host && (rc = hosts_within_racks(rack_of_host, nhosts, pos)) != FM_OK)
        goto out;
    for (int r = 0; r < nranks; r++) {
        int *v = values + (size_t)r * (size_t)nfields;
        if (rack_of_host) {
            *v++ = rack_of_host[host[r]];
            *v++ = pos[host[r]];
        } else {
            *v++ = host[r];
        }
        *v = local[r];
    }
    rc = fm_prefix_ids_from_fields(nranks, nfields, values, b, ids, cap, m_out,
                                   rack_of_host ? w : w + 1);
    if (widths && (rc == FM_OK || rc == FM_ERR_TOO_LONG))
        memcpy(widths, w, sizeof w);
out:
    free(values);
    free(pos);
    return rc;
}

/* ---- table ---- */

/* A pseudo-random key per (seed, self, candidate): the smallest key among a cell's candidates
 * wins, a uniform choice that needs no counter per cell and no particular scan order. */
static uint64_t random_key(uint64_t seed, int self, int r)
{
    uint64_t s = fm_mix64(seed ^ fm_mix64((uint64_t)(unsigned)self));
    return fm_mix64(s ^ (uint64_t)(unsigned)r);
}

/* 1 when candidate r should replace cur in a cell of row l. */
static int better(const uint8_t *ids, int m, int self, int l, int choice, uint64_t seed, int r,
                  int cur)
{
    if (choice == FM_PREFIX_RANDOM) {
        uint64_t kr = random_key(seed, self, r), kc = random_key(seed, self, cur);
        return kr != kc ? kr < kc : r < cur;
    }
    const uint8_t *s = id_of(ids, m, self) + l + 1;
    int tail = m - l - 1;
    int lr = fm_prefix_lcp(id_of(ids, m, r) + l + 1, s, tail);
    int lc = fm_prefix_lcp(id_of(ids, m, cur) + l + 1, s, tail);
    return lr != lc ? lr > lc : r < cur;
}

int fm_prefix_table_build(const uint8_t *ids, int nranks, int m, int b, int self, int choice,
                          uint64_t seed, int *table)
{
    if (!ids || !table || nranks < 1 || !digits_ok(m) || !base_ok(b))
        return FM_ERR_INVALID;
    if (choice != FM_PREFIX_RANDOM && choice != FM_PREFIX_NEAREST)
        return FM_ERR_INVALID;
    if (self < 0 || self >= nranks)
        return FM_ERR_RANK;
    const uint8_t *me = id_of(ids, m, self);
    for (int i = 0; i < m * b; i++)
        table[i] = FM_PREFIX_HOLE;
    for (int i = 0; i < m; i++) {
        if (me[i] >= b)
            return FM_ERR_INVALID;
        table[i * b + me[i]] = self;
    }
    for (int r = 0; r < nranks; r++) {
        if (r == self)
            continue;
        const uint8_t *id = id_of(ids, m, r);
        int l = fm_prefix_lcp(me, id, m);
        if (l == m)
            return FM_ERR_INVALID; /* not distinct: no digit tells r from self */
        for (int i = l; i < m; i++)
            if (id[i] >= b)
                return FM_ERR_INVALID;
        int *cell = &table[l * b + id[l]];
        if (*cell == FM_PREFIX_HOLE || better(ids, m, self, l, choice, seed, r, *cell))
            *cell = r;
    }
    return FM_OK;
}

int fm_prefix_pick(const uint8_t *ids, int m, int self, int l, int choice, uint64_t seed,
                   const int *cands, int k)
{
    int best = cands[0];
    for (int i = 1; i < k; i++)
        if (better(ids, m, self, l, choice, seed, cands[i], best))
            best = cands[i];
    return best;
}

/* ---- split ---- */

size_t fm_prefix_split_scratch_size(int n, int m, int b)
{
    if (n < 0 || !digits_ok(m) || !base_ok(b))
        return 0;
    return ((size_t)n + (size_t)m * (size_t)b + 1) * sizeof(int);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The group key (level * b + digit) of each destination into key[0..n), after checking it. */
static int split_keys(const uint8_t *ids, int nranks, int m, int b, int self, const int *dests,
                      int n, int *key)
{
    const uint8_t *me = id_of(ids, m, self);
    for (int k = 0; k < n; k++) {
        int d = dests[k];
        if (d < 0 || d >= nranks)
            return FM_ERR_RANK;
        if (d == self)
            return FM_ERR_SELF;
        const uint8_t *id = id_of(ids, m, d);
        int l = fm_prefix_lcp(me, id, m);
        if (l == m || id[l] >= b)
            return FM_ERR_INVALID;
        key[k] = l * b + id[l];
    }
    return FM_OK;
}

/* Whether table entry `next` may serve cell (l, j) of self: it must share self's first l digits
 * and have digit j at l. Checked per hop, so a table from other ids is an error, not a
 * misroute that could loop. */
static int entry_ok(const uint8_t *ids, int nranks, int m, int self, int l, int j, int next)
{
    if (next < 0 || next >= nranks || next == self)
        return 0;
    const uint8_t *id = id_of(ids, m, next);
    return fm_prefix_lcp(id_of(ids, m, self), id, m) == l && id[l] == j;
}

int fm_prefix_split(const uint8_t *ids, int nranks, int m, int b, int self, const int *table,
                    const int *dests, int n, int *order, struct fm_prefix_hop *hops, int cap,
                    void *scratch)
{
    if (!ids || !table || nranks < 1 || !digits_ok(m) || !base_ok(b) || n < 0 || cap < 0 ||
        (n > 0 && (!dests || !order || !scratch)) || (cap > 0 && !hops))
        return FM_ERR_INVALID;
    if (self < 0 || self >= nranks)
        return FM_ERR_RANK;
    if (n == 0)
        return 0;
    int cells = m * b;
    int *key = scratch, *start = key + n; /* start[cells + 1]: counting sort by key */
    int rc = split_keys(ids, nranks, m, b, self, dests, n, key);
    if (rc != FM_OK)
        return rc;
    memset(start, 0, ((size_t)cells + 1) * sizeof *start);
    for (int k = 0; k < n; k++)
        start[key[k] + 1]++;
    for (int c = 0; c < cells; c++)
        start[c + 1] += start[c];
    for (int k = 0; k < n; k++)
        order[start[key[k]]++] = dests[k]; /* start[c] now ends group c */
    int offset = 0, h = 0;
    for (int c = 0; c < cells; c++) {
        int count = start[c] - offset;
        if (!count)
            continue;
        /* Ranks ascending inside a group: deterministic, and a repeated rank lands next to
         * itself (equal ranks have equal keys). */
        qsort(order + offset, (size_t)count, sizeof *order, cmp_int);
        for (int k = offset + 1; k < offset + count; k++)
            if (order[k] == order[k - 1])
                return FM_ERR_DUPLICATE;
        int l = c / b, j = c % b, next = table[c];
        if (!entry_ok(ids, nranks, m, self, l, j, next))
            return FM_ERR_INTERNAL;
        if (h < cap)
            hops[h] = (struct fm_prefix_hop){
                .next = next, .level = l, .digit = j, .count = count, .offset = offset};
        h++;
        offset += count;
    }
    return h;
}

/* ---- destination sets on the wire ---- */

#define VARINT_MAX 5 /* bytes of a 32-bit LEB128 value */

static size_t varint_len(uint32_t v)
{
    size_t n = 1;
    for (; v >= 0x80; v >>= 7)
        n++;
    return n;
}

static uint8_t *put_varint(uint8_t *p, uint32_t v)
{
    for (; v >= 0x80; v >>= 7)
        *p++ = (uint8_t)(v | 0x80);
    *p++ = (uint8_t)v;
    return p;
}

/* Reads one varint at *pos; -1 when truncated, longer than 5 bytes, over 32 bits, or not in
 * its shortest form (a last byte of 0 after the first), so each value has one encoding. */
static int get_varint(const uint8_t *buf, size_t len, size_t *pos, uint32_t *out)
{
    uint64_t v = 0;
    for (int k = 0; k < VARINT_MAX; k++) {
        if (*pos >= len)
            return -1;
        uint8_t byte = buf[(*pos)++];
        v |= (uint64_t)(byte & 0x7f) << (7 * k);
        if (!(byte & 0x80)) {
            if (k > 0 && byte == 0)
                return -1;
            if (v > UINT32_MAX)
                return -1;
            *out = (uint32_t)v;
            return 0;
        }
    }
    return -1;
}

static size_t list_size(const int *s, int n)
{
    size_t size = 1 + varint_len((uint32_t)n);
    if (n > 0)
        size += varint_len((uint32_t)s[0]);
    for (int k = 1; k < n; k++)
        size += varint_len((uint32_t)(s[k] - s[k - 1] - 1));
    return size;
}

static size_t bitmap_size(const int *s, int n)
{
    uint32_t span = (uint32_t)(s[n - 1] - s[0]) + 1;
    return 1 + varint_len((uint32_t)s[0]) + varint_len(span) + (span + 7) / 8;
}

static void write_list(const int *s, int n, uint8_t *p)
{
    *p++ = FM_PREFIX_DESTS_LIST;
    p = put_varint(p, (uint32_t)n);
    if (n > 0)
        p = put_varint(p, (uint32_t)s[0]);
    for (int k = 1; k < n; k++)
        p = put_varint(p, (uint32_t)(s[k] - s[k - 1] - 1));
}

static void write_bitmap(const int *s, int n, uint8_t *p)
{
    uint32_t lo = (uint32_t)s[0], span = (uint32_t)(s[n - 1] - s[0]) + 1;
    *p++ = FM_PREFIX_DESTS_BITMAP;
    p = put_varint(p, lo);
    p = put_varint(p, span);
    memset(p, 0, (span + 7) / 8);
    for (int k = 0; k < n; k++) {
        uint32_t i = (uint32_t)s[k] - lo;
        p[i / 8] |= (uint8_t)(1u << (i % 8));
    }
}

/* A sorted copy of ranks[0..n), checked for range and repeats, into *out (caller frees). */
static int sorted_copy(const int *ranks, int n, int nranks, int **out)
{
    int *s = malloc((size_t)(n > 0 ? n : 1) * sizeof *s);
    if (!s)
        return FM_ERR_NOMEM;
    for (int k = 0; k < n; k++) {
        if (ranks[k] < 0 || ranks[k] >= nranks) {
            free(s);
            return FM_ERR_RANK;
        }
        s[k] = ranks[k];
    }
    qsort(s, (size_t)n, sizeof *s, cmp_int);
    for (int k = 1; k < n; k++)
        if (s[k] == s[k - 1]) {
            free(s);
            return FM_ERR_DUPLICATE;
        }
    *out = s;
    return FM_OK;
}

int fm_prefix_dests_encode(const int *ranks, int n, int nranks, uint8_t *buf, size_t cap)
{
    if (n < 0 || nranks < 1 || (n > 0 && !ranks) || (!buf && cap))
        return FM_ERR_INVALID;
    int *s = NULL;
    int rc = sorted_copy(ranks, n, nranks, &s);
    if (rc != FM_OK)
        return rc;
    size_t ls = list_size(s, n), bs = n > 0 ? bitmap_size(s, n) : SIZE_MAX;
    size_t size = bs < ls ? bs : ls;
    if (size > INT_MAX)
        rc = FM_ERR_TOO_LONG;
    else if (!buf)
        rc = (int)size; /* the size query */
    else if (size > cap)
        rc = FM_ERR_TOO_LONG;
    else {
        if (bs < ls)
            write_bitmap(s, n, buf);
        else
            write_list(s, n, buf);
        rc = (int)size;
    }
    free(s);
    return rc;
}

static int decode_list(const uint8_t *buf, size_t len, size_t pos, int nranks, int *out, int cap)
{
    uint32_t n, r, gap;
    if (get_varint(buf, len, &pos, &n) || n > (uint32_t)nranks)
        return FM_ERR_INVALID;
    uint64_t next = 0; /* the least rank the next entry may be */
    for (uint32_t k = 0; k < n; k++) {
        if (get_varint(buf, len, &pos, k == 0 ? &r : &gap))
            return FM_ERR_INVALID;
        uint64_t rank = k == 0 ? r : next + gap;
        if (rank >= (uint64_t)nranks)
            return FM_ERR_INVALID;
        if ((int)k < cap)
            out[k] = (int)rank;
        next = rank + 1;
    }
    return pos == len ? (int)n : FM_ERR_INVALID;
}

static int decode_bitmap(const uint8_t *buf, size_t len, size_t pos, int nranks, int *out, int cap)
{
    uint32_t lo, span;
    if (get_varint(buf, len, &pos, &lo) || get_varint(buf, len, &pos, &span))
        return FM_ERR_INVALID;
    if (span == 0 || (uint64_t)lo + span > (uint64_t)nranks)
        return FM_ERR_INVALID;
    size_t nbytes = ((size_t)span + 7) / 8;
    if (len - pos != nbytes)
        return FM_ERR_INVALID;
    const uint8_t *bits = buf + pos;
    uint32_t last = span - 1;
    if (!(bits[0] & 1) || !(bits[last / 8] & (1u << (last % 8))))
        return FM_ERR_INVALID;
    if (bits[last / 8] >> (last % 8) >> 1)
        return FM_ERR_INVALID; /* bits past the span */
    int n = 0;
    for (uint32_t i = 0; i < span; i++)
        if (bits[i / 8] & (1u << (i % 8))) {
            if (n < cap)
                out[n] = (int)(lo + i);
            n++;
        }
    return n;
}

int fm_prefix_dests_decode(const uint8_t *buf, size_t len, int nranks, int *out, int cap)
{
    if (!buf || len == 0 || nranks < 1 || cap < 0 || (cap > 0 && !out))
        return FM_ERR_INVALID;
    switch (buf[0]) {
    case FM_PREFIX_DESTS_LIST:
        return decode_list(buf, len, 1, nranks, out, cap);
    case FM_PREFIX_DESTS_BITMAP:
        return decode_bitmap(buf, len, 1, nranks, out, cap);
    default:
        return FM_ERR_INVALID;
    }
}

/* ---- the whole multicast tree from one root ---- */

/* What cover() needs besides the set it covers. */
struct ptree {
    const uint8_t *ids;
    int m, b, choice;
    uint64_t seed;
    int *parent, *slot, *start; /* start: m * b + 1 counters, shared by every level */
    int *dup;                   /* set when two ids are equal: no digit tells them apart */
};

static int cell_of(const struct ptree *t, int x, int r)
{
    const uint8_t *id = id_of(t->ids, t->m, r);
    int l = fm_prefix_lcp(id_of(t->ids, t->m, x), id, t->m);
    if (l == t->m) {
        *t->dup = 1;
        return 0;
    }
    return l * t->b + id[l];
}

/* The member of set[0..k) (one group of x's split, level l) that x sends the group to. */
static int pick(const struct ptree *t, int x, int l, const int *set, int k)
{
    return fm_prefix_pick(t->ids, t->m, x, l, t->choice, t->seed, set, k);
}

/* The groups of set[0..k) by x's cells are contiguous: their starts into starts[], the count
 * returned. */
static int group_starts(const struct ptree *t, int x, const int *set, int k, int *starts)
{
    int g = 0;
    for (int i = 0, j; i < k; i = j) {
        int c = cell_of(t, x, set[i]);
        for (j = i + 1; j < k && cell_of(t, x, set[j]) == c; j++)
            ;
        starts[g++] = i;
    }
    return g;
}

/* x's children (set[starts[a]], slot = its group's size for now) get their send order: the
 * largest group first, then (level, digit) order, as the other trees send largest subtree
 * first. O(g^2) for g groups, at most m * (b - 1). */
static void order_children(const struct ptree *t, const int *set, const int *starts, int g)
{
    int *rank = t->start; /* free again once every group is covered */
    for (int a = 0; a < g; a++) {
        int size = t->slot[set[starts[a]]];
        rank[a] = 0;
        for (int c = 0; c < g; c++) {
            int other = t->slot[set[starts[c]]];
            rank[a] += other > size || (other == size && c < a);
        }
    }
    for (int a = 0; a < g; a++)
        t->slot[set[starts[a]]] = rank[a];
}

/* x sends to one member of each group of its split of set[0..k) (x not in it), largest group
 * first, and each of those covers the rest of its group. tmp: k ints beside set. The groups
 * are contiguous after a counting sort, and a group's recursion reorders only its own range,
 * so one tmp and one start serve every level. */
static void cover(const struct ptree *t, int x, int *set, int *tmp, int k)
{
    int cells = t->m * t->b;
    if (k == 0)
        return;
    memset(t->start, 0, ((size_t)cells + 1) * sizeof *t->start);
    for (int i = 0; i < k; i++)
        t->start[cell_of(t, x, set[i]) + 1]++;
    for (int c = 0; c < cells; c++)
        t->start[c + 1] += t->start[c];
    for (int i = 0; i < k; i++)
        tmp[t->start[cell_of(t, x, set[i])]++] = set[i];
    memcpy(set, tmp, (size_t)k * sizeof *set);
    for (int i = 0, j; i < k; i = j) {
        int c = cell_of(t, x, set[i]);
        for (j = i + 1; j < k && cell_of(t, x, set[j]) == c; j++)
            ;
        int next = pick(t, x, c / t->b, set + i, j - i);
        for (int q = i; q < j; q++) /* next to the front of its group */
            if (set[q] == next) {
                set[q] = set[i];
                set[i] = next;
                break;
            }
        t->parent[next] = x;
        t->slot[next] = j - i;
        cover(t, next, set + i + 1, tmp + i + 1, j - i - 1);
    }
    order_children(t, set, tmp, group_starts(t, x, set, k, tmp));
}

size_t fm_prefix_tree_scratch_size(int nranks, int m, int b)
{
    if (nranks < 1 || !digits_ok(m) || !base_ok(b))
        return 0;
    return ((size_t)2 * (size_t)nranks + (size_t)m * (size_t)b + 1) * sizeof(int);
}

int fm_prefix_tree(const uint8_t *ids, int nranks, int m, int b, int root, int choice,
                   uint64_t seed, int *parent, int *slot, void *scratch)
{
    if (!ids || !parent || !slot || !scratch || nranks < 1 || !digits_ok(m) || !base_ok(b))
        return FM_ERR_INVALID;
    if (choice != FM_PREFIX_RANDOM && choice != FM_PREFIX_NEAREST)
        return FM_ERR_INVALID;
    if (root < 0 || root >= nranks)
        return FM_ERR_RANK;
    for (int i = 0; i < nranks * m; i++)
        if (ids[i] >= b)
            return FM_ERR_INVALID;
    int *set = scratch, *tmp = set + nranks, k = 0, dup = 0;
    for (int r = 0; r < nranks; r++) {
        if (r != root)
            set[k++] = r;
        parent[r] = -1;
        slot[r] = 0;
    }
    struct ptree t = {ids, m, b, choice, seed, parent, slot, tmp + nranks, &dup};
    cover(&t, root, set, tmp, k);
    return dup ? FM_ERR_INVALID : FM_OK;
}

/* ---- one hop of a routed multicast ---- */

size_t fm_prefix_route_scratch_size(int n, int m, int b)
{
    size_t split = fm_prefix_split_scratch_size(n, m, b);
    if (!split)
        return 0;
    size_t maxh = (size_t)m * (size_t)(b - 1);
    if (maxh > (size_t)n)
        maxh = (size_t)n;
    return 2 * (size_t)n * sizeof(int) + (maxh + 1) * sizeof(struct fm_prefix_hop) + split;
}

/* What self covers: members sharing at least `floor` digits with it, itself excepted. FM_ERR_RANK
 * for a member out of range; src (>= 0) must be a member. */
static int route_cover(const uint8_t *ids, int nranks, int m, int self, const int *members, int n,
                       int src, int *out)
{
    const uint8_t *me = id_of(ids, m, self);
    int floor = src < 0 ? 0 : fm_prefix_lcp(id_of(ids, m, src), me, m) + 1, k = 0, src_in = src < 0;
    for (int i = 0; i < n; i++) {
        int d = members[i];
        if (d < 0 || d >= nranks)
            return FM_ERR_RANK;
        src_in |= d == src;
        if (d != self && fm_prefix_lcp(me, id_of(ids, m, d), m) >= floor)
            out[k++] = d;
    }
    return src_in ? k : FM_ERR_INVALID;
}

/* The table's entry for a group when it is one of the group's destinations, else the one the
 * table's rule picks among them. */
static int route_next(const uint8_t *ids, int m, int self, int choice, uint64_t seed,
                      const struct fm_prefix_hop *h, const int *group)
{
    for (int i = 0; i < h->count; i++)
        if (group[i] == h->next)
            return h->next;
    return fm_prefix_pick(ids, m, self, h->level, choice, seed, group, h->count);
}

/* Hops in send order: the largest group first (the longest way to go), then (level, digit). */
static void route_order(struct fm_prefix_hop *h, int nh)
{
    for (int i = 1; i < nh; i++) {
        struct fm_prefix_hop x = h[i];
        int j = i;
        for (; j > 0 && h[j - 1].count < x.count; j--)
            h[j] = h[j - 1];
        h[j] = x;
    }
}

int fm_prefix_route(const uint8_t *ids, int nranks, int m, int b, const int *table, int self,
                    int choice, uint64_t seed, const int *members, int n, int src, int *kids,
                    void *scratch)
{
    if (!ids || !table || !members || !kids || !scratch || nranks < 1 || n < 1 || !digits_ok(m) ||
        !base_ok(b) || (choice != FM_PREFIX_RANDOM && choice != FM_PREFIX_NEAREST))
        return FM_ERR_INVALID;
    if (self < 0 || self >= nranks || src >= nranks || src == self)
        return FM_ERR_RANK;
    int maxh = m * (b - 1) < n ? m * (b - 1) : n;
    int *set = scratch, *order = set + n;
    struct fm_prefix_hop *hops = (struct fm_prefix_hop *)(order + n);
    void *split = hops + maxh + 1;
    int k = route_cover(ids, nranks, m, self, members, n, src, set);
    if (k < 0)
        return k;
    int nh = fm_prefix_split(ids, nranks, m, b, self, table, set, k, order, hops, maxh, split);
    if (nh < 0)
        return nh;
    route_order(hops, nh);
    for (int i = 0; i < nh; i++)
        kids[i] = route_next(ids, m, self, choice, seed, &hops[i], order + hops[i].offset);
    return nh;
}
