/* SPDX-License-Identifier: BSD-3-Clause */
/* Multicast down a tree, the root's side: fm_mcast_begin and fm_mcast_begin_list (the tree
 * from tree_choice.c), and the layer's set-up (hooks for the core, calibration's handlers).
 *
 * The root computes only its own children, opens a multi-destination stream to them
 * (multi.c) and puts the descriptor (mcast_desc.h) at the head of packet 0; every other
 * member finds its own children from that descriptor as the packets pass (forward.c). The
 * root sends packet by packet in every mode: the forwarding mode (store-and-forward, FCFS)
 * travels in the descriptor for the members below it. */
#include <stdlib.h>
#include <string.h>

#include "ack.h"
#include "calibrate.h"
#include "forward.h"
#include "group.h"
#include "hooks.h"
#include "ipmc/ipmc.h"
#include "join.h"
#include "mcast.h"
#include "mcast_desc.h"
#include "members.h"
#include "multi.h"
#include "prefix/prefix_route.h"
#include "prefix_router.h"
#include "request.h"
#include "submit.h"
#include "mcast_state.h"
#include "topo_view.h"
#include "tree_choice.h"

/* A read external run goes back to whoever lent it: a split multicast's join, or ipmc. */
static void ext_release(fm_context *ctx, fm_pkt *p)
{
    if (fm_join_owns(p))
        fm_join_release(ctx, p);
    else
        fm_ipmc_ext_release(ctx, p);
}

static const struct fm_mcast_hooks hooks = {.start = fm_fwd_start,
                                            .packet = fm_fwd_packet,
                                            .release = fm_fwd_free,
                                            .progress = fm_ipmc_progress,
                                            .busy = fm_ipmc_busy,
                                            .pending = fm_ipmc_pending,
                                            .ext_release = ext_release};

int fm_mcast_init(fm_context *ctx)
{
    if (!(ctx->mcast = calloc(1, sizeof *ctx->mcast)) ||
        !(ctx->mcast->set_scratch = malloc(sizeof(int) * (size_t)ctx->size)))
        return FM_ERR_NOMEM;
    ctx->mcast_hooks = &hooks;
    int rc = fm_ack_init(ctx);
    if (rc == FM_OK)
        rc = fm_prefix_router_init(ctx);
    if (rc == FM_OK)
        rc = fm_ipmc_init(ctx);
    if (rc == FM_OK)
        rc = fm_calibrate_init(ctx);
    return rc ? rc : fm_join_init(ctx);
}

void fm_mcast_fini(fm_context *ctx)
{
    struct fm_mcast *mc = ctx->mcast;
    if (!mc)
        return;
    fm_ipmc_fini(ctx); /* (before the acks: its members' shares are among them) */
    fm_join_fini(ctx);
    fm_group_free_all(ctx);
    fm_ack_fini(ctx);
    fm_prefix_router_fini(ctx);
    free(mc->set_scratch);
    free(mc->costs);
    free(mc->calib_sink);
    free(mc);
    ctx->mcast = NULL;
    ctx->mcast_hooks = NULL;
}

/* The root's children as ranks into kids (room for td->n): routed for prefix trees
 * (prefix_router.c), else from the tree builder. Returns their count or an error. */
static int root_children(fm_context *ctx, const struct fm_tree_desc *td, const int *members,
                         int split, int *kids)
{
    if (!kids)
        return FM_ERR_NOMEM;
    if (td->builder == fm_tree_lookup("prefix"))
        return fm_mcast_prefix_route(ctx, td->param, members, td->n, -1, kids);
    size_t scratch_len = fm_tree_scratch_size(td);
    void *scratch = scratch_len ? malloc(scratch_len) : NULL;
    int nk = scratch || !scratch_len ? fm_tree_children(td, td->root, kids, td->n, scratch)
                                     : FM_ERR_NOMEM;
    if (split && nk == 1) { /* the top of the second tree: twotree's root has one child in each */
        struct fm_tree_desc t1 = *td;
        t1.param = 1;
        nk += fm_tree_children(&t1, td->root, kids + 1, 1, scratch);
    }
    for (int i = 0; i < nk; i++)
        kids[i] = members[kids[i]];
    free(scratch);
    return nk;
}

/* Open the root's stream: the descriptor d (root, n, tree already set), children as ranks.
 * ack: the request an acknowledged multicast completes (FM_DESC_ACK in d), else NULL. */
static int open_root(fm_context *ctx, const struct fm_tree_desc *td, fm_mcast_desc *d,
                     const int *members, size_t len, size_t payload, int handler, fm_request *ack,
                     fm_stream **stream)
{
    size_t desc_len = fm_mcast_desc_len(d);
    unsigned char *desc = malloc(desc_len);
    int split = (d->flags & FM_DESC_SPLIT) != 0;
    int *kids = malloc((size_t)td->n * sizeof *kids),
        nk = root_children(ctx, td, members, split, kids);
    struct fm_ack *a = NULL;
    if (ack && nk >= 0)
        d->ack_id = fm_ack_root_open(ctx, nk, &a);
    int rc = nk < 0 ? nk : FM_ERR_NOMEM;
    if (desc && kids && nk >= 0 && (!ack || !nk || a)) {
        fm_mcast_desc_encode(d, members, desc);
        rc = fm_multi_open(ctx, kids, nk, len, payload, handler, desc, desc_len, stream);
        if (rc == FM_OK && split)
            fm_multi_split(*stream);
    }
    if (a && rc == FM_OK)
        fm_ack_root_commit(ctx, a, ack);
    else if (a)
        fm_ack_root_cancel(a);
    free(desc);
    free(kids);
    return rc;
}

/* req: the request the stream is for (NULL: a streaming multicast); flags may hold
 * FM_MCAST_ACK only with one. */
/* A member list in ascending rank order travels as a set (FM_DESC_SET) when that is shorter
 * than 4 bytes a member: d gets its bytes (malloc'd: the caller frees d->set_bytes). */
static void set_form(fm_context *ctx, const int *members, int n, fm_mcast_desc *d)
{
    for (int i = 1; i < n; i++)
        if (members[i - 1] >= members[i])
            return;
    int sl = fm_prefix_dests_encode(members, n, ctx->size, NULL, 0);
    unsigned char *set = sl > 0 && (size_t)sl < 4 * (size_t)n ? malloc((size_t)sl) : NULL;
    if (!set || fm_prefix_dests_encode(members, n, ctx->size, set, (size_t)sl) != sl) {
        free(set);
        return;
    }
    d->flags |= FM_DESC_SET;
    d->set_len = (uint32_t)sl;
    d->set_bytes = set;
}

/* A two-tree multicast is split (every other packet down each tree, join.c) when it has two
 * packets or more, at least two members besides the root, a descriptor that leaves room for
 * data in a packet, and nothing that would have every member hold or acknowledge it
 * (store-and-forward, FCFS, FM_MCAST_ACK): otherwise it goes down tree 0 alone, an ordinary
 * tree. */
static void split_form(fm_context *ctx, fm_mcast_desc *d, size_t len, size_t payload)
{
    d->param = 0;
    unsigned whole = FM_DESC_STORE_FORWARD | FM_DESC_FCFS | FM_DESC_ACK;
    size_t desc_len = fm_mcast_desc_len(d) + FM_DESC_SPLIT_LEN;
    if (d->n < 3 || (d->flags & whole) || len + desc_len <= payload || desc_len >= payload)
        return; /* (the split's descriptor must leave room in each half's first packet) */
    d->flags |= FM_DESC_SPLIT;
    d->split_id = ++ctx->mcast->split_next;
}

/* The root's descriptor d (its tree chosen) and stream, once the arguments are checked. */
static int mcast_open(fm_context *ctx, const int *members, int n, fm_mcast_desc *d,
                      const char *tree, int mode, size_t len, int handler, fm_request *ack,
                      fm_stream **stream)
{
    struct fm_mcast_topo_view view;
    struct fm_tree_desc td = {.n = n,
                              .root = (int)d->root_pos,
                              .topo = fm_mcast_topo_view(&view, ctx->topo, members, NULL, n)};
    size_t desc_len = fm_mcast_desc_len(d), payload;
    if (desc_len > ctx->packet_size || (!d->group && !d->set_bytes && n > FM_DESC_MAX_LIST))
        return FM_ERR_TOO_LONG; /* the member list must fit in packet 0 */
    int rc = fm_mcast_choose(ctx, tree, len + desc_len, desc_len, mode, &td, &payload);
    if (rc)
        return rc;
    if (td.builder == fm_tree_lookup("ipmc")) /* not a tree: datagrams and a ring */
        return fm_ipmc_open(ctx, members, n, (int)d->root_pos, d->group, len, handler, ack, stream);
    /* Store-and-forward and FCFS members hold the whole message (forward.c): refuse here what
     * they would refuse (when their FM_MCAST_BUFFER is this rank's). */
    if ((d->flags & (FM_DESC_STORE_FORWARD | FM_DESC_FCFS)) &&
        (len + desc_len) / payload + 2 > ctx->pool.held_max)
        return FM_ERR_TOO_LONG;
    d->builder = (uint8_t)td.builder;
    d->param = (uint32_t)td.param;
    if (td.builder == fm_tree_lookup("twotree")) {
        split_form(ctx, d, len, payload);
        td.param = 0; /* (tree 1 only as the split's second) */
    }
    d->lambda_milli = (uint32_t)(td.lambda * 1000.0 + 0.5);
    td.lambda = d->lambda_milli / 1000.0; /* exactly what the members will use */
    return open_root(ctx, &td, d, members, len, payload, handler, ack, stream);
}

/* req: the request the stream is for (NULL: a streaming multicast); flags may hold
 * FM_MCAST_ACK only with one. */
static int mcast_begin(fm_context *ctx, const int *members, int n, int pos, uint64_t group,
                       const char *tree, unsigned flags, size_t len, int handler, fm_request *req,
                       fm_stream **stream)
{
    if (handler < 0 || handler >= FM_MAX_HANDLERS)
        return FM_ERR_HANDLER;
    if ((unsigned long long)len > FM_MAX_MESSAGE)
        return FM_ERR_TOO_LONG;
    int mode = fm_mcast_mode(flags);
    if (mode < 0 || ((flags & FM_MCAST_ACK) && !req))
        return FM_ERR_INVALID;
    if (pos < 0)
        return FM_ERR_NOT_MEMBER;
    int sf = (flags & FM_MCAST_STORE_FORWARD) != 0, fcfs = (flags & FM_MCAST_FCFS) != 0;
    fm_mcast_desc d = {.flags = (uint8_t)((sf ? FM_DESC_STORE_FORWARD : 0) |
                                          (fcfs ? FM_DESC_FCFS : 0) | (group ? FM_DESC_GROUP : 0) |
                                          (flags & FM_MCAST_ACK ? FM_DESC_ACK : 0)),
                       .n = (uint32_t)n,
                       .root_pos = (uint32_t)pos,
                       .root_rank = (uint32_t)ctx->rank,
                       .group = group};
    if (!group)
        set_form(ctx, members, n, &d);
    int rc = mcast_open(ctx, members, n, &d, tree, mode, len, handler,
                        flags & FM_MCAST_ACK ? req : NULL, stream);
    free((void *)d.set_bytes);
    return rc;
}

int fm_mcast_begin(fm_group *g, const char *tree, unsigned flags, size_t len, int handler,
                   fm_stream **stream)
{
    if (stream)
        *stream = NULL;
    int rc = fm_group_check(g);
    if (rc)
        return rc;
    if (!stream)
        return FM_ERR_INVALID;
    return mcast_begin(g->ctx, g->members, g->n, g->pos, g->id, tree, flags, len, handler, NULL,
                       stream);
}

int fm_mcast_begin_list(fm_context *ctx, const int *members, int n, const char *tree,
                        unsigned flags, size_t len, int handler, fm_stream **stream)
{
    if (stream)
        *stream = NULL;
    if (!fm_ctx_live(ctx))
        return FM_ERR_NOT_INIT;
    if (!stream)
        return FM_ERR_INVALID;
    int pos, rc = fm_members_check(ctx, members, n, &pos);
    if (rc)
        return rc;
    return mcast_begin(ctx, members, n, pos, 0, tree, flags, len, handler, NULL, stream);
}

/* Requests (core/request.c) over a root's stream. */

/* Worker threads (core/submit.h): the multicast's arguments copied, started on the progress
 * thread. */
static int start_imcast(fm_context *ctx, fm_submit *s)
{
    (void)ctx;
    return fm_imcast(s->group, s->tree[0] ? s->tree : NULL, s->flags, s->buf, s->len, s->handler,
                     s->done, s->arg, NULL);
}

static int start_imcast_list(fm_context *ctx, fm_submit *s)
{
    return fm_imcast_list(ctx, s->ranks, s->n, s->tree[0] ? s->tree : NULL, s->flags, s->buf,
                          s->len, s->handler, s->done, s->arg, NULL);
}

static int submit_mcast(fm_context *ctx, fm_group *g, const int *members, int n, const char *tree,
                        unsigned flags, const void *buf, size_t len, int handler,
                        fm_request_fn done, void *arg, fm_request **req)
{
    if (tree && strlen(tree) >= sizeof(((fm_submit *)0)->tree))
        return FM_ERR_TREE;
    if (members) {
        if (n <= 0)
            return n ? FM_ERR_INVALID : FM_ERR_EMPTY;
        for (int i = 0; i < n; i++)
            if (members[i] < 0 || members[i] >= ctx->size)
                return FM_ERR_RANK;
    } else if (!g) {
        return FM_ERR_INVALID;
    }
    fm_submit *s;
    int rc = fm_req_submit(ctx, req, buf, len, handler, done, arg, members ? n : 0, &s);
    if (rc)
        return rc;
    if (members)
        memcpy(s->ranks, members, (size_t)n * sizeof *members);
    s->group = g;
    s->flags = flags;
    if (tree)
        strcpy(s->tree, tree);
    s->start = members ? start_imcast_list : start_imcast;
    return fm_submit_push(ctx, s);
}

int fm_imcast(fm_group *g, const char *tree, unsigned flags, const void *buf, size_t len,
              int handler, fm_request_fn done, void *arg, fm_request **req)
{
    if (req)
        *req = NULL;
    if (fm_live_ctx && fm_submit_foreign(fm_live_ctx)) /* (the group is looked up later) */
        return submit_mcast(fm_live_ctx, g, NULL, 0, tree, flags, buf, len, handler, done, arg,
                            req);
    int rc = fm_group_check(g);
    if (rc)
        return rc;
    fm_request *r;
    if ((rc = fm_req_new(g->ctx, buf, len, &r)))
        return rc;
    fm_stream *s = NULL;
    rc = mcast_begin(g->ctx, g->members, g->n, g->pos, g->id, tree, flags, len, handler, r, &s);
    return fm_req_start(r, rc, s, buf, len, done, arg, req);
}

int fm_imcast_list(fm_context *ctx, const int *members, int n, const char *tree, unsigned flags,
                   const void *buf, size_t len, int handler, fm_request_fn done, void *arg,
                   fm_request **req)
{
    if (req)
        *req = NULL;
    if (!fm_ctx_live(ctx))
        return FM_ERR_NOT_INIT;
    if (fm_submit_foreign(ctx))
        return submit_mcast(ctx, NULL, members, n, tree, flags, buf, len, handler, done, arg, req);
    int pos, rc = fm_members_check(ctx, members, n, &pos);
    if (rc)
        return rc;
    fm_request *r;
    if ((rc = fm_req_new(ctx, buf, len, &r)))
        return rc;
    fm_stream *s = NULL;
    rc = mcast_begin(ctx, members, n, pos, 0, tree, flags, len, handler, r, &s);
    return fm_req_start(r, rc, s, buf, len, done, arg, req);
}

static int cmp_rank(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int fm_imcast_dests(fm_context *ctx, const int *dests, int n, const char *tree, unsigned flags,
                    const void *buf, size_t len, int handler, fm_request_fn done, void *arg,
                    fm_request **req)
{
    if (req)
        *req = NULL;
    if (!fm_ctx_live(ctx))
        return FM_ERR_NOT_INIT;
    if (!dests || n < 0)
        return FM_ERR_INVALID;
    if (n == 0)
        return FM_ERR_EMPTY;
    /* The members: this rank and the set, ascending, so that the set travels compactly
     * (checked here without the context's scratch: a worker thread may call this). */
    int *members = malloc(sizeof(int) * ((size_t)n + 1));
    if (!members)
        return FM_ERR_NOMEM;
    int rc = FM_OK;
    for (int i = 0; i < n && !rc; i++)
        rc = dests[i] < 0 || dests[i] >= ctx->size ? FM_ERR_RANK
             : dests[i] == ctx->rank               ? FM_ERR_SELF
                                                   : FM_OK;
    memcpy(members, dests, sizeof(int) * (size_t)n);
    members[n] = ctx->rank;
    qsort(members, (size_t)n + 1, sizeof *members, cmp_rank);
    for (int i = 1; i <= n && !rc; i++)
        if (members[i - 1] == members[i])
            rc = FM_ERR_DUPLICATE;
    if (!rc)
        rc = fm_imcast_list(ctx, members, n + 1, tree, flags, buf, len, handler, done, arg, req);
    free(members);
    return rc;
}
