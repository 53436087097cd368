/* SPDX-License-Identifier: BSD-3-Clause */
/* Handler registration: handlers, whole-message handlers (whole.c runs them), and internal ids
 * for the layers above. */
#include "context.h"
#include "handlers.h"
#include "recv.h"
#include "whole.h"

/* What both registrations refuse (fn_given: the caller's function is not NULL). */
static int check(fm_context *ctx, int id, int fn_given)
{
    if (!fm_ctx_live(ctx))
        return FM_ERR_NOT_INIT;
    if (!fn_given)
        return FM_ERR_INVALID;
    if (id < 0 || id >= FM_MAX_HANDLERS)
        return FM_ERR_HANDLER;
    /* Once per id: replacing a handler would hand messages it has begun to another. */
    const fm_handler_slot *h = &ctx->handlers[id];
    if (h->fn || h->late_fn)
        return FM_ERR_REGISTERED;
    return FM_OK;
}

static void bind(fm_context *ctx, int id, fm_handler_fn fn, void *arg)
{
    fm_handler_slot *h = &ctx->handlers[id];
    h->arg = arg;
    /* Messages that arrived before registration run now. Inside a handler they cannot (no
     * handler runs inside another): the handler takes effect at the next progress round,
     * which starts the held messages first. Until then newer messages for this id are held
     * behind them, so none overtakes an older one from its sender. */
    if (ctx->in_handler) {
        h->late_fn = fn;
        ctx->run_held = 1;
        return;
    }
    h->fn = fn;
    fm_recv_run_held(ctx, id);
}

int fm_register_handler(fm_context *ctx, int id, fm_handler_fn fn, void *arg)
{
    int rc = check(ctx, id, fn != NULL);
    if (rc == FM_OK)
        bind(ctx, id, fn, arg);
    return rc;
}

int fm_register_message_handler(fm_context *ctx, int id, fm_message_fn fn, void *arg)
{
    int rc = check(ctx, id, fn != NULL);
    if (rc)
        return rc;
    fm_handler_slot *h = &ctx->handlers[id];
    h->mfn = fn;
    h->marg = arg;
    bind(ctx, id, fm_whole_handler, h);
    return FM_OK;
}

/* The lowest id with no handler, or FM_ERR_HANDLER. */
static int free_id(const fm_context *ctx)
{
    for (int id = 0; id < FM_MAX_HANDLERS; id++)
        if (!ctx->handlers[id].fn && !ctx->handlers[id].late_fn)
            return id;
    return FM_ERR_HANDLER;
}

int fm_add_handler(fm_context *ctx, fm_handler_fn fn, void *arg)
{
    if (!fm_ctx_live(ctx))
        return FM_ERR_NOT_INIT;
    if (!fn)
        return FM_ERR_INVALID;
    int id = free_id(ctx);
    int rc = id < 0 ? id : fm_register_handler(ctx, id, fn, arg);
    return rc ? rc : id;
}

int fm_add_message_handler(fm_context *ctx, fm_message_fn fn, void *arg)
{
    if (!fm_ctx_live(ctx))
        return FM_ERR_NOT_INIT;
    if (!fn)
        return FM_ERR_INVALID;
    int id = free_id(ctx);
    int rc = id < 0 ? id : fm_register_message_handler(ctx, id, fn, arg);
    return rc ? rc : id;
}

int fm_handlers_add_internal(fm_context *ctx, fm_handler_fn fn, void *arg)
{
    if (ctx->internal_handlers >= FM_INTERNAL_HANDLERS)
        return FM_ERR_HANDLER;
    int id = FM_MAX_HANDLERS + ctx->internal_handlers++;
    ctx->handlers[id] = (fm_handler_slot){fn, arg, NULL, NULL, NULL};
    return id;
}
