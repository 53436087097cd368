/* SPDX-License-Identifier: BSD-3-Clause */
/* One payload, many destinations: fm_begin_message_multi, and the fan-out that multicast
 * forwarding (forward.c) shares with it.
 *
 * A multi-destination stream fills its packet buffers exactly like a one-destination stream
 * (send.c). A full packet is then sent once per destination, each time from that same buffer
 * behind a 40-byte header of its own (the destination's message id, its credits): a "copy"
 * is only that header (FM_PKT_COPY_BUF), sent with the transport's two-part sendv. Each copy
 * waits for its own destination's credit in that destination's queue, so a slow destination
 * delays only its own copies. The payload buffer counts the copies holding it (refs) and goes
 * back to its pool when the last one has completed.
 *
 * A payload still waiting for a slow destination is "held" (pool.c): the writer runs ahead of
 * that destination, at most FM_MCAST_BUFFER bytes of such packets, then waits (send.c).
 *
 * A copy that cannot be made (out of memory for its header) ends that destination's message
 * then and there with an abort packet (FM_PKT_ABORT) in its place, sent from a header kept
 * for that purpose since the message began: the destination's handler sees FM_ERR_TRUNCATED
 * instead of waiting for packets that will never come, and the writer's fm_end_message
 * returns the error.
 *
 * A split stream (fm_multi_split: a two-tree multicast's root) sends packet k to destination
 * k % ndest alone, as that destination's packet k / ndest, the descriptor leading each one's
 * first. A destination's last packet says so as it leaves when what is left of the declared
 * length fits the other destinations' next turns; one whose message is still open when the
 * stream ends (a message ended short of its length) gets an empty last packet then (or, when
 * it has had nothing yet, the descriptor alone): an extra packet down its whole tree, after
 * the last bytes, which the message's end would otherwise wait for. */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "members.h"
#include "multi.h"
#include "send.h"

int fm_multi_drained(const fm_stream *s)
{
    for (int i = 0; i < s->ndest; i++)
        if (s->ctx->peers[s->dests[i]].pending.head)
            return 0;
    return 1;
}

/* The copy header c sent alone, as header h, to dest. */
static void header_alone(fm_context *ctx, fm_pkt *c, int dest, const fm_wire_hdr *h)
{
    fm_wire_encode(h, c->buf);
    c->payload = NULL;
    c->len = 0;
    c->peer = dest;
    fm_send_queue(ctx, c);
}

void fm_multi_abort(fm_context *ctx, fm_pkt *c, int dest, const fm_wire_hdr *h)
{
    fm_wire_hdr a = *h;
    a.flags = FM_PKT_LAST | FM_PKT_ABORT;
    a.payload_len = 0;
    a.msg_len = 0;
    fm_log(0, "message %u to rank %d cut short after %u packets: out of memory for its copies",
           a.msg_id, dest, a.seq);
    header_alone(ctx, c, dest, &a);
}

int fm_multi_send_copy(fm_context *ctx, fm_pkt *payload, int dest, const fm_wire_hdr *h)
{
    fm_pkt *c = fm_pool_get_copy(ctx);
    if (!c)
        return FM_ERR_NOMEM;
    fm_recv_unlend(ctx, payload); /* the copy may leave after the loan is over */
    fm_wire_encode(h, c->buf);
    c->payload = payload;
    c->len = h->payload_len; /* (the payload's, or a split stream's descriptor alone) */
    c->peer = dest;
    payload->refs++;
    if (payload->kind == FM_PKT_RECV_BUF && payload->fwd_sends++ == 0) {
        fm_pool_fwd_hold(ctx); /* a received packet forwarded: held for it until sent */
        ctx->peers[payload->peer].fwd_pkts++;
    }
    fm_send_queue(ctx, c);
    return FM_OK;
}

/* Per destination: the header kept to end its message early, NULL once used (that message
 * was cut short). They follow the ranks and message ids in fm_multi_open's allocation (8n
 * bytes in, so aligned), which keeps the stream itself, cleared for every message, no larger. */
static fm_pkt **multi_aborts(const fm_stream *s)
{
    return (fm_pkt **)(void *)(s->dest_msg_ids + s->ndest);
}

/* Packet p with header h to destination i, or its message ends here, cut short. */
static void copy_or_cut(fm_stream *s, fm_pkt *p, int i, fm_wire_hdr *h)
{
    fm_context *ctx = s->ctx;
    fm_pkt **aborts = multi_aborts(s);
    if (!aborts[i])
        return; /* its message was cut short */
    h->msg_id = s->dest_msg_ids[i];
    if (fm_multi_send_copy(ctx, p, s->dests[i], h) == FM_OK)
        return;
    if (h->seq > 0) /* (before packet 0 it has heard of nothing: nothing to end) */
        fm_multi_abort(ctx, aborts[i], s->dests[i], h);
    else
        fm_pool_put_copy(ctx, aborts[i]);
    aborts[i] = NULL;
}

/* An empty last packet to destination i, with header h; cut short when no header is free. */
static void split_end(fm_stream *s, int i, fm_wire_hdr *h)
{
    fm_context *ctx = s->ctx;
    fm_pkt **aborts = multi_aborts(s);
    fm_pkt *c = aborts[i] ? fm_pool_get_copy(ctx) : NULL;
    if (!c) {
        if (aborts[i])
            fm_multi_abort(ctx, aborts[i], s->dests[i], h);
        aborts[i] = NULL;
        return;
    }
    h->msg_id = s->dest_msg_ids[i];
    header_alone(ctx, c, s->dests[i], h);
}

/* Per destination of a split stream: 1 once its last packet has gone. After the descriptor
 * in fm_multi_open's allocation. */
static unsigned char *split_ended(const fm_stream *s)
{
    return (unsigned char *)s->dests +
           (size_t)s->ndest * (sizeof(int) + sizeof(uint32_t) + sizeof(fm_pkt *)) + s->desc_len;
}

/* Whether packet k, not the stream's last, is the last its destination gets: what is left of
 * the declared length fits the other destinations' next turns (full packets leave as they
 * fill, so only the stream's last can be short). */
static int split_dest_done(const fm_stream *s, uint32_t k)
{
    uint64_t room = 0;
    for (uint32_t i = 1; i < (uint32_t)s->ndest; i++)
        room += s->cap - (k + i < (uint32_t)s->ndest ? s->desc_len : 0);
    return s->declared - s->written <= room;
}

/* Packet h->seq of a split stream to its one destination; at the stream's end, an end to every
 * destination whose message is still open. */
static void split_submit(fm_stream *s, fm_pkt *p, fm_wire_hdr *h)
{
    uint32_t k = h->seq, n = (uint32_t)s->ndest, j = k % n;
    int last = (h->flags & FM_PKT_LAST) != 0;
    unsigned char *ended = split_ended(s);
    if (!ended[j]) { /* (else an empty last packet after every destination's: nothing to send) */
        ended[j] = (unsigned char)(last || split_dest_done(s, k));
        h->seq = k / n;
        h->flags = ended[j] ? FM_PKT_LAST : 0;
        h->msg_len = last ? s->written : s->declared; /* (a half's end: the whole's length) */
        if (h->seq == 0)
            s->dest_msg_ids[j] = s->ctx->peers[s->dests[j]].next_msg_id++;
        copy_or_cut(s, p, (int)j, h);
    }
    for (uint32_t i = 0; last && i < n; i++) {
        if (ended[i])
            continue;
        uint32_t had = k >= i ? (k - i) / n + 1 : 0; /* positions i, i + n, ... up to k */
        ended[i] = 1;
        h->seq = had;
        h->flags = FM_PKT_LAST;
        h->msg_len = s->written;
        h->payload_len = had ? 0 : s->desc_len;
        if (!had) {
            s->dest_msg_ids[i] = s->ctx->peers[s->dests[i]].next_msg_id++;
            copy_or_cut(s, p, (int)i, h);
        } else {
            split_end(s, (int)i, h);
        }
    }
}

void fm_multi_split(fm_stream *s)
{
    s->multi = FM_MULTI_SPLIT;
}

void fm_multi_submit(fm_stream *s, fm_pkt *p, int last)
{
    fm_context *ctx = s->ctx;
    fm_wire_hdr h = {.version = FM_WIRE_VERSION,
                     .type = s->ptype,
                     .flags = last ? FM_PKT_LAST : 0,
                     .src = (uint32_t)ctx->rank,
                     .job_key = ctx->job_key,
                     .seq = s->seq++,
                     .payload_len = p->len,
                     .handler = s->handler,
                     .msg_len = last ? s->written : s->declared};
    if (s->tap)
        s->tap(s, p, last);
    p->refs = 1; /* ours until every copy is queued: an injected copy is done at once */
    fm_pool_mark_held(ctx, p); /* until every destination has its copy (pool.c) */
    if (s->multi == FM_MULTI_SPLIT) {
        split_submit(s, p, &h);
    } else {
        if (h.seq == 0) /* numbered as the first packets leave, as send.c does */
            for (int i = 0; i < s->ndest; i++)
                s->dest_msg_ids[i] = ctx->peers[s->dests[i]].next_msg_id++;
        for (int i = 0; i < s->ndest; i++)
            copy_or_cut(s, p, i, &h);
    }
    fm_multi_unref(ctx, p);
}

int fm_multi_close(fm_stream *s)
{
    int rc = FM_OK;
    fm_pkt **aborts = multi_aborts(s);
    for (int i = 0; i < s->ndest; i++)
        if (aborts[i])
            fm_pool_put_copy(s->ctx, aborts[i]);
        else
            rc = FM_ERR_TRUNCATED; /* (a copy could not be made: multi_submit) */
    free(s->dests);                /* with the ids, abort headers and descriptor (fm_multi_open) */
    s->dests = NULL;
    s->dest_msg_ids = NULL;
    s->desc = NULL;
    s->ndest = s->multi = 0;
    s->desc_len = 0;
    return rc;
}

int fm_multi_open(fm_context *ctx, const int *dests, int n, size_t len, size_t cap, int handler,
                  const unsigned char *desc, size_t desc_len, fm_stream **stream)
{
    /* One allocation: the ranks, their message ids, abort headers, the descriptor, and a split
     * stream's ended flags. Freed by close. */
    size_t ids_at = (size_t)n * sizeof(int);
    size_t aborts_at = ids_at + (size_t)n * sizeof(uint32_t);
    size_t desc_at = aborts_at + (size_t)n * sizeof(fm_pkt *);
    unsigned char *mem = malloc(desc_at + desc_len + (size_t)n + 1); /* (+ split_ended) */
    if (!mem)
        return FM_ERR_NOMEM;
    memset(mem + desc_at + desc_len, 0, (size_t)n);
    fm_pkt **aborts = (fm_pkt **)(void *)(mem + aborts_at);
    int got = 0;
    while (got < n && (aborts[got] = fm_pool_get_copy(ctx)))
        got++;
    int rc = got < n ? FM_ERR_NOMEM : fm_send_alloc(ctx, len + desc_len, cap, handler, stream);
    if (rc) {
        while (got > 0)
            fm_pool_put_copy(ctx, aborts[--got]);
        free(mem);
        return rc;
    }
    fm_stream *s = *stream;
    s->multi = 1;
    s->declared = len;
    s->peer = ctx->rank; /* unused: every packet goes through dests */
    s->ndest = n;
    s->dests = (int *)mem;
    s->dest_msg_ids = (uint32_t *)(mem + ids_at);
    for (int i = 0; i < n; i++)
        s->dests[i] = dests[i]; /* (their message ids come with the first packet) */
    s->ptype = desc_len ? FM_PKT_MCAST : FM_PKT_DATA;
    s->desc = desc_len ? memcpy(mem + desc_at, desc, desc_len) : NULL;
    s->desc_len = (uint32_t)desc_len;
    ctx->stats.messages_sent += (uint64_t)n;
    return FM_OK;
}

int fm_begin_message_multi(fm_context *ctx, const int *dests, int n, size_t len, int handler,
                           fm_stream **stream)
{
    if (stream)
        *stream = NULL;
    if (!fm_ctx_live(ctx))
        return FM_ERR_NOT_INIT;
    if (!stream)
        return FM_ERR_INVALID;
    if (handler < 0 || handler >= FM_MAX_HANDLERS)
        return FM_ERR_HANDLER;
    if ((unsigned long long)len > FM_MAX_MESSAGE)
        return FM_ERR_TOO_LONG;
    int self, rc = fm_members_check(ctx, dests, n, &self);
    if (rc == FM_OK && self >= 0)
        rc = FM_ERR_SELF;
    return rc ? rc : fm_multi_open(ctx, dests, n, len, ctx->packet_size, handler, NULL, 0, stream);
}
