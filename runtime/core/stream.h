/* SPDX-License-Identifier: BSD-3-Clause */
/* A message in progress: one stream per message, sending or receiving. */
#ifndef FM_CORE_STREAM_H
#define FM_CORE_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "fastmsg.h"
#include "pkt.h"

struct fm_fwd; /* a multicast member's forwarding state: the multicast layer's (hooks.h) */

struct fm_stream {
    /* both directions */
    fm_context *ctx;
    struct fm_stream *next; /* the peer's inbound list, or the free list */
    int sending;            /* 1: our outbound message (2: its last packet has left); 0: inbound */
    int peer;
    uint16_t handler;
    uint32_t msg_id;
    uint64_t declared; /* fm_begin_message's len */
    void *user;
    /* sending (fm_send_alloc zeroes everything above FM_STREAM_RECV_FIRST) */
    uint64_t written; /* bytes appended so far */
    size_t cap;       /* payload bytes per packet for this message */
    uint32_t seq;     /* next packet's sequence number */
    fm_pkt *cur;      /* packet being filled */
    size_t reserved;  /* send buffers promised to this stream (opened in a handler) */
    /* Multi-destination sending (multi.c): every packet is written once and sent to each
     * of ndest ranks with a header of its own; ndest = 0 for a one-destination stream. */
    int ndest, multi;
    int *dests;
    uint32_t *dest_msg_ids;
    uint8_t ptype;       /* FM_PKT_DATA, or FM_PKT_MCAST for a tree multicast */
    uint32_t desc_len;   /* multicast: descriptor bytes at the head of packet 0 */
    unsigned char *desc; /* multicast: the descriptor to put there */
    /* Sees every packet of a multi-destination stream as it is written, before its copies
     * leave (the two-stage multicast's root takes the bytes for its datagrams), or NULL. */
    void (*tap)(struct fm_stream *s, fm_pkt *p, int last);
    void *tap_arg;
    /* receiving (recv.c zeroes the whole stream) */
    uint64_t counted;   /* bytes announced so far, checked against declared */
    int origin;         /* the rank handlers see as sender (a multicast's root) */
    struct fm_fwd *fwd; /* forwarding state of a multicast (forward.c) */
    uint32_t next_seq;  /* next sequence number to move to ready */
    /* Waits (whole.c) for FM_MESSAGE_BUFFER or for an earlier message of its sender: its
     * handler is not called and it is not released, until whole.c lets it go. (Here: room
     * that was padding.) */
    uint8_t parked;
    uint8_t ext;        /* an external message: its bytes come from a layer above (fm_recv_ext_*) */
    fm_pkt_queue ready; /* in-order packets not yet fully read */
    fm_pkt *early;      /* packets that arrived ahead of next_seq, sorted by seq */
    uint64_t avail;     /* unread bytes in ready */
    uint64_t total;     /* message length, known once complete */
    int complete;       /* the last packet is in ready */
    int finished;       /* handler returned FM_DONE: drop the rest */
    int started;        /* the handler has been called */
    int error;          /* nonzero: the message ended early with this error (FM_ERR_TRUNCATED) */
    fm_pkt *blocked;    /* a zero-copy piece in ready whose bytes have not arrived: later
                         * packets wait in early behind it */
    unsigned char *dbuf; /* fm_stream_deliver target */
    size_t dcap, dlen;
    fm_deliver_fn dfn;
    void *darg;
    size_t dover; /* bytes dropped: longer than the delivery buffer */
    /* Its first packet came before an earlier message's first packet from the same sender:
     * its handler may not start until that one has come (per-sender order, recv.c). */
    uint8_t gated;
    uint8_t defer_asked; /* its handler called fm_stream_defer in this call */
    uint8_t deferred;    /* complete, waiting for its handler's call from a later progress call */
    uint8_t await_group; /* a multicast for a group not created here yet: its packets wait */
    int defer_pkts;      /* packets it holds against its sender's deferral budget */
};
#define FM_STREAM_RECV_FIRST counted

#endif
