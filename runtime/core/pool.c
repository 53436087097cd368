/* SPDX-License-Identifier: BSD-3-Clause */
/* Packet buffers for sending (receive buffers: recv_pool.c). Send buffers: a free list whose first
 * slab does not depend on the job's size, and that grows when writers need more (up to the budget:
 * FM_CREDITS x ranks packets plus FM_OVERFLOW) and when multicasts hold packets for slow children
 * (up to FM_MCAST_BUFFER), and shrinks back to its first slab once every buffer has stayed free for
 * a while. Each slab is one allocation and one registration, counted in the pool's bytes_*
 * (fm_stats.mem_*). */
#include <string.h>

#include "log.h"
#include "memory.h"
#include "pool.h"

size_t fm_pool_pkt_bytes(const fm_context *ctx)
{
    return (FM_WIRE_HDR_LEN + ctx->packet_size + 63) & ~(size_t)63;
}

/* Copy headers: one packet header each, cache-line sized. */
#define FM_COPY_BYTES 64
#define FM_COPY_GROW  256

static size_t *kind_bytes(fm_context *ctx, fm_pkt_kind kind)
{
    return kind == FM_PKT_RECV_BUF   ? &ctx->pool.bytes_recv
           : kind == FM_PKT_SEND_BUF ? &ctx->pool.bytes_send
                                     : &ctx->pool.bytes_copy;
}

void fm_pool_count(fm_context *ctx, fm_pkt_kind kind, size_t bytes, int registered)
{
    fm_pool_state *ps = &ctx->pool;
    *kind_bytes(ctx, kind) += bytes;
    if (registered)
        ps->bytes_registered += bytes;
    size_t total = ps->bytes_recv + ps->bytes_send + ps->bytes_copy;
    if (total > ps->bytes_peak)
        ps->bytes_peak = total;
}

void fm_pool_uncount(fm_context *ctx, fm_pkt_kind kind, size_t bytes)
{
    *kind_bytes(ctx, kind) -= bytes;
}

fm_pkt_slab *fm_pool_slab_new(fm_context *ctx, size_t n, fm_pkt_kind kind)
{
    size_t bytes = kind == FM_PKT_COPY_BUF ? FM_COPY_BYTES : fm_pool_pkt_bytes(ctx);
    fm_pkt_slab *s = fm_mem_alloc(sizeof *s);
    if (!s)
        return NULL;
    s->mem = fm_mem_alloc(n * bytes);
    s->pkts = fm_mem_alloc(n * sizeof *s->pkts);
    if (!s->mem || !s->pkts || ctx->tp->ops->mem_reg(ctx->tp, s->mem, n * bytes, &s->mr)) {
        fm_mem_free(s->mem);
        fm_mem_free(s->pkts);
        fm_mem_free(s);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        fm_pkt *p = &s->pkts[i];
        p->buf = (unsigned char *)s->mem + i * bytes;
        p->mr = s->mr;
        p->kind = kind;
    }
    s->bytes = n * bytes;
    s->kind = kind;
    fm_pool_count(ctx, kind, s->bytes, s->mr != NULL);
    return s;
}

static void slab_dereg(fm_context *ctx, fm_pkt_slab *s)
{
    if (s->mr) {
        ctx->tp->ops->mem_dereg(ctx->tp, s->mr);
        ctx->pool.bytes_registered -= s->bytes;
        s->mr = NULL;
    }
}

/* Free the slabs from s up to (not including) end. */
static void slabs_free_until(fm_context *ctx, fm_pkt_slab *s, fm_pkt_slab *end)
{
    while (s != end) {
        fm_pkt_slab *next = s->next;
        slab_dereg(ctx, s);
        fm_pool_uncount(ctx, s->kind, s->bytes);
        fm_mem_free(s->mem);
        fm_mem_free(s->pkts);
        fm_mem_free(s);
        s = next;
    }
}

void fm_pool_slabs_free(fm_context *ctx, fm_pkt_slab *s)
{
    slabs_free_until(ctx, s, NULL);
}

/* Add n send buffers to the free list. */
static int grow_send(fm_context *ctx, size_t n)
{
    fm_pkt_slab *s = fm_pool_slab_new(ctx, n, FM_PKT_SEND_BUF);
    if (!s)
        return FM_ERR_NOMEM;
    s->next = ctx->pool.send_slabs;
    ctx->pool.send_slabs = s;
    for (size_t i = 0; i < n; i++)
        fm_pool_put_send(ctx, &s->pkts[i]);
    ctx->pool.send_pkts += n;
    return FM_OK;
}

int fm_pool_init(fm_context *ctx)
{
    int rc;
    size_t per = fm_pool_pkt_bytes(ctx);
    ctx->pool.send_pkts_max =
        (size_t)ctx->size * (size_t)ctx->credits + (size_t)ctx->cfg.overflow / per;
    /* The first slab, kept until fm_finalize: twice what one stream to one peer uses at a time
     * (its window in flight and the packet being filled), whatever the job's size. A window
     * per rank, the budget's first part, would make every rank's memory grow with the job
     * although most programs write to few peers at once; those that write to many grow the
     * pool on demand (fm_pool_get_send), and give the growth back when idle (fm_pool_idle). A
     * stream opened in a handler gets its promised buffers at once (fm_pool_reserve). */
    size_t base = 2 * (size_t)ctx->credits;
    if (base > ctx->pool.send_pkts_max)
        base = ctx->pool.send_pkts_max;
    ctx->pool.send_base = base;
    ctx->pool.held_max = (size_t)ctx->cfg.mcast_buffer / per;
    FM_CHECK(grow_send(ctx, base) == FM_OK, FM_ERR_NOMEM, "cannot allocate %zu send buffers", base);
    return FM_OK;
error:
    return rc;
}

void fm_pool_slabs_dereg(fm_context *ctx, fm_pkt_slab *s)
{
    for (; s; s = s->next)
        slab_dereg(ctx, s);
}

/* Registrations go before the endpoint closes (fm_pool_fini), the memory only after it
 * (fm_pool_free): until then the provider may still read buffers of sends in flight. */
void fm_pool_fini(fm_context *ctx)
{
    fm_pool_slabs_dereg(ctx, ctx->pool.send_slabs);
    fm_pool_slabs_dereg(ctx, ctx->pool.copy_slabs);
}

void fm_pool_free(fm_context *ctx)
{
    fm_pool_slabs_free(ctx, ctx->pool.send_slabs);
    fm_pool_slabs_free(ctx, ctx->pool.copy_slabs);
    ctx->pool.send_slabs = ctx->pool.copy_slabs = NULL;
    ctx->pool.copy_free = NULL;
    ctx->pool.send_free = NULL;
    ctx->pool.send_free_n = 0;
}

/* Buffers the FM_OVERFLOW budget still allows to be made (those held for slow multicast
 * children have a budget of their own). */
static size_t headroom(const fm_context *ctx)
{
    size_t max = ctx->pool.send_pkts_max + ctx->pool.held;
    return ctx->pool.send_pkts < max ? max - ctx->pool.send_pkts : 0;
}

/* Every send buffer is free and some slabs were added since init: give them back. The first
 * slab stays (allocated at init, send_base buffers: it serves the common case without
 * growing). */
void fm_pool_trim(fm_context *ctx)
{
    fm_pkt_slab *first = ctx->pool.send_slabs;
    while (first->next)
        first = first->next;
    slabs_free_until(ctx, ctx->pool.send_slabs, first);
    ctx->pool.send_slabs = first;
    ctx->pool.send_free = NULL;
    ctx->pool.send_free_n = 0;
    ctx->pool.send_pkts = 0;
    for (size_t i = 0; i < ctx->pool.send_base; i++)
        fm_pool_put_send(ctx, &first->pkts[i]);
    ctx->pool.send_pkts = ctx->pool.send_base;
    ctx->pool.idle_rounds = 0;
}

void fm_pool_mark_held(fm_context *ctx, fm_pkt *p)
{
    p->held = 1;
    if (++ctx->pool.held > ctx->pool.held_peak)
        ctx->pool.held_peak = ctx->pool.held;
}

void fm_pool_fwd_hold(fm_context *ctx)
{
    ctx->pool.fwd_held += fm_pool_pkt_bytes(ctx);
    if (ctx->pool.fwd_held > ctx->stats.fwd_held_peak)
        ctx->stats.fwd_held_peak = ctx->pool.fwd_held;
}

void fm_pool_fwd_release(fm_context *ctx)
{
    ctx->pool.fwd_held -= fm_pool_pkt_bytes(ctx);
}

/* Promise n held buffers to a message that must hold all its packets (store-and-forward,
 * FCFS). */
int fm_pool_hold_reserve(fm_context *ctx, size_t n)
{
    if (ctx->pool.held + ctx->pool.held_reserved + n > ctx->pool.held_max)
        return FM_EAGAIN;
    ctx->pool.held_reserved += n;
    return FM_OK;
}

/* A send buffer to hold a packet for a slow multicast child; NULL when FM_MCAST_BUFFER is
 * used up (the caller then keeps the packet it has) or memory is. reserved: the caller holds
 * a promise from fm_pool_hold_reserve (and gives one up). */
fm_pkt *fm_pool_get_held(fm_context *ctx, int reserved)
{
    if (reserved)
        ctx->pool.held_reserved--;
    else if (ctx->pool.held + ctx->pool.held_reserved >= ctx->pool.held_max)
        return NULL;
    if (!ctx->pool.send_free && grow_send(ctx, 16) != FM_OK)
        return NULL;
    fm_pkt *p = fm_pool_pop_send(ctx);
    fm_pool_mark_held(ctx, p);
    p->fwd_held = 1; /* (only forwarding members copy packets out) */
    fm_pool_fwd_hold(ctx);
    return p;
}

/* Promise n send buffers (a stream opened in a handler must never wait for one). Buffers the
 * free list lacks for all the promises are made now, within the budget, so that a promise is
 * memory and not only budget (FM_ERR_NOMEM now rather than in a later fm_send_piece). Other
 * writers may still take free buffers: promises are then kept by growing the pool past the
 * budget if need be (by at most what is promised), never by holding buffers back from other
 * writers, since a writer outside a handler could otherwise wait for buffers that only its
 * own later writes would free. */
int fm_pool_reserve(fm_context *ctx, size_t n)
{
    if (n > ctx->pool.send_pkts_max)
        return FM_ERR_TOO_LONG; /* more than the whole budget: no wait would help */
    size_t want = ctx->pool.send_reserved + n;
    if (ctx->pool.send_free_n + headroom(ctx) < want)
        return FM_EAGAIN;
    if (ctx->pool.send_free_n < want && grow_send(ctx, want - ctx->pool.send_free_n) != FM_OK)
        return FM_ERR_NOMEM;
    ctx->pool.send_reserved += n;
    return FM_OK;
}

/* A send buffer, or NULL. reserved: the caller holds a promise (and gives it up). */
fm_pkt *fm_pool_get_send(fm_context *ctx, int reserved)
{
    if (reserved)
        ctx->pool.send_reserved--;
    if (!ctx->pool.send_free) {
        size_t n = headroom(ctx);
        if (n || reserved)
            grow_send(ctx, n == 0 ? 1 : n < 64 ? n : 64);
    }
    return fm_pool_pop_send(ctx);
}

fm_pkt *fm_pool_get_copy(fm_context *ctx)
{
    if (!ctx->pool.copy_free) {
        fm_pkt_slab *s = fm_pool_slab_new(ctx, FM_COPY_GROW, FM_PKT_COPY_BUF);
        if (!s)
            return NULL;
        s->next = ctx->pool.copy_slabs;
        ctx->pool.copy_slabs = s;
        for (size_t i = 0; i < FM_COPY_GROW; i++)
            fm_pool_put_copy(ctx, &s->pkts[i]);
    }
    fm_pkt *c = ctx->pool.copy_free;
    ctx->pool.copy_free = c->next;
    c->next = NULL;
    return c;
}

void fm_pool_put_copy(fm_context *ctx, fm_pkt *c)
{
    c->next = ctx->pool.copy_free;
    ctx->pool.copy_free = c;
}

void fm_pool_put_send(fm_context *ctx, fm_pkt *p)
{
    if (p->held) {
        p->held = 0;
        ctx->pool.held--;
        if (p->fwd_held) { /* (a forwarding copy is always held: one branch on this path) */
            p->fwd_held = 0;
            fm_pool_fwd_release(ctx);
        }
    }
    p->next = ctx->pool.send_free;
    ctx->pool.send_free = p;
    ctx->pool.send_free_n++;
}
