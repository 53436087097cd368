/* SPDX-License-Identifier: BSD-3-Clause */
/* Per-peer windows (window.c): how many of a receiver's credits each sender may hold, where
 * receive buffers are shared regions. Grants, take-back and give-back ride on credit packets. */
#ifndef FM_CORE_WINDOW_H
#define FM_CORE_WINDOW_H

#include "context.h"

/* Every sender's window at a receiver with shared regions starts here (fewer only if
 * FM_CREDITS is smaller): enough for a one-packet message to be deferred (half the window)
 * while the sender still has a credit for the next. */
#define FM_WINDOW_FLOOR 2

/* After the receive buffers: windows start at the floor if they are regions (every rank of
 * a job decides alike), else at FM_CREDITS for good. */
int fm_window_init(fm_context *ctx);
void fm_window_fini(fm_context *ctx);

/* A packet to peer has to wait for a credit: ask it for a larger window (once per grant). */
void fm_window_ask(fm_context *ctx, int peer);
/* Peer asked for a larger window here: grant it more from the budget, or take some back from
 * the peer holding the largest window. */
void fm_window_asked(fm_context *ctx, int peer);

/* A credit packet from peer: its grant to this rank (before the credits it returns), then
 * its request that this rank shrink its window there, and what it gives back of ours. */
void fm_window_granted(fm_context *ctx, int peer, int n);
void fm_window_revoked(fm_context *ctx, int peer, uint32_t target);
void fm_window_given_back(fm_context *ctx, int peer, uint64_t n);

/* Credits came back from peer while it asks this rank to shrink: give them back. */
void fm_window_shrink(fm_context *ctx, int peer);

/* Window changes to send peer in the next credit packet. */
static inline int fm_window_pending(const fm_peer *p)
{
    return p->ask_out || p->grant_ack || p->revoke_out || p->giveback_out;
}

#endif
