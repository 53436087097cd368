/* SPDX-License-Identifier: BSD-3-Clause */
/* Receive buffers (recv_pool.c): where peers' packets land, and how their memory comes back
 * once this rank is done with them. */
#ifndef FM_CORE_RECV_POOL_H
#define FM_CORE_RECV_POOL_H

#include "context.h"
#include "recv_lend.h"

/* A multi-receive region: packets land in it packed, each taking its own length. */
typedef struct fm_recv_region {
    struct fm_recv_region *next;
    unsigned char *mem;  /* the allocation: a pad, then where messages land */
    unsigned char *land; /* where messages land (region_bytes of them) */
    fm_tp_mr *mr;
    size_t live;    /* packets landed in it and not yet released */
    size_t movable; /* of those, how many could move out of it now (recv_pool.c's unpin) */
    int posted;     /* with the provider: no REGION_DONE yet */
} fm_recv_region;

/* The largest message a peer sends: a packet's header and FM_PACKET_SIZE payload bytes. */
static inline size_t fm_recv_pool_landing(const fm_context *ctx)
{
    return FM_WIRE_HDR_LEN + ctx->packet_size;
}
/* Before the transport opens: the release threshold to ask it for (fm_tp_config's
 * multi_recv_min; 0 = one buffer per credit per peer), and the most receives posted at once
 * in the layout it will allow. */
size_t fm_recv_pool_multi_min(const fm_context *ctx);
size_t fm_recv_pool_depth(const fm_context *ctx);
/* Post the receive buffers, in the layout the transport allows. */
int fm_recv_pool_init(fm_context *ctx);
void fm_recv_pool_fini(fm_context *ctx); /* registrations: before the transport closes */
void fm_recv_pool_free(fm_context *ctx); /* memory: after */

/* A message landed at buf (len bytes) in region r: its packet, or NULL (out of memory for
 * its descriptor: the message is lost, logged). */
fm_pkt *fm_recv_pool_landed(fm_context *ctx, fm_recv_region *r, unsigned char *buf);
/* The provider let go of region r. */
int fm_recv_pool_region_done(fm_context *ctx, fm_recv_region *r);
/* Whether messages may have nowhere to land: regions are the layout, and none is posted, or
 * one of the transport's paths has none (fm_tp_ops.needs_region). */
static inline int fm_recv_pool_starved(fm_context *ctx)
{
    return ctx->rpool.regions && (!ctx->rpool.nposted || (ctx->tp->ops->needs_region &&
                                                          ctx->tp->ops->needs_region(ctx->tp)));
}
/* Each progress round, after packets were released: a region posted, or, when every region
 * is pinned by packets held here, those packets moved out of their regions, or one more
 * region made (so that packets still land). */
int fm_recv_pool_tend(fm_context *ctx);
int fm_recv_pool_put_region(fm_context *ctx, fm_pkt *p); /* (and moved-out packets) */

/* A received packet's buffer goes back: into the network again (its own buffer), or out of
 * its region (which is posted again once its last packet is out and the provider let go). */
static inline int fm_recv_pool_put(fm_context *ctx, fm_pkt *p)
{
    fm_recv_lend_done(ctx, p);
    if (p->region)
        return fm_recv_pool_put_region(ctx, p);
    p->off = 0;
    p->next = NULL;
    /* Every failure is logged by the transport, naming its call and reason. */
    return ctx->tp->ops->post_recv(ctx->tp, p->buf, fm_recv_pool_landing(ctx), p->mr, p);
}

#endif
