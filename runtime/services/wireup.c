/* SPDX-License-Identifier: BSD-3-Clause */
/* Connection wire-up for connection-based providers (tcp;ofi_rxm and other ofi_rxm stacks).
 *
 * libfabric's rxm makes a connection on the first send to a peer. When two peers make their
 * first sends to each other at once, rxm 1.17 keeps one of the two connections on one side
 * and the other on the other side, and an inject already sent over the connection it then
 * closes is lost without an error (ofiwg/libfabric#7396): a barrier or a reply that never
 * arrives, and the job waits until FM_TIMEOUT. So at fm_init every pair connects in one
 * direction only: rank r says hello to every higher rank, and sends nothing to a lower rank
 * before that rank's hello has arrived (over the connection the lower rank made). Costs one
 * empty message per pair, once. A transport without connections (info.connected = 0, such
 * as shared memory) skips it. */
#include "log.h"
#include "pool.h"
#include "progress.h"
#include "send.h"
#include "services_state.h"
#include "wireup.h"

int fm_wireup_handler(fm_stream *s, int sender, void *arg)
{
    (void)s;
    (void)sender;
    struct fm_services *sv = arg;
    sv->wireup_heard++;
    return FM_DONE;
}

/* Every lower rank's hello is in, and this rank's own have left: each higher rank stays in
 * fm_wireup until this rank's hello has reached it, so the connection and the send complete
 * (a small eager send completes locally). Until then the hellos hold send buffers, as many as
 * there are higher ranks, which fm_pool_settle gives back once they have left. */
static int all_lower_heard(fm_context *ctx, void *arg)
{
    (void)arg;
    return ctx->services->wireup_heard >= (uint64_t)ctx->rank && ctx->sends_inflight == 0;
}

int fm_wireup(fm_context *ctx)
{
    if (ctx->size < 2 || !ctx->tp->info.connected)
        return FM_OK;
    int rc = FM_OK;
    for (int r = ctx->rank + 1; r < ctx->size; r++) {
        fm_stream *s;
        FM_CHECK_QUIET((rc = fm_send_open(ctx, r, 0, ctx->services->wireup_handler, &s)) == FM_OK,
                       rc);
        FM_CHECK_QUIET((rc = fm_end_message(s)) == FM_OK, rc);
    }
    rc = fm_progress_until(ctx, all_lower_heard, NULL, "connection set-up (wire-up hellos)");
    FM_CHECK_QUIET(rc == FM_OK, rc);
    fm_log(2, "wire-up: connected to %d ranks", ctx->size - 1);
    fm_pool_settle(ctx);
    return FM_OK;
error:
    return rc;
}
