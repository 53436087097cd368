/* SPDX-License-Identifier: BSD-3-Clause */
/* How the core reaches multicast without knowing it: the multicast layer registers these
 * calls at fm_init (ctx->mcast_hooks). The core calls the first three only for multicast
 * packets (type FM_PKT_MCAST) and for streams whose s->fwd is set, so one-destination
 * messages pay nothing. Without hooks a multicast is dropped and counted. */
#ifndef FM_CORE_HOOKS_H
#define FM_CORE_HOOKS_H

#include "context.h"

/* start's answers besides a descriptor length. */
#define FM_MCAST_DROP (-1) /* the descriptor is bad or not meant for this rank: drop it */
#define FM_MCAST_LATER                                                                             \
    (-2) /* its group is not created here yet: hold it (start is asked                             \
          * again after each fm_group_create) */

struct fm_mcast_hooks {
    /* Packet 0 (p, from rank p->peer) of a multicast: read its descriptor, set s->fwd and
     * s->origin. Returns the descriptor's length (the handler reads after it), FM_MCAST_DROP
     * or FM_MCAST_LATER. */
    int (*start)(fm_context *ctx, fm_stream *s, fm_pkt *p);
    /* Packet p of s has come into sequence: on to this member's children. */
    void (*packet)(fm_context *ctx, fm_stream *s, fm_pkt *p);
    /* s is over: free s->fwd (and anything it holds), set it to NULL. */
    void (*release)(fm_stream *s);
    /* The rest may be NULL. Every progress round: datagrams and timers (the two-stage
     * multicast); returns the work done (> 0 keeps the caller from idling) or an error. */
    int (*progress)(fm_context *ctx);
    /* Nonzero while the layer still owes peers something that fm_finalize must wait for
     * (a repair, its successor's confirmation). */
    int (*busy)(fm_context *ctx);
    /* Nonzero while the layer has sends that only the next progress round makes (datagrams
     * a socket could not take yet): fm_trywait says not to sleep. */
    int (*pending)(fm_context *ctx);
    /* A packet of an external message (FM_PKT_EXT_BUF, recv.c: fm_recv_ext_more) is read:
     * its bytes go back to the layer that lent them, and the packet with them. */
    void (*ext_release)(fm_context *ctx, fm_pkt *p);
};

#endif
