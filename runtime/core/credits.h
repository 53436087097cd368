/* SPDX-License-Identifier: BSD-3-Clause */
/* The flow-control window (credits.c): credits gained from peers' packets, owed for packets
 * freed here, settled in credit packets when no data packet carries them. */
#ifndef FM_CORE_CREDITS_H
#define FM_CORE_CREDITS_H

#include "context.h"
#include "send.h"

void fm_credits_init(fm_context *ctx);
void fm_credits_owe(fm_context *ctx, int peer);
/* Packets of peer's arrived and stay held: if they and what is owed fill its window, owe now. */
void fm_credits_check_starved(fm_context *ctx, int peer);
int fm_credits_settle(fm_context *ctx);
/* The credits to piggyback on a packet to peer p now (and no longer owed). */
static inline int fm_credits_take_owed(fm_peer *p)
{
    int n = p->owed > 0xffff ? 0xffff : p->owed;
    p->owed -= n;
    return n;
}
int fm_credits_queue_cts(fm_context *ctx, int peer, uint64_t tag);
void fm_credits_packet_done(fm_context *ctx, int peer);

/* Inline: once per packet. */
static inline void fm_credits_gained(fm_context *ctx, int peer, int n)
{
    if (n <= 0)
        return;
    fm_peer *p = &ctx->peers[peer];
    p->send_credits += n;
    if (p->pending.head)
        fm_send_flush_peer(ctx, peer);
}

#endif
