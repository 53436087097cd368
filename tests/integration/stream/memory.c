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
 *   fastmsg-run -n N memory pin     ranks 1.. each send rank 0 a message of FM_CREDITS
 *                                   packets for a handler rank 0 registers late: what rank 0
 *                                   holds meanwhile stays within the windows fastmsg.h
 *                                   promises (with receive regions: 2 packets per sender and
 *                                   the FM_RECV_POOL budget; without: FM_CREDITS per sender);
 *                                   when that is more packets than the regions of fm_init
 *                                   hold, packets still land (held ones moved out of their
 *                                   regions: receive bytes grow, by at most the held packets'
 *                                   own bytes). The messages run and are checked once the
 *                                   handler is there, and after rank 1 has sent twice the
 *                                   most receive bytes seen through the regions, they are
 *                                   back to their fm_init bytes.
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

enum { H_REQUEST, H_REPLY, H_PIN, H_GO, H_END, H_FIRST, H_SECOND, H_BULK };
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
static int uses_regions(void)
{
    size_t pool = st_env_size("FM_RECV_POOL", 8 * 1024 * 1024);
    const char *prov = getenv("FM_PROVIDER");
    /* tcp (rxm) takes regions only for packets within its 16 KiB eager size, less 256. */
    int rxm = prov && strstr(prov, "tcp") && HDR_LEN + st_packet_size() + 256 > 16384;
    uint64_t per_peer = (uint64_t)nranks * (uint64_t)(credits + 1) * pkt;
    return pool != 0 && !rxm && per_peer > pool;
}

static size_t region_size(void)
{
    size_t region = 4 * (HDR_LEN + st_packet_size());
    if (region < 256 * 1024)
        region = 256 * 1024;
    return (region + 63) / 64 * 64;
}

static uint64_t recv_at_init(void)
{
    if (!uses_regions())
        return (uint64_t)nranks * (uint64_t)(credits + 1) * pkt;
    size_t region = region_size(), pool = st_env_size("FM_RECV_POOL", 8 * 1024 * 1024);
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

/* Rank 0 registers the handler its held messages wait for, and waits until `total` have
 * run and been checked. */
static void run_held(int handler, int total, const char *what)
{
    if (fm_register_handler(ctx, handler, on_pin, NULL))
        fm_abort(ctx, 1, "FAIL: setup");
    while (pinned_in < total && !st_failures)
        if (fm_wait(ctx, -1) < 0)
            st_fail("waiting for %s", what);
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

/* Packets the rank 0 of pin can be made to hold, from fastmsg.h: with receive regions each
 * sender's window there starts at 2 packets and grows only out of a budget of
 * FM_RECV_POOL / (40 + FM_PACKET_SIZE) packets, at least FM_CREDITS - 2, shared by all; with
 * buffers per peer every sender has its FM_CREDITS from the start. */
static uint64_t window_bound(void)
{
    uint64_t senders = (uint64_t)(nranks - 1), floor = credits < 2 ? (uint64_t)credits : 2;
    if (!uses_regions())
        return senders * (uint64_t)credits;
    uint64_t budget = st_env_size("FM_RECV_POOL", 8 * 1024 * 1024) / (HDR_LEN + st_packet_size());
    if (budget < (uint64_t)credits - floor) /* at least one sender's whole window */
        budget = (uint64_t)credits - floor;
    uint64_t most = senders * (uint64_t)credits;
    return senders * floor + budget < most ? senders * floor + budget : most;
}

/* Whole packets the regions of fm_init hold: each region is cut where less than a packet is
 * left, so a region holds region / (40 + FM_PACKET_SIZE) of them. */
static uint64_t region_packets(void)
{
    uint64_t landing = HDR_LEN + st_packet_size(), region = region_size();
    return recv_at_init() / (region + 64) * (region / landing);
}

static void pin(void)
{
    size_t payload = st_packet_size(), window = (size_t)credits * payload;
    /* From before the barrier: senders leave it, and send, before rank 0 does. The barrier's
     * own bytes count too (less than a packet). */
    uint64_t start = stats().bytes_received;
    if (fm_register_handler(ctx, H_GO, on_go, NULL) ||
        fm_register_handler(ctx, H_END, on_end, NULL) || fm_barrier(ctx))
        fm_abort(ctx, 1, "FAIL: setup");
    if (me > 0) {
        if (fm_register_handler(ctx, H_PIN, on_pin, NULL))
            fm_abort(ctx, 1, "FAIL: setup");
        send_to(0, H_PIN, window, NULL); /* its largest window: more than it may have there */
        if (me == 1) {
            wait_for(&go, "rank 0's go");
            for (size_t sent = 0; sent < cycle_bytes && !st_failures; sent += payload)
                send_to(0, H_PIN, payload, NULL);
            send_to(0, H_END, 0, NULL);
        }
        return;
    }
    /* Every sender sends for a handler not registered here: what lands is held. At least each
     * sender's first two packets land (its window can never be smaller); then rank 0 goes on
     * taking packets for TRIM_CALLS more calls (or until the bound is reached), and what is
     * held must never exceed the bound. */
    uint64_t floor = credits < 2 ? (uint64_t)credits : 2;
    uint64_t least = (uint64_t)(nranks - 1) * floor * payload;
    uint64_t bound = window_bound() * payload + payload - 1; /* (the barrier's bytes) */
    fm_stats now = stats();
    long calls = 0;
    while (now.bytes_received - start < least && !st_failures && calls++ < TRIM_CALLS) {
        if (fm_extract(ctx, 0) < 0)
            st_fail("fm_extract while the messages are held");
        now = stats();
    }
    for (long i = 0; i < TRIM_CALLS / 4 && now.bytes_received - start < bound && !st_failures;
         i++) {
        if (fm_extract(ctx, 0) < 0)
            st_fail("fm_extract while the messages are held");
        now = stats();
    }
    for (int i = 0; i < 1000; i++) /* anything beyond the bound would land now */
        fm_extract(ctx, 0);
    now = stats();
    uint64_t held = now.bytes_received - start, base = recv_at_init();
    printf("rank 0: %llu bytes held (at least %llu, at most %llu), receive bytes %llu at "
           "fm_init, %llu now\n",
           (unsigned long long)held, (unsigned long long)least, (unsigned long long)bound,
           (unsigned long long)base, (unsigned long long)now.mem_recv_bytes);
    if (held < least)
        st_fail("only %llu bytes held after %ld calls: every sender may send 2 packets",
                (unsigned long long)held, calls);
    if (held > bound)
        st_fail("%llu bytes held for a handler not registered: more than the %llu the windows "
                "allow",
                (unsigned long long)held, (unsigned long long)bound);
    if (uses_regions() && held / payload > region_packets() && now.mem_recv_bytes <= base)
        st_fail("%llu packets held, more than the %llu the regions of fm_init hold, in %llu B "
                "of receive buffers: they did not grow",
                (unsigned long long)(held / payload), (unsigned long long)region_packets(),
                (unsigned long long)now.mem_recv_bytes);
    uint64_t own = (held / payload + 1) * (HDR_LEN + payload); /* (+1: the barrier's) */
    if (uses_regions() && now.mem_recv_bytes > base + own)
        st_fail("receive bytes %llu with %llu B held: more than the regions of fm_init and the "
                "held packets' own bytes (%llu)",
                (unsigned long long)now.mem_recv_bytes, (unsigned long long)held,
                (unsigned long long)(base + own));
    run_held(H_PIN, nranks - 1, "the held messages");
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

/* ---- take-back */

/* Rank 0 waits until at least `want` more bytes than `from` are in (at most TRIM_CALLS
 * fm_extract calls), and says how many came. */
static uint64_t take_in(uint64_t from, uint64_t want, const char *what)
{
    uint64_t got = 0;
    for (long calls = 0; got < want && calls < TRIM_CALLS && !st_failures; calls++) {
        if (fm_extract(ctx, 0) < 0)
            st_fail("fm_extract while %s", what);
        got = stats().bytes_received - from;
    }
    for (int i = 0; i < 1000; i++) /* more would land now */
        fm_extract(ctx, 0);
    return stats().bytes_received - from;
}

static void takeback(void)
{
    if (nranks != 3 || !uses_regions())
        fm_abort(ctx, 2, "memory takeback: run with -n 3 and receive regions");
    size_t payload = st_packet_size(), window = (size_t)credits * payload;
    uint64_t budget = st_env_size("FM_RECV_POOL", 0) / (HDR_LEN + payload);
    if (budget + 2 != (uint64_t)credits)
        fm_abort(ctx, 2, "memory takeback: set FM_RECV_POOL to (FM_CREDITS - 2) packets");
    uint64_t start = stats().bytes_received; /* (see pin) */
    if (fm_register_handler(ctx, H_GO, on_go, NULL) ||
        fm_register_handler(ctx, H_END, on_end, NULL) || fm_barrier(ctx))
        fm_abort(ctx, 1, "FAIL: setup");
    if (me > 0) { /* rank 1 streams first: its window grows to FM_CREDITS, the whole budget;
                   * then rank 2 streams while rank 1 sits idle holding that window */
        if (me == 1)
            send_to(0, H_FIRST, window, NULL);
        wait_for(&go, "rank 0's go");
        if (me == 2)
            send_to(0, H_SECOND, window, NULL);
        wait_for(&ended, "rank 0's end");
        return;
    }
    uint64_t first = take_in(start, window, "rank 1's message is held");
    printf("rank 0: %llu bytes of rank 1's %zu (and the barrier's) held\n",
           (unsigned long long)first, window);
    if (first < window)
        st_fail("rank 1's message: %llu bytes held, want all %zu (its window grown to "
                "FM_CREDITS out of the budget)",
                (unsigned long long)first, window);
    run_held(H_FIRST, 1, "rank 1's message");
    uint64_t n = 0;
    send_to(1, H_GO, sizeof n, &n);
    send_to(2, H_GO, sizeof n, &n);
    /* The budget is rank 1's: rank 2 gets past its first 2 packets only with credits taken
     * back from rank 1, which is idle. */
    uint64_t from = stats().bytes_received;
    uint64_t second = take_in(from, 3 * payload, "rank 2's message is held");
    printf("rank 0: %llu bytes of rank 2's %zu held with rank 1 idle\n", (unsigned long long)second,
           window);
    if (second < 3 * payload)
        st_fail("rank 2's message: %llu bytes held, no more than its first 2 packets: nothing "
                "was taken back from idle rank 1",
                (unsigned long long)second);
    if (second > window)
        st_fail("rank 2's message: %llu bytes held, more than its largest window (%zu)",
                (unsigned long long)second, window);
    run_held(H_SECOND, 2, "rank 2's message");
    send_to(1, H_END, 0, NULL);
    send_to(2, H_END, 0, NULL);
    printf("rank 0: %d messages checked\n", pinned_in);
}

/* ---- scatter */

static int bulk_in;

static int on_bulk(fm_stream *s, int sender, void *arg)
{
    (void)s, (void)sender, (void)arg;
    bulk_in++;
    return FM_DONE; /* read nothing: the packet goes back at once */
}

static void wait_bulk(int want)
{
    while (bulk_in < want && !st_failures)
        if (fm_wait(ctx, -1) < 0)
            st_fail("waiting for rank 2's messages");
}

static void scatter(void)
{
    if (nranks != 4 || !uses_regions())
        fm_abort(ctx, 2, "memory scatter: run with -n 4 and receive regions");
    size_t payload = st_packet_size(), held_msg = 2 * payload;
    uint64_t landing = HDR_LEN + payload, region_pkts = region_size() / landing;
    if (recv_at_init() != 2 * (region_size() + 64))
        fm_abort(ctx, 2, "memory scatter: set FM_RECV_POOL for the two regions of fm_init");
    uint64_t start = stats().bytes_received; /* (see pin) */
    if (fm_register_handler(ctx, H_GO, on_go, NULL) ||
        fm_register_handler(ctx, H_END, on_end, NULL) ||
        fm_register_handler(ctx, H_BULK, on_bulk, NULL) || fm_barrier(ctx))
        fm_abort(ctx, 1, "FAIL: setup");
    if (me > 0) { /* 1: a held message; 2: two rounds of one-packet messages rank 0 frees at
                   * once; 3: a held message once rank 0 says so */
        if (me == 1)
            send_to(0, H_PIN, held_msg, NULL);
        for (int round = 0; round < (me == 1 ? 0 : me == 2 ? 2 : 1); round++) {
            wait_for(&go, "rank 0's go");
            go = 0;
            for (size_t i = 0; me == 2 && i < cycle_bytes && !st_failures; i++)
                send_to(0, H_BULK, payload, NULL);
            if (me == 3)
                send_to(0, H_PIN, held_msg, NULL);
        }
        wait_for(&ended, "rank 0's end");
        return;
    }
    /* Rank 1's packets are held in the region messages land in now; more than a region of
     * rank 2's moves the landing on to the other region (the first, pinned, is not posted
     * again); rank 3's packets are held in that one; two regions more of rank 2's fill it:
     * then both regions are pinned by held packets, 2 each. */
    uint64_t base = recv_at_init();
    if (take_in(start, held_msg, "rank 1's message is held") < held_msg)
        st_fail("rank 1's message did not arrive");
    uint64_t n = region_pkts + 8;
    send_to(2, H_GO, sizeof n, &n);
    wait_bulk((int)n);
    uint64_t from = stats().bytes_received;
    send_to(3, H_GO, sizeof n, &n);
    if (take_in(from, held_msg, "rank 3's message is held") < held_msg)
        st_fail("rank 3's message did not arrive");
    n = 2 * region_pkts + 8;
    send_to(2, H_GO, sizeof n, &n);
    wait_bulk(bulk_in + (int)n);
    fm_stats now = stats();
    uint64_t most = base + 4 * landing; /* the held packets' bytes on their own */
    printf("rank 0: %d messages of rank 2 through, 4 packets held in the two regions: receive "
           "bytes %llu at fm_init, %llu now\n",
           bulk_in, (unsigned long long)base, (unsigned long long)now.mem_recv_bytes);
    if (now.mem_recv_bytes > most)
        st_fail("receive bytes %llu with 4 packets held: more than the regions of fm_init and "
                "those packets' own bytes (%llu): the held packets were not moved out",
                (unsigned long long)now.mem_recv_bytes, (unsigned long long)most);
    if (now.mem_recv_bytes <= base)
        st_fail("receive bytes %llu, as at fm_init, with both regions pinned and %d messages "
                "through",
                (unsigned long long)now.mem_recv_bytes, bulk_in);
    run_held(H_PIN, 2, "the held messages");
    for (int r = 1; r < nranks; r++)
        send_to(r, H_END, 0, NULL);
    for (int i = 0; i < 16; i++) /* what the last messages hold goes back */
        fm_extract(ctx, 0);
    now = stats();
    printf("rank 0: %d held messages checked; receive bytes %llu\n", pinned_in,
           (unsigned long long)now.mem_recv_bytes);
    check_always(&now, "after the held messages ran");
}

int main(int argc, char **argv)
{
    if (argc != 2 ||
        (strcmp(argv[1], "init") && strcmp(argv[1], "grow") && strcmp(argv[1], "pin") &&
         strcmp(argv[1], "takeback") && strcmp(argv[1], "scatter"))) {
        fprintf(stderr, "usage: memory init|grow|pin|takeback|scatter\n");
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
    if (!strcmp(argv[1], "takeback"))
        takeback();
    if (!strcmp(argv[1], "scatter"))
        scatter();
    return st_finish(ctx, argv[1]);
}
