/* SPDX-License-Identifier: BSD-3-Clause */
/* The receiving side (runtime/core/recv.c, and the progress round that feeds it) against a fake
 * transport: packets no sender of the job can have sent are dropped and counted, their buffers
 * posted again without owing a credit, and the messages around them arrive whole. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "credits.h"
#include "streams.h"
#include "progress.h"
#include "recv.h"

#define KEY     0x5eed5eed5eed5eedULL
#define NPEERS  2
#define CREDITS 4
#define PAYLOAD 64
#define NPKTS   32
#define CHUNK   8 /* payload bytes per packet of the test messages */

typedef struct fake_tp {
    fm_tp base;
    int posts;     /* receive buffers posted */
    int post_fail; /* nonzero: post_recv returns this */
    fm_tp_event ev[4];
    int nev; /* events the next poll returns */
} fake_tp;

static int fake_post_recv(fm_tp *tp, void *buf, size_t len, fm_tp_mr *mr, void *ctx)
{
    (void)buf, (void)len, (void)mr, (void)ctx;
    fake_tp *f = (fake_tp *)tp;
    if (f->post_fail)
        return f->post_fail;
    f->posts++;
    return FM_OK;
}

static int fake_send(fm_tp *tp, int dest, const void *buf, size_t len, fm_tp_mr *mr, void *ctx)
{
    (void)tp, (void)dest, (void)buf, (void)len, (void)mr, (void)ctx;
    return FM_TP_SENT;
}

static int fake_poll(fm_tp *tp, fm_tp_event *ev, int max)
{
    fake_tp *f = (fake_tp *)tp;
    int n = f->nev < max ? f->nev : max;
    memcpy(ev, f->ev, (size_t)n * sizeof *ev);
    f->nev = 0;
    return n;
}

static const struct fm_tp_ops fake_ops = {
    .name = "fake", .send = fake_send, .post_recv = fake_post_recv, .poll = fake_poll};

typedef struct fixture {
    fake_tp tp;
    fm_context ctx;
    fm_pkt pkts[NPKTS];
    unsigned char bufs[NPKTS][FM_WIRE_HDR_LEN + PAYLOAD];
    int used;
    unsigned char got[256]; /* what the handler read, in order */
    size_t ngot;
    int calls;
} fixture;

/* Reads whatever has arrived; done once the whole message is read. */
static int collect(fm_stream *s, int sender, void *arg)
{
    (void)sender;
    fixture *f = arg;
    f->calls++;
    ssize_t n = fm_receive(s, f->got + f->ngot, sizeof f->got - f->ngot);
    if (n > 0)
        f->ngot += (size_t)n;
    return fm_stream_complete(s) && fm_stream_available(s) == 0 ? FM_DONE : FM_CONTINUE;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->tp.base.ops = &fake_ops;
    f->ctx.tp = &f->tp.base;
    f->ctx.size = NPEERS;
    f->ctx.credits = CREDITS;
    f->ctx.job_key = KEY;
    f->ctx.packet_size = PAYLOAD;
    f->ctx.peers = calloc(NPEERS, sizeof *f->ctx.peers);
    f->ctx.dirty = calloc(NPEERS, sizeof *f->ctx.dirty);
    f->ctx.handlers[0].fn = collect;
    f->ctx.handlers[0].arg = f;
    fm_credits_init(&f->ctx);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    fm_recv_fini(&f->ctx);
    fm_streams_free(&f->ctx);
    free(f->ctx.peers);
    free(f->ctx.dirty);
    free(f);
    return 0;
}

/* A received buffer holding packet seq of message msg_id from rank src (CHUNK bytes of
 * 'a' + seq), as the transport hands it over. */
static fm_pkt *arrived(fixture *f, uint16_t handler, uint32_t msg_id, uint32_t seq, int last,
                       uint64_t msg_len, size_t *len)
{
    assert_true(f->used < NPKTS);
    fm_pkt *p = &f->pkts[f->used];
    p->buf = f->bufs[f->used++];
    p->kind = FM_PKT_RECV_BUF;
    fm_wire_hdr h = {.version = FM_WIRE_VERSION,
                     .type = FM_PKT_DATA,
                     .flags = last ? FM_PKT_LAST : 0,
                     .src = 1,
                     .job_key = KEY,
                     .msg_id = msg_id,
                     .seq = seq,
                     .payload_len = CHUNK,
                     .handler = handler,
                     .msg_len = msg_len};
    fm_wire_encode(&h, p->buf);
    memset(p->buf + FM_WIRE_HDR_LEN, 'a' + (int)seq, CHUNK);
    *len = FM_WIRE_HDR_LEN + CHUNK;
    return p;
}

static void recv_data(fixture *f, uint16_t handler, uint32_t msg_id, uint32_t seq, int last,
                      uint64_t msg_len)
{
    size_t len;
    fm_pkt *p = arrived(f, handler, msg_id, seq, last, msg_len, &len);
    assert_int_equal(fm_recv_packet(&f->ctx, p, len), FM_OK);
}

static const fm_stream *inbound(const fixture *f, uint32_t msg_id)
{
    for (const fm_stream *s = f->ctx.peers[1].inbound; s; s = s->next)
        if (s->msg_id == msg_id)
            return s;
    return NULL;
}

static uint64_t seq_drops(const fixture *f)
{
    return f->ctx.drops[FM_WIRE_SEQ_BAD];
}

/* Duplicates of a waiting packet and of one moved on, and one beyond the window, among the
 * packets of a four-packet message: each dropped and counted, the message read whole, once. */
static void duplicates_and_far_ahead_dropped(void **state)
{
    fixture *f = *state;
    const uint64_t total = 4 * CHUNK;
    recv_data(f, 0, 0, 2, 0, total); /* waits for 0 and 1 */
    recv_data(f, 0, 0, 2, 0, total);
    assert_int_equal(seq_drops(f), 1);
    recv_data(f, 0, 0, 0, 0, total);
    assert_int_equal(f->ngot, CHUNK);
    recv_data(f, 0, 0, 0, 0, total);
    assert_int_equal(seq_drops(f), 2);
    recv_data(f, 0, 0, 1 + CREDITS, 0, total); /* 1 is next: 1 + CREDITS cannot be sent yet */
    assert_int_equal(seq_drops(f), 3);
    recv_data(f, 0, 0, 1, 0, total);
    assert_int_equal(f->ngot, 3 * CHUNK);
    recv_data(f, 0, 0, 3, 1, total);
    assert_int_equal(f->ngot, total);
    assert_memory_equal(f->got, "aaaaaaaabbbbbbbbccccccccdddddddd", total);
    assert_null(inbound(f, 0)); /* over, released */
    assert_int_equal(f->ctx.stats.dropped, 3);
    assert_int_equal(f->ctx.stats.messages_received, 1);
    /* The dropped buffers went straight back to the network and owe nothing; the message's
     * four go back at the next round, each owing its sender a credit. */
    assert_int_equal(f->tp.posts, 3);
    assert_int_equal(f->ctx.peers[1].owed, 0);
    assert_int_equal(fm_recv_repost(&f->ctx), FM_OK);
    assert_int_equal(f->tp.posts, 7);
    assert_int_equal(f->ctx.peers[1].owed, 4);
}

/* The first packet of a message to arrive may be any of the sender's window, no further; a
 * packet dropped that way begins no message. */
static void new_message_within_window(void **state)
{
    fixture *f = *state;
    recv_data(f, 0, 11, CREDITS, 0, 100 * CHUNK);
    assert_int_equal(seq_drops(f), 1);
    assert_null(inbound(f, 11));
    recv_data(f, 0, 12, CREDITS - 1, 0, 100 * CHUNK);
    assert_int_equal(seq_drops(f), 1);
    const fm_stream *s = inbound(f, 12);
    assert_non_null(s);
    assert_non_null(s->early);
    assert_int_equal(f->calls, 0); /* packet 0 is not here yet */
}

/* A complete message held for a handler not registered yet takes no more packets. */
static void nothing_after_the_last(void **state)
{
    fixture *f = *state;
    recv_data(f, 1, 9, 0, 0, 2 * CHUNK);
    recv_data(f, 1, 9, 1, 1, 2 * CHUNK);
    const fm_stream *s = inbound(f, 9);
    assert_non_null(s);
    assert_true(s->complete);
    recv_data(f, 1, 9, 2, 0, 2 * CHUNK);
    recv_data(f, 1, 9, 1, 1, 2 * CHUNK);
    assert_int_equal(seq_drops(f), 2);
    assert_null(s->early);
    assert_int_equal(f->tp.posts, 2);
}

/* Whole messages held for a handler not registered yet each begin a stream of their own, in
 * their sender's order. A compact one carries its id's low 16 bits, widened against the id
 * expected next: here across a 16-bit boundary. */
static void whole_messages_held_apart(void **state)
{
    fixture *f = *state;
    const uint32_t first = 0x1fffe;
    f->ctx.peers[1].first_next = first;
    recv_data(f, 1, first, 0, 0, 3 * CHUNK); /* more to come */
    for (uint32_t i = 1; i <= 2; i++) {
        fm_pkt *p = &f->pkts[f->used];
        p->buf = f->bufs[f->used++];
        p->kind = FM_PKT_RECV_BUF;
        fm_wire_hdr h = {.version = FM_WIRE_VERSION,
                         .src = 1,
                         .job_key = KEY,
                         .msg_id = first + i,
                         .payload_len = 4,
                         .handler = 1};
        fm_wire_encode_short(&h, p->buf);
        memcpy(p->buf + FM_WIRE_SHORT_LEN, "abcd", 4);
        assert_int_equal(fm_recv_packet(&f->ctx, p, FM_WIRE_SHORT_LEN + 4), FM_OK);
    }
    recv_data(f, 1, first + 3, 0, 1, CHUNK); /* a whole message with the full header */
    uint32_t want[] = {first, first + 1, first + 2, first + 3};
    int n = 0, whole = 0;
    for (const fm_stream *s = f->ctx.peers[1].inbound; s; s = s->next, n++) {
        assert_true(n < 4);
        assert_int_equal(s->msg_id, want[n]);
        whole += s->complete;
    }
    assert_int_equal(n, 4);
    assert_int_equal(whole, 3);
    assert_int_equal(f->ctx.peers[1].first_next, first + 4);
    assert_int_equal(seq_drops(f), 0);
    recv_data(f, 1, first, 1, 0, 3 * CHUNK); /* the first message goes on */
    assert_int_equal(seq_drops(f), 0);
    assert_non_null(f->ctx.peers[1].inbound->ready.head->next);
}

/* A credit packet returning more than the sender holds: its credits are ignored, counted. */
static void credits_beyond_what_was_given(void **state)
{
    fixture *f = *state;
    fm_pkt *p = &f->pkts[0];
    p->buf = f->bufs[0];
    p->kind = FM_PKT_RECV_BUF;
    fm_wire_hdr h = {.version = FM_WIRE_VERSION,
                     .type = FM_PKT_CREDIT,
                     .src = 1,
                     .job_key = KEY,
                     .credits = 0xffff};
    fm_wire_encode(&h, p->buf);
    assert_int_equal(fm_recv_packet(&f->ctx, p, FM_WIRE_HDR_LEN), FM_OK);
    assert_int_equal(f->ctx.peers[1].send_credits, CREDITS);
    assert_int_equal(f->ctx.drops[FM_WIRE_CREDITS_BAD], 1);
    assert_int_equal(f->ctx.stats.dropped, 1);
    assert_int_equal(f->ctx.stats.credit_packets_received, 1);
    assert_int_equal(f->tp.posts, 1);
}

/* A progress round reports the receive path's own error (here: a receive buffer the
 * transport refuses to take back), not out of memory. */
static void progress_reports_the_real_error(void **state)
{
    fixture *f = *state;
    size_t len;
    fm_pkt *p = arrived(f, 0, 5, 0, 1, CHUNK, &len);
    p->buf[0] = FM_WIRE_VERSION + 1; /* dropped, and its buffer posted again */
    f->tp.ev[0] = (fm_tp_event){.kind = FM_TP_RECV_DONE, .status = FM_OK, .ctx = p, .len = len};
    f->tp.nev = 1;
    f->tp.post_fail = FM_ERR_PROVIDER;
    assert_int_equal(fm_progress_once(&f->ctx), FM_ERR_PROVIDER);
    assert_int_equal(f->ctx.drops[FM_WIRE_VERSION_BAD], 1);
    f->tp.post_fail = 0;
    assert_int_equal(fm_progress_once(&f->ctx), 0); /* nothing more */
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(duplicates_and_far_ahead_dropped), T(new_message_within_window),
        T(nothing_after_the_last),           T(whole_messages_held_apart),
        T(credits_beyond_what_was_given),    T(progress_reports_the_real_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
