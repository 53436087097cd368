/* SPDX-License-Identifier: BSD-3-Clause */
/* The context's stream pool (streams.c). */
#ifndef FM_CORE_STREAMS_H
#define FM_CORE_STREAMS_H

#include "context.h"

/* A stream to fill: a reused one (its fields as it was left) or a zeroed new one; NULL when
 * out of memory. */
fm_stream *fm_stream_take(fm_context *ctx);
/* s back for reuse. */
void fm_stream_put(fm_context *ctx, fm_stream *s);
/* Every stream the context allocated, open or not: at close, once nothing refers to them. */
void fm_streams_free(fm_context *ctx);

#endif
