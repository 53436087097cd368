/* SPDX-License-Identifier: BSD-3-Clause */
/* The zero-copy path for large pieces. Copying a large piece through packets costs three
 * copies per byte (into the packet, across processes, out to the handler's buffer); here the
 * piece travels as one tagged message from the sender's buffer into the buffer the receiving
 * handler named with fm_stream_deliver, with whatever single-copy mechanism the provider has.
 *
 * A rendezvous in three steps, all driven by progress:
 *   1. Sender (outside handlers only, since it waits): an FM_PKT_RNDV packet takes the piece's
 *      place in the stream (it has a sequence number and takes a credit, so credits still
 *      bound what is in flight) and announces the piece's length and id.
 *   2. Receiver: when the announcement reaches the head of its stream, later packets wait
 *      behind it (the stream is "blocked"). After the handler has run, the piece's receive is
 *      posted straight into the delivery buffer if the handler asked for one and the piece
 *      fits; else into a bounce buffer that fm_receive then reads like a packet, if the
 *      handler is reading (it has run and read everything before the piece) and the bounce
 *      buffers of that sender's pieces stay within FM_ZCOPY_BOUNCE. The answer goes back on a
 *      credit packet (which needs no credit): clear-to-send, with the tag of the posted
 *      receive, chosen here from a random start, so another job's tagged sends cannot match
 *      it. Otherwise (no handler registered yet, a handler that is behind or done with the
 *      message, a bounce over budget) the piece is declined and its bytes follow in ordinary
 *      packets, within the credit window like any others: memory never grows with a piece.
 *      Posting never waits for the handler, so a sender never waits on a receiver that is
 *      itself sending.
 *   3. Sender: on the clear-to-send, the tagged send starts; fm_send_piece returns when it has
 *      completed, i.e. when the caller's buffer is free. On a decline it writes the piece
 *      into packets.
 * The transport sees the caller's buffer only after step 2, so the tagged message always
 * finds its receive posted (no unexpected-message copies or queues at the receiver), and a
 * sender that gives up waiting for the answer (FM_TIMEOUT) leaves nothing behind that reads
 * its buffer: a clear-to-send that comes later for that piece is answered with an empty
 * tagged send, which tells the receiver the piece was withdrawn.
 * An announcement is never its message's last packet: the piece may yet come as packets. */
#include <time.h>

#include "credits.h"
#include "log.h"
#include "memory.h"
#include "pool.h"
#include "progress.h"
#include "recv.h"
#include "topo.h"
#include "zcopy.h"

/* Per piece: larger pieces go as several (fm_pkt.len is 32 bits). */
#define FM_ZC_MAX_PIECE ((size_t)1 << 30)
/* Tag: the sender's rank above a 40-bit per-peer counter, so tags never repeat in a job. */
#define FM_ZC_TAG_BITS 40

void fm_zcopy_init(fm_context *ctx)
{
    /* A start other jobs cannot predict (their keys differ), never repeated within a job. */
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    uint64_t x =
        ctx->job_key ^ (uint64_t)ctx->rank << 32 ^ (uint64_t)t.tv_nsec ^ (uint64_t)t.tv_sec << 20;
    x ^= x >> 31;
    x *= 0x9E3779B97F4A7C15ull;
    x ^= x >> 29;
    ctx->zc.next_rtag = x | 1;
}

static uint64_t next_rtag(fm_context *ctx)
{
    uint64_t t = ctx->zc.next_rtag++;
    return t ? t : ctx->zc.next_rtag++;
}

/* The largest piece one announcement carries. */
static size_t piece_max(const fm_context *ctx)
{
    size_t max = ctx->tp->info.max_msg_size;
    return max == 0 || max > FM_ZC_MAX_PIECE ? FM_ZC_MAX_PIECE : max;
}

/* Whether a piece of len bytes may go zero-copy without the stream running out of sequence
 * numbers: the packet flushed before it, its announcements, then the rest of the message in
 * packets must stay within FM_WIRE_MAX_PACKETS (stream_alloc promised the whole message that
 * much, copied). The rest counts the piece when the receiver may decline it (it is then
 * copied), or else ends with an empty last packet. An announced piece costs at most two
 * numbers per byte (an announcement, then at most a packet per byte if declined), so a
 * message shorter than half the numbers can never run out. */
static int seqs_suffice(const fm_stream *s, size_t len)
{
    if (s->declared < FM_WIRE_MAX_PACKETS / 2 - 1)
        return 1;
    uint64_t max = piece_max(s->ctx), cap = s->cap;
    uint64_t rest = s->declared - s->written, after = rest - len;
    uint64_t declined = (rest + cap - 1) / cap, taken = after ? (after + cap - 1) / cap : 1;
    uint64_t need = (uint64_t)s->seq + (s->cur && s->cur->len) + (len + max - 1) / max +
                    (declined > taken ? declined : taken);
    return need <= FM_WIRE_MAX_PACKETS;
}

int fm_zcopy_wanted(const fm_stream *s, size_t len)
{
    const fm_context *ctx = s->ctx;
    size_t min =
        ctx->zcopy_local > ctx->zcopy_min && fm_topo_same_host(ctx->topo, ctx->rank, s->peer) == 1
            ? ctx->zcopy_local
            : ctx->zcopy_min;
    /* Internal messages (the barrier's) are read whole at their first packet: never here. */
    return len >= min && ctx->tp->info.tagged && !ctx->in_handler && !s->reserved &&
           !ctx->zc.send.waiting && !ctx->zc.send.busy && s->handler < FM_MAX_HANDLERS &&
           !s->multi && seqs_suffice(s, len);
}

static int zc_cleared(fm_context *ctx, void *arg)
{
    (void)arg;
    return ctx->zc.send.cleared;
}

static int zc_send_done(fm_context *ctx, void *arg)
{
    (void)arg;
    return !ctx->zc.send.busy;
}

void fm_zcopy_sent(fm_context *ctx, void *op, int status)
{
    if (op == &ctx->zc.withdraw)
        return; /* an empty send that withdrew a piece */
    ctx->zc.send.busy = 0;
    ctx->zc.send.status = status;
    if (ctx->zc.send.mr)
        ctx->tp->ops->mem_dereg(ctx->tp, ctx->zc.send.mr);
    ctx->zc.send.mr = NULL;
}

void fm_zcopy_cleared(fm_context *ctx, int peer, uint64_t piece, uint64_t rtag)
{
    if (ctx->zc.send.waiting && ctx->zc.send.tag == piece) {
        ctx->zc.send.cleared = 1;
        ctx->zc.send.declined = rtag == 0;
        ctx->zc.send.rtag = rtag;
        return;
    }
    if (rtag == 0)
        return; /* declined: nothing was posted */
    /* A piece its sender gave up on: end the posted receive with an empty message. */
    static const unsigned char none;
    int rc = ctx->tp->ops->tsend(ctx->tp, peer, &none, 0, NULL, rtag, &ctx->zc.withdraw);
    if (rc)
        fm_log(0, "cannot withdraw a zero-copy piece from rank %d: %s", peer, fm_strerror(rc));
}

/* The tagged send of a cleared piece; returns once it has completed. */
static int zc_transfer(fm_stream *s, const void *buf, size_t len)
{
    fm_context *ctx = s->ctx;
    fm_tp *tp = ctx->tp;
    int rc = FM_OK;

    ctx->zc.send.mr = NULL;
    if (tp->info.needs_mr) {
        rc = tp->ops->mem_reg(tp, (void *)buf, len, &ctx->zc.send.mr);
        FM_CHECK_QUIET(rc == FM_OK, rc);
    }
    ctx->zc.send.busy = 1;
    ctx->zc.send.status = FM_OK;
    rc = tp->ops->tsend(tp, s->peer, buf, len, ctx->zc.send.mr, ctx->zc.send.rtag, &ctx->zc.send);
    if (rc) {
        fm_zcopy_sent(ctx, &ctx->zc.send, rc);
        return rc;
    }
    /* The receiver has posted its buffer and is driving progress: this is short. A receiver
     * that stops right here leaves the tagged send holding buf (README, known problems). */
    rc = fm_progress_until(ctx, zc_send_done, NULL, "a zero-copy send to complete");
    return rc ? rc : ctx->zc.send.status;
error:
    return rc;
}

/* One piece: FM_OK once it has gone, FM_ZC_DECLINED when it must go through packets. */
#define FM_ZC_DECLINED 1
static int zc_piece(fm_stream *s, const unsigned char *buf, size_t len)
{
    fm_context *ctx = s->ctx;
    int rc;

    /* Bytes already in the current packet go first, in a packet of their own. */
    if (s->cur && s->cur->len) {
        fm_send_submit(s, s->cur, FM_PKT_DATA, 0);
        s->cur = NULL;
    }
    if (!s->cur && (rc = fm_send_next_packet(s)))
        return rc;
    fm_pkt *p = s->cur;
    s->cur = NULL;
    uint64_t n = ctx->peers[s->peer].next_tag++ & (((uint64_t)1 << FM_ZC_TAG_BITS) - 1);
    ctx->zc.send.tag = (uint64_t)ctx->rank << FM_ZC_TAG_BITS | n;
    ctx->zc.send.waiting = 1;
    ctx->zc.send.cleared = 0;
    ctx->zc.send.declined = 0;
    fm_wire_rndv_encode(len, ctx->zc.send.tag, p->buf + FM_WIRE_HDR_LEN);
    p->len = FM_WIRE_RNDV_LEN;
    fm_send_submit(s, p, FM_PKT_RNDV, 0); /* (never last: the piece may come as packets) */
    rc = fm_progress_until(ctx, zc_cleared, NULL, "a receiver to answer a zero-copy piece");
    ctx->zc.send.waiting = 0;
    if (rc == FM_OK && ctx->zc.send.declined)
        return FM_ZC_DECLINED;
    if (rc == FM_OK)
        rc = zc_transfer(s, buf, len);
    if (rc == FM_OK) {
        s->written += len;
        ctx->stats.zcopy_sent++;
        ctx->stats.bytes_sent += len;
    }
    return rc;
}

int fm_zcopy_send(fm_stream *s, const unsigned char **buf, size_t *len)
{
    size_t max = piece_max(s->ctx);
    while (*len > 0) {
        size_t n = *len < max ? *len : max;
        int rc = zc_piece(s, *buf, n);
        if (rc == FM_ZC_DECLINED)
            return FM_EAGAIN; /* the rest through packets */
        if (rc)
            return rc;
        *buf += n;
        *len -= n;
    }
    return FM_OK;
}

int fm_zcopy_check(fm_context *ctx, fm_pkt *p, uint64_t room)
{
    uint64_t len, tag;
    fm_wire_rndv_decode(fm_pkt_payload(p), &len, &tag);
    if (len == 0 || len > room || len > FM_ZC_MAX_PIECE ||
        (tag >> FM_ZC_TAG_BITS) != (uint64_t)p->peer) {
        fm_log(1, "dropped a zero-copy announcement from rank %d: %llu bytes, tag %#llx", p->peer,
               (unsigned long long)len, (unsigned long long)tag);
        return FM_ERR_INVALID;
    }
    (void)ctx;
    p->len = (uint32_t)len;
    p->tag = tag;
    p->zc = FM_ZC_ANNOUNCED;
    p->data = NULL;
    p->data_mr = NULL;
    return FM_OK;
}

/* The handler reads with fm_receive and has read everything before the piece. (Not a message
 * parked by whole.c: one waiting for FM_MESSAGE_BUFFER holds no memory beyond its packets.) */
static int reader_ready(const fm_context *ctx, const fm_stream *s, const fm_pkt *p)
{
    return ctx->handlers[s->handler].fn && s->started && !s->finished && !s->dfn && !s->parked &&
           s->ready.head == p;
}

/* Where the piece goes: the delivery buffer when everything before it has been delivered and
 * it fits; a bounce buffer when the reader is ready for it and its sender's bounce buffers
 * stay within FM_ZCOPY_BOUNCE; else nowhere (NULL: declined, or out of memory). */
static unsigned char *zc_target(fm_context *ctx, fm_stream *s, fm_pkt *p)
{
    p->data = NULL;
    if (s->dfn && !s->finished && s->ready.head == p && s->dcap - s->dlen >= p->len)
        return s->dbuf + s->dlen;
    fm_peer *peer = &ctx->peers[p->peer];
    if (!reader_ready(ctx, s, p) || p->len > (size_t)ctx->cfg.zcopy_bounce - peer->bounce)
        return NULL;
    if ((p->data = fm_mem_alloc_raw(p->len))) {
        p->data_len = p->len;
        peer->bounce += p->len;
    }
    return p->data;
}

/* Decline the piece: its bytes come through packets, in the places after the announcement,
 * which becomes an empty packet. */
static int zc_decline(fm_context *ctx, fm_stream *s, fm_pkt *p)
{
    if (fm_credits_queue_cts(ctx, p->peer, p->tag, 0) != FM_OK) {
        fm_log(0, "out of memory: zero-copy piece from rank %d neither taken nor declined",
               p->peer);
        return 0; /* its sender times out and withdraws it */
    }
    s->counted -= p->len; /* counted again as its packets come */
    p->len = 0;
    p->off = 0;
    p->zc = FM_ZC_NONE;
    s->blocked = NULL;
    return 1;
}

int fm_zcopy_post(fm_context *ctx, fm_stream *s)
{
    fm_pkt *p = s->blocked;
    fm_tp *tp = ctx->tp;
    int rc = FM_OK;

    if (!p || p->zc != FM_ZC_ANNOUNCED)
        return 0;
    unsigned char *dst = zc_target(ctx, s, p);
    if (!dst)
        return zc_decline(ctx, s, p);
    if (tp->info.needs_mr) {
        rc = tp->ops->mem_reg(tp, dst, p->len, &p->data_mr);
        FM_CHECK(rc == FM_OK, rc, "cannot register a %u-byte zero-copy buffer", p->len);
    }
    p->rtag = next_rtag(ctx);
    rc = tp->ops->trecv(tp, p->peer, dst, p->len, p->data_mr, p->rtag, p);
    FM_CHECK(rc == FM_OK, rc, "cannot post the receive of a zero-copy piece from rank %d", p->peer);
    p->zc = FM_ZC_POSTED;
    if (fm_credits_queue_cts(ctx, p->peer, p->tag, p->rtag) == FM_OK)
        return 0;
    /* Without its clear-to-send the piece never comes: its sender times out and withdraws
     * it. The posted receive stays until then (or until finalize closes the endpoint). */
    fm_log(0, "out of memory: zero-copy piece from rank %d not requested", p->peer);
    return 0;
error:
    /* The message is dropped here (logged above); the sender's wait ends in its FM_TIMEOUT. */
    fm_zcopy_release(ctx, p);
    p->zc = FM_ZC_ANNOUNCED;
    s->finished = 1;
    return 0;
}

void fm_zcopy_arrived(fm_context *ctx, fm_pkt *p, size_t len, int status)
{
    fm_stream *s = p->owner;
    if (p->data_mr)
        ctx->tp->ops->mem_dereg(ctx->tp, p->data_mr);
    p->data_mr = NULL;
    if (status != FM_OK || len == 0) {
        /* (Empty: the sender gave up waiting and withdrew the piece.) */
        fm_log(0, "zero-copy piece from rank %d %s; the rest of its message is dropped", p->peer,
               status != FM_OK ? fm_strerror(status) : "was withdrawn by its sender");
        len = 0;
        s->finished = 1;
    } else if (len != p->len) {
        fm_log(0, "zero-copy piece from rank %d: %zu bytes announced as %u", p->peer, len, p->len);
    }
    p->len = (uint32_t)len;
    p->zc = FM_ZC_ARRIVED;
    ctx->stats.zcopy_received += len > 0;
    ctx->stats.bytes_received += len;
    if (p->data) {
        s->avail += len;
    } else { /* already where the handler wanted it */
        s->dlen += len;
        if (s->handler < FM_MAX_HANDLERS)
            ctx->handled += len;
        p->off = p->len;
    }
    s->blocked = NULL;
    if (p->flags & FM_PKT_LAST)
        s->complete = 1;
    fm_recv_resume(ctx, s);
}

void fm_zcopy_release(fm_context *ctx, fm_pkt *p)
{
    if (p->data_mr)
        ctx->tp->ops->mem_dereg(ctx->tp, p->data_mr);
    if (p->data)
        ctx->peers[p->peer].bounce -= p->data_len;
    fm_mem_free(p->data);
    p->data = NULL;
    p->data_mr = NULL;
    p->zc = FM_ZC_NONE;
}
