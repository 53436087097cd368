/* SPDX-License-Identifier: BSD-3-Clause */
/* Credit accounting (runtime/core/credits.c and the sending half of runtime/core/send.c) against a
 * fake transport that records every packet handed to it and can refuse sends; and the limit that
 * keeps a sender's sequence numbers from wrapping (send.c, zcopy.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "credits.h"
#include "recv.h"
#include "recv_pool.h"
#include "send.h"
#include "streams.h"
#include "window.h"
#include "zcopy.h"

#define KEY      0x5eed5eed5eed5eedULL
#define NPEERS   4
#define MAX_SENT 64
#define PAYLOAD  16

typedef struct sent_pkt {
    int dest;
    size_t len;
    void *ctx;
    fm_wire_hdr h;
} sent_pkt;

typedef struct fake_tp {
    fm_tp base;
    int fail_next; /* refuse this many sends */
    int nsent;
    sent_pkt sent[MAX_SENT];
} fake_tp;

static int fake_send(fm_tp *tp, int dest, const void *buf, size_t len, fm_tp_mr *mr, void *ctx)
{
    (void)mr;
    fake_tp *f = (fake_tp *)tp;
    if (f->fail_next > 0) {
        f->fail_next--;
        return FM_ERR_NOMEM;
    }
    assert_true(f->nsent < MAX_SENT);
    sent_pkt *s = &f->sent[f->nsent++];
    s->dest = dest;
    s->len = len;
    s->ctx = ctx;
    assert_int_equal(fm_wire_decode(buf, len, KEY, NPEERS, PAYLOAD, &s->h), FM_WIRE_OK);
    return FM_OK;
}

static int fake_post_recv(fm_tp *tp, void *buf, size_t len, fm_tp_mr *mr, void *ctx)
{
    (void)tp, (void)buf, (void)len, (void)mr, (void)ctx;
    return FM_OK;
}

static const struct fm_tp_ops fake_ops = {
    .name = "fake", .send = fake_send, .post_recv = fake_post_recv};

typedef struct fixture {
    fake_tp tp;
    fm_context ctx;
    fm_pkt pkts[8];
    unsigned char bufs[8][FM_WIRE_HDR_LEN + PAYLOAD];
} fixture;

static fixture *make(int credits)
{
    fixture *f = calloc(1, sizeof *f);
    f->tp.base.ops = &fake_ops;
    f->ctx.tp = &f->tp.base;
    f->ctx.size = NPEERS;
    f->ctx.credits = credits;
    f->ctx.job_key = KEY;
    f->ctx.packet_size = PAYLOAD;
    f->ctx.peers = calloc(NPEERS, sizeof *f->ctx.peers);
    f->ctx.dirty = calloc(NPEERS, sizeof *f->ctx.dirty);
    fm_credits_init(&f->ctx);
    return f;
}

static int setup8(void **state)
{
    *state = make(8);
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    fm_streams_free(&f->ctx);
    free(f->ctx.peers);
    free(f->ctx.dirty);
    free(f);
    return 0;
}

/* Data packet i of PAYLOAD bytes to peer, header written as packet_submit would. */
static fm_pkt *data_pkt(fixture *f, int i, int peer)
{
    fm_pkt *p = &f->pkts[i];
    memset(p, 0, sizeof *p);
    p->buf = f->bufs[i];
    p->kind = FM_PKT_SEND_BUF;
    p->peer = peer;
    p->len = PAYLOAD;
    fm_wire_hdr h = {.version = FM_WIRE_VERSION,
                     .type = FM_PKT_DATA,
                     .job_key = KEY,
                     .seq = (uint32_t)i,
                     .payload_len = PAYLOAD,
                     .msg_len = (uint64_t)PAYLOAD * 8};
    fm_wire_encode(&h, p->buf);
    return p;
}

/* Queue packets on a peer's pending list, as packet_submit does without credit. */
static void queue(fixture *f, int peer, int first, int n)
{
    fm_pkt_queue *q = &f->ctx.peers[peer].pending;
    for (int i = first; i < first + n; i++) {
        fm_pkt *p = data_pkt(f, i, peer);
        if (q->tail)
            q->tail->next = p;
        else
            q->head = p;
        q->tail = p;
    }
}

static void owe(fixture *f, int peer, int n)
{
    for (int i = 0; i < n; i++)
        fm_credits_owe(&f->ctx, peer);
}

static void window_and_threshold(void **state)
{
    (void)state;
    int credits[] = {1, 2, 3, 8, 9, 4096};
    for (size_t i = 0; i < sizeof credits / sizeof credits[0]; i++) {
        fixture *f = make(credits[i]);
        int t = fm_credits_threshold(&f->ctx.peers[0]);
        assert_int_equal(t, (credits[i] + 1) / 2);
        assert_true(t >= 1 && t <= credits[i]);
        for (int r = 0; r < NPEERS; r++) {
            assert_int_equal(f->ctx.peers[r].send_credits, credits[i]);
            assert_int_equal(f->ctx.peers[r].owed, 0);
        }
        void *s = f;
        teardown(&s);
    }
}

static void below_threshold_is_quiet(void **state)
{
    fixture *f = *state;
    owe(f, 1, 3); /* threshold 4 */
    assert_int_equal(f->ctx.ndirty, 0);
    assert_int_equal(fm_credits_settle(&f->ctx), FM_OK);
    assert_int_equal(f->tp.nsent, 0);
    assert_int_equal(f->ctx.peers[1].owed, 3);
    owe(f, 1, 1);
    assert_int_equal(f->ctx.ndirty, 1);
    assert_int_equal(f->ctx.dirty[0], 1);
    owe(f, 1, 3); /* listed once however much more is owed */
    assert_int_equal(f->ctx.ndirty, 1);
}

static void settle_sends_one_credit_packet(void **state)
{
    fixture *f = *state;
    owe(f, 2, 5);
    assert_int_equal(fm_credits_settle(&f->ctx), FM_OK);
    assert_int_equal(f->tp.nsent, 1);
    sent_pkt *s = &f->tp.sent[0];
    assert_int_equal(s->dest, 2);
    assert_int_equal(s->len, FM_WIRE_HDR_LEN);
    assert_ptr_equal(s->ctx, &f->ctx.peers[2].credit_pkt);
    assert_int_equal(s->h.type, FM_PKT_CREDIT);
    assert_int_equal(s->h.credits, 5);
    assert_int_equal(s->h.src, 0);
    assert_int_equal(f->ctx.peers[2].owed, 0);
    assert_true(f->ctx.peers[2].credit_busy);
    assert_int_equal(f->ctx.ndirty, 0);
    assert_int_equal(f->ctx.stats.credit_packets_sent, 1);
    assert_int_equal(f->ctx.peers[2].send_credits, 8); /* a credit packet costs no credit */
}

static void busy_credit_packet_defers(void **state)
{
    fixture *f = *state;
    owe(f, 2, 4);
    fm_credits_settle(&f->ctx);
    owe(f, 2, 4);
    assert_int_equal(fm_credits_settle(&f->ctx), FM_OK);
    assert_int_equal(f->tp.nsent, 1); /* the first is still in flight */
    assert_int_equal(f->ctx.ndirty, 1);
    assert_int_equal(f->ctx.peers[2].owed, 4);
    f->ctx.peers[2].credit_busy = 0; /* its send completed */
    assert_int_equal(fm_credits_settle(&f->ctx), FM_OK);
    assert_int_equal(f->tp.nsent, 2);
    assert_int_equal(f->tp.sent[1].h.credits, 4);
    assert_int_equal(f->ctx.ndirty, 0);
}

static void data_packets_spend_credits(void **state)
{
    fixture *f = *state;
    for (int i = 0; i < 8; i++)
        assert_int_equal(fm_send_packet_now(&f->ctx, data_pkt(f, i, 1)), FM_OK);
    assert_int_equal(f->ctx.peers[1].send_credits, 0);
    assert_int_equal(f->ctx.sends_inflight, 8);
    assert_int_equal(f->ctx.stats.packets_sent, 8);
    assert_int_equal(f->ctx.stats.bytes_sent, 8 * PAYLOAD);
    assert_int_equal(f->ctx.peers[0].send_credits, 8); /* other peers untouched */
}

static void gained_releases_pending_in_order(void **state)
{
    fixture *f = *state;
    f->ctx.peers[1].send_credits = 0;
    queue(f, 1, 0, 3);
    fm_credits_gained(&f->ctx, 1, 0);
    fm_credits_gained(&f->ctx, 1, -2);
    assert_int_equal(f->tp.nsent, 0);
    fm_credits_gained(&f->ctx, 1, 2);
    assert_int_equal(f->tp.nsent, 2);
    assert_int_equal(f->tp.sent[0].h.seq, 0);
    assert_int_equal(f->tp.sent[1].h.seq, 1);
    assert_ptr_equal(f->ctx.peers[1].pending.head, &f->pkts[2]);
    assert_int_equal(f->ctx.peers[1].send_credits, 0);
    fm_credits_gained(&f->ctx, 1, 5);
    assert_int_equal(f->tp.nsent, 3);
    assert_null(f->ctx.peers[1].pending.head);
    assert_null(f->ctx.peers[1].pending.tail);
    assert_int_equal(f->ctx.peers[1].send_credits, 4);
}

static void data_packets_carry_owed_credits(void **state)
{
    fixture *f = *state;
    f->ctx.peers[1].send_credits = 0;
    queue(f, 1, 0, 2);
    owe(f, 1, 6);
    fm_credits_gained(&f->ctx, 1, 1);
    assert_int_equal(f->tp.nsent, 1);
    assert_int_equal(f->tp.sent[0].h.type, FM_PKT_DATA);
    assert_int_equal(f->tp.sent[0].h.credits, 6);
    assert_int_equal(f->ctx.peers[1].owed, 0);
    assert_int_equal(fm_credits_settle(&f->ctx), FM_OK);
    assert_int_equal(f->tp.nsent, 1); /* nothing left to send a credit packet for */
    assert_int_equal(f->ctx.ndirty, 0);
    assert_false(f->ctx.peers[1].credit_dirty);
}

static void settle_flushes_before_credit_packet(void **state)
{
    fixture *f = *state;
    f->ctx.peers[0].send_credits = 0;
    queue(f, 0, 0, 1);
    owe(f, 0, 4);
    f->ctx.peers[0].send_credits = 1; /* as if gained without a flush */
    assert_int_equal(fm_credits_settle(&f->ctx), FM_OK);
    assert_int_equal(f->tp.nsent, 1);
    assert_int_equal(f->tp.sent[0].h.type, FM_PKT_DATA);
    assert_int_equal(f->tp.sent[0].h.credits, 4);
}

static void owed_is_capped_per_packet(void **state)
{
    fixture *f = *state;
    f->ctx.peers[1].owed = 70000;
    assert_int_equal(fm_credits_take_owed(&f->ctx.peers[1]), 0xffff);
    assert_int_equal(f->ctx.peers[1].owed, 70000 - 0xffff);
    assert_int_equal(fm_credits_take_owed(&f->ctx.peers[1]), 70000 - 0xffff);
    assert_int_equal(fm_credits_take_owed(&f->ctx.peers[1]), 0);
}

static void finalizing_sends_no_credit_packets(void **state)
{
    fixture *f = *state;
    f->ctx.finalizing = 1;
    owe(f, 1, 8);
    assert_int_equal(fm_credits_settle(&f->ctx), FM_OK);
    assert_int_equal(f->tp.nsent, 0);
    assert_int_equal(f->ctx.ndirty, 0);
}

static void credits_one_returns_every_packet(void **state)
{
    (void)state;
    fixture *f = make(1);
    owe(f, 1, 1);
    assert_int_equal(fm_credits_settle(&f->ctx), FM_OK);
    assert_int_equal(f->tp.nsent, 1);
    assert_int_equal(f->tp.sent[0].h.credits, 1);
    void *s = f;
    teardown(&s);
}

/* A refused data packet keeps its credit and the credits it was to carry. */
static void refused_data_packet_keeps_credits(void **state)
{
    fixture *f = *state;
    owe(f, 1, 2);
    f->tp.fail_next = 1;
    assert_int_not_equal(fm_send_packet_now(&f->ctx, data_pkt(f, 0, 1)), FM_OK);
    assert_int_equal(f->ctx.peers[1].owed, 2);
    assert_int_equal(f->ctx.peers[1].send_credits, 8);
    assert_int_equal(f->ctx.sends_inflight, 0);
}

/* A refused credit packet: the credits stay owed and the next settle tries again. */
static void refused_credit_packet_is_retried(void **state)
{
    fixture *f = *state;
    owe(f, 1, 4);
    f->tp.fail_next = 1;
    assert_int_not_equal(fm_credits_settle(&f->ctx), FM_OK);
    assert_int_equal(f->ctx.peers[1].owed, 4);
    assert_false(f->ctx.peers[1].credit_busy);
    /* progress settles only while a peer is listed dirty */
    assert_int_equal(f->ctx.ndirty, 1);
    assert_int_equal(fm_credits_settle(&f->ctx), FM_OK);
    assert_int_equal(f->tp.nsent, 1);
    assert_int_equal(f->tp.sent[0].h.credits, 4);
}

/* A pending packet the transport refuses stays queued, first in line. */
static void refused_pending_packet_stays_queued(void **state)
{
    fixture *f = *state;
    f->ctx.peers[1].send_credits = 0;
    queue(f, 1, 0, 2);
    f->tp.fail_next = 1;
    fm_credits_gained(&f->ctx, 1, 2);
    assert_int_equal(f->tp.nsent, 0);
    assert_ptr_equal(f->ctx.peers[1].pending.head, &f->pkts[0]);
    assert_int_equal(f->ctx.peers[1].send_credits, 2);
    fm_credits_gained(&f->ctx, 1, 0);
    assert_int_equal(fm_send_flush_peer(&f->ctx, 1), FM_OK);
    assert_int_equal(f->tp.nsent, 2);
    assert_int_equal(f->tp.sent[0].h.seq, 0);
}

/* A peer returns at most what it holds of ours: the excess of a malformed or forged credit
 * count is ignored and counted. */
static void gained_never_exceeds_what_was_given(void **state)
{
    fixture *f = *state;
    fm_credits_gained(&f->ctx, 1, 1); /* nothing sent yet */
    assert_int_equal(f->ctx.peers[1].send_credits, 8);
    assert_int_equal(f->ctx.drops[FM_WIRE_CREDITS_BAD], 1);
    assert_int_equal(f->ctx.stats.dropped, 1);
    for (int i = 0; i < 3; i++)
        assert_int_equal(fm_send_packet_now(&f->ctx, data_pkt(f, i, 1)), FM_OK);
    fm_credits_gained(&f->ctx, 1, 2);
    assert_int_equal(f->ctx.peers[1].send_credits, 7);
    assert_int_equal(f->ctx.drops[FM_WIRE_CREDITS_BAD], 1);
    fm_credits_gained(&f->ctx, 1, 0xffff); /* the one still out, and no more */
    assert_int_equal(f->ctx.peers[1].send_credits, 8);
    assert_int_equal(f->ctx.drops[FM_WIRE_CREDITS_BAD], 2);
    assert_int_equal(f->ctx.peers[2].send_credits, 8); /* other peers untouched */
    /* a whole window out, packets queued: they leave, and the window is whole again */
    f->ctx.peers[2].send_credits = 0;
    queue(f, 2, 3, 3);
    fm_credits_gained(&f->ctx, 2, 2);
    assert_int_equal(f->tp.nsent, 5);
    fm_credits_gained(&f->ctx, 2, 100);
    assert_int_equal(f->tp.nsent, 6);
    assert_null(f->ctx.peers[2].pending.head);
    assert_int_equal(f->ctx.peers[2].send_credits, 7);
    assert_int_equal(f->ctx.drops[FM_WIRE_CREDITS_BAD], 3);
    assert_int_equal(f->ctx.stats.dropped, 3);
}

/* Sequence numbers are 32 bits: a message that could need more than 2^32 packets is refused
 * when it begins, and a zero-copy piece is copied through packets instead when the rest of its
 * message would then no longer fit in the numbers left. */
static void sequence_numbers_never_wrap(void **state)
{
    fixture *f = *state;
    fm_stream *s = NULL;
    size_t most = (size_t)PAYLOAD << 32; /* 2^32 full packets */
    assert_int_equal(fm_send_open(&f->ctx, 1, most + 1, 0, &s), FM_ERR_TOO_LONG);
    assert_null(s);
    assert_int_equal(fm_send_alloc(&f->ctx, most + 1, PAYLOAD, 0, &s), FM_ERR_TOO_LONG);
    assert_int_equal(fm_send_alloc(&f->ctx, most + 1, 2 * PAYLOAD, 0, &s), FM_OK);
    fm_stream_put(&f->ctx, s);
    assert_int_equal(fm_send_open(&f->ctx, 1, most, 0, &s), FM_OK);

    /* Five numbers left, and 48 bytes to send, 8 of them in the packet being filled (packets
     * of 16). The receiver may decline the piece: then it too goes in packets. */
    f->tp.base.info.tagged = 1;
    f->ctx.zcopy_min = 1;
    s->seq = (uint32_t)(FM_WIRE_MAX_PACKETS - 5);
    s->written = most - 40;
    s->cur = data_pkt(f, 0, 1);
    s->cur->len = 8;
    assert_true(fm_zcopy_wanted(s, 40)); /* flush, announce, three packets if declined */
    assert_true(fm_zcopy_wanted(s, 8));  /* flush, announce, three packets */
    s->written = most - 49;
    assert_false(fm_zcopy_wanted(s, 49)); /* flush, announce, four packets if declined */
    assert_false(fm_zcopy_wanted(s, 1));  /* flush, announce, four packets for the rest */
    s->cur->len = 0;                      /* (an empty packet carries the announcement: no flush) */
    s->written = most - 64;
    assert_true(fm_zcopy_wanted(s, 64)); /* announce, four packets if declined */
    assert_true(fm_zcopy_wanted(s, 16)); /* announce, four packets */
    s->written = most - 65;
    assert_false(fm_zcopy_wanted(s, 16)); /* announce, five packets */
    s->seq = (uint32_t)(FM_WIRE_MAX_PACKETS - 2);
    s->written = most - 64;
    assert_false(fm_zcopy_wanted(s, 64)); /* taken: announce, an empty last packet, but
                                           * declined: four packets */
    fm_stream_put(&f->ctx, s);

    /* A message shorter than half the numbers never runs out: an announced piece costs at
     * most two numbers per byte. */
    size_t half = (size_t)(FM_WIRE_MAX_PACKETS / 2 - 2);
    assert_int_equal(fm_send_open(&f->ctx, 1, half, 0, &s), FM_OK);
    s->seq = UINT32_MAX - 1;
    s->written = 1;
    assert_true(fm_zcopy_wanted(s, 1));
    fm_stream_put(&f->ctx, s);
}

/* ---- per-peer windows (window.c): three ranks, each a fixture of its own, whose credit
 * packets are carried between them by pump() through the receiving side's fm_recv_packet. */

#define BUDGET 6 /* credits rank 0 may grant beyond the floors: FM_CREDITS (8) - 2 */

static fixture *make_windowed(int rank)
{
    fixture *f = make(8);
    static fm_recv_region some_region;
    f->ctx.rank = rank;
    f->ctx.rpool.regions = &some_region; /* receive buffers are regions: windows are on */
    f->ctx.cfg.recv_pool = (BUDGET + 0.5) * (FM_WIRE_HDR_LEN + PAYLOAD);
    assert_int_equal(fm_window_init(&f->ctx), FM_OK);
    return f;
}

static void free_windowed(fixture *f)
{
    fm_window_fini(&f->ctx);
    void *s = f;
    teardown(&s);
}

/* Settle rank r and carry the credit packets it sends to their destinations. 1: some. */
static int pump_from(fixture **w, int r)
{
    assert_int_equal(fm_credits_settle(&w[r]->ctx), FM_OK);
    fake_tp *tp = &w[r]->tp;
    int n = tp->nsent;
    for (int i = 0; i < n; i++) {
        sent_pkt *sp = &tp->sent[i];
        assert_int_equal(sp->h.type, FM_PKT_CREDIT);
        unsigned char buf[FM_WIRE_HDR_LEN];
        fm_wire_encode(&sp->h, buf);
        fm_pkt p = {.buf = buf, .kind = FM_PKT_RECV_BUF};
        assert_int_equal(fm_recv_packet(&w[sp->dest]->ctx, &p, sizeof buf), FM_OK);
        fm_credits_packet_done(&w[r]->ctx, sp->dest); /* its send completed */
    }
    tp->nsent = 0;
    return n > 0;
}

/* Every rank, until no credit packet is left. */
static void pump(fixture **w)
{
    for (int moved = 1; moved;) {
        moved = 0;
        for (int r = 0; r < NPEERS; r++)
            moved |= pump_from(w, r);
    }
}

/* Rank 0's view of each window is the sender's own once nothing is in flight, and together
 * they stay within the floors and the budget. */
static void windows_agree(fixture **w)
{
    int sum = 0;
    for (int r = 1; r < NPEERS; r++) {
        const fm_peer *mine = &w[0]->ctx.peers[r], *theirs = &w[r]->ctx.peers[0];
        assert_int_equal(mine->rwin, theirs->swin);
        assert_true(mine->rwin >= 2 && mine->rwin <= 8);
        assert_true(theirs->send_credits <= theirs->swin);
        sum += mine->rwin;
    }
    assert_true(sum <= 2 * (NPEERS - 1) + BUDGET);
    assert_int_equal(sum + w[0]->ctx.win.free, 2 * (NPEERS - 1) + BUDGET);
}

static int setup_windows(void **state)
{
    fixture **w = calloc(NPEERS, sizeof *w);
    for (int r = 0; r < NPEERS; r++)
        w[r] = make_windowed(r);
    for (int r = 1; r < NPEERS; r++) {
        assert_int_equal(w[r]->ctx.peers[0].swin, 2);
        assert_int_equal(w[r]->ctx.peers[0].send_credits, 2);
    }
    assert_int_equal(w[0]->ctx.win.free, BUDGET);
    *state = w;
    return 0;
}

static int teardown_windows(void **state)
{
    fixture **w = *state;
    for (int r = 0; r < NPEERS; r++)
        free_windowed(w[r]);
    free(w);
    return 0;
}

static void window_grows_when_asked(void **state)
{
    fixture **w = *state;
    fm_window_ask(&w[1]->ctx, 0); /* rank 1's packet to rank 0 waits for a credit */
    fm_window_ask(&w[1]->ctx, 0); /* asked once per grant */
    pump(w);
    assert_int_equal(w[0]->ctx.peers[1].rwin, 8);
    assert_int_equal(w[1]->ctx.peers[0].swin, 8);
    assert_int_equal(w[1]->ctx.peers[0].send_credits, 8);
    assert_int_equal(w[0]->ctx.win.free, 0);
    assert_int_equal(w[0]->ctx.stats.credit_packets_received, 1);
    windows_agree(w);
}

/* A sender that has its whole window in flight asks, though no packet of its waited: where
 * the receiver returns each credit before the next packet needs it there is never a stall,
 * and a window left at 2 returns every data packet's credit in a credit packet of its own. */
static void window_grows_when_all_in_flight(void **state)
{
    fixture **w = *state;
    assert_int_equal(fm_send_packet_now(&w[1]->ctx, data_pkt(w[1], 0, 0)), FM_OK);
    assert_int_equal(fm_credits_settle(&w[1]->ctx), FM_OK);
    assert_int_equal(w[1]->tp.nsent, 1); /* one of two credits out: nothing asked */
    assert_int_equal(fm_send_packet_now(&w[1]->ctx, data_pkt(w[1], 1, 0)), FM_OK);
    assert_int_equal(w[1]->ctx.stats.credit_stalls, 0);
    w[1]->tp.nsent = 0; /* (the data packets: rank 0 need not take them for this) */
    pump(w);
    assert_int_equal(w[0]->ctx.stats.credit_packets_received, 1); /* the request */
    assert_int_equal(w[0]->ctx.peers[1].rwin, 8);
    assert_int_equal(w[1]->ctx.peers[0].swin, 8);
    assert_int_equal(w[1]->ctx.peers[0].send_credits, 6); /* two packets still out */
}

static void window_taken_back_from_idle_peer(void **state)
{
    fixture **w = *state;
    fm_window_ask(&w[1]->ctx, 0);
    pump(w);
    fm_window_ask(&w[2]->ctx, 0); /* the budget is rank 1's, which is idle: all 8 at hand */
    pump(w);
    assert_true(w[0]->ctx.peers[2].rwin > 2);
    assert_true(w[0]->ctx.peers[1].rwin < 8);
    assert_int_equal(w[0]->ctx.peers[1].revoking, 0); /* the shrink is over */
    assert_int_equal(w[0]->ctx.peers[2].rwin + w[0]->ctx.peers[1].rwin, 2 + 2 + BUDGET);
    windows_agree(w);
}

static void window_busy_peer_gives_back_as_credits_return(void **state)
{
    fixture **w = *state;
    fm_window_ask(&w[1]->ctx, 0);
    pump(w);
    fm_peer *p1 = &w[1]->ctx.peers[0];
    p1->send_credits = 0; /* its 8 packets are in flight to rank 0 */
    fm_window_ask(&w[2]->ctx, 0);
    pump(w);
    assert_int_equal(w[0]->ctx.peers[2].rwin, 2); /* nothing to give back yet */
    int t = p1->shrink_to;
    assert_true(t > 2 && t < 8);
    fm_credits_gained(&w[1]->ctx, 0, 8); /* rank 0 freed them: all beyond t go back */
    assert_int_equal(p1->send_credits, t);
    assert_int_equal(p1->swin, t);
    assert_int_equal(p1->giveback_out, 8 - t);
    pump(w);
    assert_int_equal(p1->shrink_to, 0);
    assert_true(w[0]->ctx.peers[2].rwin > 2);
    windows_agree(w);
}

static void window_forged_changes_are_bounded(void **state)
{
    fixture **w = *state;
    /* Rank 1 says it gives back more than it holds beyond its floor, and grants rank 0
     * more than FM_CREDITS: rank 0 takes what can be true (nothing given back; its window
     * at rank 1 at FM_CREDITS, unasked: that costs rank 1 only its own memory) and counts the
     * rest. */
    fm_wire_hdr h = {.version = FM_WIRE_VERSION,
                     .type = FM_PKT_CREDIT,
                     .flags = FM_PKT_GIVEBACK | FM_PKT_GRANT,
                     .src = 1,
                     .job_key = KEY,
                     .handler = 60000,
                     .msg_len = 100};
    unsigned char buf[FM_WIRE_HDR_LEN];
    fm_wire_encode(&h, buf);
    fm_pkt p = {.buf = buf, .kind = FM_PKT_RECV_BUF};
    assert_int_equal(fm_recv_packet(&w[0]->ctx, &p, sizeof buf), FM_OK);
    assert_int_equal(w[0]->ctx.peers[1].rwin, 2);
    assert_int_equal(w[0]->ctx.win.free, BUDGET);
    assert_int_equal(w[0]->ctx.peers[1].swin, 8);
    assert_int_equal(w[0]->ctx.drops[FM_WIRE_CREDITS_BAD], 2);
    /* A shrink request and a clear-to-send in one packet is malformed. */
    h.flags = FM_PKT_CTS | FM_PKT_REVOKE;
    fm_wire_encode(&h, buf);
    fm_wire_hdr d;
    assert_int_equal(fm_wire_decode(buf, sizeof buf, KEY, NPEERS, PAYLOAD, &d), FM_WIRE_TYPE_BAD);
}

static void window_owed_returned_after_shrink(void **state)
{
    fixture **w = *state;
    fm_peer *r1 = &w[0]->ctx.peers[1], *s1 = &w[1]->ctx.peers[0];
    fm_window_ask(&w[1]->ctx, 0);
    pump(w);
    s1->send_credits = 0; /* its 8 packets are in flight to rank 0 */
    owe(w[0], 1, 4);      /* rank 0 frees 4: half the window, returned */
    pump(w);
    assert_int_equal(s1->send_credits, 4);
    fm_window_ask(&w[2]->ctx, 0);
    pump_from(w, 2); /* the request */
    pump_from(w, 0); /* rank 1 asked to shrink to 5: it gives back 3 of its 4 */
    assert_int_equal(s1->swin, 5);
    assert_int_equal(s1->send_credits, 1);
    owe(w[0], 1, 3); /* 3 more freed: below half of 8, so kept for now */
    assert_int_equal(r1->owed, 3);
    pump(w); /* the give-back: half of 5 is 3, so the 3 go back */
    assert_int_equal(r1->rwin, 5);
    assert_int_equal(r1->owed, 0);
    assert_int_equal(s1->send_credits, 4);
    windows_agree(w);
}

static void window_taken_back_for_the_asker(void **state)
{
    fixture **w = *state;
    fm_window_ask(&w[1]->ctx, 0); /* 8: the whole budget */
    pump(w);
    fm_window_ask(&w[2]->ctx, 0); /* rank 1 down to 5, rank 2 up to 5 */
    pump(w);
    assert_int_equal(w[0]->ctx.peers[1].rwin, 5);
    assert_int_equal(w[0]->ctx.peers[2].rwin, 5);
    fm_window_ask(&w[3]->ctx, 0); /* from one of them, for rank 3, not for rank 2 again */
    pump(w);
    assert_int_equal(w[0]->ctx.peers[3].rwin, 4);
    assert_int_equal(w[0]->ctx.peers[1].rwin + w[0]->ctx.peers[2].rwin, 8);
    assert_int_equal(w[3]->ctx.peers[0].asked, 0);
    /* Every window is within one of rank 3's now: its next request is answered empty, so
     * that it may ask again. */
    fm_window_ask(&w[3]->ctx, 0);
    assert_int_equal(w[3]->ctx.peers[0].asked, 1);
    pump(w);
    assert_int_equal(w[0]->ctx.peers[3].rwin, 4);
    assert_int_equal(w[3]->ctx.peers[0].asked, 0);
    windows_agree(w);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup8, teardown)
#define W(fn) cmocka_unit_test_setup_teardown(fn, setup_windows, teardown_windows)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(window_and_threshold),
        T(below_threshold_is_quiet),
        T(settle_sends_one_credit_packet),
        T(busy_credit_packet_defers),
        T(data_packets_spend_credits),
        T(gained_releases_pending_in_order),
        T(data_packets_carry_owed_credits),
        T(settle_flushes_before_credit_packet),
        T(owed_is_capped_per_packet),
        T(finalizing_sends_no_credit_packets),
        cmocka_unit_test(credits_one_returns_every_packet),
        T(refused_data_packet_keeps_credits),
        T(refused_credit_packet_is_retried),
        T(refused_pending_packet_stays_queued),
        T(gained_never_exceeds_what_was_given),
        T(sequence_numbers_never_wrap),
        W(window_grows_when_asked),
        W(window_grows_when_all_in_flight),
        W(window_taken_back_from_idle_peer),
        W(window_busy_peer_gives_back_as_credits_return),
        W(window_forged_changes_are_bounded),
        W(window_owed_returned_after_shrink),
        W(window_taken_back_for_the_asker),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
