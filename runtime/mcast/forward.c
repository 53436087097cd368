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
 * A child slower than its siblings (no credit right now, or packets already waiting for it)
 * gets its copy copied out into a send buffer of ours, so that the parent's credit comes back
 * and the other children keep their pace; at most FM_MCAST_BUFFER bytes of such copies exist
 * at once (pool.c). Beyond that the copy waits in the child's queue straight from the receive
 * buffer, which then holds the parent's credit: the parent slows down to the slowest child
 * (backpressure), and memory stays bounded whatever a child does. A child that stops for good
 * stops its parent, and so the root, until FM_TIMEOUT or until liveness sees it dead.
 *
 * Two modes hold the message, for comparison. Store-and-forward (FM_MCAST_STORE_FORWARD):
 * packets are copied out as they arrive and sent on only when the last one is in, the whole
 * message to each child in turn. First-Child-First-Served (FM_MCAST_FCFS): the first child
 * gets each packet as it arrives, as above, and the copies go, once the last packet is in,
 * to the second child, then the third, ...; with one child it is FPFS and holds nothing. Both
 * are one rule: children before hold_from are served packet by packet, the others from the
 * held copies (hold_from: 0 store-and-forward, 1 FCFS, nkids FPFS). The copies are promised
 * from FM_MCAST_BUFFER when packet 0 arrives; a message that does not fit is refused then,
 * not left waiting for room: the children served from copies get packet 0 and an abort (an
 * FCFS first child still gets everything).
 *
 * Nothing is cut silently: a child whose copy cannot be made (out of memory for a header, or
 * a refused store-and-forward or FCFS) gets an abort packet in its place (multi.c), which it
 * forwards to its own children in turn, and every handler below sees FM_ERR_TRUNCATED.
 *
 * What is held for forwarding (copies, and receive buffers that a child's send still reads)
 * is counted by the core (pool.c, multi.c: fm_stats.fwd_held_peak). */
#include <stdlib.h>
#include <string.h>

#include "ack.h"
#include "forward.h"
#include "group.h"
#include "join.h"
#include "log.h"
#include "mcast_desc.h"
#include "mcast_state.h"
#include "members.h"
#include "multi.h"
#include "prefix_router.h"
#include "send.h"
#include "topo_view.h"
#include "trees/registry.h"
#include "trees/tree.h"

struct fm_fwd {
    struct fm_ack *ack; /* FM_DESC_ACK: acknowledged once this copy is complete (ack.c) */
    uint16_t handler;   /* the message's handler id, which the copies carry */
    int8_t half;        /* FM_DESC_SPLIT: which of the two trees this stream came down (its
                         * bytes go through join.c); -1 otherwise */
    int nkids;
    int hold_from;     /* children from this one on get the message from held copies */
    int refused;       /* no room for the copies: those children get packet 0 and an abort */
    int *kids;         /* ranks, in send order */
    uint32_t *kid_ids; /* our message id towards each */
    fm_pkt **aborts;   /* per child: a header kept to end its message early; NULL once used */
    size_t promised;   /* held buffers still promised to this message */
    fm_pkt_queue held; /* copies waiting for the last packet */
};

/* Whether some children are served from held copies. */
static int holds(const struct fm_fwd *f)
{
    return f->hold_from < f->nkids;
}

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

static struct fm_fwd *fwd_alloc(int nk)
{
    struct fm_fwd *f =
        calloc(1, sizeof *f + (size_t)nk * (sizeof(fm_pkt *) + sizeof(int) + sizeof(uint32_t)));
    if (f) {
        f->nkids = nk;
        f->aborts = (fm_pkt **)(f + 1);
        f->kids = (int *)(f->aborts + nk);
        f->kid_ids = (uint32_t *)(f->kids + nk);
    }
    return f;
}

/* The members as ranks: a group's or a set's array, or the list copied into out (n ints). */
static const int *member_ranks(const fm_mcast_desc *d, const struct fm_group *g, int *out)
{
    if (g)
        return g->members;
    if (d->set)
        return d->set;
    for (uint32_t i = 0; i < d->n; i++)
        out[i] = fm_mcast_desc_member(d, i);
    return out;
}

/* A prefix-routed multicast's children here (prefix_router.c): its sender says which part of
 * the destinations this member covers, so no tree is rebuilt and no parent is checked. */
static struct fm_fwd *fwd_route(fm_context *ctx, const fm_mcast_desc *d, const struct fm_group *g,
                                int src)
{
    int n = (int)d->n, *buf = malloc((size_t)n * 2 * sizeof *buf);
    struct fm_fwd *f = NULL;
    int nk =
        buf ? fm_mcast_prefix_route(ctx, (int)d->param, member_ranks(d, g, buf), n, src, buf + n)
            : FM_ERR_NOMEM;
    if (nk >= 0 && (f = fwd_alloc(nk)))
        memcpy(f->kids, buf + n, (size_t)nk * sizeof *f->kids);
    free(buf);
    return f;
}

/* This member's children in td's tree as positions into kids (NULL: count only), when src is
 * its parent there; -1 otherwise. */
static int tree_kids(const struct fm_tree_desc *td, int pos, int src, const fm_mcast_desc *d,
                     const struct fm_group *g, void *scratch, int *kids, int cap)
{
    int parent = -1;
    if (fm_tree_parent(td, pos, scratch, &parent) != FM_OK || parent < 0 ||
        member_rank(d, g, parent) != src)
        return -1;
    return fm_tree_children(td, pos, kids, cap, scratch);
}

/* Children (as ranks) of this member; NULL when the descriptor does not fit this member. A
 * split multicast's half is in the tree where src is this member's parent (the two trees
 * share no parent-child pair: twotree.c). */
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
    int pos = my_position(ctx, d, g), split = (d->flags & FM_DESC_SPLIT) != 0, half = -1;
    if (pos < 0 || pos == td.root || d->param > 1000000 || fm_tree_check(&td) != FM_OK ||
        (split && (d->builder != fm_tree_lookup("twotree") || d->param != 0)))
        return NULL;
    struct fm_fwd *f = NULL;
    if (d->builder == fm_tree_lookup("prefix")) {
        f = fwd_route(ctx, d, g, src);
    } else {
        size_t scratch_len = fm_tree_scratch_size(&td);
        void *scratch = scratch_len ? malloc(scratch_len) : NULL;
        int nk = -1;
        for (int t = 0; t <= split && nk < 0 && (scratch || !scratch_len); t++) {
            td.param = split ? t : td.param;
            if ((nk = tree_kids(&td, pos, src, d, g, scratch, NULL, 0)) >= 0)
                half = split ? t : -1;
        }
        if (nk >= 0 && (f = fwd_alloc(nk))) {
            fm_tree_children(&td, pos, f->kids, nk, scratch);
            for (int i = 0; i < nk; i++)
                f->kids[i] = member_rank(d, g, f->kids[i]);
        }
        free(scratch);
    }
    if (f)
        f->half = (int8_t)half;
    for (int i = 0; f && i < f->nkids; i++)
        f->kid_ids[i] = ctx->peers[f->kids[i]].next_msg_id++;
    /* (FCFS with one child: that child is the first, nothing to hold) */
    if (f)
        f->hold_from = d->flags & FM_DESC_STORE_FORWARD ? 0
                       : d->flags & FM_DESC_FCFS        ? 1
                                                        : f->nkids;
    return f;
}

/* Keep a header per child to end its message early with; then, for store-and-forward and
 * FCFS, the whole message's copies (refused now if FM_MCAST_BUFFER cannot hold them). p is
 * packet 0 of s. */
static int fwd_reserve(fm_context *ctx, struct fm_fwd *f, const fm_stream *s, const fm_pkt *p,
                       uint32_t desc_len)
{
    for (int i = 0; i < f->nkids; i++)
        if (!(f->aborts[i] = fm_pool_get_copy(ctx)))
            return FM_ERR_NOMEM;
    if (!holds(f))
        return FM_OK;
    if (p->flags & FM_PKT_LAST) { /* one packet: it is the whole message, nothing to hold */
        f->hold_from = f->nkids;
        return FM_OK;
    }
    /* Packet 0 is full: its length is the message's packet size. */
    uint64_t pkts = (s->declared + desc_len) / p->len + 2;
    if (pkts <= SIZE_MAX && fm_pool_hold_reserve(ctx, (size_t)pkts) == FM_OK) {
        f->promised = (size_t)pkts;
        return FM_OK;
    }
    fm_log(0,
           "%s multicast from rank %d: %llu bytes do not fit FM_MCAST_BUFFER (%lld bytes, some "
           "held already); its message to this member's %schildren is cut short",
           f->hold_from ? "FCFS" : "store-and-forward", p->peer, (unsigned long long)s->declared,
           (long long)ctx->cfg.mcast_buffer, f->hold_from ? "later " : "");
    f->refused = 1;
    return FM_OK;
}

int fm_fwd_start(fm_context *ctx, fm_stream *s, fm_pkt *p)
{
    fm_mcast_desc d;
    unsigned char *seen = fm_members_seen(ctx);
    if (!seen || fm_mcast_desc_decode(fm_pkt_payload(p), p->len, ctx->size, seen,
                                      ctx->mcast->set_scratch, &d))
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
    f->handler = s->handler;
    if (f->half >= 0) { /* one half of a split multicast: its bytes go through the join */
        int rc = fm_join_attach(ctx, s, d.root_rank, d.split_id, f->half);
        if (rc) {
            fm_log(0, "%s a split multicast from rank %u: dropped here",
                   rc == FM_ERR_NOMEM ? "out of memory for" : "a second copy of a half of",
                   d.root_rank);
            f->half = -1;
            fm_fwd_free(s);
            return FM_MCAST_DROP;
        }
    }
    if ((d.flags & FM_DESC_ACK) &&
        !(f->ack = fm_ack_member(ctx, d.root_rank, d.ack_id, p->peer, f->nkids))) {
        fm_log(0, "out of memory for a multicast from rank %u: dropped here", d.root_rank);
        fm_fwd_free(s);
        return FM_MCAST_DROP;
    }
    if (fwd_reserve(ctx, f, s, p, d.desc_len)) {
        fm_log(0, "out of memory for a multicast from rank %u: dropped here", d.root_rank);
        fm_fwd_free(s);
        return FM_MCAST_DROP;
    }
    s->origin = (int)d.root_rank;
    return (int)d.desc_len;
}

static void header_for(const fm_stream *s, const fm_pkt *p, fm_wire_hdr *h)
{
    int last = (p->flags & FM_PKT_LAST) != 0;
    *h = (fm_wire_hdr){.version = FM_WIRE_VERSION,
                       .type = FM_PKT_MCAST,
                       .flags = p->flags & (FM_PKT_LAST | FM_PKT_ABORT),
                       .src = (uint32_t)s->ctx->rank,
                       .job_key = s->ctx->job_key,
                       .seq = p->seq,
                       .payload_len = p->len,
                       .handler = s->fwd->handler,
                       .msg_len = last ? s->total : s->declared};
}

/* End child i's message early, in the place of the packet h would have sent it. */
static void cut(fm_context *ctx, struct fm_fwd *f, int i, const fm_wire_hdr *h)
{
    if (h->seq > 0) /* (before packet 0 it has heard of nothing: nothing to end) */
        fm_multi_abort(ctx, f->aborts[i], f->kids[i], h);
    else
        fm_pool_put_copy(ctx, f->aborts[i]);
    f->aborts[i] = NULL;
}

/* A copy of p in a held send buffer (within FM_MCAST_BUFFER, or promised); NULL: none. */
static fm_pkt *copy_out(fm_context *ctx, const fm_pkt *p, int promised)
{
    fm_pkt *q = fm_pool_get_held(ctx, promised);
    if (!q)
        return NULL;
    memcpy(q->buf + FM_WIRE_HDR_LEN, fm_pkt_payload(p), p->len);
    q->len = p->len;
    q->seq = p->seq;
    q->flags = p->flags;
    return q;
}

/* Packet p on to child i: from the receive buffer when the child keeps pace; copied out when
 * it lags and FM_MCAST_BUFFER has room; else from the receive buffer anyway, waiting in the
 * child's queue and holding the parent's credit (backpressure). */
static void to_child(fm_context *ctx, struct fm_fwd *f, int i, fm_pkt *p, const fm_wire_hdr *h)
{
    int kid = f->kids[i];
    fm_peer *peer = &ctx->peers[kid];
    if (peer->pending.head || peer->send_credits <= 0) {
        fm_pkt *q = copy_out(ctx, p, 0);
        if (q) {
            fm_wire_encode(h, q->buf);
            q->peer = kid;
            fm_send_queue(ctx, q);
            ctx->stats.fwd_copied++;
            return;
        }
    }
    if (fm_multi_send_copy(ctx, p, kid, h) == FM_OK) {
        ctx->stats.fwd_by_reference++;
        return;
    }
    cut(ctx, f, i, h);
}

/* The whole message, held, to each child served from copies in turn. */
static void flush_held(fm_context *ctx, fm_stream *s)
{
    struct fm_fwd *f = s->fwd;
    fm_wire_hdr h;
    for (int i = f->hold_from; i < f->nkids; i++)
        for (fm_pkt *q = f->held.head; q && f->aborts[i]; q = q->next) {
            header_for(s, q, &h);
            h.msg_id = f->kid_ids[i];
            if (fm_multi_send_copy(ctx, q, f->kids[i], &h))
                cut(ctx, f, i, &h);
        }
    while (f->held.head) {
        fm_pkt *q = f->held.head;
        f->held.head = q->next;
        q->next = NULL;
        fm_multi_unref(ctx, q); /* the copies hold it now */
    }
    f->held.tail = NULL;
}

/* Keep a copy of p until the last packet is in. */
static void hold(fm_context *ctx, fm_stream *s, fm_pkt *p)
{
    struct fm_fwd *f = s->fwd;
    fm_pkt *q = f->promised ? copy_out(ctx, p, 1) : NULL;
    if (f->promised)
        f->promised--;
    if (!q) { /* (a sender that sent more packets than its length allows) */
        fm_wire_hdr h;
        header_for(s, p, &h);
        for (int i = f->hold_from; i < f->nkids; i++)
            if (f->aborts[i]) {
                h.msg_id = f->kid_ids[i];
                cut(ctx, f, i, &h);
            }
        return;
    }
    q->refs = 1;
    q->next = NULL;
    fm_pkt_queue_push(&f->held, q);
    if (p->flags & FM_PKT_LAST)
        flush_held(ctx, s);
}

static void forward(fm_context *ctx, fm_stream *s, fm_pkt *p);

void fm_fwd_packet(fm_context *ctx, fm_stream *s, fm_pkt *p)
{
    struct fm_fwd *f = s->fwd;
    if (!f)
        return;
    if (f->nkids)
        forward(ctx, s, p);
    if (f->ack && (p->flags & FM_PKT_LAST)) { /* this member's copy is complete (or cut) */
        fm_ack_own(ctx, f->ack, p->flags & FM_PKT_ABORT ? FM_ERR_TRUNCATED : FM_OK);
        f->ack = NULL;
    }
}

static void forward(fm_context *ctx, fm_stream *s, fm_pkt *p)
{
    struct fm_fwd *f = s->fwd;
    /* Refused: every child gets this packet (packet 0) now, those after hold_from no more. */
    int now = f->refused ? f->nkids : f->hold_from;
    fm_wire_hdr h;
    header_for(s, p, &h);
    for (int i = 0; i < now; i++) {
        if (!f->aborts[i])
            continue; /* its message was cut short */
        h.msg_id = f->kid_ids[i];
        to_child(ctx, f, i, p, &h);
        if (i >= f->hold_from && f->aborts[i]) { /* packet 0 went: the abort follows it */
            h.seq = p->seq + 1;
            cut(ctx, f, i, &h);
            h.seq = p->seq;
        }
    }
    if (holds(f) && !f->refused)
        hold(ctx, s, p); /* (after the first child's send: it goes first) */
}

void fm_fwd_free(fm_stream *s)
{
    struct fm_fwd *f = s->fwd;
    if (!f)
        return;
    if (f->ack) /* over before its last packet came: cut short */
        fm_ack_own(s->ctx, f->ack, FM_ERR_TRUNCATED);
    if (f->half >= 0)
        fm_join_detach(s->ctx, s);
    while (f->held.head) {
        fm_pkt *q = f->held.head;
        f->held.head = q->next;
        fm_multi_unref(s->ctx, q);
    }
    for (int i = 0; i < f->nkids; i++)
        if (f->aborts[i])
            fm_pool_put_copy(s->ctx, f->aborts[i]);
    fm_pool_hold_unreserve(s->ctx, f->promised);
    free(f);
    s->fwd = NULL;
}
