/* SPDX-License-Identifier: BSD-3-Clause */
/* Topology-id prefix routing (the DAG-scheduling paper; DESIGN.md, "Topology-id routing"): the
 * arithmetic only, pure functions with no communication and no context. README.md beside this
 * file explains ids, the table, the split and why routes are short, acyclic and deadlock-free.
 *
 * Ids. Every rank has an id of m digits in base b, kept in a flat array ids[nranks * m] of
 * uint8_t: rank r's digits are ids[r*m] .. ids[r*m + m-1], most significant (the widest
 * topology level) first. Ranks that are close share a longer prefix. Ids must be distinct.
 * LCP(x, y) is the number of leading digits x and y have in common (m when x == y).
 *
 * Table. Rank self keeps m rows by b columns, table[i*b + j]:
 *   j != self's digit i: some rank whose id shares self's first i digits and has digit j at
 *                        position i, or FM_PREFIX_HOLE when no rank has such an id;
 *   j == self's digit i: self.
 *
 * Split. A destination d (d != self) is reached through table[l*b + d_l], l = LCP(self, d):
 * that rank shares l + 1 digits with d, one more than self does.
 *
 * Every call returns FM_OK, a count >= 0, or a negative FM_ERR_* code (fastmsg.h):
 * FM_ERR_INVALID for a NULL pointer, a base, digit count or choice out of range, ids that are
 * not distinct, or malformed encoded input; FM_ERR_RANK for a rank out of range; FM_ERR_SELF /
 * FM_ERR_DUPLICATE for a destination set holding self or a rank twice; FM_ERR_TOO_LONG for a
 * result that does not fit the caller's buffer or the limits below; FM_ERR_NOMEM; and
 * FM_ERR_INTERNAL when a table contradicts the ids it is used with. */
#ifndef FM_PREFIX_ROUTE_H
#define FM_PREFIX_ROUTE_H

#include <stddef.h>
#include <stdint.h>

#define FM_PREFIX_MAX_DIGITS 32  /* m: table rows, and hops on any route */
#define FM_PREFIX_MAX_BASE   256 /* b: a digit is one byte */
#define FM_PREFIX_HOLE       (-1)

/* How a table entry is chosen when several ranks qualify. */
enum fm_prefix_choice {
    /* Uniform among the candidates, deterministic in (seed, self): candidate r gets the key
     * splitmix64(splitmix64(seed ^ splitmix64(self)) ^ r), the smallest key wins (then the
     * lowest rank), so the result does not depend on the order ranks are scanned in. */
    FM_PREFIX_RANDOM = 0,
    /* Nearest: all candidates of row i share exactly i digits with self, so the hierarchy
     * cannot tell them apart; the winner is the candidate whose remaining digits (positions
     * i+1 .. m-1) have the longest common prefix with self's remaining digits, then the lowest
     * rank. Rank (host h, local k) thus picks local k on the other host, not every rank the
     * other host's leader: parallel traffic from one host fans out to different peers. */
    FM_PREFIX_NEAREST = 1,
};

/* ---- ids ---- */

/* Ids from nfields integer fields per rank, most significant field first: values[r*nfields + f]
 * >= 0. Field f gets widths[f] = the fewest base-b digits that hold its largest value (0 digits
 * when that is 0: a field that never varies says nothing), written big-endian; m is their sum,
 * at least 1 (a single zero digit when every field is constant, i.e. one rank). *m_out = m
 * whenever the values are valid, also when the call then fails with FM_ERR_TOO_LONG (m over
 * FM_PREFIX_MAX_DIGITS, or cap < nranks * m bytes). widths may be NULL (else nfields ints).
 * FM_ERR_INVALID also when two ranks get the same id. nfields in 1..FM_PREFIX_MAX_DIGITS.
 * Cost O(nranks * (nfields + m)) plus the distinctness check (fm_prefix_ids_check). */
int fm_prefix_ids_from_fields(int nranks, int nfields, const int *values, int b, uint8_t *ids,
                              size_t cap, int *m_out, int *widths);

/* Ids from the topology (runtime/topo/topo.h gives host[r] = fm_topo_host, local[r] =
 * fm_topo_local): fields rack, host within its rack, local position. rack_of_host may be NULL
 * (no racks: the fields are host index, local position); else it holds one rack index >= 0
 * for each host 0 .. max(host[]) and a host's position within its rack is its order among the
 * hosts of that rack by host index. widths (may be NULL) gets 3 ints: rack digits (0 without
 * racks), host digits, local digits. Otherwise as fm_prefix_ids_from_fields (FM_ERR_INVALID
 * when two ranks have the same host and local position); FM_ERR_NOMEM possible. */
int fm_prefix_ids_from_topo(int nranks, const int *host, const int *local, const int *rack_of_host,
                            int b, uint8_t *ids, size_t cap, int *m_out, int *widths);

/* Raw ids (e.g. written by hand in a test): FM_OK when nranks >= 1, b in 2..FM_PREFIX_MAX_BASE,
 * m in 1..FM_PREFIX_MAX_DIGITS, every digit < b and no two ids equal; else FM_ERR_INVALID
 * (FM_ERR_NOMEM possible). Cost O(m * (nranks + b)): a radix sort. */
int fm_prefix_ids_check(const uint8_t *ids, int nranks, int m, int b);

/* Leading digits ids x and y (m digits each) have in common, 0..m. */
int fm_prefix_lcp(const uint8_t *x, const uint8_t *y, int m);

/* ---- table ---- */

/* Self's table into table[0 .. m*b) (see above). choice: enum fm_prefix_choice; seed is used
 * by FM_PREFIX_RANDOM only. ids are not checked for digits or distinctness beyond what the
 * scan meets (run fm_prefix_ids_check once): a digit >= b or another rank with self's id gives
 * FM_ERR_INVALID. Cost O(nranks * m) time per table, no memory besides table, so all nranks
 * tables cost O(nranks^2 * m); each rank normally builds only its own. */
int fm_prefix_table_build(const uint8_t *ids, int nranks, int m, int b, int self, int choice,
                          uint64_t seed, int *table);

/* The rank among cands[0..k) (k >= 1; ranks that share self's first l digits and have one
 * digit at l) that a table entry of row l would hold if they were the only ranks with that
 * prefix: the rule of fm_prefix_table_build, so when the entry self's table holds is among
 * them, it is the one returned. No argument checks (it runs per hop). */
int fm_prefix_pick(const uint8_t *ids, int m, int self, int l, int choice, uint64_t seed,
                   const int *cands, int k);

/* ---- split ---- */

/* One next hop of a split: it gets the destinations order[offset .. offset+count). level =
 * LCP(self, each of them), digit = their digit at position level; next = table[level*b + digit]
 * may itself be one of them (it delivers to itself and forwards the rest). */
struct fm_prefix_hop {
    int next, level, digit, count, offset;
};

/* Bytes of scratch fm_prefix_split needs for n destinations (int-aligned; malloc'd is fine). */
size_t fm_prefix_split_scratch_size(int n, int m, int b);

/* Splits dests[0..n) (ranks, none equal to self, no duplicates; n may be 0) at self: order
 * (n ints) receives the destinations grouped by hop, groups ordered by (level, digit)
 * ascending and each group by rank ascending; hops[0 .. min(count, cap)) the groups. Returns the
 * number of hops, like snprintf: when it exceeds cap only cap hops are written (order is always
 * complete); hops may be NULL when cap is 0. At most m * (b - 1) hops, and at most n.
 * scratch: fm_prefix_split_scratch_size(n, m, b) bytes. FM_ERR_INTERNAL when table has a hole
 * or a rank that does not qualify where a destination needs an entry (a table built from other
 * ids): the destination itself qualifies, so a table from these ids never does that.
 * Cost O(n * m + m * b). */
int fm_prefix_split(const uint8_t *ids, int nranks, int m, int b, int self, const int *table,
                    const int *dests, int n, int *order, struct fm_prefix_hop *hops, int cap,
                    void *scratch);

/* ---- one hop of a routed multicast ---- */

/* Scratch bytes fm_prefix_route needs for n members (0 for bad arguments). */
size_t fm_prefix_route_scratch_size(int n, int m, int b);

/* Self's next hops, in the order it sends to them, for a multicast to the ranks members[0..n)
 * (self among them, none twice; a relay is always one of them) that reached self from src (-1:
 * self is the root). Self covers the members that share more than LCP(src, self) digits with
 * it (all but itself at the root): exactly the group its sender split off for it. It splits
 * them with its table (fm_prefix_split) and sends each group to the table's entry when that is
 * one of the group, else to the member of the group fm_prefix_pick chooses (choice, seed: the
 * table's); the largest group first, then (level, digit) ascending. kids: room for n ranks.
 * Returns their count, FM_ERR_INVALID for bad arguments or src not a member, FM_ERR_RANK for a
 * rank out of range, FM_ERR_INTERNAL for a table from other ids. scratch:
 * fm_prefix_route_scratch_size(n, m, b) bytes, int-aligned. Cost O(n * m + m * b). */
int fm_prefix_route(const uint8_t *ids, int nranks, int m, int b, const int *table, int self,
                    int choice, uint64_t seed, const int *members, int n, int src, int *kids,
                    void *scratch);

/* ---- the whole tree of one multicast to every rank ---- */

/* Scratch bytes fm_prefix_tree needs (0 for bad arguments). */
size_t fm_prefix_tree_scratch_size(int nranks, int m, int b);

/* The tree a multicast from root to every other rank takes when each rank splits what it must
 * cover as fm_prefix_split does and sends each group to one of its members, chosen as a table
 * entry is (choice, seed; the candidates are the group's members, which are exactly the ranks
 * with that prefix): parent[r] (-1 for the root) and slot[r], r's place among its parent's
 * children in send order: the largest group first, then (level, digit) ascending (the farthest
 * first).
 * FM_ERR_INVALID for a digit not below b or two equal ids (parent and slot are then
 * meaningless). Allocates nothing (it runs in forwarding). Every route
 * takes at most m hops and the common prefix with r grows along r's route. scratch:
 * fm_prefix_tree_scratch_size bytes. Cost O(nranks * m^2) time (each rank is sorted once per
 * hop of its route), recursion depth at most m. */
int fm_prefix_tree(const uint8_t *ids, int nranks, int m, int b, int root, int choice,
                   uint64_t seed, int *parent, int *slot, void *scratch);

/* ---- destination sets on the wire ---- */

/* Encoded forms (the first byte is the tag; varints are unsigned LEB128, at most 5 bytes,
 * shortest form only):
 *   FM_PREFIX_DESTS_LIST   varint n, then (n > 0) varint first rank and n-1 varints
 *                          (gap - 1) between consecutive ranks in ascending order
 *   FM_PREFIX_DESTS_BITMAP varint lo, varint span (>= 1), ceil(span/8) bytes: bit i (byte
 *                          i/8, bit i%8 from the least significant) set = rank lo + i is in
 *                          the set; bits 0 and span-1 set, bits past span clear */
#define FM_PREFIX_DESTS_LIST   1
#define FM_PREFIX_DESTS_BITMAP 2

/* Encodes ranks[0..n) (distinct, each in 0..nranks-1, any order; n may be 0) in the smaller
 * form (the list on a tie) into buf. Returns the bytes written, or FM_ERR_TOO_LONG when they
 * exceed cap; with buf NULL and cap 0 returns the bytes it would need. Errors: FM_ERR_RANK,
 * FM_ERR_DUPLICATE, FM_ERR_NOMEM (it sorts a copy), FM_ERR_INVALID. */
int fm_prefix_dests_encode(const int *ranks, int n, int nranks, uint8_t *buf, size_t cap);

/* Decodes exactly len bytes (trailing bytes are an error) into out, ranks ascending. Returns
 * the number of ranks, like snprintf: only the first cap are written when there are more (out
 * may be NULL when cap is 0); the whole input is validated either way. FM_ERR_INVALID for any
 * malformed input: empty, unknown tag, truncated, overlong or oversized varint, rank out of
 * 0..nranks-1, a repeated rank (a list that does not strictly ascend), a bitmap that does not
 * start and end with a member or has bits past its span, trailing bytes. Reads nothing past
 * buf[len-1] and allocates nothing: it parses wire data. */
int fm_prefix_dests_decode(const uint8_t *buf, size_t len, int nranks, int *out, int cap);

#endif
