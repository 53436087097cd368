/* SPDX-License-Identifier: BSD-3-Clause */
/* Large pieces as tagged messages, straight between the two buffers (zcopy.c). */
#ifndef FM_CORE_ZCOPY_H
#define FM_CORE_ZCOPY_H

#include "context.h"

int fm_zcopy_wanted(const fm_stream *s, size_t len);
void fm_zcopy_init(fm_context *ctx);
/* Send *len bytes from *buf zero-copy, advancing both. FM_EAGAIN: the receiver declined a
 * piece; what is left goes through packets. */
int fm_zcopy_send(fm_stream *s, const unsigned char **buf, size_t *len);
void fm_zcopy_sent(fm_context *ctx, void *op, int status);
/* The receiver's answer to a piece: the tag of its posted receive, or 0 (declined). */
void fm_zcopy_cleared(fm_context *ctx, int peer, uint64_t piece, uint64_t rtag);
int fm_zcopy_check(fm_context *ctx, fm_pkt *p, uint64_t room);
/* Answer the announcement blocking s, if any; 1 when it was declined (s is unblocked). */
int fm_zcopy_post(fm_context *ctx, fm_stream *s);
void fm_zcopy_arrived(fm_context *ctx, fm_pkt *p, size_t len, int status);
void fm_zcopy_release(fm_context *ctx, fm_pkt *p);

#endif
