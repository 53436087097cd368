/* SPDX-License-Identifier: BSD-3-Clause */
/* Receive buffers, in one of two layouts.
 *
 * Regions (where a buffer per credit per peer would take more than FM_RECV_POOL, and the
 * provider has FI_MULTI_RECV): FM_RECV_POOL bytes in a few
 * large regions that every sender's packets land in, packed, each taking its own length (a
 * 32-byte message takes 32 bytes, not a packet buffer). Their number does not depend on the
 * job's size. The provider lets go of a region once less than a whole packet is left in it;
 * the region is posted again when, besides, every packet that landed in it has been
 * released here. Packets held long (a message waiting for its handler, its group, a deferred
 * one, one a slow multicast child keeps) pin their region: when every region is pinned, the
 * held packets of regions the provider has let go are copied out into memory of their own
 * (each its own length), from every region all of whose packets can move, and those regions
 * posted again; only if that frees none (a packet still being forwarded from in each, a
 * zero-copy announcement, registered memory) is one more region made, which goes again as
 * soon as a region comes back empty. How much can be held is bounded by the windows
 * (window.c).
 *
 * Per peer (while that fits in FM_RECV_POOL, with FM_RECV_POOL=0, or where the provider
 * cannot take regions for packets this large): FM_CREDITS + 1 buffers of a
 * whole packet per peer, all posted at fm_init (the one spare per peer is for its credit
 * packets, which need no credit): memory grows with the job.
 *
 * A compact message (wire.h) is read as if its payload sat where every packet's does, right
 * after a full header: its packet's buf points FM_WIRE_HDR_LEN - FM_WIRE_SHORT_LEN bytes
 * before where it landed (its own buffer: the payload is moved instead, recv.c). Nothing
 * reads or writes a received packet's header through buf after it was decoded, so those
 * bytes, the previous message's or the pad in front of a region, are never touched. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "memory.h"
#include "pool.h"
#include "recv_pool.h"

/* In front of a region: room for the view of a compact message that landed first in it. */
#define FM_RECV_PAD 64
_Static_assert(FM_WIRE_HDR_LEN - FM_WIRE_SHORT_LEN <= FM_RECV_PAD, "the pad holds the view");
/* A region holds at least this many whole packets, and at least FM_RECV_REGION_MIN bytes:
 * few releases and reposts per packet, little lost at a region's end (less than a packet). */
#define FM_RECV_REGION_PKTS 4
#define FM_RECV_REGION_MIN  (256 * 1024)
#define FM_RECV_DESC_CHUNK  256

struct fm_recv_desc_chunk {
    struct fm_recv_desc_chunk *next;
    fm_pkt pkts[FM_RECV_DESC_CHUNK];
};

static size_t region_bytes(const fm_context *ctx)
{
    size_t b = FM_RECV_REGION_PKTS * fm_recv_pool_landing(ctx);
    if (b < FM_RECV_REGION_MIN)
        b = FM_RECV_REGION_MIN;
    return (b + 63) & ~(size_t)63;
}

/* Regions made at fm_init: FM_RECV_POOL's worth, at least two (one can be on its way back
 * while packets land in the other). */
static size_t base_regions(const fm_context *ctx)
{
    size_t each = region_bytes(ctx), n = ((size_t)ctx->cfg.recv_pool + each - 1) / each;
    return n < 2 ? 2 : n;
}

static size_t per_peer_buffers(const fm_context *ctx)
{
    return (size_t)ctx->size * (size_t)(ctx->credits + 1);
}

/* Regions where a buffer per credit per peer would take more than FM_RECV_POOL: below that
 * the per-peer layout costs no more memory and is faster (libfabric 1.17's shm takes about
 * 50 ns more per small message into a region, bench/README.md). */
static int want_regions(const fm_context *ctx)
{
    return ctx->cfg.recv_pool &&
           per_peer_buffers(ctx) * fm_pool_pkt_bytes(ctx) > (size_t)ctx->cfg.recv_pool;
}

size_t fm_recv_pool_multi_min(const fm_context *ctx)
{
    return want_regions(ctx) ? fm_recv_pool_landing(ctx) : 0;
}

size_t fm_recv_pool_depth(const fm_context *ctx)
{
    /* Whether the transport will take regions is known only once it is open: room for either
     * layout (regions: those of fm_init and as many more made while they are pinned). */
    size_t regions = want_regions(ctx) ? 2 * base_regions(ctx) : 0;
    size_t buffers = per_peer_buffers(ctx);
    return regions > buffers ? regions : buffers;
}

/* ---- regions */

static fm_recv_region *region_new(fm_context *ctx)
{
    fm_recv_pool_state *rp = &ctx->rpool;
    size_t bytes = FM_RECV_PAD + rp->region_bytes;
    fm_recv_region *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    /* Not zeroed: pages the peers never fill take no memory. */
    r->mem = fm_mem_alloc_raw(bytes);
    if (!r->mem || ctx->tp->ops->mem_reg(ctx->tp, r->mem, bytes, &r->mr)) {
        fm_mem_free(r->mem);
        free(r);
        return NULL;
    }
    r->land = r->mem + FM_RECV_PAD;
    fm_pool_count(ctx, FM_PKT_RECV_BUF, bytes, r->mr != NULL);
    r->next = rp->regions;
    rp->regions = r;
    rp->nregions++;
    return r;
}

static void region_dereg(fm_context *ctx, fm_recv_region *r)
{
    if (r->mr) {
        ctx->tp->ops->mem_dereg(ctx->tp, r->mr);
        ctx->pool.bytes_registered -= FM_RECV_PAD + ctx->rpool.region_bytes;
        r->mr = NULL;
    }
}

static void region_free(fm_context *ctx, fm_recv_region *r)
{
    fm_recv_pool_state *rp = &ctx->rpool;
    fm_recv_region **pp = &rp->regions;
    while (*pp != r)
        pp = &(*pp)->next;
    *pp = r->next;
    rp->nregions--;
    region_dereg(ctx, r);
    fm_pool_uncount(ctx, FM_PKT_RECV_BUF, FM_RECV_PAD + rp->region_bytes);
    fm_mem_free(r->mem);
    free(r);
}

static int region_post(fm_context *ctx, fm_recv_region *r)
{
    /* Every failure is logged by the transport, naming its call and reason. */
    int rc = ctx->tp->ops->post_recv_multi(ctx->tp, r->land, ctx->rpool.region_bytes, r->mr, r);
    if (rc == FM_OK) {
        r->posted = 1;
        ctx->rpool.nposted++;
    }
    return rc;
}

/* Region r is empty and the provider's no more: posted again, or freed while there are more
 * than fm_init made (should every other one be pinned still, fm_recv_pool_tend makes one at
 * the next progress round). */
static int region_back(fm_context *ctx, fm_recv_region *r)
{
    fm_recv_pool_state *rp = &ctx->rpool;
    if (rp->nregions > rp->base) {
        region_free(ctx, r);
        return FM_OK;
    }
    return region_post(ctx, r);
}

/* A moved packet's memory: linked with the others (fm_finalize frees what is left, whatever
 * still held it), then room for a header and the payload. */
struct fm_recv_moved {
    struct fm_recv_moved *next, **prev;
    size_t bytes;
    _Alignas(16) unsigned char mem[];
};

/* The region of every moved packet: fm_recv_pool_put_region tells them by it. */
static fm_recv_region moved_out;

static struct fm_recv_moved *moved_of(const fm_pkt *p)
{
    return (struct fm_recv_moved *)(p->buf - offsetof(struct fm_recv_moved, mem));
}

static void moved_free(fm_context *ctx, struct fm_recv_moved *m)
{
    *m->prev = m->next;
    if (m->next)
        m->next->prev = m->prev;
    fm_pool_uncount(ctx, FM_PKT_RECV_BUF, m->bytes);
    free(m);
}

int fm_recv_pool_region_done(fm_context *ctx, fm_recv_region *r)
{
    r->posted = 0;
    ctx->rpool.nposted--;
    return r->live ? FM_OK : region_back(ctx, r);
}

int fm_recv_pool_put_region(fm_context *ctx, fm_pkt *p)
{
    fm_recv_region *r = p->region;
    p->region = NULL;
    p->next = ctx->rpool.free_desc;
    ctx->rpool.free_desc = p;
    if (r == &moved_out) {
        moved_free(ctx, moved_of(p));
        return FM_OK;
    }
    if (--r->live == 0 && !r->posted)
        return region_back(ctx, r);
    return FM_OK;
}

/* ---- packets moved out of pinned regions */

/* Held packet p's payload into memory of its own (header room in front, as everywhere): its
 * region loses a live packet. Without memory it stays where it is. */
static void move_out(fm_context *ctx, fm_pkt *p)
{
    fm_recv_pool_state *rp = &ctx->rpool;
    size_t bytes = FM_WIRE_HDR_LEN + (size_t)p->len;
    struct fm_recv_moved *m = malloc(sizeof *m + bytes);
    if (!m)
        return;
    memcpy(m->mem + FM_WIRE_HDR_LEN, fm_pkt_payload(p), p->len);
    m->bytes = bytes;
    m->next = rp->moved_mem;
    m->prev = &rp->moved_mem;
    if (m->next)
        m->next->prev = &m->next;
    rp->moved_mem = m;
    p->region->live--;
    p->region->movable--; /* (still all of what is left, for move_if_all) */
    p->region = &moved_out;
    p->buf = m->mem;
    p->mr = NULL;
    fm_pool_count(ctx, FM_PKT_RECV_BUF, bytes, 0);
    rp->moved++;
}

/* Whether p pins a region the provider has let go, and may move: nothing else reads its
 * buffer (no copy to a multicast child sends from it; not a zero-copy announcement), and
 * the provider needs no registration of it (it may yet be forwarded from its new place). */
static int movable(const fm_pkt *p)
{
    return p->region && p->region != &moved_out && !p->region->posted && p->refs == 1 && !p->zc &&
           !p->mr;
}

/* Calls fn on every packet of every message in progress here (whatever it waits for). */
static void each_held(fm_context *ctx, void (*fn)(fm_context *, fm_pkt *))
{
    for (int r = 0; r < ctx->size; r++)
        for (fm_stream *s = ctx->peers[r].inbound; s; s = s->next) {
            for (fm_pkt *p = s->ready.head; p; p = p->next)
                fn(ctx, p);
            for (fm_pkt *p = s->early; p; p = p->next)
                fn(ctx, p);
        }
}

static void count_movable(fm_context *ctx, fm_pkt *p)
{
    (void)ctx;
    if (movable(p))
        p->region->movable++;
}

/* Only out of regions that every live packet can leave: from others it would cost memory and
 * free nothing. */
static void move_if_all(fm_context *ctx, fm_pkt *p)
{
    if (movable(p) && p->region->movable == p->region->live)
        move_out(ctx, p);
}

/* Every region is pinned: move the held packets of those the provider let go, where all can
 * move, and post those regions again. How many were posted. */
static int unpin(fm_context *ctx)
{
    for (fm_recv_region *r = ctx->rpool.regions; r; r = r->next)
        r->movable = 0;
    each_held(ctx, count_movable);
    each_held(ctx, move_if_all);
    int posted = 0;
    for (fm_recv_region *r = ctx->rpool.regions; r; r = r->next)
        if (!r->posted && !r->live && region_post(ctx, r) == FM_OK)
            posted++;
    return posted;
}

int fm_recv_pool_tend(fm_context *ctx)
{
    fm_recv_pool_state *rp = &ctx->rpool;
    if (!fm_recv_pool_starved(ctx))
        return FM_OK;
    /* A region whose post failed before comes first. */
    for (fm_recv_region *r = rp->regions; r; r = r->next)
        if (!r->posted && !r->live)
            return region_post(ctx, r);
    if (unpin(ctx))
        return FM_OK;
    fm_recv_region *r = region_new(ctx);
    if (!r) {
        fm_log(0,
               "every receive region holds packets waiting here, and no memory for another "
               "of %zu bytes",
               rp->region_bytes);
        return FM_ERR_NOMEM;
    }
    rp->grown++;
    fm_log(2, "every receive region holds packets waiting here: %zu regions now", rp->nregions);
    return region_post(ctx, r);
}

static fm_pkt *desc_grow(fm_context *ctx)
{
    struct fm_recv_desc_chunk *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->next = ctx->rpool.chunks;
    ctx->rpool.chunks = c;
    for (int i = FM_RECV_DESC_CHUNK - 1; i > 0; i--) {
        c->pkts[i].kind = FM_PKT_RECV_BUF;
        c->pkts[i].next = ctx->rpool.free_desc;
        ctx->rpool.free_desc = &c->pkts[i];
    }
    c->pkts[0].kind = FM_PKT_RECV_BUF;
    return &c->pkts[0];
}

fm_pkt *fm_recv_pool_landed(fm_context *ctx, fm_recv_region *r, unsigned char *buf)
{
    fm_pkt *p = ctx->rpool.free_desc;
    if (p)
        ctx->rpool.free_desc = p->next;
    else if (!(p = desc_grow(ctx))) {
        fm_log(0, "out of memory for a received packet's descriptor: a packet is lost");
        return NULL;
    }
    p->next = NULL;
    p->buf = buf;
    p->mr = r->mr;
    p->region = r;
    r->live++;
    return p;
}

/* ---- both layouts */

static int init_regions(fm_context *ctx)
{
    fm_recv_pool_state *rp = &ctx->rpool;
    int rc = FM_OK;
    rp->region_bytes = region_bytes(ctx);
    rp->base = base_regions(ctx);
    for (size_t i = 0; i < rp->base; i++) {
        fm_recv_region *r = region_new(ctx);
        FM_CHECK(r, FM_ERR_NOMEM, "cannot allocate receive region %zu of %zu (%zu bytes)", i + 1,
                 rp->base, rp->region_bytes);
        rc = region_post(ctx, r);
        FM_CHECK(rc == FM_OK, rc, "posted only %zu of the %zu receive regions", i, rp->base);
    }
    return FM_OK;
error:
    return rc;
}

static int init_per_peer(fm_context *ctx)
{
    int rc = FM_OK;
    size_t n = per_peer_buffers(ctx);
    fm_pkt_slab *s = fm_pool_slab_new(ctx, n, FM_PKT_RECV_BUF);
    FM_CHECK(s, FM_ERR_NOMEM, "cannot allocate %zu receive buffers of %zu bytes", n,
             fm_pool_pkt_bytes(ctx));
    ctx->rpool.slabs = s;
    for (size_t i = 0; i < n; i++) {
        rc = fm_recv_pool_put(ctx, &s->pkts[i]);
        FM_CHECK(rc == FM_OK, rc,
                 "posted only %zu of the %zu receive buffers (%d ranks x (FM_CREDITS + 1))", i, n,
                 ctx->size);
    }
    return FM_OK;
error:
    return rc;
}

int fm_recv_pool_init(fm_context *ctx)
{
    if (want_regions(ctx) && ctx->tp->info.multi_recv)
        return init_regions(ctx);
    if (want_regions(ctx))
        fm_log(1,
               "provider %s has no multi-receive regions: FM_CREDITS + 1 receive buffers per "
               "rank instead of FM_RECV_POOL",
               ctx->tp->info.provider);
    return init_per_peer(ctx);
}

void fm_recv_pool_fini(fm_context *ctx)
{
    for (fm_recv_region *r = ctx->rpool.regions; r; r = r->next)
        region_dereg(ctx, r);
    fm_pool_slabs_dereg(ctx, ctx->rpool.slabs);
}

void fm_recv_pool_free(fm_context *ctx)
{
    fm_recv_pool_state *rp = &ctx->rpool;
    while (rp->regions)
        region_free(ctx, rp->regions);
    while (rp->chunks) {
        struct fm_recv_desc_chunk *c = rp->chunks;
        rp->chunks = c->next;
        free(c);
    }
    rp->free_desc = NULL;
    while (rp->moved_mem) /* held to the end (a message never handled) */
        moved_free(ctx, rp->moved_mem);
    fm_pool_slabs_free(ctx, rp->slabs);
    rp->slabs = NULL;
}
