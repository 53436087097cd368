/* SPDX-License-Identifier: BSD-3-Clause */
/* The forwarding engine (forward.c): the multicast side of the core's hooks (hooks.h). */
#ifndef FM_MCAST_FORWARD_H
#define FM_MCAST_FORWARD_H

#include "context.h"

int fm_fwd_start(fm_context *ctx, fm_stream *s, fm_pkt *p, const fm_wire_hdr *h);
void fm_fwd_packet(fm_context *ctx, fm_stream *s, fm_pkt *p);
void fm_fwd_free(fm_stream *s);

#endif
