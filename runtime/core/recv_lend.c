/* SPDX-License-Identifier: BSD-3-Clause */
/* Loans. A multicast fanned out on one host is written once into the sender's shared memory
 * (FM_SM_SHARE); without loans every member then copied each packet into a receive buffer and
 * its handler copied it again into the application's. With them the handler reads the
 * sender's memory directly: one copy per member, as an MPI broadcast over shared memory makes.
 *
 * The sender cannot write that memory again until the loan comes back, so a loan never
 * outlives its event: the handler runs on it (fm_recv_packet), and whatever still holds the
 * packet afterwards (a message that waits for more packets, or for its turn, or was deferred
 * or parked; a copy to a multicast child) gets the payload copied into the packet's own
 * buffer, which always has room for it. No sender thus waits on a receiver's handler, and
 * the receive memory bounds stay what they were. */
#include "recv_lend.h"

#include <string.h>

#include "recv.h"

/* Payloads up to this size are copied at once: a loan saves less than it costs. */
#define FM_LEND_MIN 4096

int fm_recv_lent(fm_context *ctx, fm_pkt *p, const fm_tp_event *e)
{
    size_t at = e->lent_at;
    /* The header is in the buffer (the bytes of it the loan has, copied there), the payload
     * stays lent; anything else is copied, and the loan is over at once. */
    if (at > FM_WIRE_HDR_LEN || e->len < FM_WIRE_HDR_LEN + FM_LEND_MIN) {
        memcpy(p->buf + at, e->lent, e->len - at);
        ctx->tp->ops->lend_release(ctx->tp, e->lend);
        return fm_recv_packet(ctx, p, e->len);
    }
    memcpy(p->buf + at, e->lent, FM_WIRE_HDR_LEN - at);
    p->lent = e->lent + (FM_WIRE_HDR_LEN - at);
    p->lend = e->lend;
    ctx->stats.lent_packets++;
    int rc = fm_recv_packet(ctx, p, e->len);
    /* Released (fm_recv_lend_done), p's buffer may already be the transport's again, but then
     * its lent is NULL: set only here, cleared whenever a packet is let go of. */
    fm_recv_unlend(ctx, p);
    return rc;
}

void fm_recv_unlend(fm_context *ctx, fm_pkt *p)
{
    if (!p->lent)
        return;
    memcpy(p->buf + FM_WIRE_HDR_LEN, p->lent, p->len);
    ctx->stats.lent_copied++;
    fm_recv_lend_done(ctx, p);
}
