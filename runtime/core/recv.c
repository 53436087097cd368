/* SPDX-License-Identifier: BSD-3-Clause */
/* The receiving side: a validated data packet joins its message's stream in sequence order,
 * and the stream's handler runs on what has arrived; a message that fits one packet skips the
 * stream list and sequencing (recv_whole). Packets a handler has read go back to the network
 * as receive buffers at the next progress round, and their credits are owed to the sender.
 *
 * Per-sender order: a sender numbers its messages to us (msg_id) as their first packets leave
 * (send.c), so the numbers follow the order of first packets on the wire. The network may
 * complete a small packet before a larger one sent ahead of it (tcp;ofi_rxm does), so a
 * first packet that comes ahead of an earlier number waits (the stream is "gated") until
 * that one has come; handlers therefore start in send order. The earlier first packet is
 * always on its way (it left first and took a credit first); should the window fill with
 * later packets all the same (a message numbered but not sent yet: store-and-forward), the
 * gate opens rather than wait for what cannot come (gate_valve).
 *
 * Messages wait here (held) without their handler running while their handler id is not
 * registered yet, or their multicast group not created yet; a handler may also defer a
 * complete message to a later progress call (fm_stream_defer), and whole.c parks a message
 * (s->parked: its handler is not called again, it is not released) while it waits for
 * FM_MESSAGE_BUFFER or for an earlier message of its sender. All of them keep their packets,
 * and with them their sender's credits: that bounds what a sender can have held. */
#include <stdlib.h>
#include <string.h>

#include "copy.h"
#include "credits.h"
#include "hooks.h"
#include "log.h"
#include "multi.h"
#include "pool.h"
#include "recv.h"
#include "recv_pool.h"
#include "streams.h"
#include "window.h"
#include "zcopy.h"

/* A fresh inbound stream for the message h starts, on no list yet. */
FM_HOT fm_stream *stream_new(fm_context *ctx, const fm_wire_hdr *h)
{
    fm_stream *s = fm_stream_take(ctx);
    if (!s)
        return NULL;
    /* Field by field, the receiving half and what both share: the sending half is never read
     * while receiving, and stores are cheaper than a memset call here. (The assertion asks
     * for this list to be updated when the receiving half changes.) */
    _Static_assert(sizeof *s - offsetof(fm_stream, FM_STREAM_RECV_FIRST) == 152,
                   "stream_new must set every receiving field");
    s->ctx = ctx;
    s->next = NULL;
    s->sending = 0;
    s->peer = (int)h->src;
    s->handler = h->handler;
    s->msg_id = h->msg_id;
    s->declared = h->msg_len;
    s->user = NULL;
    s->counted = 0;
    s->origin = s->peer;
    s->fwd = NULL;
    s->next_seq = 0;
    s->parked = 0;
    s->ext = 0;
    s->ready.head = s->ready.tail = NULL;
    s->early = NULL;
    s->avail = s->total = 0;
    s->complete = s->finished = s->started = s->error = 0;
    s->gated = s->defer_asked = s->deferred = s->await_group = 0;
    s->defer_pkts = 0;
    s->dover = 0;
    s->blocked = NULL;
    s->dbuf = NULL;
    s->dcap = s->dlen = 0;
    s->dfn = NULL;
    s->darg = NULL;
    return s;
}

/* Message ids wrap: a is before b when b - a is less than half the range. */
static inline int id_before(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) < 0;
}

/* Put s on its sender's list, in id order (= the order their first packets were sent), so
 * held messages start in send order. */
static void stream_link(fm_context *ctx, fm_stream *s)
{
    fm_stream **pp = &ctx->peers[s->peer].inbound;
    while (*pp && id_before((*pp)->msg_id, s->msg_id))
        pp = &(*pp)->next;
    s->next = *pp;
    *pp = s;
}

/* Whether packet seq can belong to stream s (NULL: a message not begun here): not moved on or
 * waiting already, and within its sender's window (each packet of s from next_seq on holds one
 * of the sender's credits at least until it moves on, so next_seq + window cannot be sent yet). */
static int seq_possible(const fm_context *ctx, const fm_stream *s, uint32_t seq)
{
    if (!s)
        return seq < (uint32_t)ctx->credits;
    if (s->complete || seq - s->next_seq >= (uint32_t)ctx->credits)
        return 0;
    for (const fm_pkt *e = s->early; e && e->seq <= seq; e = e->next)
        if (e->seq == seq)
            return 0;
    return 1;
}

/* The stream of h's message, begun here if h is the first of its packets to arrive. NULL when
 * out of memory, or when h's sequence number cannot be right (*bad_seq). A whole message
 * (packet 0, flagged last) always begins one: no other packet of it can arrive. */
static fm_stream *stream_find(fm_context *ctx, const fm_wire_hdr *h, int *bad_seq)
{
    int whole = h->seq == 0 && (h->flags & FM_PKT_LAST);
    fm_stream *s = ctx->peers[h->src].inbound;
    while (s && (s->msg_id != h->msg_id || whole || s->ext))
        s = s->next;
    *bad_seq = !seq_possible(ctx, s, h->seq);
    if (*bad_seq)
        return NULL;
    if (s)
        return s;
    s = stream_new(ctx, h);
    if (s)
        stream_link(ctx, s);
    return s;
}

/* A packet no sender of this job can have sent (a duplicate, or beyond the window): dropped,
 * its buffer reposted without owing a credit its sender never spent. */
FM_COLD int drop_seq(fm_context *ctx, fm_pkt *p, const fm_wire_hdr *h)
{
    ctx->drops[FM_WIRE_SEQ_BAD]++;
    ctx->stats.dropped++;
    fm_log(1, "dropped a packet from rank %u: message %u has no room for packet %u", h->src,
           h->msg_id, h->seq);
    return fm_recv_pool_put(ctx, p);
}

static void stream_free(fm_context *ctx, fm_stream *s)
{
    fm_stream_put(ctx, s);
    ctx->stats.messages_received++;
}

static void stream_release(fm_context *ctx, fm_stream *s)
{
    fm_stream **pp = &ctx->peers[s->peer].inbound;
    while (*pp != s)
        pp = &(*pp)->next;
    *pp = s->next;
    if (s->fwd)
        ctx->mcast_hooks->release(s);
    stream_free(ctx, s);
}

/* A packet's buffer goes back to the network and the sender gets the credit back, at the
 * start of the next progress round: off the path from a message's arrival to whatever the
 * application sends in answer. */
static void packet_done(fm_context *ctx, fm_pkt *p)
{
    if (p->kind == FM_PKT_EXT_BUF) {
        ctx->mcast_hooks->ext_release(ctx, p);
        return;
    }
    if (p->zc)
        fm_zcopy_release(ctx, p);
    fm_multi_unref(ctx, p); /* when no copy to a multicast child still sends from it */
}

int fm_recv_repost(fm_context *ctx)
{
    int rc = FM_OK;
    while (ctx->repost) {
        fm_pkt *p = ctx->repost;
        ctx->repost = p->next;
        int peer = p->peer;
        int e = fm_recv_pool_put(ctx, p);
        if (e && !rc)
            rc = e;
        fm_credits_owe(ctx, peer);
    }
    return rc;
}

/* The bytes of a packet in ready that a handler may read now; NULL while a zero-copy piece
 * is still on its way (or went straight to the delivery buffer: then off == len). */
static const unsigned char *pkt_bytes(const fm_pkt *p)
{
    if (!p->zc)
        return fm_pkt_payload(p);
    return p->zc == FM_ZC_ARRIVED ? p->data : NULL;
}

/* Move packets that are next in sequence from the early list to ready; a zero-copy piece
 * stops the move until its bytes are here (zcopy.c). */
static void stream_advance(fm_stream *s)
{
    while (!s->blocked && !s->await_group && s->early && s->early->seq == s->next_seq) {
        fm_pkt *p = s->early;
        s->early = p->next;
        p->next = NULL;
        fm_pkt_queue_push(&s->ready, p);
        s->next_seq++;
        if (p->zc) {
            p->owner = s;
            s->blocked = p;
            break;
        }
        if (s->fwd) /* on to this member's children, in order */
            s->ctx->mcast_hooks->packet(s->ctx, s, p);
        s->avail += p->len - p->off;
        if (p->flags & FM_PKT_LAST) {
            s->complete = 1;
            if (p->flags & FM_PKT_ABORT) { /* cut short upstream (multi.c) */
                s->total = s->counted;     /* every earlier packet is in: that is all */
                s->error = FM_ERR_TRUNCATED;
                s->ctx->stats.truncated++;
            }
        }
    }
}

static void stream_insert(fm_stream *s, fm_pkt *p)
{
    fm_pkt **pp = &s->early;
    while (*pp && (*pp)->seq < p->seq)
        pp = &(*pp)->next;
    p->next = *pp;
    *pp = p;
    stream_advance(s);
}

/* Free every fully read packet at the head of ready (all: every packet, read or not, up to
 * a zero-copy piece whose receive is posted: its buffer is the transport's until it lands). */
static void stream_trim(fm_context *ctx, fm_stream *s, int all)
{
    while (s->ready.head && (all || s->ready.head->off == s->ready.head->len)) {
        fm_pkt *p = s->ready.head;
        if (p->zc == FM_ZC_POSTED)
            break;
        s->ready.head = p->next;
        if (p == s->blocked)
            s->blocked = NULL; /* its receive could not be posted: the piece is lost */
        else
            s->avail -= p->len - p->off;
        packet_done(ctx, p);
    }
    if (!s->ready.head)
        s->ready.tail = NULL;
}

ssize_t fm_receive(fm_stream *s, void *buf, size_t len)
{
    if (!s || s->sending || (!buf && len))
        return FM_ERR_INVALID;
    if (s->complete && s->avail == 0 && len > 0)
        return s->error ? s->error : FM_ERR_UNDERFLOW;
    unsigned char *dst = buf;
    size_t got = 0;
    for (fm_pkt *p = s->ready.head; p && got < len; p = p->next) {
        size_t n = p->len - p->off;
        if (!n)
            continue;
        const unsigned char *bytes = pkt_bytes(p);
        if (!bytes)
            break;
        if (n > len - got)
            n = len - got;
        fm_copy(dst + got, bytes + p->off, n);
        p->off += (uint32_t)n;
        got += n;
    }
    s->avail -= got;
    if (s->handler < FM_MAX_HANDLERS) /* (fastmsg's own messages are no caller's bytes) */
        s->ctx->handled += got;
    return (ssize_t)got;
}

/* Deliver mode: copy what is left of one arrived packet into the named buffer. */
FM_HOT void pour_packet(fm_context *ctx, fm_stream *s, fm_pkt *p, const unsigned char *bytes)
{
    size_t n = p->len - p->off;
    size_t room = s->dcap - s->dlen;
    if (n > room) { /* the callback is told (FM_ERR_TOO_LONG) and the bytes counted */
        if (!s->dover)
            fm_log(1, "message from rank %d is longer than the %zu-byte delivery buffer", s->origin,
                   s->dcap);
        s->dover += n - room;
        ctx->stats.deliver_overflow += n - room;
        n = room;
    }
    fm_copy(s->dbuf + s->dlen, bytes + p->off, n);
    s->dlen += n;
    if (s->handler < FM_MAX_HANDLERS)
        ctx->handled += n;
    s->avail -= p->len - p->off;
    p->off = p->len;
}

/* Deliver mode: copy everything that has arrived into the named buffer. */
static void stream_pour(fm_context *ctx, fm_stream *s)
{
    for (fm_pkt *p = s->ready.head; p; p = p->next) {
        if (p->len == p->off)
            continue;
        const unsigned char *bytes = pkt_bytes(p);
        if (!bytes)
            break;
        pour_packet(ctx, s, p, bytes);
    }
}

/* The delivery callback of fm_stream_deliver: part of the handler, so inside its bracket (no
 * waiting call may run from it, nor release the stream under it). */
static void deliver_done(fm_context *ctx, fm_stream *s)
{
    int status = s->error ? s->error : s->dover ? FM_ERR_TOO_LONG : FM_OK;
    ctx->in_handler++;
    s->dfn(s->dbuf, s->dlen, status, s->origin, s->darg);
    ctx->in_handler--;
}

/* Packets a deferred message holds against its sender's window. */
static int ready_packets(const fm_stream *s)
{
    int n = 0;
    for (const fm_pkt *p = s->ready.head; p; p = p->next)
        n++;
    return n;
}

/* Whether s may wait for a later progress call: the messages of one sender that wait so
 * hold at most half its window (FM_CREDITS / 2 packets, or half its window here where
 * windows are granted, window.c: first grown if the budget allows). Credits owed to it stay here
 * until half the window is owed (credits.c), so with at most half held the sender always has a
 * credit, or one on its way back, for what it sends next (maybe the message the deferring
 * handler waits for). */
static int defer_fits(fm_context *ctx, const fm_stream *s)
{
    if (s->ext)
        return 1; /* its packets hold no credits: its lender bounds them */
    const fm_peer *pr = &ctx->peers[s->peer];
    int want = pr->deferred_pkts + ready_packets(s);
    if (want > pr->rwin / 2 && pr->rwin < ctx->credits)
        fm_window_asked(ctx, s->peer); /* a larger window for the sender, if there is room */
    return want <= pr->rwin / 2;
}

static void defer(fm_context *ctx, fm_stream *s)
{
    s->deferred = 1;
    s->defer_pkts = s->ext ? 0 : ready_packets(s);
    ctx->peers[s->peer].deferred_pkts += s->defer_pkts;
    ctx->ndeferred++;
}

static void undefer(fm_context *ctx, fm_stream *s)
{
    s->deferred = 0;
    ctx->peers[s->peer].deferred_pkts -= s->defer_pkts;
    s->defer_pkts = 0;
    ctx->ndeferred--;
}

/* Call the handler on what has arrived. A handler that asks for more (FM_CONTINUE) of a
 * message that has fully arrived is called again at once while it reads some of it each time
 * (no packet is coming to call it later); once it reads nothing, or when it called
 * fm_stream_defer, the message waits for a later fm_extract or fm_wait (deferred), within the
 * budget. It is not called again when nothing has changed since its last call. */
FM_HOT void stream_call(fm_context *ctx, fm_stream *s, fm_handler_slot *h)
{
    while (!s->finished && !s->dfn && (s->started ? s->avail || s->complete : !!s->ready.head)) {
        uint64_t before = s->avail;
        s->started = 1;
        s->defer_asked = 0;
        ctx->in_handler++;
        int r = h->fn(s, s->origin, h->arg);
        ctx->in_handler--;
        if (r == FM_DONE && !s->dfn)
            s->finished = 1;
        if (s->finished || s->dfn || !s->complete || s->parked)
            break;
        if (s->defer_asked) { /* (fm_stream_defer checked the budget) */
            defer(ctx, s);
            break;
        }
        if (s->avail == 0)
            break; /* all read: over */
        if (s->avail != before)
            continue;
        if (defer_fits(ctx, s)) {
            defer(ctx, s);
            break;
        }
        fm_log(0,
               "handler %d left a complete %llu-byte message from rank %d unread and asked for "
               "more, but deferred messages already hold %d of the %d packets of rank %d that "
               "may wait (half its window): the message is dropped (fm_stream_defer says so "
               "before the handler returns)",
               s->handler, (unsigned long long)s->avail, s->origin,
               ctx->peers[s->peer].deferred_pkts, ctx->peers[s->peer].rwin / 2, s->peer);
        s->finished = 1;
    }
}

/* Run the handler (or the delivery) on what has arrived; release the stream when it is over. */
static void stream_run(fm_context *ctx, fm_stream *s)
{
    if (s->gated || s->await_group)
        return; /* it waits, packets and all (see the top of this file) */
    fm_handler_slot *h = &ctx->handlers[s->handler];
again:
    if (!h->fn && !s->finished) {
        /* Not registered here yet: hold the message (its packets hold the sender's credits)
         * until fm_register_handler runs it. A zero-copy piece is declined meanwhile: its
         * bytes come as packets, within the credits. */
        fm_log(1, "holding a message from rank %d for unregistered handler %u", s->peer,
               s->handler);
        if (fm_zcopy_post(ctx, s)) {
            stream_advance(s);
            goto again;
        }
        return;
    }
    stream_call(ctx, s, h);
    if (s->dfn)
        stream_pour(ctx, s);
    if (!s->finished)
        stream_trim(ctx, s, 0);
    /* After the trim: straight into the delivery buffer if it can. Declined: its bytes follow
     * as packets, which may be here already. */
    if (fm_zcopy_post(ctx, s)) {
        stream_advance(s);
        goto again;
    }
    if (s->finished)
        stream_trim(ctx, s, 1);
    if (!s->complete || s->deferred || s->parked)
        return;
    if (s->dfn)
        deliver_done(ctx, s);
    if (s->dfn || s->finished || s->avail == 0) {
        stream_trim(ctx, s, 1);
        stream_release(ctx, s);
    }
}

/* A zero-copy piece has landed: packets behind it move up, and the handler runs. */
void fm_recv_resume(fm_context *ctx, fm_stream *s)
{
    stream_advance(s);
    stream_run(ctx, s);
}

/* ---- per-sender order ---- */

/* Start, in order, the gated messages of rank r whose turn has come. */
static void release_gated(fm_context *ctx, int r)
{
    fm_peer *pr = &ctx->peers[r];
    while (pr->gated) {
        fm_stream *s = pr->inbound;
        while (s && s->msg_id != pr->first_next)
            s = s->next;
        if (!s || !s->gated)
            return; /* its first packet has not come yet */
        s->gated = 0;
        pr->gated--;
        pr->first_next++;
        stream_run(ctx, s);
    }
}

/* Gated messages of rank r wait for an earlier first packet. If r's whole window is held here,
 * that packet is not on its way and cannot be (it was numbered but never sent): start the
 * gated ones rather than hold its credits forever. */
static void gate_valve(fm_context *ctx, int r)
{
    fm_peer *pr = &ctx->peers[r];
    if (!pr->gated || fm_recv_held_packets(ctx, r) + pr->owed < pr->rwin)
        return;
    const fm_stream *s = pr->inbound;
    while (s && !s->gated)
        s = s->next;
    fm_log(1, "rank %d: message %u never came and later ones fill the window: starting them", r,
           pr->first_next);
    pr->first_next = s->msg_id;
    release_gated(ctx, r);
}

void fm_recv_window_shrunk(fm_context *ctx, int r)
{
    fm_credits_recheck(ctx, r); /* the threshold may have come down past what is owed */
    gate_valve(ctx, r);
}

/* The first packet of s has come: its turn, or it waits for an earlier one's. */
static void first_arrived(fm_context *ctx, fm_stream *s)
{
    fm_peer *pr = &ctx->peers[s->peer];
    if (s->msg_id == pr->first_next)
        pr->first_next++;
    else if (id_before(pr->first_next, s->msg_id)) {
        s->gated = 1;
        pr->gated++;
    } /* (else an id already past: a repeated first packet, no order to keep) */
}

/* ---- multicast ---- */

/* A multicast dropped here (counted): its packets still pass through, in sequence, to be
 * freed. */
static void mcast_drop(fm_context *ctx, fm_stream *s, fm_pkt *p, const char *why)
{
    ctx->drops[FM_WIRE_DESC_BAD]++;
    ctx->stats.dropped++;
    fm_log(1, "dropped a multicast from rank %d: %s", p->peer, why);
    s->finished = 1;
    p->off = p->len;
}

/* Packet 0 of a multicast: its descriptor says where this member forwards to; the handler
 * reads after it. A descriptor that is malformed or not meant for us gets the message
 * dropped; one for a group not created here yet holds the message (packets and credits)
 * until fm_group_create makes it (fm_recv_groups_changed). 1 if p is consumed. */
FM_COLD int mcast_first(fm_context *ctx, fm_stream *s, fm_pkt *p)
{
    if (s->fwd || s->started || s->await_group)
        return 0; /* (a second packet 0: the length checks deal with it) */
    int used = ctx->mcast_hooks ? ctx->mcast_hooks->start(ctx, s, p) : FM_MCAST_DROP;
    if (used >= 0) {
        p->off = (uint32_t)used;
        return 0;
    }
    if (used == FM_MCAST_LATER) {
        s->await_group = 1; /* its packets wait, out of sequence, in early */
        ctx->held_mcast++;
    } else {
        mcast_drop(ctx, s, p, "bad descriptor");
    }
    stream_insert(s, p);
    stream_run(ctx, s);
    return 1;
}

/* Multicasts held for a group: start those whose group now exists, forwarding first. */
static void run_groups(fm_context *ctx)
{
    for (int r = 0; r < ctx->size && ctx->held_mcast; r++) {
        fm_stream *s = ctx->peers[r].inbound, *next;
        for (; s; s = next) {
            next = s->next; /* stream_run may release s */
            fm_pkt *p = s->early;
            if (!s->await_group || !p || p->seq != 0)
                continue;
            int used = ctx->mcast_hooks->start(ctx, s, p);
            if (used == FM_MCAST_LATER)
                continue;
            s->await_group = 0;
            ctx->held_mcast--;
            if (used < 0) {
                mcast_drop(ctx, s, p, "bad descriptor");
            } else if (p->len - (uint32_t)used > s->declared - s->counted) {
                mcast_drop(ctx, s, p, "longer than declared");
            } else {
                p->off = (uint32_t)used;
                s->counted += p->len - p->off;
                ctx->stats.bytes_received += p->len - p->off;
            }
            stream_advance(s); /* on to this member's children, in order */
            stream_run(ctx, s);
        }
    }
}

void fm_recv_groups_changed(fm_context *ctx)
{
    if (!ctx->held_mcast)
        return;
    if (ctx->in_handler)
        ctx->run_groups = 1; /* no handler runs inside another: the next progress round */
    else
        run_groups(ctx);
}

/* A message that fits one packet, for a registered handler, its sender's next in order: the
 * common small message. Its stream joins no list and needs no sequencing: the handler runs on
 * the packet, and the message is over when it returns (stream_call leaves it delivered,
 * finished, read, or deferred: then it joins its sender's list until its handler runs again). */
static int recv_whole(fm_context *ctx, fm_pkt *p, const fm_wire_hdr *h)
{
    fm_stream *s = stream_new(ctx, h);
    if (!s) {
        packet_done(ctx, p);
        return FM_ERR_NOMEM;
    }
    s->counted = s->avail = p->len;
    s->ready.head = s->ready.tail = p;
    s->next_seq = 1;
    s->complete = 1;
    s->total = h->msg_len;
    ctx->stats.bytes_received += p->len;
    stream_call(ctx, s, &ctx->handlers[s->handler]);
    if (s->deferred || s->parked) {
        stream_link(ctx, s);
        fm_credits_check_starved(ctx, s->peer);
        return FM_OK;
    }
    if (s->dfn) {
        pour_packet(ctx, s, p, fm_pkt_payload(p));
        deliver_done(ctx, s);
    }
    packet_done(ctx, p);
    stream_free(ctx, s);
    return FM_OK;
}

/* Any other data packet: into its message's stream, in sequence; the handler runs on it when
 * its turn has come. */
static int recv_stream(fm_context *ctx, fm_pkt *p, const fm_wire_hdr *h)
{
    int src = p->peer, bad_seq;
    fm_stream *s = stream_find(ctx, h, &bad_seq);
    if (!s) {
        if (bad_seq)
            return drop_seq(ctx, p, h);
        packet_done(ctx, p);
        return FM_ERR_NOMEM;
    }
    if (h->seq == 0)
        first_arrived(ctx, s);
    if (h->flags & FM_PKT_LAST)
        s->total = h->msg_len;
    if (h->type == FM_PKT_MCAST && h->seq == 0 && mcast_first(ctx, s, p))
        goto order;
    /* The message's bytes never exceed what its sender declared. */
    uint64_t room = s->declared - s->counted;
    if (h->type == FM_PKT_RNDV ? fm_zcopy_check(ctx, p, room) : p->len - p->off > room) {
        ctx->drops[FM_WIRE_LEN_BAD]++;
        ctx->stats.dropped++;
        packet_done(ctx, p);
        goto order;
    }
    s->counted += p->len - p->off;
    if (!p->zc)
        ctx->stats.bytes_received += p->len - p->off;
    stream_insert(s, p);
    stream_run(ctx, s);
order:
    if (ctx->peers[src].gated) {
        release_gated(ctx, src);
        gate_valve(ctx, src);
    }
    /* (a multicast's last packet, its message over here, may be held for its copies alone) */
    if (ctx->peers[src].inbound || ctx->peers[src].fwd_pkts)
        fm_credits_check_starved(ctx, src);
    return FM_OK;
}

/* ---- external messages ---- */

fm_stream *fm_recv_ext_begin(fm_context *ctx, int origin, unsigned handler, uint64_t len)
{
    fm_wire_hdr h = {.src = (uint32_t)origin, .handler = (uint16_t)handler, .msg_len = len};
    fm_stream *s = stream_new(ctx, &h);
    if (!s)
        return NULL;
    s->ext = 1;
    stream_link(ctx, s); /* (where held and deferred messages are found) */
    return s;
}

void fm_recv_ext_more(fm_context *ctx, fm_stream *s, fm_pkt *p, int last)
{
    p->kind = FM_PKT_EXT_BUF;
    p->peer = s->peer;
    p->seq = s->next_seq;
    p->off = 0;
    p->flags = !last ? 0 : last == FM_RECV_EXT_CUT ? FM_PKT_LAST | FM_PKT_ABORT : FM_PKT_LAST;
    p->zc = FM_ZC_NONE;
    p->refs = 1;
    s->counted += p->len;
    if (last)
        s->total = s->counted;
    ctx->stats.bytes_received += p->len;
    stream_insert(s, p);
    stream_run(ctx, s);
}

fm_pkt *fm_recv_take(fm_stream *s, uint32_t *off)
{
    for (fm_pkt *p = s->ready.head; p; p = p->next) {
        if (p->off == p->len)
            continue;
        if (p->zc)
            return NULL; /* (multicasts have none) */
        *off = p->off;
        s->avail -= p->len - p->off;
        p->off = p->len;
        p->refs++;
        return p;
    }
    return NULL;
}

/* A credit packet holds no credit; the credits it returns are in (they were returned within
 * the window as it was before any grant here). Then what it says of windows: a grant, a
 * shrink request (after the returned credits, which may go back at once). Out of line: the
 * data packet's path must not pay for it (callgrind). */
FM_COLD int credit_packet(fm_context *ctx, fm_pkt *p, const fm_wire_hdr *h)
{
    int src = (int)h->src;
    ctx->stats.credit_packets_received++;
    if (h->flags & FM_PKT_GRANT)
        fm_window_granted(ctx, src, h->handler);
    if (h->flags & FM_PKT_CTS)
        fm_zcopy_cleared(ctx, src, h->msg_len, (uint64_t)h->seq << 32 | h->msg_id);
    if (h->flags & FM_PKT_REVOKE)
        fm_window_revoked(ctx, src, h->seq);
    if (h->flags & FM_PKT_GIVEBACK)
        fm_window_given_back(ctx, src, h->msg_len);
    if (h->flags & FM_PKT_ASK)
        fm_window_asked(ctx, src);
    return fm_recv_pool_put(ctx, p);
}

int fm_recv_packet(fm_context *ctx, fm_pkt *p, size_t len)
{
    fm_wire_hdr h;
    fm_wire_status st = fm_wire_decode(p->buf, len, ctx->job_key, ctx->size, ctx->packet_size, &h);
    if (st != FM_WIRE_OK) {
        ctx->drops[st]++;
        ctx->stats.dropped++;
        fm_log(1, "dropped a packet: %s", fm_wire_status_str(st));
        return fm_recv_pool_put(ctx, p);
    }
    fm_peer *pr = &ctx->peers[h.src];
    pr->rx++; /* heard from (fm_wait's watch) */
    fm_credits_gained(ctx, (int)h.src, h.credits);
    if (h.type == FM_PKT_SHORT) { /* its payload moves to where every packet's is */
        if (p->region) {          /* the next message may follow at once: view it in place */
            p->buf -= FM_WIRE_HDR_LEN - FM_WIRE_SHORT_LEN;
        } else {
            /* A constant length copies inline (a call costs more than the bytes); the buffer
             * holds a packet of at least 64 bytes, and source and destination do not overlap. */
            _Static_assert(FM_WIRE_SHORT_LEN + FM_WIRE_SHORT_MAX <= FM_WIRE_HDR_LEN,
                           "the compact payload's move must not overlap");
            memcpy(p->buf + FM_WIRE_HDR_LEN, p->buf + FM_WIRE_SHORT_LEN, FM_WIRE_SHORT_MAX);
        }
        h.type = FM_PKT_DATA;
        /* Its id's low 16 bits, widened: within FM_CREDITS of the id expected next (wire.h). */
        h.msg_id = pr->first_next + (uint32_t)(int16_t)(uint16_t)(h.msg_id - pr->first_next);
    }
    if (h.type == FM_PKT_CREDIT)
        return credit_packet(ctx, p, &h);
    p->peer = (int)h.src;
    p->seq = h.seq;
    p->len = h.payload_len;
    p->off = 0;
    p->flags = h.flags;
    p->refs = 1; /* its stream's, until the handler is done with it */
    ctx->stats.packets_received++;
    if (h.handler >= FM_HANDLER_COUNT) {
        ctx->stats.dropped++;
        fm_log(0, "dropped a packet from rank %d for handler id %u (out of range)", p->peer,
               h.handler);
        if (h.seq == 0 && h.msg_id == pr->first_next) { /* its turn is over */
            pr->first_next++;
            release_gated(ctx, p->peer);
        }
        packet_done(ctx, p);
        return FM_OK;
    }
    if (h.type == FM_PKT_DATA && h.seq == 0 && (h.flags & FM_PKT_LAST) &&
        h.msg_id == pr->first_next && !pr->gated && ctx->handlers[h.handler].fn) {
        pr->first_next++;
        return recv_whole(ctx, p, &h);
    }
    return recv_stream(ctx, p, &h);
}

size_t fm_stream_available(const fm_stream *s)
{
    return s && !s->sending ? s->avail : 0;
}

size_t fm_stream_length(const fm_stream *s)
{
    if (!s)
        return 0;
    return !s->sending && s->complete ? s->total : s->declared;
}

int fm_stream_complete(const fm_stream *s)
{
    return s && !s->sending && s->complete;
}

int fm_stream_status(const fm_stream *s)
{
    if (!s || s->sending)
        return FM_ERR_INVALID;
    return s->error;
}

void fm_stream_set_user(fm_stream *s, void *user)
{
    if (s)
        s->user = user;
}

void *fm_stream_user(const fm_stream *s)
{
    return s ? s->user : NULL;
}

int fm_stream_deliver(fm_stream *s, void *buf, size_t cap, fm_deliver_fn done, void *arg)
{
    if (!s || s->sending || !done || (!buf && cap))
        return FM_ERR_INVALID;
    if (s->dfn)
        return FM_ERR_STATE;
    s->dbuf = buf;
    s->dcap = cap;
    s->dlen = 0;
    s->dfn = done;
    s->darg = arg;
    return FM_OK;
}

int fm_stream_defer(fm_stream *s)
{
    if (!s || s->sending)
        return FM_ERR_INVALID;
    if (!s->complete || s->finished || s->dfn)
        return FM_ERR_STATE;
    if (!s->defer_asked && !defer_fits(s->ctx, s))
        return FM_EAGAIN;
    s->defer_asked = 1;
    return FM_OK;
}

/* Messages held for handler id handler (-1: any registered one) that have not started. */
void fm_recv_run_held(fm_context *ctx, int handler)
{
    for (int r = 0; r < ctx->size; r++) {
        fm_stream *s = ctx->peers[r].inbound, *next;
        for (; s; s = next) {
            next = s->next; /* stream_run may release s */
            if (!s->started &&
                (s->handler == handler || (handler < 0 && ctx->handlers[s->handler].fn)))
                stream_run(ctx, s);
        }
    }
}

void fm_recv_run_late(fm_context *ctx)
{
    if (ctx->run_held) {
        ctx->run_held = 0;
        for (int id = 0; id < FM_MAX_HANDLERS; id++)
            if (ctx->handlers[id].late_fn) {
                ctx->handlers[id].fn = ctx->handlers[id].late_fn;
                ctx->handlers[id].late_fn = NULL;
            }
        fm_recv_run_held(ctx, -1);
    }
    if (ctx->run_groups) {
        ctx->run_groups = 0;
        run_groups(ctx);
    }
}

void fm_recv_run_deferred(fm_context *ctx)
{
    for (int r = 0; r < ctx->size && ctx->ndeferred; r++) {
        fm_stream *s = ctx->peers[r].inbound, *next;
        for (; s; s = next) {
            next = s->next; /* stream_run may release s (or defer it again) */
            if (s->deferred) {
                undefer(ctx, s);
                stream_run(ctx, s);
            }
        }
    }
}

/* Packets of rank r this rank holds: in its messages' streams, or freed and not yet posted
 * again; with copies, also those that copies to multicast children still send from (each
 * once, whether or not its message is over here). */
static int held_packets(const fm_context *ctx, int r, int copies)
{
    int n = copies ? ctx->peers[r].fwd_pkts : 0;
    for (const fm_stream *s = ctx->peers[r].inbound; s; s = s->next) {
        if (s->ext)
            continue;
        for (const fm_pkt *p = s->ready.head; p; p = p->next)
            n += !copies || p->fwd_sends == 0;
        for (const fm_pkt *p = s->early; p; p = p->next)
            n += !copies || p->fwd_sends == 0;
    }
    for (const fm_pkt *p = ctx->repost; p; p = p->next)
        n += p->peer == r;
    return n;
}

int fm_recv_held_packets(const fm_context *ctx, int r)
{
    return held_packets(ctx, r, 0);
}

int fm_recv_held_with_copies(const fm_context *ctx, int r)
{
    return held_packets(ctx, r, 1);
}

int fm_recv_awaited(const fm_context *ctx, int r)
{
    const fm_peer *pr = &ctx->peers[r];
    int waiting = pr->gated > 0;
    for (const fm_stream *s = pr->inbound; s && !waiting; s = s->next)
        waiting = !s->complete && !s->ext;
    /* With its whole window held here it cannot send: it owes nothing then. */
    return waiting && fm_recv_held_packets(ctx, r) + pr->owed < pr->rwin;
}

static void pkts_release(fm_context *ctx, fm_pkt *p)
{
    for (fm_pkt *next; p; p = next) {
        next = p->next;
        if (p->kind == FM_PKT_EXT_BUF)
            ctx->mcast_hooks->ext_release(ctx, p);
        else if (p->zc)
            fm_zcopy_release(ctx, p);
    }
}

/* Messages still in progress at finalize: free them and their zero-copy buffers. */
void fm_recv_fini(fm_context *ctx)
{
    for (int r = 0; r < ctx->size; r++)
        while (ctx->peers[r].inbound) {
            fm_stream *s = ctx->peers[r].inbound;
            ctx->peers[r].inbound = s->next;
            pkts_release(ctx, s->ready.head);
            pkts_release(ctx, s->early);
            if (s->fwd)
                ctx->mcast_hooks->release(s);
            fm_stream_put(ctx, s); /* (freed with every stream: fm_streams_free) */
        }
}
