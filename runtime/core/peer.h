/* SPDX-License-Identifier: BSD-3-Clause */
/* What this rank keeps per peer: credits both ways, message ids, queued packets, inbound
 * messages. */
#ifndef FM_CORE_PEER_H
#define FM_CORE_PEER_H

#include <stdint.h>

#include "pkt.h"
#include "stream.h"
#include "wire.h"

typedef struct fm_peer {
    int send_credits; /* packets we may still send to this peer */
    int owed;         /* credits we owe it: its packets we have freed */
    /* Credits coming back beyond cap take the rare path (fm_credits_gained): our window at
     * it, or 0 while it asks us to shrink. Owed credits go back in a credit packet from
     * threshold on: half its window here. Both follow the windows (fm_credits_sync). */
    int cap, threshold;
    /* Windows (window.c; the rest at the end). Our window at this peer (send_credits, packets
     * in flight to it, held or freed there and not yet returned) and the window it asked us
     * to shrink to (0: none); its window here (what we granted, less what it gave back). */
    int swin, shrink_to, rwin;
    int credit_dirty; /* on the context's list of peers owing credits */
    int starved;      /* its whole window is held here or owed: return what is owed now */
    uint32_t next_msg_id;
    uint64_t next_tag;    /* zero-copy pieces sent to this peer */
    fm_pkt_queue pending; /* data packets waiting for a credit */
    fm_pkt credit_pkt;    /* our one credit packet to it */
    int credit_busy;      /* that packet is in flight */
    unsigned char credit_buf[FM_WIRE_HDR_LEN];
    fm_stream *inbound; /* its messages in progress here, in message id order */
    /* Its packets that copies to our multicast children still send from (multi.c): held
     * here, and its credits with them, when their messages are over here. */
    int fwd_pkts;
    /* Per-sender order (recv.c): the message id whose first packet comes next, and how many
     * of its messages wait (gated) because their first packet came before that one. */
    uint32_t first_next;
    int gated;
    int deferred_pkts; /* packets its deferred messages hold (at most half its window when
                        * deferred: a window taken back since may leave it more) */
    /* What fm_wait watches (progress.c): packets received from it, and, while it owes this
     * rank something, the count and waiting clock when it was last seen to change. */
    uint32_t rx, watch_rx;
    int watching;
    double watch_at;
    /* Answers to its zero-copy announcements, each going out on one of our credit packets to
     * it (zcopy.c): the piece's id, and the tag of the receive posted for it (0: declined,
     * send the piece through packets). */
    struct fm_cts {
        uint64_t piece, rtag;
    } * cts;
    int cts_n, cts_cap;
    size_t bounce; /* bytes of bounce buffers its pieces hold here (FM_ZCOPY_BOUNCE) */
    /* Windows, the less used half. As a sender: whether we asked this peer for more (and the
     * request is still to send), credits to give back to it. As a receiver: grants and a
     * shrink request to send it, the shrink request outstanding (0: none) and the peer it is
     * for, and whether it waits for a grant (and is to be told it waits). */
    int asked, ask_out, giveback_out;
    int grant_out, grant_ack, revoke_out, revoking, revoke_for, wanting;
} fm_peer;

#endif
