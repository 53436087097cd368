/* SPDX-License-Identifier: BSD-3-Clause */
/* The receiving side (recv.c): validated packets into their streams, handlers run on them. */
#ifndef FM_CORE_RECV_H
#define FM_CORE_RECV_H

#include "context.h"

int fm_recv_packet(fm_context *ctx, fm_pkt *p, size_t len);
void fm_recv_fini(fm_context *ctx);
void fm_recv_run_held(fm_context *ctx, int handler);
void fm_recv_resume(fm_context *ctx, fm_stream *s);
int fm_recv_repost(fm_context *ctx);

#endif
