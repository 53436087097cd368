/* SPDX-License-Identifier: BSD-3-Clause */
/* The receiving side (recv.c): validated packets into their streams, handlers run on them. */
#ifndef FM_CORE_RECV_H
#define FM_CORE_RECV_H

#include "context.h"

int fm_recv_packet(fm_context *ctx, fm_pkt *p, size_t len);
void fm_recv_fini(fm_context *ctx);
/* Start the messages held for handler id handler (-1: for any registered handler). */
void fm_recv_run_held(fm_context *ctx, int handler);
/* At a progress round, outside handlers: what registrations and group creations inside
 * handlers left to do (ctx->run_held, ctx->run_groups). */
void fm_recv_run_late(fm_context *ctx);
/* Call again the handlers of deferred messages (fm_stream_defer): at fm_extract and fm_wait. */
void fm_recv_run_deferred(fm_context *ctx);
/* A group was created: start the multicasts held for it (now, or at the next progress round
 * when called inside a handler). */
void fm_recv_groups_changed(fm_context *ctx);
/* Packets of rank r held here (in streams or about to be posted again). */
int fm_recv_held_packets(const fm_context *ctx, int r);
/* The same and those that copies to multicast children still send from (multi.c), each once:
 * all of r's window this rank takes up, for returning owed credits (credits.c). */
int fm_recv_held_with_copies(const fm_context *ctx, int r);
/* Rank r's window here shrank (window.c): what its held packets and owed credits now fill. */
void fm_recv_window_shrunk(fm_context *ctx, int r);
/* 1 when rank r owes this rank the rest of a message (or the first packet of an earlier
 * one) and has a credit to send it with. */
int fm_recv_awaited(const fm_context *ctx, int r);
void fm_recv_resume(fm_context *ctx, fm_stream *s);

/* External messages: a message whose bytes come another way than this transport's packets
 * (the two-stage multicast's datagrams, mcast/ipmc), from origin (>= 0, the rank its handler
 * sees), for handler id handler, of len bytes. The layer that receives them lends the bytes
 * in order, a run at a time (fm_recv_ext_more: p's data and len, p otherwise the caller's to
 * fill no further), and the message then goes to its handler as any other: streamed,
 * deferred, to a whole-message handler or a delivery buffer, held while the handler is not
 * registered. A run comes back through mcast_hooks->ext_release once read (or at
 * fm_finalize). No credits: the lender bounds the memory itself. fm_recv_ext_begin: NULL
 * when out of memory. */
fm_stream *fm_recv_ext_begin(fm_context *ctx, int origin, unsigned handler, uint64_t len);
/* last: 0, 1 (the message is whole), or FM_RECV_EXT_CUT (it ends here, cut short: its
 * handler sees FM_ERR_TRUNCATED). */
#define FM_RECV_EXT_CUT 2
void fm_recv_ext_more(fm_context *ctx, fm_stream *s, fm_pkt *p, int last);
/* The next unread packet of s taken whole, for a layer that passes the bytes on itself (the
 * two-tree multicast's join): marked read, with a hold of the caller's on it (fm_multi_unref
 * drops it), its unread bytes from *off on. NULL when none is unread. */
fm_pkt *fm_recv_take(fm_stream *s, uint32_t *off);
int fm_recv_repost(fm_context *ctx);

#endif
