/* SPDX-License-Identifier: BSD-3-Clause */
/* The sending side of a message: fm_begin_message, fm_send_piece, fm_end_message.
 *
 * Path of one packet: fm_send_piece copies the caller's bytes into the stream's current
 * packet buffer (piece_fits: the common small piece, nothing else to do; a large piece
 * outside handlers goes zero-copy instead: zcopy.c); a full packet, or the last one at
 * fm_end_message, gets its header (fm_send_submit) and leaves at once when it has a credit and
 * nothing waits ahead of it, else joins its destination's queue; fm_send_flush_peer hands
 * queued packets to the transport as credits come back. Each packet carries the credits we
 * owe that peer. Outside handlers the caller then waits (driving progress) until its packets
 * have left; inside a handler it never waits. A small packet is injected and free at once;
 * otherwise the transport's send completion returns the buffer to the pool (progress.c). The
 * small-message steps are FM_HOT (inline): a call per step costs more than the step. */
#include <stdlib.h>
#include <string.h>

#include "copy.h"
#include "credits.h"
#include "log.h"
#include "multi.h"
#include "pool.h"
#include "progress.h"
#include "send.h"
#include "streams.h"
#include "window.h"
#include "zcopy.h"

/* Hand one packet with a credit to the transport, its owed credits written into its header
 * on the way out. */
FM_HOT int packet_now(fm_context *ctx, fm_peer *peer, fm_pkt *p)
{
    /* Piggyback owed credits into the header, full or compact (see wire.h). */
    unsigned char *hdr = p->buf;
    size_t hlen = FM_WIRE_HDR_LEN, credits_at = FM_WIRE_CREDITS_AT;
    if (p->compact) {
        hdr = p->buf + FM_WIRE_HDR_LEN - FM_WIRE_SHORT_LEN;
        hlen = FM_WIRE_SHORT_LEN;
        credits_at = FM_WIRE_SHORT_CREDITS_AT;
    }
    uint16_t c = (uint16_t)fm_credits_take_owed(peer);
    fm_put16(hdr + credits_at, c);
    fm_tp *tp = ctx->tp;
    int rc;
    if (p->kind == FM_PKT_COPY_BUF && p->payload && ctx->share_copies)
        /* its own header before a payload other copies share (the transport may move it once) */
        rc = tp->ops->sendv_shared(tp, p->peer, p->buf, FM_WIRE_HDR_LEN, p->mr,
                                   p->payload->buf + FM_WIRE_HDR_LEN, p->len, p->payload->mr,
                                   &p->payload->share, p);
    else if (p->kind == FM_PKT_COPY_BUF && p->payload)
        rc = tp->ops->sendv(tp, p->peer, p->buf, FM_WIRE_HDR_LEN, p->mr,
                            p->payload->buf + FM_WIRE_HDR_LEN, p->len, p->payload->mr, p);
    else
        rc = tp->ops->send(tp, p->peer, hdr, hlen + p->len, p->mr, p);
    if (rc < 0) {
        peer->owed += c;
        return rc;
    }
    /* Its whole window in flight: the window limits this sender even when each credit comes
     * back before the next packet needs it (then each comes back in a credit packet of its
     * own, which costs both sides as much as the data packet), so it asks for more now
     * rather than at a stall that may never come. */
    if (--peer->send_credits == 0 && peer->swin < ctx->credits)
        fm_window_ask(ctx, p->peer);
    ctx->stats.packets_sent++;
    if (hdr[1] != FM_PKT_RNDV) /* (a piece's bytes count once it is sent: zcopy.c) */
        ctx->stats.bytes_sent += p->len;
    if (rc == FM_TP_SENT)
        fm_send_done(ctx, p); /* injected: the buffer is free at once */
    else
        ctx->sends_inflight++;
    return FM_OK;
}

int fm_send_packet_now(fm_context *ctx, fm_pkt *p)
{
    return packet_now(ctx, &ctx->peers[p->peer], p);
}

void fm_send_done(fm_context *ctx, fm_pkt *p)
{
    if (p->kind == FM_PKT_COPY_BUF) {
        fm_pkt *payload = p->payload;
        fm_pool_put_copy(ctx, p);
        if (payload) /* (none: an abort packet, all header) */
            fm_multi_copy_done(ctx, payload);
    } else {
        fm_pool_put_send(ctx, p);
    }
}

/* A packet leaves now if it has a credit and nothing waits ahead of it; else it queues. */
FM_HOT void queue(fm_context *ctx, fm_pkt *p)
{
    fm_peer *peer = &ctx->peers[p->peer];
    if (!peer->pending.head && peer->send_credits > 0 && packet_now(ctx, peer, p) == FM_OK)
        return;
    ctx->stats.credit_stalls++;
    if (peer->swin < ctx->credits) /* the window limits us: ask for a larger one */
        fm_window_ask(ctx, p->peer);
    fm_pkt_queue_push(&peer->pending, p);
}

void fm_send_queue(fm_context *ctx, fm_pkt *p)
{
    queue(ctx, p);
}

int fm_send_flush_peer(fm_context *ctx, int r)
{
    fm_peer *peer = &ctx->peers[r];
    while (peer->pending.head && peer->send_credits > 0) {
        fm_pkt *p = peer->pending.head;
        fm_pkt *next = p->next; /* p may be free again when the send returns */
        int rc = packet_now(ctx, peer, p);
        if (rc)
            return rc; /* stays queued for the next flush */
        peer->pending.head = next;
        if (!next)
            peer->pending.tail = NULL;
    }
    return FM_OK;
}

void fm_send_submit(fm_stream *s, fm_pkt *p, int type, int last)
{
    if (s->multi) {
        fm_multi_submit(s, p, last);
        return;
    }
    fm_context *ctx = s->ctx;
    /* Numbered as its first packet leaves, so that the receiver, which starts handlers in id
     * order, never waits for a message still being written (recv.c). */
    if (s->seq == 0)
        s->msg_id = ctx->peers[s->peer].next_msg_id++;
    fm_wire_hdr h = {.version = FM_WIRE_VERSION,
                     .type = (uint8_t)type,
                     .flags = last ? FM_PKT_LAST : 0,
                     .src = (uint32_t)ctx->rank,
                     .job_key = ctx->job_key,
                     .msg_id = s->msg_id,
                     .seq = s->seq++,
                     .payload_len = p->len,
                     .handler = s->handler,
                     .msg_len = last ? s->written : s->declared};
    /* A whole small message goes behind the compact header, written just before its payload. */
    p->compact = type == FM_PKT_DATA && last && h.seq == 0 && p->len <= FM_WIRE_SHORT_MAX;
    if (p->compact)
        fm_wire_encode_short(&h, p->buf + FM_WIRE_HDR_LEN - FM_WIRE_SHORT_LEN);
    else
        fm_wire_encode(&h, p->buf);
    p->peer = s->peer;
    queue(ctx, p);
}

static int peer_drained(fm_context *ctx, void *arg)
{
    return ctx->peers[*(int *)arg].pending.head == NULL;
}

static int send_buffer_free(fm_context *ctx, void *arg)
{
    (void)arg;
    return ctx->pool.send_free != NULL || ctx->pool.send_pkts < ctx->pool.send_pkts_max;
}

static int multi_drained(fm_context *ctx, void *arg)
{
    (void)ctx;
    return fm_multi_drained(arg);
}

static int multi_within_budget(fm_context *ctx, void *arg)
{
    return !fm_pool_held_full(ctx) || fm_multi_drained(arg);
}

/* Outside handlers, wait until this stream's packets have left for the network; a
 * multi-destination stream may leave packets behind for slow destinations, within
 * FM_MCAST_BUFFER, until its end. */
FM_HOT int wait_sent(fm_stream *s, int end)
{
    if (s->ctx->in_handler)
        return FM_OK;
    if (s->multi) {
        fm_progress_cond done = end ? multi_drained : multi_within_budget;
        return done(s->ctx, s) ? FM_OK
                               : fm_progress_until(s->ctx, done, s, "credits of slow destinations");
    }
    if (!s->ctx->peers[s->peer].pending.head)
        return FM_OK;
    return fm_progress_until(s->ctx, peer_drained, &s->peer, "credits");
}

/* The stream's next packet buffer; FM_EAGAIN when none is free and the caller may not wait
 * (a handler, or a request's fill) or, for nowait, never waits. */
static int next_packet(fm_stream *s, int nowait)
{
    fm_context *ctx = s->ctx;
    if (s->reserved) {
        s->reserved--;
        s->cur = fm_pool_get_send(ctx, 1);
        return s->cur ? FM_OK : FM_ERR_NOMEM;
    }
    s->cur = fm_pool_pop_send(ctx); /* (the pool grows only when it is empty) */
    if (s->cur || (s->cur = fm_pool_get_send(ctx, 0)))
        return FM_OK;
    if (ctx->in_handler || nowait)
        return FM_EAGAIN; /* a stream opened outside, written inside a handler */
    int rc = fm_progress_until(ctx, send_buffer_free, NULL, "a send buffer");
    if (rc)
        return rc;
    s->cur = fm_pool_get_send(ctx, 0);
    return s->cur ? FM_OK : FM_ERR_NOMEM;
}

static int lead_packet(fm_stream *s, int nowait)
{
    int rc = next_packet(s, nowait);
    /* A multicast's descriptor leads (each destination's first packet of a split stream) */
    if (rc == FM_OK && s->desc_len &&
        s->seq < (s->multi == FM_MULTI_SPLIT ? (uint32_t)s->ndest : 1)) {
        memcpy(s->cur->buf + FM_WIRE_HDR_LEN, s->desc, s->desc_len);
        s->cur->len = s->desc_len;
    }
    return rc;
}

int fm_send_next_packet(fm_stream *s)
{
    return lead_packet(s, 0);
}

/* A sending stream of packets of cap payload bytes carrying len bytes (a multicast's
 * descriptor included); arguments already checked. */
FM_HOT int stream_alloc(fm_context *ctx, size_t len, size_t cap, int handler, fm_stream **stream)
{
    /* Sequence numbers must not wrap: copied through packets, a message needs at most
     * ceil(len / cap) of them (zero-copy pieces keep within that: zcopy.c). */
    if ((uint64_t)len > FM_WIRE_MAX_PACKETS * cap)
        return FM_ERR_TOO_LONG;
    /* Never wait inside a handler: promise the message all its packet buffers now, or
     * refuse (FM_EAGAIN, or FM_ERR_TOO_LONG when no wait could ever make room). Packets
     * without credit then wait in memory, not in the handler. */
    size_t need = ctx->in_handler && !ctx->req_opening ? len / cap + 1 : 0;
    int rc = need ? fm_pool_reserve(ctx, need) : FM_OK;
    if (rc)
        return rc;
    fm_stream *s = fm_stream_take(ctx);
    if (!s) {
        fm_pool_unreserve(ctx, need);
        return FM_ERR_NOMEM;
    }
    /* The receiving half is never read while sending: only the rest is set, field by field
     * (a memset of it compiled to `rep stos`, most of fm_begin_message's time in a ping-pong;
     * the assertion asks for this list to be updated when the sending half changes). */
    _Static_assert(offsetof(fm_stream, FM_STREAM_RECV_FIRST) == 144,
                   "stream_alloc must set every sending field");
    s->ctx = ctx;
    s->next = NULL;
    s->sending = 1;
    s->peer = 0;
    s->handler = (uint16_t)handler;
    s->msg_id = 0;
    s->declared = len;
    s->user = NULL;
    s->written = 0;
    s->cap = cap;
    s->seq = 0;
    s->cur = NULL;
    s->reserved = need;
    s->ndest = s->multi = 0;
    s->dests = NULL;
    s->dest_msg_ids = NULL;
    s->ptype = 0;
    s->desc_len = 0;
    s->desc = NULL;
    s->tap = NULL;
    s->tap_arg = NULL;
    *stream = s;
    return FM_OK;
}

int fm_send_alloc(fm_context *ctx, size_t len, size_t cap, int handler, fm_stream **stream)
{
    return stream_alloc(ctx, len, cap, handler, stream);
}

/* Open a stream for any handler id, internal ones included; arguments already checked. */
FM_HOT int stream_open(fm_context *ctx, int dest, size_t len, int handler, fm_stream **stream)
{
    size_t cap = len <= ctx->small_max ? ctx->small_payload : ctx->packet_size;
    int rc = stream_alloc(ctx, len, cap, handler, stream);
    if (rc)
        return rc;
    (*stream)->peer = dest; /* (its id comes with its first packet: fm_send_submit) */
    ctx->stats.messages_sent++;
    return FM_OK;
}

int fm_send_open(fm_context *ctx, int dest, size_t len, int handler, fm_stream **stream)
{
    return stream_open(ctx, dest, len, handler, stream);
}

int fm_begin_message(fm_context *ctx, int dest, size_t len, int handler, fm_stream **stream)
{
    if (stream)
        *stream = NULL;
    if (!fm_ctx_live(ctx))
        return FM_ERR_NOT_INIT;
    if (!stream)
        return FM_ERR_INVALID;
    if (dest < 0 || dest >= ctx->size)
        return FM_ERR_RANK;
    if (handler < 0 || handler >= FM_MAX_HANDLERS)
        return FM_ERR_HANDLER;
    if ((unsigned long long)len > FM_MAX_MESSAGE)
        return FM_ERR_TOO_LONG;
    return stream_open(ctx, dest, len, handler, stream);
}

static int check_sending(const fm_stream *s)
{
    if (!s)
        return FM_ERR_INVALID;
    return s->sending == 1 ? FM_OK : FM_ERR_STATE;
}

/* The common piece (arguments already checked): it fits the packet being filled (for the
 * first piece, a fresh one from the pool) without filling it, and is too small to go
 * zero-copy. Copied, nothing more. */
FM_HOT int piece_fits(fm_stream *s, const void *buf, size_t len)
{
    fm_pkt *p = s->cur;
    if (!p && !s->multi && !s->reserved && (p = fm_pool_pop_send(s->ctx)))
        s->cur = p;
    if (!p || len >= s->cap - p->len || len >= s->ctx->zcopy_min)
        return 0;
    if (len) /* (buf may be NULL then) */
        fm_copy(p->buf + FM_WIRE_HDR_LEN + p->len, buf, len);
    p->len += (uint32_t)len;
    s->written += len;
    return 1;
}

/* A full packet leaves; it is the last if the declared length is reached. */
static void submit_full(fm_stream *s)
{
    int last = s->written == s->declared;
    fm_send_submit(s, s->cur, FM_PKT_DATA, last);
    s->cur = NULL;
    if (last)
        s->sending = 2;
}

/* Copy what fits of len bytes at src into the packet being filled; a full packet leaves.
 * Returns the bytes copied. */
static size_t copy_in(fm_stream *s, const unsigned char *src, size_t len)
{
    size_t room = s->cap - s->cur->len, n = len < room ? len : room;
    memcpy(s->cur->buf + FM_WIRE_HDR_LEN + s->cur->len, src, n);
    s->cur->len += (uint32_t)n;
    s->written += n;
    if (s->cur->len == s->cap)
        submit_full(s);
    return n;
}

int fm_send_piece(fm_stream *s, const void *buf, size_t len)
{
    int rc = check_sending(s);
    if (rc == FM_ERR_STATE && s->sending == 2) /* the declared length is already sent */
        return len ? FM_ERR_OVERFLOW : FM_OK;
    if (rc)
        return rc;
    if (!buf && len)
        return FM_ERR_INVALID;
    if (len > s->declared - s->written)
        return FM_ERR_OVERFLOW;
    if (piece_fits(s, buf, len))
        return FM_OK;
    const unsigned char *src = buf;
    if (fm_zcopy_wanted(s, len) && (rc = fm_zcopy_send(s, &src, &len)) != FM_EAGAIN)
        return rc; /* (FM_EAGAIN: declined; the rest goes through packets) */
    while (len > 0) {
        if (!s->cur && (rc = lead_packet(s, 0)))
            return rc;
        size_t n = copy_in(s, src, len);
        src += n;
        len -= n;
        if (!s->cur && (rc = wait_sent(s, s->sending == 2))) /* (a packet left) */
            return rc;
    }
    return FM_OK;
}

/* Errors after which the stream stays open: waiting longer, or again later, may succeed. */
static int retryable(int rc)
{
    return rc == FM_EAGAIN || rc == FM_ERR_TIMEOUT || rc == FM_ERR_NOMEM;
}

/* The stream goes back to the free list; rc, or a multi-destination stream's cut copies. */
static int release(fm_stream *s, int rc)
{
    fm_context *ctx = s->ctx;
    if (s->multi) {
        int cut = fm_multi_close(s);
        rc = rc ? rc : cut;
    }
    fm_pool_unreserve(ctx, s->reserved);
    s->reserved = 0;
    s->sending = 0;
    fm_stream_put(ctx, s);
    return rc;
}

void fm_send_abandon(fm_stream *s)
{
    if (s->cur)
        fm_pool_put_send(s->ctx, s->cur);
    s->cur = NULL;
    release(s, FM_OK);
}

int fm_end_message(fm_stream *s)
{
    int rc = check_sending(s);
    if (rc == FM_ERR_STATE && s->sending == 2) {
        rc = FM_OK; /* the last packet has left: with the final piece, or in an earlier call */
    } else if (rc == FM_OK) {
        if (!s->cur)
            rc = lead_packet(s, 0); /* an empty last packet ends the message */
        if (rc == FM_OK) {
            fm_send_submit(s, s->cur, FM_PKT_DATA, 1);
            s->cur = NULL;
            s->sending = 2;
        }
    } else {
        return rc; /* not a sending stream: nothing to release */
    }
    if (rc == FM_OK)
        rc = wait_sent(s, 1);
    if (retryable(rc))
        return rc; /* still open: a later call goes on from here (nothing is sent twice) */
    return release(s, rc);
}

/* Requests (request.c) write their streams here, never waiting. */

/* The packet being filled, taken without waiting: FM_OK, or FM_EAGAIN when no send buffer is
 * free or a multi-destination stream is at FM_MCAST_BUFFER (it runs ahead of slow destinations
 * only that far, as wait_sent lets a writer). */
static int packet_nowait(fm_stream *s)
{
    if (s->cur)
        return FM_OK;
    if (s->multi && !multi_within_budget(s->ctx, s))
        return FM_EAGAIN;
    return lead_packet(s, 1);
}

size_t fm_send_fill(fm_stream *s, const void *buf, size_t len)
{
    const unsigned char *src = buf;
    size_t took = 0;
    while (took < len && packet_nowait(s) == FM_OK)
        took += copy_in(s, src + took, len - took);
    return took;
}

int fm_send_finish(fm_stream *s)
{
    if (s->sending == 1) {
        if (packet_nowait(s) != FM_OK)
            return FM_EAGAIN; /* an empty last packet ends the message: none free yet */
        fm_send_submit(s, s->cur, FM_PKT_DATA, 1);
        s->cur = NULL;
        s->sending = 2;
    }
    return release(s, FM_OK);
}
