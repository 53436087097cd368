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
/* For requests: copy up to len bytes of buf into the stream's packets without waiting,
 * sending each full one; stops where no send buffer is free (or a multi-destination stream
 * is at FM_MCAST_BUFFER). Returns the bytes taken. */
size_t fm_send_fill(fm_stream *s, const void *buf, size_t len);
/* For requests: send the last packet and release the stream, without waiting: FM_EAGAIN
 * (no buffer for it yet: call again), or fm_end_message's status once released. */
int fm_send_finish(fm_stream *s);
/* fm_finalize, for a request that never completed: release the stream as it is. */
void fm_send_abandon(fm_stream *s);

#endif
