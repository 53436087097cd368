/* SPDX-License-Identifier: BSD-3-Clause */
/* Whole-message handlers: fm_register_message_handler's functions get each message once, all
 * of it, from a handler of the core's own (fm_whole_handler) that the id's slot runs like any
 * other, so held messages, per-sender order, multicast and zero-copy work as for handlers.
 *
 * A message whose bytes are all in one packet when its handler first runs (a one-packet
 * message, the common case) goes to the function straight from the packet: no copy, no
 * record. Any other takes a record, and a buffer of its declared length (its exact length if
 * complete) from the FM_MESSAGE_BUFFER budget, and is delivered into it (fm_stream_deliver:
 * packets poured as they come, a zero-copy piece straight into it). Budget is taken in the
 * order messages first ask for it: one that does not fit, or that comes while others wait,
 * waits on ctx->whole.wait with its stream parked (recv.c: its handler is not called and it
 * is not released; its packets, and so its sender's credits, stay). Buffers go back when
 * functions return, inside handlers, where no other message may start: the next progress
 * round (fm_whole_run) starts the waiting ones. Waiting for buffers of earlier messages cannot
 * deadlock: a message that has its buffer takes every packet of it as it comes, and messages
 * take budget in the order their handlers start, which is their senders' order. (A sender with
 * two messages open at once is the exception: see fastmsg.h.)
 *
 * Per-sender order: functions run in the order the handlers of their messages first ran (for
 * one sender, the order it sent them). Every record joins its sender's queue at the first
 * call; a function runs when its message is over and every record ahead of it in the queue
 * has run (drain). A one-packet message that comes while its sender's queue is not empty is
 * copied into a buffer like any other (its packet goes back at once), or, when the budget has
 * no room, parked where it is (held: a record, no buffer, its packet kept) until its turn; its
 * stream is released at the next progress round. */
#include <stdlib.h>

#include "log.h"
#include "memory.h"
#include "recv.h"
#include "whole.h"

enum {
    W_WAIT, /* for budget: parked, on ctx->whole.wait */
    W_FILL, /* its buffer is being filled (fm_stream_deliver) */
    W_HELD, /* complete in one packet, parked, for its turn */
    W_DONE  /* over (buffer full, or buf NULL with an error): for its turn */
};

typedef struct fm_whole_msg {
    struct fm_whole_msg *next;  /* its sender's queue */
    struct fm_whole_msg *wnext; /* ctx->whole.wait, or ctx->whole.done */
    fm_context *ctx;
    fm_stream *s; /* while its stream is here (W_WAIT, W_FILL, W_HELD) */
    const fm_handler_slot *h;
    unsigned char *buf;
    size_t charge; /* budget it takes (its buffer's size) */
    size_t len;
    int status, sender, peer, state;
} fm_whole_msg;

typedef struct fm_whole_queue {
    fm_whole_msg *head, *tail;
} fm_whole_queue;

static const unsigned char no_bytes[1];

/* The bytes of a complete message when they are all in one packet (not a zero-copy piece's),
 * else NULL. */
static const unsigned char *one_piece(const fm_stream *s)
{
    const unsigned char *b = NULL;
    for (const fm_pkt *p = s->ready.head; p; p = p->next) {
        if (p->off == p->len)
            continue;
        if (p->zc || b)
            return NULL;
        b = fm_pkt_payload(p) + p->off;
    }
    return b ? b : no_bytes;
}

static void call(fm_context *ctx, const fm_handler_slot *h, const void *buf, size_t len, int status,
                 int sender)
{
    ctx->in_handler++; /* (already inside a handler's bracket, but for fm_whole_run's calls) */
    h->mfn(buf, len, status, sender, h->marg);
    ctx->in_handler--;
}

/* A buffer goes back: messages waiting for budget start at the next progress round. */
static void give_back(fm_context *ctx, fm_whole_msg *m)
{
    fm_mem_free(m->buf);
    m->buf = NULL;
    ctx->whole.used -= m->charge;
    m->charge = 0;
    if (ctx->whole.wait)
        ctx->whole.run = 1;
}

/* Run the functions of rank peer's messages whose turn has come. */
static void drain(fm_context *ctx, int peer)
{
    fm_whole_queue *q = &ctx->whole.order[peer];
    fm_whole_msg *m;
    while ((m = q->head) && (m->state == W_DONE || m->state == W_HELD)) {
        q->head = m->next;
        if (!q->head)
            q->tail = NULL;
        if (m->state == W_HELD) {
            fm_stream *s = m->s;
            const unsigned char *b = one_piece(s); /* (its packet may have moved: ask again) */
            ctx->handled += s->avail;
            call(ctx, m->h, b, s->avail, s->error, m->sender);
            s->finished = 1; /* released at the next progress round */
            m->wnext = ctx->whole.done;
            ctx->whole.done = m;
            ctx->whole.run = 1;
            continue;
        }
        call(ctx, m->h, m->buf, m->len, m->status, m->sender);
        give_back(ctx, m);
        free(m);
    }
}

/* fm_stream_deliver's callback: the message is in its buffer (or ended early). */
static void delivered(void *buf, size_t len, int status, int sender, void *arg)
{
    (void)buf;
    (void)sender;
    fm_whole_msg *m = arg;
    /* Bytes missing without an error: a zero-copy piece its sender withdrew (zcopy.c). */
    if (status == FM_OK && len < m->s->total)
        status = FM_ERR_TRUNCATED;
    m->s->user = NULL;
    m->s = NULL; /* released when this returns */
    m->len = len;
    m->status = status;
    m->state = W_DONE;
    drain(m->ctx, m->peer);
}

/* Over without its bytes (FM_ERR_TOO_LONG, FM_ERR_NOMEM): its function gets buf NULL in its
 * turn; the stream drops the rest (its handler's FM_DONE, or finished). */
static void fail(fm_context *ctx, fm_whole_msg *m, int status)
{
    m->s->user = NULL;
    m->s = NULL;
    m->status = status;
    m->state = W_DONE;
    drain(ctx, m->peer);
}

/* Its buffer: delivery into it begins (the caller runs the stream). 0, or FM_ERR_NOMEM. */
static int start(fm_context *ctx, fm_whole_msg *m)
{
    fm_whole_state *w = &ctx->whole;
    fm_stream *s = m->s;
    s->parked = 0;
    if (!(m->buf = fm_mem_alloc_raw(m->charge ? m->charge : 1))) {
        fm_log(0, "out of memory for a %zu-byte message from rank %d: dropped", m->charge,
               m->sender);
        m->charge = 0;
        s->finished = 1;
        fail(ctx, m, FM_ERR_NOMEM);
        return FM_ERR_NOMEM;
    }
    w->used += m->charge;
    if (w->used > w->peak)
        w->peak = w->used;
    m->state = W_FILL;
    fm_stream_deliver(s, m->buf, m->charge, delivered, m);
    return FM_OK;
}

/* A message that needs a record: in its sender's queue, then a buffer now, later, or never. */
static int begin(fm_context *ctx, fm_stream *s, const fm_handler_slot *h, int sender)
{
    fm_whole_state *w = &ctx->whole;
    size_t need = s->complete ? s->total : s->declared;
    fm_whole_msg *m = NULL;
    if (!w->order)
        w->order = calloc((size_t)ctx->size, sizeof *w->order);
    if (!w->order || !(m = calloc(1, sizeof *m))) {
        /* No record: no order either. Said, and given to the function at once. */
        fm_log(0, "out of memory for a message from rank %d: dropped", sender);
        call(ctx, h, NULL, need, FM_ERR_NOMEM, sender);
        return FM_DONE;
    }
    *m = (fm_whole_msg){.ctx = ctx, .s = s, .h = h, .len = need, .sender = sender, .peer = s->peer};
    fm_whole_queue *q = &w->order[s->peer];
    int first = !q->head;
    if (q->tail)
        q->tail->next = m;
    else
        q->head = m;
    q->tail = m;
    s->user = m;
    /* Behind an earlier message of its sender, a one-packet message is copied out when the
     * budget has room (below), so that its packet and its sender's credit go back: parked
     * packets could fill the sender's window while the earlier message still needs credits
     * (one a member forwards as its packets come, with the member's own messages behind it).
     * Without room it waits in its packet for its turn. */
    if (s->complete && !first && one_piece(s) && (w->wait || s->total > w->budget - w->used)) {
        m->state = W_HELD; /* its packet waits for its turn: no buffer */
        s->parked = 1;
        return FM_CONTINUE;
    }
    if (need > w->budget) {
        ctx->stats.message_too_long++;
        ctx->stats.message_too_long_bytes += need;
        int again = w->warned;
        w->warned = 1;
        fm_log(again ? 1 : 0,
               "a %zu-byte message from rank %d for handler %u can never fit in "
               "FM_MESSAGE_BUFFER=%zu: dropped (FM_ERR_TOO_LONG)%s",
               need, sender, s->handler, w->budget,
               again ? "" : "; later ones are only counted (fm_stats.message_too_long)");
        fail(ctx, m, FM_ERR_TOO_LONG);
        return FM_DONE;
    }
    m->charge = need;
    if (!w->wait && need <= w->budget - w->used) {
        start(ctx, m);
        return FM_CONTINUE; /* (ignored once delivering) */
    }
    m->state = W_WAIT;
    s->parked = 1;
    ctx->stats.message_waited++;
    if (w->wait_tail)
        w->wait_tail->wnext = m;
    else
        w->wait = m;
    w->wait_tail = m;
    fm_log(2, "a %zu-byte message from rank %d waits for FM_MESSAGE_BUFFER (%zu of %zu in use)",
           need, sender, w->used, w->budget);
    return FM_CONTINUE;
}

int fm_whole_handler(fm_stream *s, int sender, void *arg)
{
    const fm_handler_slot *h = arg;
    fm_context *ctx = s->ctx;
    if (s->user)
        return FM_CONTINUE; /* (parked: not called again, but for safety) */
    /* The common case: all of it here, in one packet, and nothing of its sender's before it. */
    if (s->complete && (!ctx->whole.order || !ctx->whole.order[s->peer].head)) {
        const unsigned char *b = one_piece(s);
        if (b) {
            ctx->handled += s->avail;
            h->mfn(b, s->avail, s->error, sender, h->marg);
            return FM_DONE;
        }
    }
    return begin(ctx, s, h, sender);
}

void fm_whole_run(fm_context *ctx)
{
    fm_whole_state *w = &ctx->whole;
    w->run = 0;
    while (w->done) { /* functions that ran: their streams go */
        fm_whole_msg *m = w->done;
        w->done = m->wnext;
        fm_stream *s = m->s;
        free(m);
        s->user = NULL;
        s->parked = 0;
        fm_recv_resume(ctx, s);
    }
    fm_whole_msg *m;
    while ((m = w->wait) && m->charge <= w->budget - w->used) {
        w->wait = m->wnext;
        if (!w->wait)
            w->wait_tail = NULL;
        fm_stream *s = m->s;
        start(ctx, m);
        fm_recv_resume(ctx, s); /* delivery: what has come, and the function if it is all */
    }
}

void fm_whole_report(const fm_context *ctx)
{
    const fm_whole_state *w = &ctx->whole;
    int n[4] = {0};
    for (int r = 0; w->order && r < ctx->size; r++)
        for (const fm_whole_msg *m = w->order[r].head; m; m = m->next)
            n[m->state]++;
    if (n[W_WAIT] + n[W_FILL] + n[W_HELD] + n[W_DONE])
        fm_log(0,
               "fm_finalize: whole messages never given to their function: %d waiting for "
               "FM_MESSAGE_BUFFER, %d incomplete, %d complete behind an earlier message of "
               "their sender",
               n[W_WAIT], n[W_FILL], n[W_HELD] + n[W_DONE]);
}

void fm_whole_fini(fm_context *ctx)
{
    fm_whole_state *w = &ctx->whole;
    for (int r = 0; w->order && r < ctx->size; r++)
        while (w->order[r].head) {
            fm_whole_msg *m = w->order[r].head;
            w->order[r].head = m->next;
            fm_mem_free(m->buf);
            free(m);
        }
    while (w->done) {
        fm_whole_msg *m = w->done;
        w->done = m->wnext;
        free(m);
    }
    free(w->order);
    *w = (fm_whole_state){0};
}
