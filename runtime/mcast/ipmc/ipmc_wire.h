/* SPDX-License-Identifier: BSD-3-Clause */
/* The two-stage multicast's bytes on the wire (ipmc_wire.c): the datagram header, which an
 * offer on the ring repeats, and the ring's control messages. Little-endian, like wire.h.
 *
 * Datagram (stage 1), at most FM_TP_DGRAM_MAX bytes:
 *   off len field
 *    0   2  magic      0x4d49
 *    2   1  version    FM_IPMC_VERSION
 *    3   1  flags      FM_IPMC_GROUP: extra is the group's id (8 bytes); FM_IPMC_SET: extra is
 *                      the member set (prefix/: fm_prefix_dests_encode), ascending ranks
 *    4   2  handler    the caller's handler id
 *    6   2  extra_len  bytes of extra after the header
 *    8   8  job_key    other jobs' datagrams are dropped
 *   16   4  root       the root's rank
 *   20   4  mid        the root's number for the multicast (one counter per root)
 *   24   4  index      which chunk of the message this datagram carries
 *   28   4  chunk      payload bytes of every datagram but the last
 *   32   8  len        the message's bytes (at most 2^48)
 *   40   4  ack_id     the root's acknowledgement id (FM_MCAST_ACK), 0 for none
 *   44   4  n          members, root included
 *   48      extra, then the chunk's bytes: len - index * chunk of them for the last chunk
 *
 * Ring messages (stage 2), fastmsg messages for one internal handler, first byte the type:
 *   OFFER  [type][3 pad][datagram header and extra, no payload]   a member to its successor
 *   NACK   [type][3 pad][root][mid][count][count x (first, chunks)] to the predecessor
 *   REPAIR [type][3 pad][root][mid][first][chunks][their bytes]    to the successor
 *   HAVE   [type][3 pad][root][mid]                                to the predecessor
 *   SYNC   [type][3 pad][root][mid]                                root to one member
 *   READY  [type][3 pad][root][mid]                                its answer */
#ifndef FM_MCAST_IPMC_WIRE_H
#define FM_MCAST_IPMC_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define FM_IPMC_MAGIC   0x4d49u
#define FM_IPMC_VERSION 1u
#define FM_IPMC_HDR_LEN 48u
#define FM_IPMC_GROUP   1u
#define FM_IPMC_SET     2u
#define FM_IPMC_MAX_LEN ((uint64_t)1 << 48)

enum { FM_IPMC_OFFER = 1, FM_IPMC_NACK, FM_IPMC_REPAIR, FM_IPMC_HAVE, FM_IPMC_SYNC, FM_IPMC_READY };
#define FM_IPMC_CTL_LEN    12u /* type, pad, root, mid */
#define FM_IPMC_REPAIR_LEN 20u /* and first, chunks */
#define FM_IPMC_NACK_MAX   64u /* ranges in one NACK */

typedef struct fm_ipmc_hdr {
    uint8_t flags;
    uint16_t handler;
    uint16_t extra_len;
    uint64_t job_key;
    uint32_t root, mid, index, chunk;
    uint64_t len;
    uint32_t ack_id, n;
} fm_ipmc_hdr;

typedef enum {
    FM_IPMC_OK = 0,
    FM_IPMC_SHORT,   /* shorter than its header and extra */
    FM_IPMC_FOREIGN, /* not a fastmsg datagram (magic or version) */
    FM_IPMC_KEY,     /* another job's */
    FM_IPMC_BAD      /* a field out of range, or a payload of the wrong length */
} fm_ipmc_status;

void fm_ipmc_hdr_encode(const fm_ipmc_hdr *h, unsigned char *buf);
/* Checks buf[0..len) as a datagram of this job (key, size ranks, handler ids below
 * handlers): the header into *h; the extra at buf + FM_IPMC_HDR_LEN, the payload after it.
 * With payload 0 only the header and extra are checked (an offer). */
fm_ipmc_status fm_ipmc_hdr_decode(const unsigned char *buf, size_t len, uint64_t key, int size,
                                  unsigned handlers, int payload, fm_ipmc_hdr *h);
/* Chunks of a message of len bytes in chunks of chunk bytes (an empty message has one). */
static inline uint32_t fm_ipmc_chunks(uint64_t len, uint32_t chunk)
{
    return len ? (uint32_t)((len + chunk - 1) / chunk) : 1;
}
/* The payload bytes of chunk index. */
static inline uint32_t fm_ipmc_chunk_len(uint64_t len, uint32_t chunk, uint32_t index)
{
    uint64_t at = (uint64_t)index * chunk;
    return at >= len ? 0 : len - at < chunk ? (uint32_t)(len - at) : chunk;
}

#endif
