/* SPDX-License-Identifier: BSD-3-Clause */
/* A multi-destination stream (runtime/core/multi.c) against a fake transport whose sends stay
 * in flight, with fastmsg's allocator replaced here so that one allocation can be made to
 * fail: a destination whose packet copy cannot be made gets an abort packet in that packet's
 * place and nothing more, the other destination gets the whole message, and fm_end_message
 * says FM_ERR_TRUNCATED. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "credits.h"
#include "streams.h"
#include "memory.h"
#include "multi.h"
#include "pool.h"
#include "recv.h"
#include "send.h"

#define KEY     0x5eed5eed5eed5eedULL
#define NPEERS  3
#define CREDITS 4096 /* no copy ever waits for a credit here */
#define PAYLOAD 64
#define NPKTS   200 /* packets of the message: more than one slab of copy headers */
#define MAXSENT (2 * NPKTS + 8)

/* ---- the allocator, replaced: fail_at counts down allocations, the one reaching 0 fails. */
static long fail_at = -1;

static void *alloc(size_t size)
{
    if (fail_at >= 0 && fail_at-- == 0)
        return NULL;
    void *p = NULL;
    if (posix_memalign(&p, 64, size ? size : 1))
        return NULL;
    return p;
}

void *fm_mem_alloc(size_t size)
{
    void *p = alloc(size);
    if (p)
        memset(p, 0, size ? size : 1);
    return p;
}

void *fm_mem_alloc_raw(size_t size)
{
    return alloc(size);
}

void fm_mem_free(void *p)
{
    free(p);
}

/* ---- the transport: every send stays in flight; each one's header is kept. */
typedef struct sent {
    int dest;
    fm_wire_hdr h;
} sent;

static sent log_[MAXSENT];
static int nsent;

static void keep(int dest, const void *hdr, size_t hlen)
{
    assert_true(nsent < MAXSENT);
    sent *e = &log_[nsent++];
    e->dest = dest;
    assert_int_equal(fm_wire_decode(hdr, hlen, KEY, NPEERS, PAYLOAD, &e->h), FM_WIRE_OK);
}

static int fake_send(fm_tp *tp, int dest, const void *buf, size_t len, fm_tp_mr *mr, void *ctx)
{
    (void)tp, (void)mr, (void)ctx;
    keep(dest, buf, len);
    return FM_OK;
}

static int fake_sendv(fm_tp *tp, int dest, const void *hdr, size_t hlen, fm_tp_mr *hmr,
                      const void *payload, size_t plen, fm_tp_mr *pmr, void *ctx)
{
    (void)tp, (void)hmr, (void)payload, (void)pmr, (void)ctx, (void)hlen;
    /* decode the header as the receiver would see it: with its payload's length */
    unsigned char buf[FM_WIRE_HDR_LEN + PAYLOAD];
    memcpy(buf, hdr, FM_WIRE_HDR_LEN);
    memset(buf + FM_WIRE_HDR_LEN, 0, plen);
    keep(dest, buf, FM_WIRE_HDR_LEN + plen);
    return FM_OK;
}

static int fake_post_recv(fm_tp *tp, void *buf, size_t len, fm_tp_mr *mr, void *ctx)
{
    (void)tp, (void)buf, (void)len, (void)mr, (void)ctx;
    return FM_OK;
}

static int fake_mem_reg(fm_tp *tp, void *buf, size_t len, fm_tp_mr **mr)
{
    (void)tp, (void)buf, (void)len;
    *mr = NULL; /* as a provider that needs no registration */
    return FM_OK;
}

static void fake_mem_dereg(fm_tp *tp, fm_tp_mr *mr)
{
    (void)tp, (void)mr;
}

static int fake_poll(fm_tp *tp, fm_tp_event *ev, int max)
{
    (void)tp, (void)ev, (void)max;
    return 0;
}

static const struct fm_tp_ops fake_ops = {.name = "fake",
                                          .send = fake_send,
                                          .sendv = fake_sendv,
                                          .post_recv = fake_post_recv,
                                          .mem_reg = fake_mem_reg,
                                          .mem_dereg = fake_mem_dereg,
                                          .poll = fake_poll};

typedef struct fixture {
    fm_tp tp;
    fm_context ctx;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->tp.ops = &fake_ops;
    f->tp.info.sendv = 1;
    fm_context *ctx = &f->ctx;
    ctx->tp = &f->tp;
    ctx->rank = 0;
    ctx->size = NPEERS;
    ctx->credits = CREDITS;
    ctx->job_key = KEY;
    ctx->packet_size = PAYLOAD;
    ctx->cfg.overflow = 1 << 20;
    ctx->cfg.mcast_buffer = 1 << 24; /* the writer never waits for the held budget */
    ctx->peers = calloc(NPEERS, sizeof *ctx->peers);
    ctx->dirty = calloc(NPEERS, sizeof *ctx->dirty);
    fm_credits_init(ctx);
    assert_int_equal(fm_pool_init(ctx), FM_OK);
    fm_live_ctx = ctx;
    nsent = 0;
    fail_at = -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    fail_at = -1;
    fm_live_ctx = NULL;
    fm_pool_fini(&f->ctx);
    fm_pool_free(&f->ctx);
    fm_streams_free(&f->ctx);
    free(f->ctx.peers);
    free(f->ctx.dirty);
    free(f);
    return 0;
}

/* What rank dest was sent, in order: data packets 0..n-1 with the last flagged, or packets
 * 0..k-1 then an abort at seq k. Returns the packets' count (the abort included). */
static int check_dest(int dest, int *abort_seq)
{
    int n = 0;
    *abort_seq = -1;
    for (int i = 0; i < nsent; i++) {
        const fm_wire_hdr *h = &log_[i].h;
        if (log_[i].dest != dest)
            continue;
        assert_int_equal(*abort_seq, -1); /* nothing after an abort */
        assert_int_equal(h->seq, (uint32_t)n);
        assert_int_equal(h->type, FM_PKT_DATA);
        if (h->flags & FM_PKT_ABORT) {
            assert_int_equal(h->flags, FM_PKT_LAST | FM_PKT_ABORT);
            assert_int_equal(h->payload_len, 0);
            *abort_seq = (int)h->seq;
        } else {
            assert_int_equal(h->payload_len, PAYLOAD);
            assert_int_equal(h->flags, h->seq == NPKTS - 1 ? FM_PKT_LAST : 0);
        }
        n++;
    }
    return n;
}

static void write_message(fm_context *ctx, int *rc_end)
{
    const int dests[] = {1, 2};
    fm_stream *s;
    assert_int_equal(fm_multi_open(ctx, dests, 2, (size_t)NPKTS * PAYLOAD, PAYLOAD, 3, NULL, 0, &s),
                     FM_OK);
    unsigned char piece[PAYLOAD];
    for (int i = 0; i < NPKTS; i++) {
        memset(piece, i, sizeof piece);
        assert_int_equal(fm_send_piece(s, piece, sizeof piece), FM_OK);
        if (i == NPKTS / 2)
            fail_at = 0; /* the next allocation fails: the next copy slab, for rank 1 */
    }
    *rc_end = fm_end_message(s);
}

/* Without failures both destinations get every packet: the reference for the case below. */
static void whole_to_both(void **state)
{
    fixture *f = *state;
    fail_at = -2; /* never */
    const int dests[] = {1, 2};
    fm_stream *s;
    assert_int_equal(
        fm_multi_open(&f->ctx, dests, 2, (size_t)NPKTS * PAYLOAD, PAYLOAD, 3, NULL, 0, &s), FM_OK);
    unsigned char piece[PAYLOAD] = {0};
    for (int i = 0; i < NPKTS; i++)
        assert_int_equal(fm_send_piece(s, piece, sizeof piece), FM_OK);
    assert_int_equal(fm_end_message(s), FM_OK);
    int a1, a2;
    assert_int_equal(check_dest(1, &a1), NPKTS);
    assert_int_equal(check_dest(2, &a2), NPKTS);
    assert_int_equal(a1, -1);
    assert_int_equal(a2, -1);
}

/* The copy slab runs out (every copy is still in flight) and the allocation of the next one
 * fails once, for rank 1's copy of some packet k: rank 1 gets packets 0..k-1 and an abort at
 * k; rank 2, whose copy comes next and gets the new slab, gets the whole message. */
static void copy_failure_cuts_one_destination(void **state)
{
    fixture *f = *state;
    int rc_end;
    write_message(&f->ctx, &rc_end);
    assert_int_equal(rc_end, FM_ERR_TRUNCATED);
    int a1, a2;
    int n1 = check_dest(1, &a1), n2 = check_dest(2, &a2);
    assert_true(a1 > NPKTS / 2 && a1 < NPKTS); /* after the switch, before the end */
    assert_int_equal(n1, a1 + 1);
    assert_int_equal(a2, -1);
    assert_int_equal(n2, NPKTS);
    assert_int_equal(fail_at, -1); /* exactly one allocation failed */
}

/* A forwarding member holds its parent's packets while their copies to a child wait for that
 * child's credits, after the message is over here. With what it owes the parent they may fill
 * the parent's window: what is owed then goes back at once, below the threshold, or parent
 * and member wait on each other (the parent for credits, the member, whose child waits behind
 * the same kind of cycle, for nothing) until a packet of the member's to the parent happens to
 * carry them. Once the copies have left, the packets are freed and counted once. */
static void forwarded_packets_count_as_held(void **state)
{
    fixture *f = *state;
    fm_context *ctx = &f->ctx;
    fm_peer *parent = &ctx->peers[1], *child = &ctx->peers[2];
    parent->rwin = 8;
    fm_credits_sync(parent); /* threshold 4 */
    child->send_credits = 0;
    enum { N = 5 };
    static unsigned char bufs[N][FM_WIRE_HDR_LEN + PAYLOAD];
    fm_pkt rx[N], *copies[N];
    for (int i = 0; i < N; i++) {
        rx[i] = (fm_pkt){.buf = bufs[i], .kind = FM_PKT_RECV_BUF, .peer = 1, .len = PAYLOAD};
        rx[i].refs = 1; /* its stream's hold */
        fm_wire_hdr h = {.version = FM_WIRE_VERSION,
                         .type = FM_PKT_MCAST,
                         .src = 0,
                         .job_key = KEY,
                         .msg_id = 7,
                         .seq = (uint32_t)i,
                         .payload_len = PAYLOAD,
                         .msg_len = (uint64_t)N * PAYLOAD};
        assert_int_equal(fm_multi_send_copy(ctx, &rx[i], 2, &h), FM_OK);
        fm_multi_unref(ctx, &rx[i]); /* the handler is done with it: the copy holds it */
    }
    assert_int_equal(parent->fwd_pkts, N);
    assert_null(ctx->repost);
    int queued = 0;
    for (fm_pkt *c = child->pending.head; c; c = c->next)
        copies[queued++] = c;
    assert_int_equal(queued, N);
    assert_int_equal(fm_recv_held_with_copies(ctx, 1), N);
    /* Three earlier packets of the parent's were freed here: 3 owed and 5 held fill its 8. */
    for (int i = 0; i < 3; i++)
        fm_credits_owe(ctx, 1);
    assert_true(parent->starved);
    assert_int_equal(ctx->ndirty, 1);
    nsent = 0;
    assert_int_equal(fm_credits_settle(ctx), FM_OK);
    assert_int_equal(nsent, 1);
    assert_int_equal(log_[0].dest, 1);
    assert_int_equal(log_[0].h.type, FM_PKT_CREDIT);
    assert_int_equal(log_[0].h.credits, 3);
    assert_int_equal(parent->owed, 0);
    /* The child's credits come back: the copies leave, and once sent free the packets. */
    fm_credits_gained(ctx, 2, N);
    assert_null(child->pending.head);
    assert_int_equal(nsent, 1 + N);
    for (int i = 0; i < N; i++) {
        ctx->sends_inflight--;
        fm_send_done(ctx, copies[i]);
    }
    assert_int_equal(parent->fwd_pkts, 0);
    assert_int_equal(fm_recv_held_with_copies(ctx, 1), N); /* freed, to be posted again */
    ctx->repost = NULL;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(whole_to_both, setup, teardown),
        cmocka_unit_test_setup_teardown(copy_failure_cuts_one_destination, setup, teardown),
        cmocka_unit_test_setup_teardown(forwarded_packets_count_as_held, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
