/* SPDX-License-Identifier: BSD-3-Clause */
/* The context's streams: reused through a free list (a message costs no allocation once the
 * job has warmed up), and every one ever allocated remembered, so that fm_finalize frees those
 * still open too (a message begun and never ended, a receive cut short). */
#include <stdlib.h>

#include "streams.h"

fm_stream *fm_stream_take(fm_context *ctx)
{
    fm_stream *s = ctx->stream_free;
    if (s) {
        ctx->stream_free = s->next;
        return s;
    }
    if (ctx->nstream_all == ctx->stream_all_cap) {
        size_t cap = ctx->stream_all_cap ? 2 * ctx->stream_all_cap : 16;
        fm_stream **all = realloc(ctx->stream_all, cap * sizeof *all);
        if (!all)
            return NULL;
        ctx->stream_all = all;
        ctx->stream_all_cap = cap;
    }
    if ((s = calloc(1, sizeof *s)))
        ctx->stream_all[ctx->nstream_all++] = s;
    return s;
}

void fm_stream_put(fm_context *ctx, fm_stream *s)
{
    s->next = ctx->stream_free;
    ctx->stream_free = s;
}

void fm_streams_free(fm_context *ctx)
{
    for (size_t i = 0; i < ctx->nstream_all; i++)
        free(ctx->stream_all[i]);
    free(ctx->stream_all);
    ctx->stream_all = NULL;
    ctx->nstream_all = ctx->stream_all_cap = 0;
    ctx->stream_free = NULL;
}
