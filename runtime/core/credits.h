/* SPDX-License-Identifier: BSD-3-Clause */
/* The flow-control window (credits.c): credits gained from peers' packets, owed for packets
 * freed here, settled in credit packets when no data packet carries them. */
#ifndef FM_CORE_CREDITS_H
#define FM_CORE_CREDITS_H

#include "context.h"
#include "send.h"

void fm_credits_init(fm_context *ctx);
void fm_credits_owe(fm_context *ctx, int peer);
/* What is owed to peer goes back now if half its window here is owed, or if its held packets
 * and the credits owed fill that window (after the window shrank, too). */
void fm_credits_recheck(fm_context *ctx, int peer);
/* Peer has something to be settled after this progress round (owed credits, a clear-to-send,
 * a window change). */
void fm_credits_mark(fm_context *ctx, int peer);
/* Owed credits go back in a credit packet once half of the peer's window here is owed. */
static inline int fm_credits_threshold(const fm_peer *p)
{
    return p->threshold;
}
/* After the windows with p changed (window.c): what the fast paths compare against. */
static inline void fm_credits_sync(fm_peer *p)
{
    p->threshold = (p->rwin + 1) >> 1;
    p->cap = p->shrink_to ? 0 : p->swin;
}
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
/* Answer a zero-copy announcement on the next credit packet: rtag is the posted receive's
 * tag, or 0 to decline the piece. */
int fm_credits_queue_cts(fm_context *ctx, int peer, uint64_t piece, uint64_t rtag);
void fm_credits_packet_done(fm_context *ctx, int peer);
int fm_credits_refused(fm_context *ctx, int peer, int excess);
/* Credits came back beyond the window (refused, counted) or while shrinking (given back). */
void fm_credits_gained_rare(fm_context *ctx, int peer);

/* Inline: once per packet. A peer can return only the credits it holds of ours (our window
 * there less what we may still send); more comes from a malformed or forged packet: the
 * excess is ignored, and counted. While the peer asks us to shrink our window there, what
 * comes back goes back (window.c). */
static inline void fm_credits_gained(fm_context *ctx, int peer, int n)
{
    if (n <= 0)
        return;
    fm_peer *p = &ctx->peers[peer];
    int now = p->send_credits + n;
    p->send_credits = now;
    if (now > p->cap) /* beyond the window, or while shrinking */
        fm_credits_gained_rare(ctx, peer);
    if (p->pending.head)
        fm_send_flush_peer(ctx, peer);
}

#endif
