/* SPDX-License-Identifier: BSD-3-Clause */
/* memory: fm_stats' memory fields (mem_*) are the packet buffers the context really holds.
 *
 *   fastmsg-run -n N memory init    after fm_init, every rank: receive buffers are exactly
 *                                   what fastmsg.h documents: receive regions of FM_RECV_POOL
 *                                   (whatever N), or with FM_RECV_POOL=0 N x (FM_CREDITS + 1)
 *                                   packet buffers of the header (40 bytes) and FM_PACKET_SIZE
 *                                   payload bytes rounded up to 64; no copy headers; send
 *                                   buffers whole packet buffers; registered 0 or all; peak at
 *                                   least their sum. Prints "send at fm_init B" and "recv at
 *                                   fm_init B" (memory_sizes.sh checks that both are the same
 *                                   at 2 and 8 ranks).
 *   fastmsg-run -n N memory pin     ranks 1.. each send rank 0 their whole credit window of
 *                                   packets, for a handler rank 0 registers only once all of
 *                                   them are in: more than its receive regions hold. Every
 *                                   packet lands all the same (regions made while all are
 *                                   pinned: receive bytes grow), the messages run and are
 *                                   checked once the handler is there, and after rank 1 has
 *                                   sent twice the most receive bytes seen through the
 *                                   regions, they are back to their fm_init bytes.
 *   fastmsg-run -n 2 memory grow    rank 0's handler answers rank 1's request with a reply of
 *                                   more packets than its send buffers at fm_init and its
 *                                   credits: its send buffers grow, by whole buffers, to hold
 *                                   every packet the reply was promised as soon as it opens,
 *                                   and come back to exactly their fm_init bytes once every
 *                                   one has stayed free for 4096 progress rounds (rank 0
 *                                   drives fm_extract; a bounded count of calls, no clock).
 *                                   Rank 1 checks every byte of the reply. */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { H_REQUEST, H_REPLY, H_PIN, H_GO, H_END };
#define M_REPLY 7
#define M_PIN   8
#define HDR_LEN 40 /* the packet header (wire.h), in front of each payload */
/* fm_extract calls rank 0 makes for its send buffers to come back: the pool gives them back
 * after 4096 rounds with all of them free; the reply's own rounds come first. */
#define TRIM_CALLS 2000000L

static fm_context *ctx;
static int me, nranks, credits;
static size_t pkt; /* bytes of one packet buffer, computed here */
static fm_stats at_init;
static size_t reply_len;
static uint64_t send_grown; /* rank 0: send bytes right after the reply opened */
static int replied, got_reply;

/* Receive bytes after fm_init, from fastmsg.h's description of FM_RECV_POOL: while a buffer
 * per credit, and one more, per rank take no more than it, those; beyond, regions of
 * four packets and at least 256 KiB (rounded up to 64 bytes, and 64 bytes more each), as
 * many as FM_RECV_POOL needs and at least two; 0: a buffer per credit, and one more, per
 * rank, as over tcp with packets larger than about 16 KiB. */
static uint64_t recv_at_init(void)
{
    size_t pool = st_env_size("FM_RECV_POOL", 8 * 1024 * 1024);
    const char *prov = getenv("FM_PROVIDER");
    /* tcp (rxm) takes regions only for packets within its 16 KiB eager size, less 256. */
    int rxm = prov && strstr(prov, "tcp") && HDR_LEN + st_packet_size() + 256 > 16384;
    uint64_t per_peer = (uint64_t)nranks * (uint64_t)(credits + 1) * pkt;
    if (pool == 0 || rxm || per_peer <= pool)
        return per_peer;
    size_t region = 4 * (HDR_LEN + st_packet_size());
    if (region < 256 * 1024)
        region = 256 * 1024;
    region = (region + 63) / 64 * 64;
    size_t n = (pool + region - 1) / region;
    return (uint64_t)(n < 2 ? 2 : n) * (region + 64);
}

static fm_stats stats(void)
{
    fm_stats s;
    memset(&s, 0, sizeof s);
    int rc = fm_get_stats(ctx, &s);
    if (rc)
        st_fail("fm_get_stats: %s", fm_strerror(rc));
    return s;
}

/* What holds whenever no packet is held here: whole buffers, receive buffers as at fm_init,
 * registered none or all, the peak at least what is held now. */
static void check_always(const fm_stats *s, const char *when)
{
    uint64_t want_recv = recv_at_init();
    uint64_t total = s->mem_recv_bytes + s->mem_send_bytes + s->mem_copy_bytes;
    if (s->mem_recv_bytes != want_recv)
        st_fail("%s: receive buffers %llu B, want %llu B", when,
                (unsigned long long)s->mem_recv_bytes, (unsigned long long)want_recv);
    if (s->mem_send_bytes == 0 || s->mem_send_bytes % pkt)
        st_fail("%s: send buffers %llu B, not a positive multiple of %zu", when,
                (unsigned long long)s->mem_send_bytes, pkt);
    if (s->mem_copy_bytes % 64)
        st_fail("%s: copy headers %llu B, not a multiple of 64", when,
                (unsigned long long)s->mem_copy_bytes);
    if (s->mem_registered_bytes != 0 && s->mem_registered_bytes != total)
        st_fail("%s: registered %llu B of %llu", when, (unsigned long long)s->mem_registered_bytes,
                (unsigned long long)total);
    if (s->mem_peak_bytes < total)
        st_fail("%s: peak %llu B below the %llu B held", when,
                (unsigned long long)s->mem_peak_bytes, (unsigned long long)total);
}

static int on_request(fm_stream *req, int sender, void *arg)
{
    (void)req;
    (void)arg;
    fm_stream *s = NULL;
    int rc = fm_begin_message(ctx, sender, reply_len, H_REPLY, &s);
    if (rc) {
        st_fail("fm_begin_message of the reply inside the handler: %s", fm_strerror(rc));
        return FM_DONE;
    }
    fm_stats now = stats();
    send_grown = now.mem_send_bytes;
    size_t pkts = reply_len / st_packet_size() + 1; /* what fm_begin_message promises */
    if (now.mem_send_bytes < pkts * pkt)
        st_fail("the reply was promised %zu buffers (%zu B), but only %llu B of send buffers "
                "exist",
                pkts, pkts * pkt, (unsigned long long)now.mem_send_bytes);
    check_always(&now, "reply opened");
    rc = st_send_body(s, me, sender, M_REPLY, reply_len, 1);
    if (rc == FM_OK)
        rc = fm_end_message(s);
    if (rc)
        st_fail("writing the reply inside the handler: %s", fm_strerror(rc));
    replied = 1;
    return FM_DONE;
}

static void reply_in(void *buf, size_t len, int status, int sender, void *arg)
{
    (void)arg;
    size_t bad;
    if (status)
        st_fail("the reply: %s", fm_strerror(status));
    else if (len != reply_len)
        st_fail("the reply: %zu bytes, want %zu", len, reply_len);
    else if ((bad = st_mismatch(buf, len, sender, me, M_REPLY, 0)) != (size_t)-1)
        st_fail("the reply: wrong byte at offset %zu", bad);
    got_reply = 1;
    free(buf);
}

/* The whole message into a buffer of its own, for done (which frees it). */
static int deliver_whole(fm_stream *s, fm_deliver_fn done, void *arg)
{
    size_t cap = fm_stream_length(s);
    if (fm_stream_deliver(s, malloc(cap + 1), cap, done, arg))
        st_fail("fm_stream_deliver refused a message of %zu bytes", cap);
    return FM_CONTINUE;
}

static int on_reply(fm_stream *s, int sender, void *arg)
{
    (void)sender;
    return deliver_whole(s, reply_in, arg);
}

static void grow(void)
{
    if (nranks != 2)
        fm_abort(ctx, 2, "memory grow: run with -n 2");
    /* More packets than the send buffers at fm_init and than the credit window together, so
     * that most wait for credit in send buffers. */
    size_t pkts = (size_t)(at_init.mem_send_bytes / pkt) + 2 * (size_t)credits + 1;
    reply_len = (pkts - 1) * st_packet_size() + 7;
    if (fm_register_handler(ctx, H_REQUEST, on_request, NULL) ||
        fm_register_handler(ctx, H_REPLY, on_reply, NULL) || fm_barrier(ctx))
        fm_abort(ctx, 1, "FAIL: setup");
    if (me == 1) {
        fm_stream *s;
        int rc = fm_begin_message(ctx, 0, 0, H_REQUEST, &s);
        if (rc == FM_OK)
            rc = fm_end_message(s);
        if (rc)
            st_fail("the request: %s", fm_strerror(rc));
        while (!got_reply && !st_failures)
            if ((rc = fm_wait(ctx, -1)) < 0)
                st_fail("waiting for the reply: %s", fm_strerror(rc));
        printf("rank 1: reply of %zu bytes checked\n", reply_len);
        return;
    }
    while (!replied && !st_failures) {
        int rc = fm_wait(ctx, -1);
        if (rc < 0)
            st_fail("waiting for the request: %s", fm_strerror(rc));
    }
    if (send_grown <= at_init.mem_send_bytes)
        st_fail("send buffers did not grow: %llu B at fm_init, %llu B with the reply open",
                (unsigned long long)at_init.mem_send_bytes, (unsigned long long)send_grown);
    long calls = 0;
    fm_stats now = stats();
    while (now.mem_send_bytes != at_init.mem_send_bytes && calls < TRIM_CALLS && !st_failures) {
        long rc = fm_extract(ctx, 0);
        if (rc < 0)
            st_fail("fm_extract: %s", fm_strerror((int)rc));
        calls++;
        now = stats();
    }
    printf("rank 0: send buffers %llu B at fm_init, %llu B with the reply open, %llu B after %ld "
           "fm_extract calls; peak %llu B\n",
           (unsigned long long)at_init.mem_send_bytes, (unsigned long long)send_grown,
           (unsigned long long)now.mem_send_bytes, calls, (unsigned long long)now.mem_peak_bytes);
    if (now.mem_send_bytes != at_init.mem_send_bytes)
        st_fail("send buffers still %llu B after %ld fm_extract calls, want %llu B as at fm_init",
                (unsigned long long)now.mem_send_bytes, calls,
                (unsigned long long)at_init.mem_send_bytes);
    if (now.mem_peak_bytes < now.mem_recv_bytes + send_grown)
        st_fail("peak %llu B below the %llu B held with the reply open",
                (unsigned long long)now.mem_peak_bytes,
                (unsigned long long)(now.mem_recv_bytes + send_grown));
    check_always(&now, "after the reply");
}

/* ---- pin */

static int pinned_in, go, ended;
static size_t cycle_bytes;

static void pin_in(void *buf, size_t len, int status, int sender, void *arg)
{
    (void)arg;
    size_t bad;
    if (status)
        st_fail("a message from rank %d: %s", sender, fm_strerror(status));
    else if ((bad = st_mismatch(buf, len, sender, me, M_PIN, 0)) != (size_t)-1)
        st_fail("a message from rank %d: wrong byte at offset %zu", sender, bad);
    pinned_in++;
    free(buf);
}

static int on_pin(fm_stream *s, int sender, void *arg)
{
    (void)sender;
    return deliver_whole(s, pin_in, arg);
}

/* Rank 1 is told how many bytes to send through the regions (rank 0's most seen). */
static int on_go(fm_stream *s, int sender, void *arg)
{
    (void)sender, (void)arg;
    uint64_t n = 0;
    if (fm_receive(s, &n, sizeof n) != sizeof n)
        st_fail("the go message is short");
    cycle_bytes = (size_t)n;
    go = 1;
    return FM_DONE;
}

static int on_end(fm_stream *s, int sender, void *arg)
{
    (void)s, (void)sender, (void)arg;
    ended = 1;
    return FM_DONE;
}

static void send_to(int dest, int handler, size_t len, const void *word)
{
    fm_stream *s;
    int rc = fm_begin_message(ctx, dest, len, handler, &s);
    if (rc == FM_OK && len)
        rc = word ? fm_send_piece(s, word, len) : st_send_body(s, me, dest, M_PIN, len, 1);
    if (rc == FM_OK)
        rc = fm_end_message(s);
    if (rc)
        st_fail("sending %zu bytes to rank %d: %s", len, dest, fm_strerror(rc));
}

static void wait_for(const int *flag, const char *what)
{
    while (!*flag && !st_failures) {
        int rc = fm_wait(ctx, -1);
        if (rc < 0)
            st_fail("waiting for %s: %s", what, fm_strerror(rc));
    }
}

static void pin(void)
{
    size_t payload = st_packet_size(), window = (size_t)credits * payload;
    if (fm_register_handler(ctx, H_GO, on_go, NULL) ||
        fm_register_handler(ctx, H_END, on_end, NULL) || fm_barrier(ctx))
        fm_abort(ctx, 1, "FAIL: setup");
    if (me > 0) {
        if (fm_register_handler(ctx, H_PIN, on_pin, NULL))
            fm_abort(ctx, 1, "FAIL: setup");
        send_to(0, H_PIN, window, NULL); /* the whole window: needs no credit back */
        if (me == 1) {
            wait_for(&go, "rank 0's go");
            for (size_t sent = 0; sent < cycle_bytes && !st_failures; sent += payload)
                send_to(0, H_PIN, payload, NULL);
            send_to(0, H_END, 0, NULL);
        }
        return;
    }
    /* Every sender's window lands while no handler is registered for it. Its bytes, less
     * the few of fm_init's and the barrier's messages (under one packet), are in when the
     * count reaches them: far more than the regions of fm_init hold either way. */
    uint64_t want = (uint64_t)(nranks - 1) * (uint64_t)window;
    fm_stats now = stats();
    while (now.bytes_received < want && !st_failures) {
        if (fm_extract(ctx, 0) < 0)
            st_fail("fm_extract while the messages are held");
        now = stats();
    }
    uint64_t base = recv_at_init(), held = now.mem_recv_bytes;
    printf("rank 0: %llu bytes held, receive bytes %llu at fm_init, %llu now\n",
           (unsigned long long)now.bytes_received, (unsigned long long)base,
           (unsigned long long)held);
    if (held <= base)
        st_fail("%llu bytes held in %llu B of receive regions: they did not grow",
                (unsigned long long)now.bytes_received, (unsigned long long)held);
    if (fm_register_handler(ctx, H_PIN, on_pin, NULL))
        fm_abort(ctx, 1, "FAIL: setup");
    int all = 0;
    while (!all && !st_failures) {
        if (fm_wait(ctx, -1) < 0)
            st_fail("waiting for the held messages");
        all = pinned_in == nranks - 1;
    }
    uint64_t n = 2 * stats().mem_peak_bytes;
    send_to(1, H_GO, sizeof n, &n);
    wait_for(&ended, "rank 1's end");
    for (int i = 0; i < 16; i++) /* what the last messages hold goes back */
        fm_extract(ctx, 0);
    now = stats();
    printf("rank 0: %d messages checked; receive bytes %llu after %llu more bytes went "
           "through\n",
           pinned_in, (unsigned long long)now.mem_recv_bytes, (unsigned long long)n);
    check_always(&now, "after the regions were filled again");
}

int main(int argc, char **argv)
{
    if (argc != 2 ||
        (strcmp(argv[1], "init") && strcmp(argv[1], "grow") && strcmp(argv[1], "pin"))) {
        fprintf(stderr, "usage: memory init|grow|pin\n");
        return 2;
    }
    ctx = st_init();
    me = fm_rank(ctx);
    nranks = fm_size(ctx);
    const char *c = getenv("FM_CREDITS");
    credits = c && *c ? atoi(c) : 8; /* default: runtime/util/config_table.h */
    pkt = (HDR_LEN + st_packet_size() + 63) / 64 * 64;
    at_init = stats();
    check_always(&at_init, "after fm_init");
    if (at_init.mem_copy_bytes != 0)
        st_fail("after fm_init: %llu B of copy headers, want none",
                (unsigned long long)at_init.mem_copy_bytes);
    printf("rank %d: send at fm_init %llu B\n", me, (unsigned long long)at_init.mem_send_bytes);
    printf("rank %d: recv at fm_init %llu B\n", me, (unsigned long long)at_init.mem_recv_bytes);
    if (!strcmp(argv[1], "grow"))
        grow();
    if (!strcmp(argv[1], "pin"))
        pin();
    return st_finish(ctx, argv[1]);
}
