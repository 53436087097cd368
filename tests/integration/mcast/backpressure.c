/* SPDX-License-Identifier: BSD-3-Clause */
/* What multicast forwarding promises, checked on a chain 0 -> 1 -> ... -> n-1 of many-packet
 * messages (FM_PACKET_SIZE small, set by the test's environment):
 *   fast       children that always have credit cost no copy: every packet is forwarded
 *              from the receive buffer (FM_CREDITS above the message's packet count).
 *   slow       the last rank sleeps through the message: its parent copies at most
 *              FM_MCAST_BUFFER bytes for it and then holds back (fm_stats.mcast_held_peak),
 *              and the message still arrives whole.
 *   pipeline   the leaf's handler has the first bytes before the root's fm_end_message
 *              returns: the leaf answers its first packet at once, and the root must have
 *              run that answer's handler by then (the root waits for credits that only
 *              come back once the leaf has read most of the message).
 *   sf-refused store-and-forward where rank 1's FM_MCAST_BUFFER (set below, before fm_init)
 *              cannot hold the message: rank 1 gets it whole, ranks below it get packet 0
 *              and then FM_ERR_TRUNCATED, and nobody waits for more.
 *   twotree    the split two-tree multicast instead of the chain, on 7 ranks: every member
 *              gets the message whole, and every member forwards, none more than the
 *              message's packets (plus the halves' first and last): half of them to each of
 *              its two children in the one tree where it has children. Down one binary tree
 *              (no split) three members would forward nothing and two twice the message.
 *   twotree-slow the same, but rank 6 (the second tree's top, where rank 2 gets its odd
 *              packets from) sleeps through the start: rank 2's even packets come ahead of
 *              their turn, and it copies at most FM_MCAST_BUFFER bytes of them before it holds
 *              them (and its parent's credits); every member still gets the message whole.
 * Every rank prints PASS or FAIL with the reason. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../stream/common.h"

enum { H_DATA = 1, H_ACK = 2 };

static fm_context *ctx;
static const char *mode;
static int me, n;
static size_t got, len;
static int done, status = FM_OK, bad, acked, ack_sent;

static int fail(const char *why)
{
    printf("rank %d: FAIL: %s\n", me, why);
    return 1;
}

static int on_data(fm_stream *s, int sender, void *arg)
{
    (void)arg;
    unsigned char buf[4096];
    ssize_t r;
    while ((r = fm_receive(s, buf, sizeof buf)) > 0) {
        if (st_mismatch(buf, (size_t)r, sender, 0, 0, got) != (size_t)-1)
            bad = 1;
        got += (size_t)r;
    }
    if (got > 0 && !ack_sent && !strcmp(mode, "pipeline") && me == n - 1) {
        fm_stream *a;
        unsigned char one = 1;
        ack_sent = fm_begin_message(ctx, 0, 1, H_ACK, &a) == FM_OK &&
                   fm_send_piece(a, &one, 1) == FM_OK && fm_end_message(a) == FM_OK;
    }
    if (!fm_stream_complete(s) || fm_stream_available(s))
        return FM_CONTINUE;
    status = fm_stream_status(s);
    done = 1;
    return FM_DONE;
}

static int on_ack(fm_stream *s, int sender, void *arg)
{
    (void)s, (void)sender, (void)arg;
    acked = 1;
    return FM_DONE;
}

static int wait_done(void)
{
    time_t end = time(NULL) + 60;
    while (!done && time(NULL) < end)
        if (fm_wait(ctx, 100) < 0)
            return fail("fm_wait failed");
    return done ? 0 : fail("the message never ended");
}

static int root(void)
{
    int members[64];
    for (int i = 0; i < n; i++)
        members[i] = i;
    unsigned flags = strcmp(mode, "sf-refused") ? 0 : FM_MCAST_STORE_FORWARD;
    const char *tree = strncmp(mode, "twotree", 7) ? "chain" : "twotree";
    fm_stream *s;
    int rc = fm_mcast_begin_list(ctx, members, n, tree, flags, len, H_DATA, &s);
    if (rc)
        return fail(fm_strerror(rc));
    if ((rc = st_send_body(s, 0, 0, 0, len, 1)) || (rc = fm_end_message(s)))
        return fail(fm_strerror(rc));
    if (!strcmp(mode, "pipeline") && !acked)
        return fail("the leaf had no byte yet when fm_end_message returned");
    return 0;
}

static int check_member(const fm_stats *st, size_t budget)
{
    size_t pkt = st_packet_size();
    int leaf = me == n - 1;
    if (bad)
        return fail("wrong bytes");
    if (!strcmp(mode, "sf-refused")) {
        if (me == 1)
            return status == FM_OK && got == len ? 0 : fail("rank 1 did not get it whole");
        if (status != FM_ERR_TRUNCATED || got == 0 || got >= pkt || st->truncated != 1)
            return fail("not packet 0 and FM_ERR_TRUNCATED below the refusing member");
        return 0;
    }
    if (status != FM_OK || got != len)
        return fail("incomplete message");
    if (!strcmp(mode, "twotree-slow")) {
        printf("rank %d: held at most %llu B\n", me, (unsigned long long)st->mcast_held_peak);
        if (st->mcast_held_peak > budget)
            return fail("held more than FM_MCAST_BUFFER for packets ahead of their turn");
        return me != 2 || st->mcast_held_peak > 0 ? 0 : fail("rank 2 held nothing: not slow");
    }
    if (!strcmp(mode, "twotree")) {
        uint64_t fwd = st->fwd_by_reference + st->fwd_copied, most = len / pkt + 4;
        printf("rank %d: forwarded %llu packets (message: %zu)\n", me, (unsigned long long)fwd,
               (len + pkt - 1) / pkt);
        return fwd > 0 && fwd <= most ? 0 : fail("not one forwarding tree a member, half each");
    }
    if (leaf)
        return 0;
    if (!strcmp(mode, "fast") &&
        (st->fwd_copied != 0 || st->fwd_by_reference < (len + pkt - 1) / pkt))
        return fail("a child that always had credit cost copies");
    if (!strcmp(mode, "slow") && me == n - 2) {
        printf("rank %d: copied %llu, by reference %llu, held at most %llu B\n", me,
               (unsigned long long)st->fwd_copied, (unsigned long long)st->fwd_by_reference,
               (unsigned long long)st->mcast_held_peak);
        if (st->fwd_copied == 0)
            return fail("a sleeping child cost no copy: it was not slow");
        if (st->mcast_held_peak > budget)
            return fail("held more than FM_MCAST_BUFFER for a slow child");
    }
    return 0;
}

int main(int argc, char **argv)
{
    mode = argc > 1 ? argv[1] : "fast";
    const char *r = getenv("FASTMSG_RUN_RANK");
    if (!strcmp(mode, "sf-refused") && r && atoi(r) == 1)
        setenv("FM_MCAST_BUFFER", "4K", 1);
    int rc = fm_init(&ctx);
    if (rc)
        return fail(fm_strerror(rc));
    me = fm_rank(ctx);
    n = fm_size(ctx);
    if (n < 3 || n > 64 || (!strncmp(mode, "twotree", 7) && n != 7))
        return fail("needs 3..64 ranks (twotree: 7)");
    len = 60 * st_packet_size() + 5;
    if (fm_register_handler(ctx, H_DATA, on_data, NULL) ||
        fm_register_handler(ctx, H_ACK, on_ack, NULL) || fm_barrier(ctx))
        return fail("setup");
    int failed;
    if (me == 0) {
        failed = root();
    } else {
        if ((!strcmp(mode, "slow") && me == n - 1) || (!strcmp(mode, "twotree-slow") && me == 6))
            sleep(1); /* no progress: the message piles up at the parent */
        failed = wait_done();
        fm_stats st;
        if (!failed && fm_get_stats(ctx, &st) == FM_OK)
            failed = check_member(&st, st_env_size("FM_MCAST_BUFFER", 16u << 20));
    }
    if (fm_barrier(ctx))
        failed = fail("final barrier");
    fm_finalize(ctx);
    if (!failed)
        printf("rank %d: PASS\n", me);
    return failed;
}
