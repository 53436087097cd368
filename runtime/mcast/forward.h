/* SPDX-License-Identifier: BSD-3-Clause */
/* The forwarding engine (forward.c): the multicast side of the core's hooks (hooks.h). */
#ifndef FM_MCAST_FORWARD_H
#define FM_MCAST_FORWARD_H

#include "context.h"
#include "hooks.h"

/* The start hook: a descriptor length, FM_MCAST_DROP or FM_MCAST_LATER (hooks.h). */
int fm_fwd_start(fm_context *ctx, fm_stream *s, fm_pkt *p);
void fm_fwd_packet(fm_context *ctx, fm_stream *s, fm_pkt *p);
void fm_fwd_free(fm_stream *s);

#endif
