/* SPDX-License-Identifier: BSD-3-Clause */
/* Loans (recv_lend.c): received packets whose payload stays where a sender on this host wrote
 * it (fm_tp_event.lent, sm with FM_SM_LEND), read there by the handler instead of being copied
 * into a receive buffer first. A loan lasts no longer than the event it came with. */
#ifndef FM_CORE_RECV_LEND_H
#define FM_CORE_RECV_LEND_H

#include "context.h"

/* The packet of receive event e, which carries a loan, into buffer p: its handler runs on
 * the lent payload; what is still held when that is over is copied into p's own buffer and
 * the loan given back. As fm_recv_packet. */
int fm_recv_lent(fm_context *ctx, fm_pkt *p, const fm_tp_event *e);
/* p keeps its payload beyond the loan (a copy to a multicast child will send from it): the
 * payload is copied into p's own buffer and the loan given back. */
void fm_recv_unlend(fm_context *ctx, fm_pkt *p);

/* p is done with: its loan, if any, goes back without a copy. */
static inline void fm_recv_lend_done(fm_context *ctx, fm_pkt *p)
{
    if (p->lent) {
        ctx->tp->ops->lend_release(ctx->tp, p->lend);
        p->lent = NULL;
    }
}

#endif
