/* SPDX-License-Identifier: BSD-3-Clause */
/* The packet header: fixed size, little-endian, versioned, validated on receipt.
 *
 *  off size field
 *    0   1  version       FM_WIRE_VERSION
 *    1   1  type          FM_PKT_DATA / FM_PKT_CREDIT / FM_PKT_RNDV
 *    2   2  flags         FM_PKT_LAST: last packet of its message; with FM_PKT_ABORT (and no
 *                          payload): the message ends here, cut short (a forwarding member or
 *                          a multi-destination sender could not send the rest)
 *    4   4  src           sender's rank
 *    8   8  job_key       the job's random key; other jobs' packets are dropped
 *   16   4  msg_id        per (sender, receiver) message counter
 *   20   4  seq           packet index within the message, from 0 (never wraps: a message
 *                          has at most FM_WIRE_MAX_PACKETS packets, send.c and zcopy.c)
 *   24   4  payload_len   bytes after the header
 *   28   2  handler       receiver's handler id; in a credit packet flagged FM_PKT_GRANT,
 *                          credits granted to its receiver (its window at the sender grows
 *                          by them, window.c; 0: its request is answered, nothing granted)
 *   30   2  credits       credits returned to the receiver of this packet (piggybacked)
 *   32   8  msg_len       the message's declared length (an upper bound until FM_PKT_LAST,
 *                          then the exact length); in a credit packet flagged FM_PKT_CTS,
 *                          the id of the zero-copy piece answered, and msg_id (low) and
 *                          seq (high) hold the tag of the receive posted for it (0: declined,
 *                          send it through packets)
 * A credit packet flagged FM_PKT_ASK asks its receiver for a larger window there. One without
 * FM_PKT_CTS may carry, flagged FM_PKT_REVOKE, the window its receiver should shrink to at
 * the sender (in seq), and, flagged FM_PKT_GIVEBACK, credits of its receiver's that its
 * sender gives back (in msg_len) (window.c).
 *
 * An FM_PKT_MCAST packet is a packet of a multicast down a tree: as FM_PKT_DATA, but the
 * payload of packet 0 starts with the multicast's descriptor (mcast_desc.h), which every
 * member forwards unchanged and reads its own children from; payload_len counts it.
 *
 * An FM_PKT_SHORT packet is a whole message of at most FM_WIRE_SHORT_MAX bytes behind a compact
 * 20-byte header: shm moves packets of up to 32 bytes faster than larger ones (bench/README.md),
 * and a one-packet message needs no sequence or lengths beyond its own. Its message id orders
 * it among its sender's messages (recv.c), and only its low 16 bits travel: the receiver
 * widens them against the id it expects next, from which a message in flight is never more
 * than FM_CREDITS (at most 4096) away.
 *    0   1  version       FM_WIRE_VERSION
 *    1   1  type          FM_PKT_SHORT
 *    2   2  handler
 *    4   4  src
 *    8   8  job_key       the whole key, checked as strictly as the full header's
 *   16   2  credits
 *   18   2  msg_id        its low 16 bits
 * The payload (the whole message) is the rest of the packet. Decoded, it reads as an
 * FM_PKT_DATA packet 0 flagged FM_PKT_LAST, msg_id holding the 16 bits (to widen).
 *
 * An FM_PKT_RNDV packet is a packet of its message's stream (it has a seq and takes a credit)
 * whose 16-byte payload announces a piece that travels as a tagged message instead:
 *    0   8  piece_len     bytes of the piece
 *    8   8  piece         its id: the sender's rank above a counter. The receiver answers
 *                          with the tag of the receive it posted for the piece (a tag of
 *                          its own choosing, unknown to other jobs), or declines it: then
 *                          the piece's bytes follow in ordinary packets instead
 */
#ifndef FM_WIRE_H
#define FM_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FM_WIRE_VERSION    4
#define FM_WIRE_HDR_LEN    40
#define FM_WIRE_CREDITS_AT 30 /* where the credits sit: written last, as a packet leaves */

#define FM_WIRE_MAX_PACKETS ((uint64_t)1 << 32) /* packets of one message: seq 0 .. 2^32-1 */

enum { FM_PKT_DATA = 1, FM_PKT_CREDIT = 2, FM_PKT_RNDV = 3, FM_PKT_MCAST = 4, FM_PKT_SHORT = 5 };
#define FM_WIRE_SHORT_LEN        20 /* FM_PKT_SHORT's header */
#define FM_WIRE_SHORT_CREDITS_AT 16
#define FM_WIRE_SHORT_MAX        12 /* its largest payload: 32 bytes in all */
#define FM_WIRE_RNDV_LEN         16
/* CTS, REVOKE, GIVEBACK, ASK, GRANT: credit packets only; CTS without REVOKE or GIVEBACK. */
enum {
    FM_PKT_LAST = 1,
    FM_PKT_CTS = 2,
    FM_PKT_ABORT = 4,
    FM_PKT_REVOKE = 8,
    FM_PKT_GIVEBACK = 16,
    FM_PKT_ASK = 32,
    FM_PKT_GRANT = 64
};
#define FM_PKT_CREDIT_FLAGS                                                                        \
    (FM_PKT_CTS | FM_PKT_REVOKE | FM_PKT_GIVEBACK | FM_PKT_ASK | FM_PKT_GRANT)

typedef struct fm_wire_hdr {
    uint8_t version, type;
    uint16_t flags;
    uint32_t src;
    uint64_t job_key;
    uint32_t msg_id, seq, payload_len;
    uint16_t handler, credits;
    uint64_t msg_len;
} fm_wire_hdr;

/* Why a packet was dropped (counted per reason). */
typedef enum {
    FM_WIRE_OK = 0,
    FM_WIRE_SHORT,       /* fewer bytes than a header */
    FM_WIRE_VERSION_BAD, /* unknown version */
    FM_WIRE_KEY_BAD,     /* another job's key */
    FM_WIRE_TYPE_BAD,    /* unknown type or flags */
    FM_WIRE_SRC_BAD,     /* source rank out of range */
    FM_WIRE_LEN_BAD,     /* payload length disagrees with the bytes received or limits */
    FM_WIRE_DESC_BAD,    /* a multicast descriptor that is malformed or does not fit us */
    FM_WIRE_CREDITS_BAD, /* more credits returned than the sender held (only they are dropped) */
    FM_WIRE_SEQ_BAD,     /* a packet already there or moved on, or beyond its sender's window */
    FM_WIRE_NREASONS
} fm_wire_status;

/* Explicit little-endian stores and loads, so formats do not depend on the host (the header,
 * the multicast descriptor). On a little-endian host each is one plain (unaligned) access:
 * byte by byte, every store through the char pointer might alias the header's source fields,
 * which the compiler then reloads after each byte (half the cost of a send, measured). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
static inline void fm_put16(unsigned char *p, uint16_t v)
{
    memcpy(p, &v, sizeof v);
}
static inline void fm_put32(unsigned char *p, uint32_t v)
{
    memcpy(p, &v, sizeof v);
}
static inline void fm_put64(unsigned char *p, uint64_t v)
{
    memcpy(p, &v, sizeof v);
}
static inline uint16_t fm_get16(const unsigned char *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline uint32_t fm_get32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline uint64_t fm_get64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}
#else
static inline void fm_put16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}
static inline void fm_put32(unsigned char *p, uint32_t v)
{
    fm_put16(p, (uint16_t)v);
    fm_put16(p + 2, (uint16_t)(v >> 16));
}
static inline void fm_put64(unsigned char *p, uint64_t v)
{
    fm_put32(p, (uint32_t)v);
    fm_put32(p + 4, (uint32_t)(v >> 32));
}
static inline uint16_t fm_get16(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}
static inline uint32_t fm_get32(const unsigned char *p)
{
    return fm_get16(p) | (uint32_t)fm_get16(p + 2) << 16;
}
static inline uint64_t fm_get64(const unsigned char *p)
{
    return fm_get32(p) | (uint64_t)fm_get32(p + 4) << 32;
}
#endif

/* Inline: both run once per packet, on the path of every message. */
static inline void fm_wire_encode(const fm_wire_hdr *h, void *buf)
{
    unsigned char *p = buf;
    p[0] = h->version;
    p[1] = h->type;
    fm_put16(p + 2, h->flags);
    fm_put32(p + 4, h->src);
    fm_put64(p + 8, h->job_key);
    fm_put32(p + 16, h->msg_id);
    fm_put32(p + 20, h->seq);
    fm_put32(p + 24, h->payload_len);
    fm_put16(p + 28, h->handler);
    fm_put16(p + FM_WIRE_CREDITS_AT, h->credits);
    fm_put64(p + 32, h->msg_len);
}

/* The compact header of a one-packet message (h: type FM_PKT_SHORT; seq, flags and msg_len
 * are implied, msg_id's low 16 bits are sent). */
static inline void fm_wire_encode_short(const fm_wire_hdr *h, void *buf)
{
    unsigned char *p = buf;
    p[0] = h->version;
    p[1] = FM_PKT_SHORT;
    fm_put16(p + 2, h->handler);
    fm_put32(p + 4, h->src);
    fm_put64(p + 8, h->job_key);
    fm_put16(p + FM_WIRE_SHORT_CREDITS_AT, h->credits);
    fm_put16(p + 18, (uint16_t)h->msg_id);
}

static inline fm_wire_status fm_wire_decode_short(const unsigned char *p, size_t len,
                                                  uint64_t job_key, int nranks, fm_wire_hdr *h)
{
    if (len < FM_WIRE_SHORT_LEN)
        return FM_WIRE_SHORT;
    h->version = p[0];
    h->type = FM_PKT_SHORT;
    h->flags = FM_PKT_LAST;
    h->handler = fm_get16(p + 2);
    h->src = fm_get32(p + 4);
    h->job_key = fm_get64(p + 8);
    h->msg_id = fm_get16(p + 18);
    h->seq = 0;
    h->credits = fm_get16(p + FM_WIRE_SHORT_CREDITS_AT);
    h->msg_len = h->payload_len = (uint32_t)(len - FM_WIRE_SHORT_LEN);
    if (h->version != FM_WIRE_VERSION)
        return FM_WIRE_VERSION_BAD;
    if (h->job_key != job_key)
        return FM_WIRE_KEY_BAD;
    if (h->src >= (uint32_t)nranks)
        return FM_WIRE_SRC_BAD;
    if (h->payload_len > FM_WIRE_SHORT_MAX)
        return FM_WIRE_LEN_BAD;
    return FM_WIRE_OK;
}

/* Decode and validate the len bytes received in buf against this job (either header). */
static inline fm_wire_status fm_wire_decode(const void *buf, size_t len, uint64_t job_key,
                                            int nranks, size_t max_payload, fm_wire_hdr *h)
{
    const unsigned char *p = buf;
    if (len >= 2 && p[1] == FM_PKT_SHORT)
        return fm_wire_decode_short(p, len, job_key, nranks, h);
    if (len < FM_WIRE_HDR_LEN)
        return FM_WIRE_SHORT;
    h->version = p[0];
    h->type = p[1];
    h->flags = fm_get16(p + 2);
    h->src = fm_get32(p + 4);
    h->job_key = fm_get64(p + 8);
    h->msg_id = fm_get32(p + 16);
    h->seq = fm_get32(p + 20);
    h->payload_len = fm_get32(p + 24);
    h->handler = fm_get16(p + 28);
    h->credits = fm_get16(p + 30);
    h->msg_len = fm_get64(p + 32);
    if (h->version != FM_WIRE_VERSION)
        return FM_WIRE_VERSION_BAD;
    if (h->job_key != job_key)
        return FM_WIRE_KEY_BAD;
    if (h->type < FM_PKT_DATA || h->type > FM_PKT_MCAST ||
        (h->flags & ~(h->type == FM_PKT_CREDIT ? FM_PKT_CREDIT_FLAGS : FM_PKT_LAST | FM_PKT_ABORT)))
        return FM_WIRE_TYPE_BAD;
    if ((h->flags & FM_PKT_CTS) && (h->flags & (FM_PKT_REVOKE | FM_PKT_GIVEBACK)))
        return FM_WIRE_TYPE_BAD;
    if ((h->flags & FM_PKT_ABORT) &&
        (h->type == FM_PKT_CREDIT || h->flags != (FM_PKT_LAST | FM_PKT_ABORT) || h->seq == 0))
        return FM_WIRE_TYPE_BAD;
    if (h->src >= (uint32_t)nranks)
        return FM_WIRE_SRC_BAD;
    if (h->payload_len != len - FM_WIRE_HDR_LEN || h->payload_len > max_payload)
        return FM_WIRE_LEN_BAD;
    if (h->type == FM_PKT_CREDIT && h->payload_len != 0)
        return FM_WIRE_LEN_BAD;
    if (h->type == FM_PKT_DATA && h->payload_len > h->msg_len)
        return FM_WIRE_LEN_BAD;
    if (h->type == FM_PKT_RNDV && h->payload_len != FM_WIRE_RNDV_LEN)
        return FM_WIRE_LEN_BAD;
    if ((h->flags & FM_PKT_ABORT) && h->payload_len != 0)
        return FM_WIRE_LEN_BAD;
    return FM_WIRE_OK;
}

/* The FM_PKT_RNDV payload. */
void fm_wire_rndv_encode(uint64_t piece_len, uint64_t tag, void *payload);
void fm_wire_rndv_decode(const void *payload, uint64_t *piece_len, uint64_t *tag);
const char *fm_wire_status_str(fm_wire_status s);

#endif
