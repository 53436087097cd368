/* SPDX-License-Identifier: BSD-3-Clause */
/* A split multicast's two halves joined into one message (join.c). */
#ifndef FM_MCAST_JOIN_H
#define FM_MCAST_JOIN_H

#include <stdint.h>

#include "context.h"

int fm_join_init(fm_context *ctx);
void fm_join_fini(fm_context *ctx);

/* s is half `half` (0 or 1) of root's split multicast `id`, its forwarding set up: its bytes
 * go to the message's handler through the join, not to it directly. FM_OK, FM_ERR_NOMEM, or
 * FM_ERR_INVALID for a half this member already has. */
int fm_join_attach(fm_context *ctx, fm_stream *s, uint32_t root, uint32_t id, int half);
/* s, a half, is released (whole, or cut short). */
void fm_join_detach(fm_context *ctx, fm_stream *s);

/* Whether p is a run the join lent to a message (mcast.c's ext_release hook asks), and its
 * return once read. */
int fm_join_owns(const fm_pkt *p);
void fm_join_release(fm_context *ctx, fm_pkt *p);

#endif
