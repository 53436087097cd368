/* SPDX-License-Identifier: BSD-3-Clause */
/* Delivery acknowledgement (FM_MCAST_ACK): the root's request completes only once every
 * member has the whole message.
 *
 * Acknowledgements are combined up the tree: a member acknowledges to the rank it received
 * the multicast from (its parent) once its own copy is complete (the last packet has come
 * into sequence here: forward.c) and each of its children has acknowledged; a leaf as soon as
 * its copy is complete. So every member sends one acknowledgement, the root receives one per
 * child, and no rank receives more than its children's. An acknowledgement is a 12-byte
 * message for an internal handler: the root's rank, the multicast's id there (in the
 * descriptor) and the worst status below (FM_ERR_TRUNCATED if some member's copy was cut
 * short). It goes as an internal request (core/request.c): it never waits.
 *
 * Down a tree a child hears of a multicast only through its parent, so the parent knows of
 * it first. On the two-stage multicast's ring (ipmc/) the parent is the predecessor, and a
 * successor may get the datagrams (and its own successor's acknowledgement) before its
 * predecessor has read any: an acknowledgement for a multicast not known here is kept
 * (early) and counted once the member's entry is made. */
#include <stdlib.h>

#include "ack.h"
#include "handlers.h"
#include "log.h"
#include "mcast_state.h"
#include "request.h"
#include "wire.h"

#define ACK_LEN 12

struct fm_ack {
    struct fm_ack *next;
    uint32_t root, id;
    int parent;      /* -1 at the root */
    int waiting;     /* acknowledgements to come, and this member's own copy */
    int status;      /* the worst so far */
    fm_request *req; /* the root's request */
    int early;       /* acknowledgements that came before this member knew of the multicast
                      * (the two-stage multicast's ring: a successor may have the message
                      * before its predecessor read a datagram of it); 0 once it knows */
};

/* Early acknowledgements kept at most (beyond them, one for a multicast that never comes
 * here is dropped rather than held to fm_finalize). */
#define ACK_EARLY_MAX 4096

static void ack_done(fm_context *ctx, struct fm_ack *a)
{
    struct fm_mcast *mc = ctx->mcast;
    for (struct fm_ack **pp = &mc->acks; *pp; pp = &(*pp)->next)
        if (*pp == a) {
            *pp = a->next;
            break;
        }
    if (a->req) {
        fm_req_release(a->req, a->status);
    } else {
        unsigned char m[ACK_LEN];
        fm_put32(m, a->root);
        fm_put32(m + 4, a->id);
        fm_put32(m + 8, (uint32_t)a->status);
        int rc = fm_req_send_internal(ctx, a->parent, m, sizeof m, mc->ack_handler);
        if (rc)
            fm_log(0, "cannot acknowledge a multicast from rank %u to rank %d: %s", a->root,
                   a->parent, fm_strerror(rc));
    }
    free(a);
}

static void arrived(fm_context *ctx, struct fm_ack *a, int status)
{
    if (status && !a->status)
        a->status = status;
    if (--a->waiting == 0)
        ack_done(ctx, a);
}

void fm_ack_own(fm_context *ctx, struct fm_ack *a, int status)
{
    arrived(ctx, a, status);
}

static struct fm_ack *ack_new(uint32_t root, uint32_t id, int parent, int waiting)
{
    struct fm_ack *a = malloc(sizeof *a);
    if (a)
        *a = (struct fm_ack){.root = root, .id = id, .parent = parent, .waiting = waiting};
    return a;
}

static void ack_link(fm_context *ctx, struct fm_ack *a)
{
    a->next = ctx->mcast->acks;
    ctx->mcast->acks = a;
}

static struct fm_ack *ack_find(fm_context *ctx, uint32_t root, uint32_t id)
{
    for (struct fm_ack *a = ctx->mcast->acks; a; a = a->next)
        if (a->root == root && a->id == id)
            return a;
    return NULL;
}

struct fm_ack *fm_ack_member(fm_context *ctx, uint32_t root, uint32_t id, int parent, int nkids)
{
    struct fm_ack *a = ack_find(ctx, root, id);
    if (a && a->early) { /* its children's came first: they count now */
        a->parent = parent;
        a->waiting = nkids + 1 - a->early;
        a->early = 0;
        ctx->mcast->acks_early--;
        return a;
    }
    if ((a = ack_new(root, id, parent, nkids + 1)))
        ack_link(ctx, a);
    return a;
}

uint32_t fm_ack_root_open(fm_context *ctx, int nkids, struct fm_ack **a)
{
    uint32_t id = ++ctx->mcast->ack_next;
    *a = nkids > 0 ? ack_new((uint32_t)ctx->rank, id, -1, nkids) : NULL;
    return id;
}

void fm_ack_root_commit(fm_context *ctx, struct fm_ack *a, fm_request *r)
{
    a->req = r;
    fm_req_hold(r);
    ack_link(ctx, a);
}

void fm_ack_root_cancel(struct fm_ack *a)
{
    free(a);
}

/* A child's acknowledgement: one packet of ACK_LEN bytes. */
static int on_ack(fm_stream *s, int sender, void *arg)
{
    fm_context *ctx = arg;
    unsigned char m[ACK_LEN];
    if (fm_stream_length(s) != ACK_LEN || fm_receive(s, m, ACK_LEN) != ACK_LEN) {
        ctx->stats.dropped++;
        fm_log(1, "dropped a malformed multicast acknowledgement from rank %d", sender);
        return FM_DONE;
    }
    uint32_t root = fm_get32(m), id = fm_get32(m + 4);
    int status = (int)fm_get32(m + 8) == FM_OK ? FM_OK : FM_ERR_TRUNCATED;
    struct fm_ack *a = ack_find(ctx, root, id);
    if (a && !a->early) {
        arrived(ctx, a, status);
        return FM_DONE;
    }
    /* Not known here yet: kept for the member it becomes (fm_ack_member). */
    if (!a && ctx->mcast->acks_early < ACK_EARLY_MAX && (a = ack_new(root, id, -1, 0))) {
        ack_link(ctx, a);
        ctx->mcast->acks_early++;
    }
    if (a) {
        a->early++;
        if (status && !a->status)
            a->status = status;
        return FM_DONE;
    }
    ctx->stats.dropped++;
    fm_log(1, "dropped an acknowledgement from rank %d for no multicast here (%u/%u)", sender, root,
           id);
    return FM_DONE;
}

int fm_ack_init(fm_context *ctx)
{
    int id = fm_handlers_add_internal(ctx, on_ack, ctx);
    if (id < 0)
        return id;
    ctx->mcast->ack_handler = id;
    return FM_OK;
}

void fm_ack_fini(fm_context *ctx)
{
    struct fm_mcast *mc = ctx->mcast;
    int left = 0;
    while (mc->acks) {
        struct fm_ack *a = mc->acks;
        mc->acks = a->next;
        free(a);
        left++;
    }
    if (left)
        fm_log(1, "fm_finalize: %d multicasts never fully acknowledged", left);
}
