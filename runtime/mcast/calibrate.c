/* SPDX-License-Identifier: BSD-3-Clause */
/* fm_mcast_calibrate: measure the model's costs on the live job, between ranks 0 and 1, and
 * give every rank the same figures so that every root choosing "auto" agrees with the model
 * the benchmarks print.
 *   latency     half the round trip of empty messages
 *   step(B)     a sender's time per B-byte packet copy, from a window of back-to-back
 *               one-packet messages (minus the closing acknowledgement's round trip)
 *   overhead, per_byte  from step at 64 bytes and at FM_PACKET_SIZE
 * The messages go through packets (never zero-copy), as multicast packets do. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "barrier.h"
#include "calibrate.h"
#include "handlers.h"
#include "log.h"
#include "multi.h"
#include "progress.h"
#include "mcast_state.h"
#include "tree_choice.h"

#define PINGS  200
#define WINDOW 64
#define SMALL  64

static int on_count(fm_stream *s, int sender, void *arg)
{
    (void)sender;
    struct fm_mcast *mc = arg;
    unsigned char sink[4096];
    while (fm_stream_available(s) > 0)
        fm_receive(s, sink, sizeof sink);
    if (!fm_stream_complete(s))
        return FM_CONTINUE;
    mc->calib_count++;
    return FM_DONE;
}

static int on_result(fm_stream *s, int sender, void *arg)
{
    fm_context *ctx = arg;
    double v[3];
    if (fm_stream_length(s) != sizeof v || !fm_stream_complete(s) ||
        fm_receive(s, v, sizeof v) != (ssize_t)sizeof v) {
        fm_log(0, "malformed calibration result from rank %d", sender);
        return FM_DONE;
    }
    if (!ctx->cfg.mcast_costs[0])
        fm_mcast_set_costs(ctx, v[0], v[1], v[2]);
    ctx->mcast->calib_have = 1;
    return FM_DONE;
}

int fm_calibrate_init(fm_context *ctx)
{
    struct fm_mcast *mc = ctx->mcast;
    mc->calib_count_handler = fm_handlers_add_internal(ctx, on_count, mc);
    mc->calib_result_handler = fm_handlers_add_internal(ctx, on_result, ctx);
    return mc->calib_count_handler < 0    ? mc->calib_count_handler
           : mc->calib_result_handler < 0 ? mc->calib_result_handler
                                          : FM_OK;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int count_reached(fm_context *ctx, void *arg)
{
    return ctx->mcast->calib_count >= *(uint64_t *)arg;
}

static int wait_count(fm_context *ctx, uint64_t n)
{
    return fm_progress_until(ctx, count_reached, &n, "calibration messages");
}

/* One message of len bytes (through packets) to dest for handler. */
static int send_msg(fm_context *ctx, int dest, int handler, const void *buf, size_t len)
{
    fm_stream *s;
    int rc = fm_multi_open(ctx, &dest, 1, len, ctx->packet_size, handler, NULL, 0, &s);
    if (rc == FM_OK)
        rc = fm_send_piece(s, buf, len);
    if (rc == FM_OK)
        rc = fm_end_message(s);
    return rc;
}

/* Rank 0: seconds per message of a window of len-byte messages, acknowledged at the end. */
static int window(fm_context *ctx, const unsigned char *buf, size_t len, double rtt, double *per)
{
    uint64_t base = ctx->mcast->calib_count;
    double t0 = now_s();
    int rc = FM_OK;
    for (int i = 0; i < WINDOW && rc == FM_OK; i++)
        rc = send_msg(ctx, 1, ctx->mcast->calib_count_handler, buf, len);
    if (rc == FM_OK)
        rc = wait_count(ctx, base + 1);
    double t = now_s() - t0 - rtt;
    *per = (t > 0 ? t : now_s() - t0) / WINDOW;
    return rc;
}

static int measure(fm_context *ctx, uint64_t base, double v[3])
{
    size_t big = ctx->packet_size;
    unsigned char *buf = calloc(1, big);
    int rc = buf ? FM_OK : FM_ERR_NOMEM;
    double t0 = now_s();
    for (int i = 0; i < PINGS && rc == FM_OK; i++) {
        rc = send_msg(ctx, 1, ctx->mcast->calib_count_handler, NULL, 0);
        if (rc == FM_OK)
            rc = wait_count(ctx, base + (uint64_t)i + 1);
    }
    double rtt = (now_s() - t0) / PINGS, small = 0, large = 0;
    if (rc == FM_OK)
        rc = window(ctx, buf, SMALL, rtt, &small);
    if (rc == FM_OK)
        rc = window(ctx, buf, big, rtt, &large);
    free(buf);
    double per_byte = big > SMALL && large > small ? (large - small) / (double)(big - SMALL) : 0;
    double overhead = small - SMALL * per_byte;
    v[0] = overhead > 1e-8 ? overhead : 1e-8;
    v[1] = per_byte;
    v[2] = rtt / 2 > small ? rtt / 2 - small : 0;
    fm_log(1, "calibrated: overhead %.3f us, %.3f ns/KiB, latency %.3f us (rtt %.3f us)",
           v[0] * 1e6, v[1] * 1e9 * 1024, v[2] * 1e6, rtt * 1e6);
    return rc;
}

/* Rank 1: answer the pings, then acknowledge each window. */
static int answer(fm_context *ctx, uint64_t base)
{
    int rc = FM_OK;
    for (int i = 0; i < PINGS && rc == FM_OK; i++) {
        rc = wait_count(ctx, base + (uint64_t)i + 1);
        if (rc == FM_OK)
            rc = send_msg(ctx, 0, ctx->mcast->calib_count_handler, NULL, 0);
    }
    for (int w = 1; w <= 2 && rc == FM_OK; w++) {
        rc = wait_count(ctx, base + PINGS + (uint64_t)w * WINDOW);
        if (rc == FM_OK)
            rc = send_msg(ctx, 0, ctx->mcast->calib_count_handler, NULL, 0);
    }
    return rc;
}

static int have_result(fm_context *ctx, void *arg)
{
    (void)arg;
    return ctx->mcast->calib_have;
}

int fm_mcast_calibrate(fm_context *ctx)
{
    if (!fm_ctx_live(ctx))
        return FM_ERR_NOT_INIT;
    if (ctx->in_handler)
        return FM_ERR_IN_HANDLER;
    if (ctx->size < 2)
        return FM_OK; /* nothing to measure: the estimates stay */
    /* Counted before the barrier: rank 0 may ping as soon as it leaves it, while rank 1 is
     * still inside, so the first ping can arrive before rank 1 starts answering. */
    uint64_t base = ctx->mcast->calib_count;
    int rc = fm_barrier_internal(ctx);
    if (rc)
        return rc;
    ctx->mcast->calib_have = 0;
    if (ctx->rank == 1)
        rc = answer(ctx, base);
    if (ctx->rank != 0)
        return rc ? rc : fm_progress_until(ctx, have_result, NULL, "the calibration result");
    double v[3];
    rc = measure(ctx, base, v);
    for (int r = 1; r < ctx->size && rc == FM_OK; r++)
        rc = send_msg(ctx, r, ctx->mcast->calib_result_handler, v, sizeof v);
    if (rc == FM_OK && !ctx->cfg.mcast_costs[0])
        fm_mcast_set_costs(ctx, v[0], v[1], v[2]);
    return rc;
}
