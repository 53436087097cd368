/* SPDX-License-Identifier: BSD-3-Clause */
/* Per-peer windows. Where receive buffers are packet buffers per peer (a small job), every
 * sender holds FM_CREDITS credits of every receiver from fm_init, and that is what the
 * buffers were sized for. Where they are shared regions (recv_pool.c), FM_CREDITS from every
 * sender would let a receiver be made to hold ranks x FM_CREDITS packets (messages for a
 * handler not registered yet, deferred ones, a slow multicast child's), so instead:
 *
 * - every sender starts with a floor of FM_WINDOW_FLOOR credits, enough for requests,
 *   replies and hellos;
 * - a sender whose packet has to wait for a credit (so its window is what limits it) asks
 *   for more, once per grant, in a credit packet; the receiver grants, up to FM_CREDITS, out
 *   of a budget of FM_RECV_POOL / packet credits (at least FM_CREDITS - 2: one sender's
 *   whole window) shared by every sender (lazily: only senders that stream ever ask);
 * - when the budget is spent, the peer holding the largest window, if it is more than one
 *   above the asker's, is asked to shrink to halfway between the two: it gives back at once
 *   the credits it holds unused (an idle peer holds all of them) and the rest as they come
 *   back to it; what comes back goes to the sender it was taken back for first, then to the
 *   others waiting, in the order they asked. A request that can be neither granted nor
 *   served by taking back (every window is within one of the asker's) is answered with an
 *   empty grant, so that the sender may ask again when it next stalls.
 *
 * So a receiver holds at most ranks x floor + budget packets, however slow it is, and a
 * sender that streams gets a full window while the budget lasts or others are idle. Both
 * sides keep the window in step by deltas carried on credit packets (wire.h): a request, a
 * grant (its receiver's window grows), a shrink request, and a give-back (its sender's
 * window shrank). One side's view differs from the other's only by what is in flight. */
#include <stdlib.h>

#include "credits.h"
#include "log.h"
#include "recv.h"
#include "recv_pool.h"
#include "send.h"
#include "window.h"

static int min_int(int a, int b)
{
    return a < b ? a : b;
}

int fm_window_init(fm_context *ctx)
{
    ctx->win.floor = min_int(FM_WINDOW_FLOOR, ctx->credits);
    if (!ctx->rpool.regions)
        return FM_OK;
    /* At least one sender's full window beyond its floor: whatever FM_RECV_POOL says, one
     * sender can always stream at FM_CREDITS (others idle), as in a small job. */
    size_t budget = (size_t)ctx->cfg.recv_pool / fm_recv_pool_landing(ctx);
    size_t one = (size_t)(ctx->credits - ctx->win.floor);
    if (budget < one)
        budget = one;
    size_t most = (size_t)ctx->size * (size_t)ctx->credits;
    ctx->win.free = (int)(budget < most ? budget : most);
    ctx->win.wants = calloc((size_t)ctx->size, sizeof *ctx->win.wants);
    if (!ctx->win.wants) {
        fm_log(0, "out of memory for the windows of %d peers", ctx->size);
        return FM_ERR_NOMEM;
    }
    ctx->win.on = 1;
    for (int r = 0; r < ctx->size; r++) {
        fm_peer *p = &ctx->peers[r];
        p->rwin = p->swin = p->send_credits = ctx->win.floor;
        fm_credits_sync(p);
    }
    fm_log(2, "windows: floor %d, %d credits to grant, up to %d per peer", ctx->win.floor,
           ctx->win.free, ctx->credits);
    return FM_OK;
}

void fm_window_fini(fm_context *ctx)
{
    free(ctx->win.wants);
    ctx->win.wants = NULL;
    ctx->win.nwants = 0;
    ctx->win.on = 0;
}

/* ---- as a receiver */

/* Grant n credits (maybe none: the request is answered all the same). */
static void grant(fm_context *ctx, int peer, int n)
{
    fm_peer *p = &ctx->peers[peer];
    p->rwin += n;
    fm_credits_sync(p);
    p->grant_out += n;
    p->grant_ack = 1;
    ctx->win.free -= n;
    fm_credits_mark(ctx, peer);
}

/* All the budget allows, up to FM_CREDITS, to a sender that waits for it. */
static void grant_most(fm_context *ctx, int peer)
{
    fm_peer *p = &ctx->peers[peer];
    if (ctx->win.free > 0 && !p->revoking && p->rwin < ctx->credits)
        grant(ctx, peer, min_int(ctx->credits - p->rwin, ctx->win.free));
}

/* Ask the peer holding the largest window, more than one above the wanter's, to shrink to
 * halfway between the two, for the wanter; one request per peer at a time. 0: none to ask. */
static int take_back(fm_context *ctx, int wanter)
{
    int mine = ctx->peers[wanter].rwin, best = -1, most = mine + 1;
    for (int r = 0; r < ctx->size; r++) {
        const fm_peer *q = &ctx->peers[r];
        if (r != wanter && !q->revoking && q->rwin > most) {
            best = r;
            most = q->rwin;
        }
    }
    if (best < 0)
        return 0;
    fm_peer *q = &ctx->peers[best];
    q->revoking = q->revoke_out = (most + mine) / 2; /* above mine, so above the floor */
    q->revoke_for = wanter + 1;
    q->wanting = 0; /* it waits for nothing now (and leaves the list) */
    fm_credits_mark(ctx, best);
    return 1;
}

void fm_window_asked(fm_context *ctx, int peer)
{
    fm_peer *p = &ctx->peers[peer];
    if (!ctx->win.on || ctx->finalizing)
        return;
    if (p->revoking || p->rwin >= ctx->credits) {
        grant(ctx, peer, 0); /* nothing for it now */
        return;
    }
    if (ctx->win.free > 0) {
        grant_most(ctx, peer);
        return;
    }
    if (!p->wanting) {
        p->wanting = 1;
        ctx->win.wants[ctx->win.nwants++] = peer;
    }
    if (!take_back(ctx, peer))
        grant(ctx, peer, 0); /* every window is within one of its: it may ask again later */
}

/* What was given back goes to the senders waiting for it, in the order they asked. */
static void serve_wanters(fm_context *ctx)
{
    int keep = 0;
    for (int i = 0; i < ctx->win.nwants; i++) {
        int r = ctx->win.wants[i];
        fm_peer *q = &ctx->peers[r];
        if (q->wanting)
            grant_most(ctx, r);
        if (q->wanting && q->rwin < ctx->credits)
            ctx->win.wants[keep++] = r;
        else
            q->wanting = 0;
    }
    ctx->win.nwants = keep;
}

void fm_window_given_back(fm_context *ctx, int peer, uint64_t n)
{
    fm_peer *p = &ctx->peers[peer];
    uint64_t most = p->rwin > ctx->win.floor ? (uint64_t)(p->rwin - ctx->win.floor) : 0;
    if (n > most) { /* more than it can hold: a malformed or forged packet */
        ctx->drops[FM_WIRE_CREDITS_BAD]++;
        ctx->stats.dropped++;
        fm_log(1, "rank %d gave back %llu credits of a window of %d: ignored the excess", peer,
               (unsigned long long)n, p->rwin);
        n = most;
    }
    if (!n)
        return;
    p->rwin -= (int)n;
    fm_credits_sync(p);
    ctx->win.free += (int)n;
    if (p->revoke_for) /* the sender it was taken back for comes first */
        grant_most(ctx, p->revoke_for - 1);
    if (p->revoking && p->rwin <= p->revoking)
        p->revoking = p->revoke_for = 0;
    serve_wanters(ctx);
    fm_recv_window_shrunk(ctx, peer);
}

/* ---- as a sender */

void fm_window_ask(fm_context *ctx, int peer)
{
    fm_peer *p = &ctx->peers[peer];
    if (p->swin >= ctx->credits || p->asked || p->shrink_to)
        return;
    p->asked = p->ask_out = 1;
    fm_credits_mark(ctx, peer);
}

void fm_window_granted(fm_context *ctx, int peer, int n)
{
    fm_peer *p = &ctx->peers[peer];
    if (n > ctx->credits - p->swin) {
        fm_credits_refused(ctx, peer, n - (ctx->credits - p->swin));
        n = ctx->credits - p->swin;
    }
    p->swin += n;
    p->send_credits += n;
    fm_credits_sync(p);
    p->asked = 0; /* answered: it may ask again when it runs short again */
    if (p->shrink_to)
        fm_window_shrink(ctx, peer);
    if (p->pending.head)
        fm_send_flush_peer(ctx, peer);
}

void fm_window_revoked(fm_context *ctx, int peer, uint32_t target)
{
    fm_peer *p = &ctx->peers[peer];
    int t = target > 0xffff ? 0xffff : (int)target;
    if (t < ctx->win.floor)
        t = ctx->win.floor;
    if (t >= p->swin)
        return;
    p->shrink_to = t;
    fm_credits_sync(p);
    p->asked = 0;
    fm_window_shrink(ctx, peer);
}

void fm_window_shrink(fm_context *ctx, int peer)
{
    fm_peer *p = &ctx->peers[peer];
    int n = min_int(p->swin - p->shrink_to, p->send_credits);
    if (n > 0) {
        p->send_credits -= n;
        p->swin -= n;
        p->giveback_out += n;
        fm_credits_mark(ctx, peer);
    }
    if (p->swin <= p->shrink_to)
        p->shrink_to = 0;
    fm_credits_sync(p);
}
