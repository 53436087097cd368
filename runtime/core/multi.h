/* SPDX-License-Identifier: BSD-3-Clause */
/* One payload, one header per destination (multi.c): fm_begin_message_multi, and the fan-out
 * that multicast roots and forwarding members share. */
#ifndef FM_CORE_MULTI_H
#define FM_CORE_MULTI_H

#include "context.h"
#include "pool.h"
#include "recv_lend.h"

int fm_multi_open(fm_context *ctx, const int *dests, int n, size_t len, size_t cap, int handler,
                  const unsigned char *desc, size_t desc_len, fm_stream **stream);
void fm_multi_submit(fm_stream *s, fm_pkt *p, int last);
/* Make an opened multi-destination stream a split one (multi.c): each packet to one
 * destination in turn, the descriptor leading each one's first packet. */
#define FM_MULTI_SPLIT 2
void fm_multi_split(fm_stream *s);
int fm_multi_send_copy(fm_context *ctx, fm_pkt *payload, int dest, const fm_wire_hdr *h);
/* Release what the stream holds for its destinations. FM_ERR_NOMEM when a destination's
 * message had to be cut short (a copy could not be made), else FM_OK. */
int fm_multi_close(fm_stream *s);
int fm_multi_drained(const fm_stream *s);
/* End dest's message early, in sequence place h->seq (> 0), with an abort packet sent from
 * the copy header c (kept for this by the caller, so that ending never needs memory); h is
 * the header the next packet to dest would have had. */
void fm_multi_abort(fm_context *ctx, fm_pkt *c, int dest, const fm_wire_hdr *h);

/* Drop one hold on a packet buffer: a send buffer goes back to the pool, a received packet
 * back to the network (at the next progress round) with its credit owed to its sender. */
static inline void fm_multi_unref(fm_context *ctx, fm_pkt *p)
{
    if (--p->refs > 0)
        return;
    fm_recv_lend_done(ctx, p); /* (a received packet's loan, not needed any more) */
    if (p->share) {            /* no copy of it is left: what the transport kept for them goes */
        ctx->tp->ops->share_release(ctx->tp, p->share);
        p->share = NULL;
    }
    if (p->kind == FM_PKT_SEND_BUF) {
        fm_pool_put_send(ctx, p);
        return;
    }
    p->next = ctx->repost;
    ctx->repost = p;
}

/* A copy (fm_multi_send_copy) has left: its hold on payload goes. */
static inline void fm_multi_copy_done(fm_context *ctx, fm_pkt *payload)
{
    if (payload->kind == FM_PKT_RECV_BUF && --payload->fwd_sends == 0) {
        fm_pool_fwd_release(ctx);
        ctx->peers[payload->peer].fwd_pkts--;
    }
    fm_multi_unref(ctx, payload);
}

#endif
