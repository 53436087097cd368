/* SPDX-License-Identifier: BSD-3-Clause */
/* fm_barrier over the network: a dissemination barrier (ceil(log2 n) rounds; in round k
 * rank r signals r + 2^k and waits for r - 2^k), run while progress keeps going, so peers
 * still streaming to us or waiting for our credits are served. A rank can be at most one
 * barrier ahead of another, so arrivals are counted per epoch parity. */
#include "barrier.h"
#include "log.h"
#include "progress.h"
#include "send.h"
#include "services_state.h"

typedef struct barrier_msg {
    uint32_t epoch;
    uint32_t round;
} barrier_msg;

int fm_barrier_handler(fm_stream *s, int sender, void *arg)
{
    struct fm_services *sv = arg;
    barrier_msg m;
    if (fm_receive(s, &m, sizeof m) != (ssize_t)sizeof m || m.round >= 32) {
        fm_log(0, "malformed barrier message from rank %d", sender);
        return FM_DONE;
    }
    sv->barrier_seen[m.epoch & 1][m.round]++;
    return FM_DONE;
}

typedef struct barrier_wait {
    uint32_t parity, round;
} barrier_wait;

static int arrived(fm_context *ctx, void *arg)
{
    barrier_wait *w = arg;
    return ctx->services->barrier_seen[w->parity][w->round] > 0;
}

static int signal_peer(fm_context *ctx, int dest, barrier_msg *m)
{
    fm_stream *s;
    int rc = fm_send_open(ctx, dest, sizeof *m, ctx->services->barrier_handler, &s);
    if (rc)
        return rc;
    if ((rc = fm_send_piece(s, m, sizeof *m)))
        return rc;
    return fm_end_message(s);
}

int fm_barrier_internal(fm_context *ctx)
{
    struct fm_services *sv = ctx->services;
    uint32_t epoch = sv->barrier_epoch++;
    int rc = FM_OK;
    for (uint32_t round = 0, dist = 1; dist < (uint32_t)ctx->size; round++, dist <<= 1) {
        barrier_msg m = {epoch, round};
        int dest = (int)((ctx->rank + dist) % (uint32_t)ctx->size);
        FM_CHECK_QUIET((rc = signal_peer(ctx, dest, &m)) == FM_OK, rc);
        barrier_wait w = {epoch & 1, round};
        FM_CHECK_QUIET((rc = fm_progress_until(ctx, arrived, &w, "a barrier")) == FM_OK, rc);
        sv->barrier_seen[epoch & 1][round]--;
    }
    return FM_OK;
error:
    return rc;
}

int fm_barrier(fm_context *ctx)
{
    if (!fm_ctx_live(ctx))
        return FM_ERR_NOT_INIT;
    if (ctx->in_handler)
        return FM_ERR_IN_HANDLER;
    return fm_barrier_internal(ctx);
}
