/* SPDX-License-Identifier: BSD-3-Clause */
/* What the files of ipmc/ share (not for the rest of the multicast layer: ipmc.h). */
#ifndef FM_MCAST_IPMC_INTERNAL_H
#define FM_MCAST_IPMC_INTERNAL_H

#include <time.h>

#include "ipmc_state.h"
#include "mcast_state.h"

static inline fm_ipmc *fm_ipmc_of(fm_context *ctx)
{
    return ctx->mcast->ipmc;
}

static inline double fm_ipmc_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ipmc_msg.c: one multicast's state at one member */
fm_ipmc_msg *fm_ipmc_find(fm_ipmc *ip, uint32_t root, uint32_t mid);
/* A new state for h, on the list, its bytes within the budget: NULL beyond it or without
 * memory. */
fm_ipmc_msg *fm_ipmc_msg_alloc(fm_context *ctx, const fm_ipmc_hdr *h, const unsigned char *extra);
/* Bytes a message of len bytes with extra_len bytes of extra takes from the budget. */
uint64_t fm_ipmc_msg_bytes(uint64_t len, uint32_t chunk, size_t extra_len);
int fm_ipmc_done_has(fm_context *ctx, uint32_t root, uint32_t mid);
/* A member's state for h (from a datagram or an offer): NULL when this rank is no member (*why
 * 0: another group's or set's), its group is not created here yet or the budget is full (1:
 * not now), or the multicast is over here (2). */
fm_ipmc_msg *fm_ipmc_member_new(fm_context *ctx, const fm_ipmc_hdr *h, const unsigned char *extra,
                                int *why);
/* count chunks from first arrived (bytes: their payload, back to back): kept, and lent to
 * the handler in order. Returns 1 when they completed the message (m->complete is set: the
 * caller tells the ring, fm_ipmc_arrived does all of it). */
int fm_ipmc_place(fm_context *ctx, fm_ipmc_msg *m, uint32_t first, uint32_t count,
                  const unsigned char *bytes);
/* Chunks below upto missing here, as up to max (first, count) pairs into ranges; returns the
 * pairs. */
int fm_ipmc_missing(const fm_ipmc_msg *m, uint32_t upto, uint32_t *ranges, int max);
/* Free m if nothing needs it any more. */
void fm_ipmc_maybe_free(fm_context *ctx, fm_ipmc_msg *m);
void fm_ipmc_free_all(fm_context *ctx);
int fm_ipmc_has(const fm_ipmc_msg *m, uint32_t i);

/* ipmc_ring.c: stage 2 */
/* Chunks arrived (fm_ipmc_place), then what they allow: repairs the successor waits for, the
 * message's completion. m may be freed: the caller finds it again if it needs it. */
void fm_ipmc_arrived(fm_context *ctx, fm_ipmc_msg *m, uint32_t first, uint32_t count,
                     const unsigned char *bytes);
/* The successor asked for count chunks from first. */
void fm_ipmc_wanted(fm_context *ctx, fm_ipmc_msg *m, uint32_t first, uint32_t count);
/* Repairs of the chunks asked for that are here now. */
void fm_ipmc_serve(fm_context *ctx, fm_ipmc_msg *m);
int fm_ipmc_ring_init(fm_context *ctx);
void fm_ipmc_send_ctl(fm_context *ctx, int dest, int type, uint32_t root, uint32_t mid);
void fm_ipmc_completed(fm_context *ctx, fm_ipmc_msg *m);
/* The first offer to m's successor, a while from now. */
void fm_ipmc_offer_later(fm_context *ctx, fm_ipmc_msg *m, double now);
/* Ask the predecessor for what m misses (nothing when it misses nothing): all of it when
 * tail is set (the predecessor offered: it has it all), else the gaps below the highest
 * chunk here (the rest may still be on its way from the root). */
void fm_ipmc_send_nack(fm_context *ctx, fm_ipmc_msg *m, int tail);
/* Ask the predecessor for count chunks from first: a gap a datagram just showed. */
void fm_ipmc_send_gap(fm_context *ctx, fm_ipmc_msg *m, uint32_t first, uint32_t count);
int fm_ipmc_send_repair(fm_context *ctx, fm_ipmc_msg *m, uint32_t first, uint32_t count);
int fm_ipmc_timers(fm_context *ctx, double now);

/* ipmc_root.c: stage 1 */
int fm_ipmc_root_send(fm_context *ctx, double now);

/* ipmc_recv.c: datagrams in, at most FM_IPMC_POLL_MAX a round; returns how many */
#define FM_IPMC_POLL_MAX 64
int fm_ipmc_poll(fm_context *ctx);

#endif
