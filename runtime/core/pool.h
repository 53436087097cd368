/* SPDX-License-Identifier: BSD-3-Clause */
/* Packet buffers: receive buffers posted per peer, send buffers within the FM_OVERFLOW budget,
 * and per-destination copy headers, all allocated and registered in slabs (pool.c). */
#ifndef FM_CORE_POOL_H
#define FM_CORE_POOL_H

#include "context.h"

int fm_pool_init(fm_context *ctx);
void fm_pool_fini(fm_context *ctx);
fm_pkt *fm_pool_get_send(fm_context *ctx, int reserved);
/* An idle send buffer, or NULL (no growing). */
static inline fm_pkt *fm_pool_pop_send(fm_context *ctx)
{
    fm_pkt *p = ctx->pool.send_free;
    if (p) {
        ctx->pool.send_free_n--;
        ctx->pool.send_free = p->next;
        p->next = NULL;
        p->len = 0;
        p->flags = 0;
        p->compact = 0;
        p->refs = 0;
    }
    return p;
}
fm_pkt *fm_pool_get_send_any(fm_context *ctx);
fm_pkt *fm_pool_get_copy(fm_context *ctx);
void fm_pool_put_copy(fm_context *ctx, fm_pkt *c);
/* Promise n send buffers to a stream opened in a handler: FM_OK, FM_EAGAIN (not now), or
 * FM_ERR_TOO_LONG (more than the FM_OVERFLOW budget allows at all). */
int fm_pool_reserve(fm_context *ctx, size_t n);
static inline void fm_pool_unreserve(fm_context *ctx, size_t n)
{
    ctx->pool.send_reserved -= n;
}
void fm_pool_put_send(fm_context *ctx, fm_pkt *p);
int fm_pool_repost(fm_context *ctx, fm_pkt *p);

#endif
