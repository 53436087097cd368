/* SPDX-License-Identifier: BSD-3-Clause */
/* The multicast descriptor: what every member of a multicast needs to find its own place in
 * the tree, carried at the head of the message's first packet and forwarded unchanged.
 *
 *  off size field
 *    0   2  desc_len      bytes of the descriptor, member list included
 *    2   1  builder       tree builder id (trees/registry.c)
 *    3   1  flags         FM_DESC_STORE_FORWARD, FM_DESC_GROUP, FM_DESC_FCFS (not with
 *                          FM_DESC_STORE_FORWARD)
 *    4   4  param         the builder's parameter (k, lambda), resolved by the root
 *    8   4  lambda_milli  postal without param: lambda in thousandths of a step
 *   12   4  n             members
 *   16   4  root_pos      the root's position in the member list
 *   20   4  root_rank     the root's rank (the sender every member's handler sees)
 *   24   8  group         group mode: the group's id; list mode: 0
 *   32  4n  members       list mode only: the ranks, in member order
 *      or, FM_DESC_SET: the members as a set of ranks in ascending order, encoded as
 *          fm_prefix_dests_encode writes it (prefix/prefix_route.h: gaps or a bitmap), in
 *          place of the 4n bytes (a list in ascending order that this makes shorter)
 *    then, with FM_DESC_ACK only (delivery acknowledgement, ack.c):
 *        4  ack_id        the multicast's id at its root, named by the acknowledgements
 *        4  reserved      0
 *    then, with FM_DESC_SPLIT only (a split multicast, join.c: every other packet goes down
 *    each of two trees, twotree's 0 and 1, and each member joins the halves):
 *        4  split_id      the multicast's id at its root, the same in both halves
 *        4  reserved      0
 * Little-endian, like the packet header. Pure functions: no context, no allocation. */
#ifndef FM_MCAST_DESC_H
#define FM_MCAST_DESC_H

#include <stddef.h>
#include <stdint.h>

#define FM_DESC_FIXED     32
#define FM_DESC_MAX_LIST  4096 /* members an ad-hoc list may have (also: must fit a packet) */
#define FM_DESC_ACK_LEN   8
#define FM_DESC_SPLIT_LEN 8
enum {
    FM_DESC_STORE_FORWARD = 1,
    FM_DESC_GROUP = 2,
    FM_DESC_FCFS = 4,
    FM_DESC_ACK = 8,
    FM_DESC_SET = 16,
    FM_DESC_SPLIT = 32
};

typedef struct fm_mcast_desc {
    uint32_t desc_len;
    uint8_t builder, flags;
    uint32_t param, lambda_milli, n, root_pos, root_rank;
    uint64_t group;
    uint32_t ack_id;              /* FM_DESC_ACK only */
    uint32_t split_id;            /* FM_DESC_SPLIT only */
    const unsigned char *members; /* list mode: n ranks as 4-byte little-endian; else NULL */
    /* FM_DESC_SET: the encoded set's bytes (set_bytes: what encode copies) and the members it
     * decodes to (set: ascending, in the caller's array) */
    uint32_t set_len;
    const unsigned char *set_bytes;
    const int *set;
} fm_mcast_desc;

/* Bytes of the descriptor for n members (list mode) or of a group's (members = 0), without
 * FM_DESC_ACK's fields (FM_DESC_ACK_LEN more with them). */
size_t fm_mcast_desc_size(int list_members);
/* Bytes of d's descriptor. */
size_t fm_mcast_desc_len(const fm_mcast_desc *d);

/* Write d (and, list mode, the n ranks of members) into buf of fm_mcast_desc_size bytes. */
void fm_mcast_desc_encode(const fm_mcast_desc *d, const int *members, void *buf);

/* Parse and check the descriptor at the head of len bytes: known flags, not both forwarding
 * modes, sizes agree, the builder id is one the registry knows (trees/registry.c),
 * n >= 1, root_pos < n, reserved bytes 0, every listed rank < nranks and listed once, the root's
 * rank is the one at root_pos (list mode) and < nranks. seen: nranks bytes of scratch for the
 * duplicate check (list mode); set_out: room for nranks ranks, where a set (FM_DESC_SET) decodes to
 * (NULL: a set is refused). Returns 0 or -1; on 0, d->members points into buf (d->set to set_out).
 */
int fm_mcast_desc_decode(const void *buf, size_t len, int nranks, unsigned char *seen, int *set_out,
                         fm_mcast_desc *d);

/* Rank of member i of a list-mode descriptor. */
int fm_mcast_desc_member(const fm_mcast_desc *d, uint32_t i);

#endif
