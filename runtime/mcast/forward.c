/* SPDX-License-Identifier: BSD-3-Clause */
/* The forwarding engine of multicast: every member but the root receives a multicast's
 * packets from its parent and sends each on to its own children, packet by packet
 * (First-Packet-First-Served), while its handler reads the same packets.
 *
 * Packet 0 carries the descriptor (mcast_desc.h): fm_fwd_start checks it and computes this
 * member's children from it with the tree builders (trees/), nothing else. Then, as each
 * packet comes into sequence (recv.c), fm_fwd_packet sends it to every child in child order
 * before the next packet, from the receive buffer itself: one copy header per child
 * (multi.c), the payload shared. The buffer, and the parent's credit with it, go back once
 * every child's send has completed and the handler is done with it (refs).
 *
 * No waiting on a child: a child that has no credit right now gets its copy copied out into
 * a send buffer of ours instead, so a receive buffer is never held waiting for another
 * rank's credit. Held buffers therefore never form a cycle between concurrent multicasts,
 * and a slow child delays only its own copies.
 *
 * Store-and-forward (for comparison, FM_MCAST_STORE_FORWARD): packets are copied out as they
 * arrive and sent on only when the last one is in, the whole message to each child in turn. */
#include <stdlib.h>
#include <string.h>

#include "forward.h"
#include "group.h"
#include "log.h"
#include "mcast_desc.h"
#include "members.h"
#include "multi.h"
#include "send.h"
#include "topo_view.h"
#include "trees/tree.h"

struct fm_fwd {
    int nkids, store_forward;
    int *kids;         /* ranks, in send order */
    uint32_t *kid_ids; /* our message id towards each */
    fm_pkt_queue held; /* store-and-forward: copies waiting for the last packet */
};

/* Rank of member i. */
static int member_rank(const fm_mcast_desc *d, const struct fm_group *g, int i)
{
    return g ? g->members[i] : fm_mcast_desc_member(d, (uint32_t)i);
}

static int my_position(fm_context *ctx, const fm_mcast_desc *d, const struct fm_group *g)
{
    if (g)
        return g->pos;
    for (uint32_t i = 0; i < d->n; i++)
        if (fm_mcast_desc_member(d, i) == ctx->rank)
            return (int)i;
    return -1;
}

/* Children (as ranks) of this member; -1 when the descriptor does not fit this member. */
static struct fm_fwd *fwd_build(fm_context *ctx, const fm_mcast_desc *d, const struct fm_group *g,
                                int src)
{
    struct fm_tree_desc td = {.builder = d->builder,
                              .param = (int)d->param,
                              .n = (int)d->n,
                              .root = (int)d->root_pos,
                              .m = 1,
                              .lambda = d->lambda_milli / 1000.0};
    struct fm_mcast_topo_view view;
    td.topo = fm_mcast_topo_view(&view, ctx->topo, g ? g->members : NULL, d, (int)d->n);
    int pos = my_position(ctx, d, g), parent = -1;
    if (pos < 0 || pos == td.root || d->param > 1000000 || fm_tree_check(&td) != FM_OK)
        return NULL;
    size_t scratch_len = fm_tree_scratch_size(&td);
    void *scratch = scratch_len ? malloc(scratch_len) : NULL;
    int nk = -1;
    if ((scratch || !scratch_len) && fm_tree_parent(&td, pos, scratch, &parent) == FM_OK &&
        parent >= 0 && member_rank(d, g, parent) == src)
        nk = fm_tree_children(&td, pos, NULL, 0, scratch);
    struct fm_fwd *f = NULL;
    if (nk >= 0)
        f = calloc(1, sizeof *f + (size_t)nk * (sizeof(int) + sizeof(uint32_t)) + 1);
    if (f) {
        f->nkids = nk;
        f->kids = (int *)(f + 1);
        f->kid_ids = (uint32_t *)(f->kids + nk);
        fm_tree_children(&td, pos, f->kids, nk, scratch);
        for (int i = 0; i < nk; i++) {
            f->kids[i] = member_rank(d, g, f->kids[i]);
            f->kid_ids[i] = ctx->peers[f->kids[i]].next_msg_id++;
        }
        f->store_forward = (d->flags & FM_DESC_STORE_FORWARD) != 0;
    }
    free(scratch);
    return f;
}

int fm_fwd_start(fm_context *ctx, fm_stream *s, fm_pkt *p)
{
    fm_mcast_desc d;
    unsigned char *seen = fm_members_seen(ctx);
    if (!seen || fm_mcast_desc_decode(p->buf + FM_WIRE_HDR_LEN, p->len, ctx->size, seen, &d))
        return FM_MCAST_DROP;
    const struct fm_group *g = NULL;
    if (d.flags & FM_DESC_GROUP) {
        g = fm_group_find(ctx, d.group);
        if (!g) { /* held until this rank creates it, like a message for a handler not yet
                   * registered */
            fm_log(1, "holding a multicast from rank %u for group %#llx until this rank creates it",
                   d.root_rank, (unsigned long long)d.group);
            return FM_MCAST_LATER;
        }
        if (g->n != (int)d.n || g->members[d.root_pos] != (int)d.root_rank) {
            fm_log(0,
                   "a multicast from rank %u for group %#llx, which this rank created with "
                   "other members",
                   d.root_rank, (unsigned long long)d.group);
            return FM_MCAST_DROP;
        }
    }
    struct fm_fwd *f = fwd_build(ctx, &d, g, p->peer);
    if (!f)
        return FM_MCAST_DROP;
    s->fwd = f;
    s->origin = (int)d.root_rank;
    return (int)d.desc_len;
}

/* A copy of p, header for dest included, in a send buffer of ours; NULL if out of memory. */
static fm_pkt *copy_out(fm_context *ctx, const fm_pkt *p)
{
    fm_pkt *q = fm_pool_get_send_any(ctx);
    if (!q)
        return NULL;
    memcpy(q->buf + FM_WIRE_HDR_LEN, p->buf + FM_WIRE_HDR_LEN, p->len);
    q->len = p->len;
    q->seq = p->seq;
    q->flags = p->flags;
    return q;
}

static void to_child(fm_context *ctx, fm_pkt *p, int kid, const fm_wire_hdr *h)
{
    fm_peer *peer = &ctx->peers[kid];
    if (!peer->pending.head && peer->send_credits > 0) {
        if (fm_multi_send_copy(ctx, p, kid, h) == FM_OK)
            return;
    } else {
        fm_pkt *q = copy_out(ctx, p);
        if (q) {
            fm_wire_encode(h, q->buf);
            q->peer = kid;
            fm_send_queue(ctx, q);
            return;
        }
    }
    fm_log(0, "out of memory forwarding a multicast packet to rank %d: its message is cut", kid);
}

static void header_for(const fm_stream *s, const fm_pkt *p, fm_wire_hdr *h)
{
    int last = (p->flags & FM_PKT_LAST) != 0;
    *h = (fm_wire_hdr){.version = FM_WIRE_VERSION,
                       .type = FM_PKT_MCAST,
                       .flags = last ? FM_PKT_LAST : 0,
                       .src = (uint32_t)s->ctx->rank,
                       .job_key = s->ctx->job_key,
                       .seq = p->seq,
                       .payload_len = p->len,
                       .handler = s->handler,
                       .msg_len = last ? s->total : s->declared};
}

/* Store-and-forward: the whole message, held, to each child in turn. */
static void flush_held(fm_context *ctx, fm_stream *s)
{
    struct fm_fwd *f = s->fwd;
    fm_wire_hdr h;
    for (int i = 0; i < f->nkids; i++)
        for (fm_pkt *q = f->held.head; q; q = q->next) {
            header_for(s, q, &h);
            h.msg_id = f->kid_ids[i];
            if (fm_multi_send_copy(ctx, q, f->kids[i], &h))
                fm_log(0, "out of memory forwarding to rank %d: its message is cut", f->kids[i]);
        }
    while (f->held.head) {
        fm_pkt *q = f->held.head;
        f->held.head = q->next;
        q->next = NULL;
        fm_multi_unref(ctx, q); /* the copies hold it now */
    }
    f->held.tail = NULL;
}

void fm_fwd_packet(fm_context *ctx, fm_stream *s, fm_pkt *p)
{
    struct fm_fwd *f = s->fwd;
    if (!f || !f->nkids)
        return;
    if (f->store_forward) {
        fm_pkt *q = copy_out(ctx, p);
        if (!q) {
            fm_log(0, "out of memory holding a multicast packet: the message is cut here");
            return;
        }
        q->refs = 1;
        q->next = NULL;
        if (f->held.tail)
            f->held.tail->next = q;
        else
            f->held.head = q;
        f->held.tail = q;
        if (p->flags & FM_PKT_LAST)
            flush_held(ctx, s);
        return;
    }
    fm_wire_hdr h;
    header_for(s, p, &h);
    for (int i = 0; i < f->nkids; i++) {
        h.msg_id = f->kid_ids[i];
        to_child(ctx, p, f->kids[i], &h);
    }
}

void fm_fwd_free(fm_stream *s)
{
    struct fm_fwd *f = s->fwd;
    if (!f)
        return;
    while (f->held.head) {
        fm_pkt *q = f->held.head;
        f->held.head = q->next;
        fm_multi_unref(s->ctx, q);
    }
    free(f);
    s->fwd = NULL;
}
