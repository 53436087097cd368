/* SPDX-License-Identifier: BSD-3-Clause */
/* Packet buffers. Receive buffers: one per credit per peer plus one per peer for credit
 * packets, all posted at init, so every packet a peer may send has a posted buffer. Send
 * buffers: a free list that grows (up to the FM_OVERFLOW budget) when handlers queue packets
 * for peers without credit. Each slab is one allocation and one registration. */
#include <string.h>

#include "log.h"
#include "memory.h"
#include "pool.h"

static size_t pkt_bytes(const fm_context *ctx)
{
    return (FM_WIRE_HDR_LEN + ctx->packet_size + 63) & ~(size_t)63;
}

/* Copy headers: one packet header each, cache-line sized. */
#define FM_COPY_BYTES 64
#define FM_COPY_GROW  256

static fm_pkt_slab *slab_new(fm_context *ctx, size_t n, fm_pkt_kind kind)
{
    size_t bytes = kind == FM_PKT_COPY_BUF ? FM_COPY_BYTES : pkt_bytes(ctx);
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
    return s;
}

static void slabs_free(fm_context *ctx, fm_pkt_slab *s)
{
    while (s) {
        fm_pkt_slab *next = s->next;
        if (s->mr)
            ctx->tp->ops->mem_dereg(ctx->tp, s->mr);
        fm_mem_free(s->mem);
        fm_mem_free(s->pkts);
        fm_mem_free(s);
        s = next;
    }
}

/* Add n send buffers to the free list. */
static int grow_send(fm_context *ctx, size_t n)
{
    fm_pkt_slab *s = slab_new(ctx, n, FM_PKT_SEND_BUF);
    if (!s)
        return FM_ERR_NOMEM;
    s->next = ctx->pool.send_slabs;
    ctx->pool.send_slabs = s;
    for (size_t i = 0; i < n; i++)
        fm_pool_put_send(ctx, &s->pkts[i]);
    ctx->pool.send_pkts += n;
    return FM_OK;
}

int fm_pool_repost(fm_context *ctx, fm_pkt *p)
{
    p->off = 0;
    p->next = NULL;
    int rc = ctx->tp->ops->post_recv(ctx->tp, p->buf, FM_WIRE_HDR_LEN + ctx->packet_size, p->mr, p);
    if (rc)
        fm_log(0, "posting a receive buffer failed: %s", fm_strerror(rc));
    return rc;
}

int fm_pool_init(fm_context *ctx)
{
    int rc;
    size_t nrecv = (size_t)ctx->size * (size_t)(ctx->credits + 1);
    fm_pkt_slab *r = slab_new(ctx, nrecv, FM_PKT_RECV_BUF);
    FM_CHECK(r, FM_ERR_NOMEM, "cannot allocate %zu receive buffers of %zu bytes", nrecv,
             pkt_bytes(ctx));
    ctx->pool.recv_slabs = r;
    for (size_t i = 0; i < nrecv; i++)
        if ((rc = fm_pool_repost(ctx, &r->pkts[i])))
            goto error;
    size_t per = pkt_bytes(ctx);
    size_t base = (size_t)ctx->size * (size_t)ctx->credits;
    ctx->pool.send_pkts_max = base + (size_t)ctx->cfg.overflow / per;
    FM_CHECK(grow_send(ctx, base) == FM_OK, FM_ERR_NOMEM, "cannot allocate %zu send buffers", base);
    return FM_OK;
error:
    return rc;
}

void fm_pool_fini(fm_context *ctx)
{
    slabs_free(ctx, ctx->pool.recv_slabs);
    slabs_free(ctx, ctx->pool.send_slabs);
    slabs_free(ctx, ctx->pool.copy_slabs);
    ctx->pool.recv_slabs = ctx->pool.send_slabs = ctx->pool.copy_slabs = NULL;
    ctx->pool.copy_free = NULL;
    ctx->pool.send_free = NULL;
    ctx->pool.send_free_n = 0;
}

/* Buffers the budget still allows to be made. */
static size_t headroom(const fm_context *ctx)
{
    return ctx->pool.send_pkts < ctx->pool.send_pkts_max
               ? ctx->pool.send_pkts_max - ctx->pool.send_pkts
               : 0;
}

/* Promise n send buffers (a stream opened in a handler must never wait for one). Promises
 * are kept by growing the pool past the budget if need be (by at most what is promised),
 * never by holding buffers back from other writers: a writer outside a handler could
 * otherwise wait for buffers that only its own later writes would free. */
int fm_pool_reserve(fm_context *ctx, size_t n)
{
    if (n > ctx->pool.send_pkts_max)
        return FM_ERR_TOO_LONG; /* more than the whole budget: no wait would help */
    if (ctx->pool.send_free_n + headroom(ctx) < ctx->pool.send_reserved + n)
        return FM_EAGAIN;
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

/* A send buffer even past the FM_OVERFLOW budget: for forwarding, which must never wait
 * (what it holds is bounded by the credits of the ranks sending to us). NULL only when out
 * of memory. */
fm_pkt *fm_pool_get_send_any(fm_context *ctx)
{
    if (!ctx->pool.send_free)
        grow_send(ctx, 16);
    return fm_pool_pop_send(ctx);
}

fm_pkt *fm_pool_get_copy(fm_context *ctx)
{
    if (!ctx->pool.copy_free) {
        fm_pkt_slab *s = slab_new(ctx, FM_COPY_GROW, FM_PKT_COPY_BUF);
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
    p->next = ctx->pool.send_free;
    ctx->pool.send_free = p;
    ctx->pool.send_free_n++;
}
