/* SPDX-License-Identifier: BSD-3-Clause */
/* Packet buffers: a header and payload in registered memory, and their bookkeeping. */
#ifndef FM_CORE_PKT_H
#define FM_CORE_PKT_H

#include <stddef.h>
#include <stdint.h>

#include "transport.h"
#include "wire.h"

struct fm_stream;
struct fm_recv_region;

/* COPY: one destination's copy of a packet whose payload lives in another buffer (a send
 * buffer of a multi-destination stream, or a received packet being forwarded): buf holds only
 * its header, payload the packet it carries (multi.c). EXT: bytes of a message that came
 * another way than the transport's packets (recv.c: fm_recv_ext_more), at data, lent by the layer
 * that received them; buf is NULL. */
typedef enum {
    FM_PKT_RECV_BUF = 1,
    FM_PKT_SEND_BUF,
    FM_PKT_CREDIT_BUF,
    FM_PKT_COPY_BUF,
    FM_PKT_EXT_BUF
} fm_pkt_kind;

/* Zero-copy state of a received FM_PKT_RNDV packet (zcopy.c). */
typedef enum {
    FM_ZC_NONE = 0,  /* an ordinary packet: its payload is in buf */
    FM_ZC_ANNOUNCED, /* the piece is announced; no receive posted for it yet */
    FM_ZC_POSTED,    /* a tagged receive is posted for it */
    FM_ZC_ARRIVED    /* its bytes are in data (a bounce buffer) or already delivered */
} fm_zc_state;

/* A packet buffer: header + payload in registered memory, plus its bookkeeping. */
typedef struct fm_pkt {
    struct fm_pkt *next; /* free list, pending queue or a stream's packet list */
    unsigned char *buf;  /* FM_WIRE_HDR_LEN header bytes, then the payload */
    fm_tp_mr *mr;
    fm_pkt_kind kind;
    int peer; /* destination (send) or source (receive) */
    uint32_t seq;
    uint32_t len;    /* payload bytes */
    uint32_t off;    /* payload bytes already read by the handler (receive) */
    uint16_t flags;  /* FM_PKT_LAST */
    uint8_t compact; /* send: a whole message behind FM_PKT_SHORT's header, which sits just
                      * before the payload (wire.h) */
    uint8_t held;    /* send: counted in the pool's held (FM_MCAST_BUFFER) */
    /* An FM_PKT_RNDV packet (receive): len is the piece's length, its bytes arrive apart. */
    uint8_t zc; /* fm_zc_state */
    /* The pool's fwd_held (fm_stats.fwd_held_peak) counts a send buffer that is a forwarding
     * member's copy (fwd_held), and a received one while copies to multicast children still
     * send from it (fwd_sends of them). */
    uint8_t fwd_held;
    uint32_t fwd_sends;
    uint64_t tag;        /* the piece's id (the announcement's) */
    uint64_t rtag;       /* the tag its receive is posted with, chosen here */
    unsigned char *data; /* the piece's bounce buffer, NULL when it goes straight to the
                          * delivery buffer */
    uint32_t data_len;   /* the bounce buffer's size (counted in its sender's fm_peer.bounce) */
    fm_tp_mr *data_mr;   /* registration of the bounce or delivery range, if needed */
    struct fm_stream *owner;
    /* Multi-destination and forwarded packets: holds on this buffer (copies in flight, and
     * for a received packet its stream's hold until the handler is done with it); the buffer
     * is free when the count drops to 0. */
    int refs;
    struct fm_pkt *payload; /* FM_PKT_COPY_BUF: the packet whose payload it sends */
    /* A payload that copies go out from: what the transport keeps for them (sendv_shared),
     * let go of with the last hold (multi.h). */
    void *share;
    /* A received packet that landed in a multi-receive region (recv_pool.c): that region,
     * which it keeps from being posted again until it is released (or, once moved out of it,
     * a marker for memory of its own); NULL for a buffer of its own. */
    struct fm_recv_region *region;
    /* A received packet whose payload is lent (recv_lend.c): where it is, and the loan's
     * handle for the transport; NULL lent: the payload is in buf. */
    const unsigned char *lent;
    uint64_t lend;
} fm_pkt;

/* A received packet's payload (not a zero-copy piece's: see recv.c). */
static inline const unsigned char *fm_pkt_payload(const fm_pkt *p)
{
    if (p->lent)
        return p->lent;
    return p->kind == FM_PKT_EXT_BUF ? p->data : p->buf + FM_WIRE_HDR_LEN;
}

typedef struct fm_pkt_queue {
    fm_pkt *head, *tail;
} fm_pkt_queue;

/* Append p (its next already NULL) at q's tail. */
static inline void fm_pkt_queue_push(fm_pkt_queue *q, fm_pkt *p)
{
    if (q->tail)
        q->tail->next = p;
    else
        q->head = p;
    q->tail = p;
}

/* A chunk of packet buffers allocated and registered at once. */
typedef struct fm_pkt_slab {
    struct fm_pkt_slab *next;
    void *mem;
    fm_pkt *pkts;
    fm_tp_mr *mr;
    size_t bytes;     /* of mem: what the pool's memory counters count */
    fm_pkt_kind kind; /* of its buffers */
} fm_pkt_slab;

#endif
