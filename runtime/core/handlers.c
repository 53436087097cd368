/* SPDX-License-Identifier: BSD-3-Clause */
/* Handler registration. */
#include "context.h"
#include "handlers.h"
#include "recv.h"

int fm_register_handler(fm_context *ctx, int id, fm_handler_fn fn, void *arg)
{
    if (!fm_ctx_live(ctx))
        return FM_ERR_NOT_INIT;
    if (!fn)
        return FM_ERR_INVALID;
    if (id < 0 || id >= FM_MAX_HANDLERS)
        return FM_ERR_HANDLER;
    /* Once per id: replacing a handler would hand messages it has begun to another. */
    fm_handler_slot *h = &ctx->handlers[id];
    if (h->fn || h->late_fn)
        return FM_ERR_REGISTERED;
    h->arg = arg;
    /* Messages that arrived before registration run now. Inside a handler they cannot (no
     * handler runs inside another): the handler takes effect at the next progress round,
     * which starts the held messages first. Until then newer messages for this id are held
     * behind them, so none overtakes an older one from its sender. */
    if (ctx->in_handler) {
        h->late_fn = fn;
        ctx->run_held = 1;
        return FM_OK;
    }
    h->fn = fn;
    fm_recv_run_held(ctx, id);
    return FM_OK;
}

int fm_add_handler(fm_context *ctx, fm_handler_fn fn, void *arg)
{
    if (!fm_ctx_live(ctx))
        return FM_ERR_NOT_INIT;
    if (!fn)
        return FM_ERR_INVALID;
    for (int id = 0; id < FM_MAX_HANDLERS; id++)
        if (!ctx->handlers[id].fn && !ctx->handlers[id].late_fn) {
            int rc = fm_register_handler(ctx, id, fn, arg);
            return rc ? rc : id;
        }
    return FM_ERR_HANDLER;
}

int fm_handlers_add_internal(fm_context *ctx, fm_handler_fn fn, void *arg)
{
    if (ctx->internal_handlers >= FM_INTERNAL_HANDLERS)
        return FM_ERR_HANDLER;
    int id = FM_MAX_HANDLERS + ctx->internal_handlers++;
    ctx->handlers[id] = (fm_handler_slot){fn, arg, NULL};
    return id;
}
