/* SPDX-License-Identifier: BSD-3-Clause */
/* The join of a split multicast (a two-tree multicast, trees/twotree.c): the root sends every
 * other packet down each of two trees, so every member gets two streams, one from its parent
 * in each tree, and forwards each as it comes (forward.c). Here the two become the one message
 * its handler sees, packet by packet in the root's order: packet k of the message is the
 * (k / 2)-th of half k % 2, and the message is over when both halves are (the root ends the
 * half that did not carry the last bytes with an empty packet, multi.c).
 *
 * The halves' streams run on an internal handler that takes each packet whole (recv.c:
 * fm_recv_take) and lends its bytes to the message's external stream (fm_recv_ext_more) in
 * turn. A packet that comes ahead of its turn is copied out into a held buffer (within
 * FM_MCAST_BUFFER, as forward.c's copies for a slow child), so that its receive buffer, and
 * its parent's credit, go back at once: the credits between two members are shared by every
 * multicast that passes between them, and a member that kept one multicast's early packets in
 * them could stop another's packets that it, or a member it waits for, needs first (with
 * every root sending at once over three ranks, it did). Past FM_MCAST_BUFFER the packet
 * waits in its receive buffer, holding the credit (backpressure), as forwarding does.
 *
 * A half cut short (an abort upstream, or its stream freed before its end) cuts the message:
 * its handler sees FM_ERR_TRUNCATED. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "join.h"
#include "handlers.h"
#include "log.h"
#include "mcast_state.h"
#include "multi.h"
#include "pool.h"
#include "recv.h"

#define JOIN_RUN_TAG 0x6a6f696e /* "join": a run of ours among external packets */

/* Bytes of one half's packet lent to the message: the packet stays held until they are read. */
struct join_run {
    fm_pkt p;              /* what the message's stream reads (data, len) */
    fm_pkt *src;           /* the half's packet, held; NULL for the closing empty run */
    struct join_run *next; /* the half's queue */
};

struct join_half {
    struct fm_join *j;
    int half;
};

struct fm_join {
    struct fm_join *next;
    uint32_t root, id;
    fm_stream *ext;       /* the message; NULL once its last run is given */
    struct join_run *end; /* the closing run, kept from the start so that ending needs no
                           * memory */
    struct join_run *head[2], *tail[2];
    struct join_run *raw[2]; /* the first queued run still in its receive buffer: it and all
                              * after it (copies are made in queue order) */
    struct join_half halves[2];
    uint8_t seen[2], live[2], ended[2];
    uint8_t cut;  /* a half ended early: the message ends so */
    uint8_t turn; /* the half the next run comes from */
};

int fm_join_owns(const fm_pkt *p)
{
    return p->tag == JOIN_RUN_TAG;
}

void fm_join_release(fm_context *ctx, fm_pkt *p)
{
    struct join_run *r = (struct join_run *)(void *)((char *)p - offsetof(struct join_run, p));
    if (r->src)
        fm_multi_unref(ctx, r->src);
    free(r);
}

static void join_free(fm_context *ctx, struct fm_join *j)
{
    struct fm_join **pp = &ctx->mcast->joins;
    while (*pp != j)
        pp = &(*pp)->next;
    *pp = j->next;
    free(j->end);
    free(j);
}

/* Over: the message has its end and neither half's stream is left. */
static void maybe_free(fm_context *ctx, struct fm_join *j)
{
    if (!j->ext && j->seen[0] && j->seen[1] && !j->live[0] && !j->live[1])
        join_free(ctx, j);
}

static void give_end(fm_context *ctx, struct fm_join *j)
{
    struct join_run *e = j->end;
    fm_stream *ext = j->ext;
    j->end = NULL;
    j->ext = NULL;
    e->p.tag = JOIN_RUN_TAG;
    fm_recv_ext_more(ctx, ext, &e->p, j->cut ? FM_RECV_EXT_CUT : 1);
}

/* The message is over (cut short): what waits, and what still comes, is dropped. */
static void drop_queued(fm_context *ctx, struct fm_join *j)
{
    for (int h = 0; h < 2; h++)
        while (j->head[h]) {
            struct join_run *r = j->head[h];
            j->head[h] = r->next;
            fm_join_release(ctx, &r->p);
        }
    j->tail[0] = j->tail[1] = j->raw[0] = j->raw[1] = NULL;
}

/* Lend the runs whose turn has come; end the message when both halves are over. */
static void pump(fm_context *ctx, struct fm_join *j)
{
    if (!j->ext)
        drop_queued(ctx, j);
    while (j->ext) {
        int h = j->turn;
        struct join_run *r = j->head[h];
        if (j->cut) {
            give_end(ctx, j);
            drop_queued(ctx, j);
        } else if (r) {
            if (!(j->head[h] = r->next))
                j->tail[h] = NULL;
            if (j->raw[h] == r)
                j->raw[h] = r->next;
            j->turn ^= 1;
            fm_recv_ext_more(ctx, j->ext, &r->p, 0);
        } else if (!j->ended[h]) {
            return;
        } else if (j->ended[h ^ 1] && !j->head[h ^ 1]) {
            give_end(ctx, j);
        } else {
            j->turn ^= 1; /* this half is over: what is left is the other's */
        }
    }
}

/* Runs still waiting for their turn leave their receive buffers for held copies, while
 * FM_MCAST_BUFFER has room. */
static void settle(fm_context *ctx, struct fm_join *j)
{
    for (int h = 0; h < 2; h++)
        for (struct join_run *r; (r = j->raw[h]); j->raw[h] = r->next) {
            fm_pkt *q = fm_pool_get_held(ctx, 0);
            if (!q)
                return;
            memcpy(q->buf + FM_WIRE_HDR_LEN, r->p.data, r->p.len);
            q->len = r->p.len;
            q->refs = 1;
            fm_multi_unref(ctx, r->src);
            r->src = q;
            r->p.data = q->buf + FM_WIRE_HDR_LEN;
        }
}

/* A half's packets have come: queue their bytes for their turn. */
static int on_half(fm_stream *s, int sender, void *arg)
{
    (void)sender;
    fm_context *ctx = arg;
    struct join_half *hf = fm_stream_user(s);
    struct fm_join *j = hf->j;
    uint32_t off;
    for (fm_pkt *p; (p = fm_recv_take(s, &off));) {
        struct join_run *r = calloc(1, sizeof *r);
        if (!r) {
            fm_multi_unref(ctx, p);
            fm_log(0, "out of memory joining a multicast from rank %u: cut short here", j->root);
            j->cut = 1;
            continue;
        }
        r->src = p;
        r->p.tag = JOIN_RUN_TAG;
        r->p.data = (unsigned char *)fm_pkt_payload(p) + off;
        r->p.len = p->len - off;
        if (j->tail[hf->half])
            j->tail[hf->half]->next = r;
        else
            j->head[hf->half] = r;
        j->tail[hf->half] = r;
        if (!j->raw[hf->half])
            j->raw[hf->half] = r;
    }
    if (fm_stream_complete(s) && !fm_stream_available(s)) {
        j->ended[hf->half] = 1;
        j->cut |= fm_stream_status(s) != FM_OK;
    }
    pump(ctx, j);
    settle(ctx, j);
    return FM_CONTINUE;
}

int fm_join_init(fm_context *ctx)
{
    int id = fm_handlers_add_internal(ctx, on_half, ctx);
    if (id < 0)
        return id;
    ctx->mcast->join_handler = id;
    return FM_OK;
}

/* After the core has freed every stream (fm_finalize): the runs still queued are memory
 * alone now. */
void fm_join_fini(fm_context *ctx)
{
    while (ctx->mcast->joins) {
        struct fm_join *j = ctx->mcast->joins;
        for (int h = 0; h < 2; h++)
            while (j->head[h]) {
                struct join_run *r = j->head[h];
                j->head[h] = r->next;
                free(r);
            }
        join_free(ctx, j);
    }
}

static struct fm_join *join_find(fm_context *ctx, uint32_t root, uint32_t id)
{
    struct fm_join *j = ctx->mcast->joins;
    while (j && (j->root != root || j->id != id))
        j = j->next;
    return j;
}

static struct fm_join *join_new(fm_context *ctx, const fm_stream *s, uint32_t root, uint32_t id)
{
    struct fm_join *j = calloc(1, sizeof *j);
    if (j && (j->end = calloc(1, sizeof *j->end)) &&
        (j->ext = fm_recv_ext_begin(ctx, (int)root, s->handler, s->declared))) {
        j->root = root;
        j->id = id;
        j->next = ctx->mcast->joins;
        ctx->mcast->joins = j;
        return j;
    }
    if (j)
        free(j->end);
    free(j);
    return NULL;
}

int fm_join_attach(fm_context *ctx, fm_stream *s, uint32_t root, uint32_t id, int half)
{
    struct fm_join *j = join_find(ctx, root, id);
    if (j && j->seen[half])
        return FM_ERR_INVALID;
    if (!j && !(j = join_new(ctx, s, root, id)))
        return FM_ERR_NOMEM;
    j->seen[half] = j->live[half] = 1;
    j->halves[half] = (struct join_half){j, half};
    fm_stream_set_user(s, &j->halves[half]);
    s->handler = (uint16_t)ctx->mcast->join_handler;
    return FM_OK;
}

void fm_join_detach(fm_context *ctx, fm_stream *s)
{
    struct join_half *hf = fm_stream_user(s);
    struct fm_join *j = hf->j;
    j->live[hf->half] = 0;
    if (!j->ended[hf->half]) {
        j->ended[hf->half] = 1;
        j->cut = 1;
    }
    if (ctx->finalizing)
        return; /* (the message's stream may be freed already: fm_join_fini frees the rest) */
    pump(ctx, j);
    maybe_free(ctx, j);
}
