/* SPDX-License-Identifier: BSD-3-Clause */
/* The sending side (send.c): streams, packets filled and handed to the transport, or queued
 * for a credit. */
#ifndef FM_CORE_SEND_H
#define FM_CORE_SEND_H

#include "context.h"

int fm_send_alloc(fm_context *ctx, size_t len, size_t cap, int handler, fm_stream **stream);
int fm_send_open(fm_context *ctx, int dest, size_t len, int handler, fm_stream **stream);
void fm_send_submit(fm_stream *s, fm_pkt *p, int type, int last);
int fm_send_next_packet(fm_stream *s);
int fm_send_flush_peer(fm_context *ctx, int peer);
int fm_send_packet_now(fm_context *ctx, fm_pkt *p);
void fm_send_queue(fm_context *ctx, fm_pkt *p);
void fm_send_done(fm_context *ctx, fm_pkt *p);

#endif
