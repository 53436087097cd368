/* SPDX-License-Identifier: BSD-3-Clause */
/* The context's queries (fm_rank, fm_size, fm_job_key, fm_get_stats), fm_abort, fm_version,
 * and fm_finalize's report. fm_init and fm_finalize themselves are runtime/init.c's. */
#include <stdio.h>
#include <stdlib.h>

#include "fm_build_config.h"
#include "log.h"
#include "context.h"
#include "pool.h"
#include "whole.h"

fm_context *fm_live_ctx;

static void print_stats(const fm_context *ctx)
{
    const fm_stats *s = &ctx->stats;
    fprintf(stderr,
            "fastmsg[%d] stats: sent %llu pkts %llu B %llu msgs | received %llu pkts %llu B "
            "%llu msgs | zero-copy %llu out %llu in | credit pkts %llu out %llu in | credit stalls "
            "%llu | dropped %llu (foreign %llu) | refused %llu | forwarded %llu by reference %llu "
            "copied, held now %zu peak %llu B | truncated %llu | deliver overflow %llu B | buffers "
            "now recv %zu send %zu copy %zu registered %zu peak %zu B | regions made while pinned "
            "%zu, packets moved out %zu | whole messages: buffers now %zu peak %zu B, waited %llu, "
            "too long %llu (%llu B) | datagrams sent %llu received %llu dropped %llu (on purpose "
            "%llu) | ring nacks %llu offers %llu repaired out %llu in %llu B | shared copies %llu "
            "| lent %llu, copied after %llu\n",
            ctx->rank, (unsigned long long)s->packets_sent, (unsigned long long)s->bytes_sent,
            (unsigned long long)s->messages_sent, (unsigned long long)s->packets_received,
            (unsigned long long)s->bytes_received, (unsigned long long)s->messages_received,
            (unsigned long long)s->zcopy_sent, (unsigned long long)s->zcopy_received,
            (unsigned long long)s->credit_packets_sent,
            (unsigned long long)s->credit_packets_received, (unsigned long long)s->credit_stalls,
            (unsigned long long)s->dropped, (unsigned long long)ctx->drops[FM_WIRE_KEY_BAD],
            (unsigned long long)ctx->tp->refused, (unsigned long long)s->fwd_by_reference,
            (unsigned long long)s->fwd_copied, ctx->pool.fwd_held,
            (unsigned long long)s->fwd_held_peak, (unsigned long long)s->truncated,
            (unsigned long long)s->deliver_overflow, ctx->pool.bytes_recv, ctx->pool.bytes_send,
            ctx->pool.bytes_copy, ctx->pool.bytes_registered, ctx->pool.bytes_peak,
            ctx->rpool.grown, ctx->rpool.moved, ctx->whole.used, ctx->whole.peak,
            (unsigned long long)s->message_waited, (unsigned long long)s->message_too_long,
            (unsigned long long)s->message_too_long_bytes, (unsigned long long)s->dgram_sent,
            (unsigned long long)s->dgram_received, (unsigned long long)s->dgram_dropped,
            (unsigned long long)s->dgram_drop_injected, (unsigned long long)s->ring_nacks,
            (unsigned long long)s->ring_offers, (unsigned long long)s->ring_repair_bytes_sent,
            (unsigned long long)s->ring_repair_bytes_received, (unsigned long long)ctx->tp->shared,
            (unsigned long long)s->lent_packets, (unsigned long long)s->lent_copied);
}

/* Messages that never ran (no handler registered for their id here, no group created for
 * their multicast) or were deferred and never called again: fm_finalize frees them unread,
 * so say so once. */
static void report_held(const fm_context *ctx)
{
    int n = 0, from = -1, groups = 0, deferred = 0;
    unsigned id = 0;
    for (int r = 0; r < ctx->size; r++)
        for (const fm_stream *s = ctx->peers[r].inbound; s; s = s->next) {
            if (s->await_group)
                groups++;
            else if (s->deferred)
                deferred++;
            else if (!ctx->handlers[s->handler].fn && !s->finished && !n++) {
                from = s->origin;
                id = s->handler;
            }
        }
    if (n)
        fm_log(0,
               "fm_finalize: %d message%s never ran: no handler registered for %s (handler id "
               "%u from rank %d%s)",
               n, n > 1 ? "s" : "", n > 1 ? "their ids" : "its id", id, from, n > 1 ? ", ..." : "");
    if (groups)
        fm_log(0, "fm_finalize: %d multicast%s never ran: no group created here for %s", groups,
               groups > 1 ? "s" : "", groups > 1 ? "them" : "it");
    if (deferred)
        fm_log(0,
               "fm_finalize: %d deferred message%s never ran again (no fm_extract or fm_wait "
               "since)",
               deferred, deferred > 1 ? "s" : "");
}

void fm_core_report(const fm_context *ctx)
{
    if (ctx->cfg.stats)
        print_stats(ctx);
    report_held(ctx);
    fm_whole_report(ctx);
}

int fm_rank(const fm_context *ctx)
{
    return fm_ctx_live(ctx) ? ctx->rank : FM_ERR_NOT_INIT;
}

int fm_size(const fm_context *ctx)
{
    return fm_ctx_live(ctx) ? ctx->size : FM_ERR_NOT_INIT;
}

uint64_t fm_job_key(const fm_context *ctx)
{
    return fm_ctx_live(ctx) ? ctx->job_key : 0;
}

int fm_get_stats(const fm_context *ctx, fm_stats *stats)
{
    if (!fm_ctx_live(ctx))
        return FM_ERR_NOT_INIT;
    if (!stats)
        return FM_ERR_INVALID;
    *stats = ctx->stats;
    stats->dropped_foreign = ctx->drops[FM_WIRE_KEY_BAD];
    stats->eagain_retries = ctx->tp->refused;
    stats->shared_copies = ctx->tp->shared;
    stats->mcast_held_peak = (uint64_t)ctx->pool.held_peak * fm_pool_pkt_bytes(ctx);
    stats->mem_recv_bytes = ctx->pool.bytes_recv;
    stats->mem_send_bytes = ctx->pool.bytes_send;
    stats->mem_copy_bytes = ctx->pool.bytes_copy;
    stats->mem_registered_bytes = ctx->pool.bytes_registered;
    stats->mem_peak_bytes = ctx->pool.bytes_peak;
    stats->mem_message_bytes = ctx->whole.used;
    stats->mem_message_peak_bytes = ctx->whole.peak;
    return FM_OK;
}

int fm_reset_peaks(fm_context *ctx)
{
    if (!fm_ctx_live(ctx))
        return FM_ERR_NOT_INIT;
    fm_pool_state *ps = &ctx->pool;
    ps->held_peak = ps->held;
    ps->bytes_peak = ps->bytes_recv + ps->bytes_send + ps->bytes_copy;
    ctx->stats.fwd_held_peak = ps->fwd_held;
    ctx->whole.peak = ctx->whole.used;
    return FM_OK;
}

void fm_abort(fm_context *ctx, int code, const char *msg)
{
    char line[512];
    if (!fm_ctx_live(ctx))
        ctx = NULL; /* (finalized or never initialised: nothing to read through it) */
    snprintf(line, sizeof line, "rank %d: %s", ctx ? ctx->rank : -1, msg ? msg : "fm_abort");
    if (ctx && ctx->boot.ops)
        fm_boot_abort(&ctx->boot, code, line);
    fprintf(stderr, "fastmsg: abort(%d): %s\n", code, line);
    _Exit(code ? code : 1);
}

const char *fm_version(void)
{
    return FM_VERSION_STRING;
}
