/* SPDX-License-Identifier: BSD-3-Clause */
/* fcfs: First-Child-First-Served forwarding, and what forwarding members hold, on a binomial
 * tree of 5 ranks (0 -> 1; 1 -> 3 2; 3 -> 4: rank 1 forwards to two children, rank 3 first)
 * with messages of about 60 packets (FM_PACKET_SIZE small, from the test's environment):
 *   fcfs     while the message is incomplete at rank 1, rank 1 has sent each packet in once (to
 *            its first child), never to its second; it holds the whole message at once
 *            (fm_stats.fwd_held_peak), and every member gets the message whole.
 *   fpfs     the same tree in FPFS, with FM_MCAST_BUFFER=0 and FM_CREDITS small: rank 1 sends
 *            each packet to both children as it arrives (so the check above can fail), and
 *            holds no more than its parent's window.
 *   refused  rank 1's FM_MCAST_BUFFER (set below, before fm_init) cannot hold the message:
 *            in FCFS its first child (and that one's child) still get it whole, the second
 *            gets packet 0 and FM_ERR_TRUNCATED; then in FPFS every member gets it whole.
 * In every mode a leaf and the root hold nothing for forwarding, an inner member something,
 * and once the sends have completed nothing stays held (the count inside the library), so
 * fm_reset_peaks starts the held peaks from 0. Every rank prints PASS or FAIL with the reason.
 *
 *   fastmsg-run -n 5 fcfs fcfs|fpfs|refused */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../stream/common.h"
#include "context.h"

enum { H_DATA = 1, NRANKS = 5, FORWARDER = 1, FIRST = 3, SECOND = 2 };

static fm_context *ctx;
static const char *mode;
static int me;
static size_t len, pkt, got;
static int done, status, bad, observed, both_early;
static uint64_t sends_base;

static int fail(const char *why)
{
    printf("rank %d: FAIL: %s\n", me, why);
    return 1;
}

/* Packets this rank has sent on to multicast children so far. */
static uint64_t fwd_sends(void)
{
    fm_stats st;
    fm_get_stats(ctx, &st);
    return st.fwd_by_reference + st.fwd_copied;
}

static int on_data(fm_stream *s, int sender, void *arg)
{
    (void)arg;
    if (me == FORWARDER && !fm_stream_complete(s)) {
        /* The packets in so far: one per whole packet of bytes, one for a part-filled one and
         * one for the descriptor's room in packet 0. FCFS sends each once; FPFS twice. */
        size_t arrived = got + fm_stream_available(s);
        if (arrived >= 10 * pkt) {
            observed = 1;
            if (fwd_sends() - sends_base > arrived / pkt + 2)
                both_early = 1;
        }
    }
    unsigned char buf[4096];
    ssize_t r;
    while ((r = fm_receive(s, buf, sizeof buf)) > 0) {
        if (st_mismatch(buf, (size_t)r, sender, 0, 0, got) != (size_t)-1)
            bad = 1;
        got += (size_t)r;
    }
    if (!fm_stream_complete(s) || fm_stream_available(s))
        return FM_CONTINUE;
    status = fm_stream_status(s);
    done = 1;
    return FM_DONE;
}

/* One multicast from rank 0 down the binomial tree; every member checks what it got. want:
 * per rank, FM_OK (whole) or FM_ERR_TRUNCATED (packet 0 only). */
static int round_of(unsigned flags, const int want[NRANKS])
{
    got = 0;
    done = bad = observed = both_early = 0;
    status = FM_OK;
    sends_base = fwd_sends();
    if (fm_barrier(ctx))
        return fail("barrier");
    if (me == 0) {
        static const int members[NRANKS] = {0, 1, 2, 3, 4};
        fm_stream *s;
        int rc = fm_mcast_begin_list(ctx, members, NRANKS, "binomial", flags, len, H_DATA, &s);
        if (rc == FM_OK && (rc = st_send_body(s, 0, 0, 0, len, 1)) == FM_OK)
            rc = fm_end_message(s);
        if (rc != FM_OK) /* (its own children get every message whole) */
            return fail(fm_strerror(rc));
        return 0;
    }
    time_t end = time(NULL) + 60;
    while (!done && time(NULL) < end)
        if (fm_wait(ctx, 100) < 0)
            return fail("fm_wait failed");
    if (!done)
        return fail("the message never ended");
    if (bad)
        return fail("wrong bytes");
    if (want[me] == FM_OK)
        return status == FM_OK && got == len ? 0 : fail("the message did not arrive whole");
    if (status != FM_ERR_TRUNCATED || got == 0 || got >= pkt)
        return fail("not packet 0 and FM_ERR_TRUNCATED after a refused FCFS");
    return 0;
}

/* What this rank held for forwarding: nothing at the root and the leaves, something at the
 * inner members; in FCFS the forwarder held the whole message, in FPFS without copies no more
 * than its parent's window. */
static int check_held(const fm_stats *st)
{
    int leaf = me == 0 || me == SECOND || me == 4;
    printf("rank %d: forwarded %llu by reference, %llu copied, held at most %llu B\n", me,
           (unsigned long long)st->fwd_by_reference, (unsigned long long)st->fwd_copied,
           (unsigned long long)st->fwd_held_peak);
    if (leaf)
        return st->fwd_held_peak == 0 ? 0 : fail("held packets for forwarding, forwarding none");
    if (st->fwd_held_peak == 0)
        return fail("forwarded, holding nothing");
    if (me != FORWARDER || !strcmp(mode, "refused"))
        return 0;
    if (!observed)
        return fail("the message never showed incomplete with 10 packets in");
    if (!strcmp(mode, "fcfs")) {
        size_t m = (len + pkt - 1) / pkt;
        if (both_early)
            return fail("FCFS: the second child got packets before the last one was in");
        if (st->fwd_held_peak < (m - 1) * pkt)
            return fail("FCFS: held less than the whole message at once");
        return 0;
    }
    if (!both_early)
        return fail("FPFS: packets went to one child only while they arrived");
    if (st->fwd_held_peak > st_env_size("FM_CREDITS", 64) * (pkt + 128))
        return fail("FPFS without copies held more than its parent's window");
    return 0;
}

/* Every send of a forwarded packet completes: the count of what is held goes back to 0. */
static int check_released(void)
{
    time_t end = time(NULL) + 10;
    while (ctx->pool.fwd_held && time(NULL) < end)
        if (fm_wait(ctx, 10) < 0)
            return fail("fm_wait failed");
    if (!ctx->pool.fwd_held)
        return 0;
    printf("rank %d: %zu B still held for forwarding\n", me, ctx->pool.fwd_held);
    return fail("packet buffers held for forwarding were never released");
}

/* fm_reset_peaks starts the peaks from what is held now: nothing for forwarding (after
 * check_released), and the memory held now. */
static int check_reset(void)
{
    fm_stats st;
    if (fm_reset_peaks(ctx) != FM_OK || fm_get_stats(ctx, &st) != FM_OK)
        return fail("fm_reset_peaks or fm_get_stats failed");
    if (st.fwd_held_peak != 0 || st.mcast_held_peak != 0)
        return fail("a peak of held packets survived fm_reset_peaks");
    if (st.mem_peak_bytes != st.mem_recv_bytes + st.mem_send_bytes + st.mem_copy_bytes)
        return fail("mem_peak_bytes is not what is held after fm_reset_peaks");
    return 0;
}

int main(int argc, char **argv)
{
    mode = argc > 1 ? argv[1] : "fcfs";
    if (strcmp(mode, "fcfs") && strcmp(mode, "fpfs") && strcmp(mode, "refused")) {
        fprintf(stderr, "usage: fcfs fcfs|fpfs|refused\n");
        return 2;
    }
    const char *r = getenv("FASTMSG_RUN_RANK");
    if (!strcmp(mode, "refused") && r && atoi(r) == FORWARDER)
        setenv("FM_MCAST_BUFFER", "4K", 1);
    int rc = fm_init(&ctx);
    if (rc)
        return fail(fm_strerror(rc));
    me = fm_rank(ctx);
    if (fm_size(ctx) != NRANKS)
        return fail("needs 5 ranks");
    pkt = st_packet_size();
    len = 60 * pkt + 5;
    if (fm_register_handler(ctx, H_DATA, on_data, NULL))
        return fail("setup");
    static const int whole[NRANKS] = {FM_OK, FM_OK, FM_OK, FM_OK, FM_OK};
    static const int cut[NRANKS] = {FM_OK, FM_OK, FM_ERR_TRUNCATED, FM_OK, FM_OK};
    int failed;
    if (!strcmp(mode, "refused"))
        failed = round_of(FM_MCAST_FCFS, cut) || round_of(0, whole);
    else
        failed = round_of(!strcmp(mode, "fcfs") ? FM_MCAST_FCFS : 0, whole);
    fm_stats st;
    if (!failed)
        failed = fm_get_stats(ctx, &st) ? fail("fm_get_stats") : check_held(&st);
    if (fm_barrier(ctx))
        failed = fail("final barrier");
    if (!failed)
        failed = check_released();
    if (!failed)
        failed = check_reset();
    fm_finalize(ctx);
    if (!failed)
        printf("rank %d: PASS\n", me);
    return failed;
}
