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
    if (ctx->handlers[id].fn)
        return FM_ERR_REGISTERED;
    ctx->handlers[id].fn = fn;
    ctx->handlers[id].arg = arg;
    /* Messages that arrived before registration run now (not from inside a handler, where
     * the next progress round picks them up). */
    if (!ctx->in_handler)
        fm_recv_run_held(ctx, id);
    else
        ctx->run_held = 1;
    return FM_OK;
}

int fm_add_handler(fm_context *ctx, fm_handler_fn fn, void *arg)
{
    if (!fm_ctx_live(ctx))
        return FM_ERR_NOT_INIT;
    if (!fn)
        return FM_ERR_INVALID;
    for (int id = 0; id < FM_MAX_HANDLERS; id++)
        if (!ctx->handlers[id].fn) {
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
    ctx->handlers[id] = (fm_handler_slot){fn, arg};
    return id;
}
