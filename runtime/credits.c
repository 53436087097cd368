/* Credit flow control. A credit is one receive buffer reserved for one sender. We gain
 * credits from the piggyback field of any packet a peer sends us; we owe a peer one credit
 * per packet of its that we have finished with. Owed credits ride on our next data packet to
 * that peer, or, once half the window is owed and no data packet can carry them, go in a
 * credit packet (which needs no credit: every peer has one spare posted buffer for it). */
#include "context.h"
#include "log.h"

void fm_credits_init(fm_context *ctx)
{
    ctx->credit_threshold = (ctx->credits + 1) / 2;
    for (int r = 0; r < ctx->size; r++) {
        fm_peer *p = &ctx->peers[r];
        p->send_credits = ctx->credits;
        p->credit_pkt.kind = FM_PKT_CREDIT_BUF;
        p->credit_pkt.buf = p->credit_buf;
        p->credit_pkt.peer = r;
    }
}

void fm_credits_gained(fm_context *ctx, int peer, int n)
{
    if (n <= 0)
        return;
    ctx->peers[peer].send_credits += n;
    fm_send_flush_peer(ctx, peer);
}

void fm_credits_owe(fm_context *ctx, int peer)
{
    fm_peer *p = &ctx->peers[peer];
    p->owed++;
    if (p->owed >= ctx->credit_threshold && !p->credit_dirty) {
        p->credit_dirty = 1;
        ctx->dirty[ctx->ndirty++] = peer;
    }
}

/* The credits to piggyback on a packet to peer now (and no longer owed). */
int fm_credits_take_owed(fm_context *ctx, int peer)
{
    fm_peer *p = &ctx->peers[peer];
    int n = p->owed > 0xffff ? 0xffff : p->owed;
    p->owed -= n;
    return n;
}

static int send_credit_packet(fm_context *ctx, int peer)
{
    fm_peer *p = &ctx->peers[peer];
    fm_wire_hdr h = {.version = FM_WIRE_VERSION,
                     .type = FM_PKT_CREDIT,
                     .src = (uint32_t)ctx->rank,
                     .job_key = ctx->job_key,
                     .credits = (uint16_t)fm_credits_take_owed(ctx, peer)};
    fm_wire_encode(&h, p->credit_buf);
    p->credit_busy = 1;
    int rc =
        ctx->tp->ops->send(ctx->tp, peer, p->credit_buf, FM_WIRE_HDR_LEN, NULL, &p->credit_pkt);
    if (rc < 0) {
        p->credit_busy = 0;
        p->owed += h.credits;
        return rc;
    }
    if (rc == FM_TP_SENT)
        p->credit_busy = 0;
    ctx->stats.credit_packets_sent++;
    return FM_OK;
}

/* After a progress round: return what is owed, by piggyback if a packet can leave, else
 * explicitly. A peer whose credit packet is still in flight stays dirty until it completes. */
int fm_credits_settle(fm_context *ctx)
{
    int keep = 0, rc = FM_OK;
    for (int i = 0; i < ctx->ndirty; i++) {
        int r = ctx->dirty[i];
        fm_peer *p = &ctx->peers[r];
        fm_send_flush_peer(ctx, r);
        if (p->owed < ctx->credit_threshold || ctx->finalizing) {
            p->credit_dirty = 0;
            continue;
        }
        if (p->credit_busy) {
            ctx->dirty[keep++] = r;
            continue;
        }
        int e = send_credit_packet(ctx, r);
        if (e) {
            ctx->dirty[keep++] = r; /* retried after the next progress round */
            if (!rc)
                rc = e;
            continue;
        }
        p->credit_dirty = 0;
    }
    ctx->ndirty = keep;
    return rc;
}
