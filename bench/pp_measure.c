/* SPDX-License-Identifier: BSD-3-Clause */
/* One timed run of one size. Both ranks run the same loop counts (computed from the same
 * options), start together after a barrier, and rank 0 times the loop and fills the sample.
 *
 * Latency: rank 0 sends, rank 1 answers with a message of the same size; one-way latency is
 * half the mean round trip, as in OSU's osu_latency and fi_pingpong's usec/xfer.
 * Bandwidth: rank 0 sends a window of messages back to back, rank 1 answers the whole window
 * with one empty ack; bytes of the timed windows over their time, as in osu_bw. */
#include <time.h>

#include "pp.h"

int pp_measure_latency(void *link, const pp_opts *o, size_t size, pp_sample *out)
{
    pp_link *l = link;
    long iters = pp_lat_iters(o, size), total = pp_warmup(o, iters) + iters;
    long base = l->arrived; /* before the barrier, as in pp_measure_bandwidth */
    double t0 = 0;
    l->expect = size;
    int rc = fm_barrier(l->ctx);
    for (long i = 0; i < total && rc == FM_OK; i++) {
        if (i == total - iters)
            t0 = bench_now_us(CLOCK_MONOTONIC);
        if (l->me == 0) {
            rc = pp_send(l, size);
            if (rc == FM_OK)
                rc = pp_await(l, base + i + 1);
        } else {
            rc = pp_await(l, base + i + 1);
            if (rc == FM_OK)
                rc = pp_send(l, size);
        }
    }
    double us = bench_now_us(CLOCK_MONOTONIC) - t0;
    if (rc == FM_OK)
        out->lat_us = us / (2.0 * (double)iters);
    return rc;
}

/* Rank 0's side: windows out, one ack back for each. */
static int bw_sender(pp_link *l, const pp_opts *o, size_t size, long base, long total, long timed,
                     double *us)
{
    double t0 = 0;
    int rc = FM_OK;
    for (long w = 0; w < total && rc == FM_OK; w++) {
        if (w == total - timed)
            t0 = bench_now_us(CLOCK_MONOTONIC);
        for (int k = 0; k < o->window && rc == FM_OK; k++)
            rc = pp_send(l, size);
        if (rc == FM_OK)
            rc = pp_await(l, base + w + 1);
    }
    *us = bench_now_us(CLOCK_MONOTONIC) - t0;
    return rc;
}

static int bw_receiver(pp_link *l, const pp_opts *o, long base, long total)
{
    int rc = FM_OK;
    for (long w = 1; w <= total && rc == FM_OK; w++) {
        rc = pp_await(l, base + w * o->window);
        if (rc == FM_OK)
            rc = pp_send(l, 0);
    }
    return rc;
}

int pp_measure_bandwidth(void *link, const pp_opts *o, size_t size, pp_sample *out)
{
    pp_link *l = link;
    long timed = pp_bw_windows(o, size), total = pp_warmup(o, timed) + timed;
    /* Counted before the barrier: the first messages may arrive while it completes. */
    long base = l->arrived;
    double us = 0;
    l->expect = l->me == 0 ? 0 : size;
    int rc = fm_barrier(l->ctx);
    if (rc == FM_OK)
        rc = l->me == 0 ? bw_sender(l, o, size, base, total, timed, &us)
                        : bw_receiver(l, o, base, total);
    if (rc == FM_OK && l->me == 0) {
        double msgs = (double)timed * o->window;
        out->bw_mbs = msgs * (double)size / us; /* bytes per us = 10^6 B/s */
        out->rate_mps = msgs / us * 1e6;
    }
    return rc;
}
