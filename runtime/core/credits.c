/* SPDX-License-Identifier: BSD-3-Clause */
/* Credit flow control. A credit is room for one packet kept for one sender (recv_pool.c). We gain
 * credits from the piggyback field of any packet a peer sends us; we owe a peer one credit
 * per packet of its that we have finished with. Owed credits ride on our next data packet to
 * that peer, or, once half the window is owed and no data packet can carry them, go in a
 * credit packet (which needs no credit: it takes 40 bytes of a receive region, or each peer's
 * one spare buffer in the per-peer layout, and we have at most one credit packet in flight
 * to each peer). A credit packet also carries a
 * zero-copy piece's clear-to-send (zcopy.c), so that too needs no credit.
 * Messages that wait here (held for a handler or a group, deferred, gated) keep their packets:
 * when those and the credits owed fill a sender's window it can send nothing, not even what
 * would let them go on, so what is owed then goes back at once, below the threshold. */
#include <stdlib.h>
#include <string.h>

#include "credits.h"
#include "log.h"
#include "recv.h"
#include "send.h"
#include "window.h"

void fm_credits_init(fm_context *ctx)
{
    for (int r = 0; r < ctx->size; r++) {
        fm_peer *p = &ctx->peers[r];
        p->send_credits = p->swin = p->rwin = ctx->credits; /* window.c may lower them */
        fm_credits_sync(p);
        p->credit_pkt.kind = FM_PKT_CREDIT_BUF;
        p->credit_pkt.buf = p->credit_buf;
        p->credit_pkt.peer = r;
    }
}

void fm_credits_mark(fm_context *ctx, int peer)
{
    fm_peer *p = &ctx->peers[peer];
    if (!p->credit_dirty) {
        p->credit_dirty = 1;
        ctx->dirty[ctx->ndirty++] = peer;
    }
}

void fm_credits_check_starved(fm_context *ctx, int peer)
{
    fm_peer *p = &ctx->peers[peer];
    if (p->owed > 0 && p->owed < fm_credits_threshold(p) && !p->starved &&
        fm_recv_held_with_copies(ctx, peer) + p->owed >= p->rwin) {
        p->starved = 1;
        fm_credits_mark(ctx, peer);
    }
}

static inline void recheck(fm_context *ctx, int peer)
{
    fm_peer *p = &ctx->peers[peer];
    if (p->owed >= fm_credits_threshold(p))
        fm_credits_mark(ctx, peer);
    else if (p->inbound || p->fwd_pkts) /* (packets are held only in messages in progress,
                                         * or for copies to multicast children) */
        fm_credits_check_starved(ctx, peer);
}

void fm_credits_recheck(fm_context *ctx, int peer)
{
    recheck(ctx, peer);
}

void fm_credits_owe(fm_context *ctx, int peer)
{
    ctx->peers[peer].owed++;
    recheck(ctx, peer);
}

int fm_credits_queue_cts(fm_context *ctx, int peer, uint64_t piece, uint64_t rtag)
{
    fm_peer *p = &ctx->peers[peer];
    if (p->cts_n == p->cts_cap) {
        int cap = p->cts_cap ? 2 * p->cts_cap : 4;
        struct fm_cts *t = realloc(p->cts, (size_t)cap * sizeof *t);
        if (!t)
            return FM_ERR_NOMEM;
        p->cts = t;
        p->cts_cap = cap;
    }
    p->cts[p->cts_n++] = (struct fm_cts){piece, rtag};
    fm_credits_mark(ctx, peer); /* sent when this progress round settles */
    return FM_OK;
}

void fm_credits_packet_done(fm_context *ctx, int peer)
{
    fm_peer *p = &ctx->peers[peer];
    p->credit_busy = 0;
    if (p->cts_n)
        fm_credits_mark(ctx, peer);
}

/* Out of line: no peer of this job ever gets here. Returns the whole window. */
int fm_credits_refused(fm_context *ctx, int peer, int excess)
{
    ctx->drops[FM_WIRE_CREDITS_BAD]++;
    ctx->stats.dropped++;
    fm_log(1, "ignored %d credits from rank %d: more than it holds", excess, peer);
    return ctx->peers[peer].swin;
}

void fm_credits_gained_rare(fm_context *ctx, int peer)
{
    fm_peer *p = &ctx->peers[peer];
    if (p->send_credits > p->swin)
        p->send_credits = fm_credits_refused(ctx, peer, p->send_credits - p->swin);
    if (p->shrink_to)
        fm_window_shrink(ctx, peer);
}

static int send_credit_packet(fm_context *ctx, int peer)
{
    fm_peer *p = &ctx->peers[peer];
    fm_wire_hdr h = {.version = FM_WIRE_VERSION,
                     .type = FM_PKT_CREDIT,
                     .src = (uint32_t)ctx->rank,
                     .job_key = ctx->job_key,
                     .credits = (uint16_t)fm_credits_take_owed(p)};
    /* window.c: requests and grants ride on any credit packet */
    int grant = p->grant_out > 0xffff ? 0xffff : p->grant_out;
    if (p->grant_ack) {
        h.flags |= FM_PKT_GRANT;
        h.handler = (uint16_t)grant;
    }
    if (p->ask_out)
        h.flags |= FM_PKT_ASK;
    if (p->cts_n) { /* the piece in msg_len, the receive's tag in msg_id and seq */
        h.flags |= FM_PKT_CTS;
        h.msg_len = p->cts[0].piece;
        h.msg_id = (uint32_t)p->cts[0].rtag;
        h.seq = (uint32_t)(p->cts[0].rtag >> 32);
    } else { /* a shrink request in seq, what is given back in msg_len */
        if (p->revoke_out) {
            h.flags |= FM_PKT_REVOKE;
            h.seq = (uint32_t)p->revoke_out;
        }
        if (p->giveback_out) {
            h.flags |= FM_PKT_GIVEBACK;
            h.msg_len = (uint64_t)p->giveback_out;
        }
    }
    fm_wire_encode(&h, p->credit_buf);
    p->credit_busy = 1;
    int rc =
        ctx->tp->ops->send(ctx->tp, peer, p->credit_buf, FM_WIRE_HDR_LEN, NULL, &p->credit_pkt);
    if (rc < 0) {
        p->credit_busy = 0;
        p->owed += h.credits;
        return rc;
    }
    if (h.flags & FM_PKT_GRANT) {
        p->grant_out -= grant;
        p->grant_ack = p->grant_out > 0; /* (more than one packet carries) */
    }
    if (h.flags & FM_PKT_ASK)
        p->ask_out = 0;
    if (h.flags & FM_PKT_REVOKE)
        p->revoke_out = 0;
    if (h.flags & FM_PKT_GIVEBACK)
        p->giveback_out = 0;
    if (h.flags & FM_PKT_CTS) {
        p->cts_n--;
        memmove(p->cts, p->cts + 1, (size_t)p->cts_n * sizeof *p->cts);
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
        int owe = p->owed >= fm_credits_threshold(p) || (p->starved && p->owed > 0) ||
                  fm_window_pending(p);
        if (!p->cts_n && (!owe || ctx->finalizing)) {
            p->credit_dirty = p->starved = 0;
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
        p->starved = 0;
        if (p->cts_n || fm_window_pending(p)) /* the next credit packet takes the rest */
            ctx->dirty[keep++] = r;
        else
            p->credit_dirty = 0;
    }
    ctx->ndirty = keep;
    return rc;
}
