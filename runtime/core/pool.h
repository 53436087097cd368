/* SPDX-License-Identifier: BSD-3-Clause */
/* Packet buffers: send buffers within the FM_OVERFLOW and FM_MCAST_BUFFER budgets, and
 * per-destination copy headers, allocated and registered in slabs (pool.c), and the memory
 * counters (fm_stats.mem_*) that the receive buffers (recv_pool.c) count into too. */
#ifndef FM_CORE_POOL_H
#define FM_CORE_POOL_H

#include "context.h"

int fm_pool_init(fm_context *ctx);
void fm_pool_fini(fm_context *ctx);
void fm_pool_free(fm_context *ctx);
/* n packet buffers of kind, in one allocation and one registration, counted. */
fm_pkt_slab *fm_pool_slab_new(fm_context *ctx, size_t n, fm_pkt_kind kind);
void fm_pool_slabs_dereg(fm_context *ctx, fm_pkt_slab *s);
void fm_pool_slabs_free(fm_context *ctx, fm_pkt_slab *s); /* s and the slabs after it */
/* Count bytes of kind that came into existence (registered: with a registration), or went
 * (their registration, if any, uncounted before). */
void fm_pool_count(fm_context *ctx, fm_pkt_kind kind, size_t bytes, int registered);
void fm_pool_uncount(fm_context *ctx, fm_pkt_kind kind, size_t bytes);
/* Bytes of one packet buffer: header and payload, cache-line aligned. */
size_t fm_pool_pkt_bytes(const fm_context *ctx);
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
fm_pkt *fm_pool_get_held(fm_context *ctx, int reserved);
void fm_pool_mark_held(fm_context *ctx, fm_pkt *p);
int fm_pool_hold_reserve(fm_context *ctx, size_t n);
/* One packet buffer more, or fewer, held for forwarding (pool.fwd_held, its peak in
 * fm_stats.fwd_held_peak). */
void fm_pool_fwd_hold(fm_context *ctx);
void fm_pool_fwd_release(fm_context *ctx);
static inline void fm_pool_hold_unreserve(fm_context *ctx, size_t n)
{
    ctx->pool.held_reserved -= n;
}
/* Whether the multicast budget (FM_MCAST_BUFFER) is used up: a root writing then waits. */
static inline int fm_pool_held_full(const fm_context *ctx)
{
    return ctx->pool.held > ctx->pool.held_max;
}
void fm_pool_trim(fm_context *ctx);
#define FM_POOL_TRIM_ROUNDS 4096
/* Called each progress round: slabs added beyond the first go back once every send buffer
 * has stayed free, and none promised (fm_pool_reserve), for FM_POOL_TRIM_ROUNDS rounds (not
 * at once: a burst that grew the pool may come again). */
static inline void fm_pool_idle(fm_context *ctx)
{
    if (ctx->pool.send_pkts == ctx->pool.send_base)
        return;
    if (ctx->pool.send_free_n != ctx->pool.send_pkts || ctx->pool.send_reserved)
        ctx->pool.idle_rounds = 0;
    else if (++ctx->pool.idle_rounds >= FM_POOL_TRIM_ROUNDS)
        fm_pool_trim(ctx);
}
/* Give back at once what a burst grew the send buffers by, if every one is free and none
 * promised (fm_wireup: its hellos, one to each higher rank, wait in send buffers while the
 * provider connects; fm_init's figures then do not grow with the job when they have left). */
static inline void fm_pool_settle(fm_context *ctx)
{
    if (ctx->pool.send_pkts != ctx->pool.send_base &&
        ctx->pool.send_free_n == ctx->pool.send_pkts && !ctx->pool.send_reserved)
        fm_pool_trim(ctx);
}
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

#endif
