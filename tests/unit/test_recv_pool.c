/* SPDX-License-Identifier: BSD-3-Clause */
/* Receive regions (runtime/core/recv_pool.c) against a fake transport that takes regions: when
 * every region is pinned by held packets, the packets that nothing else reads are moved out
 * into memory of their own (bytes intact, counted) and the regions posted again; packets a
 * multicast child's copy still sends from cannot move, and then one more region is made. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "recv_pool.h"

#define PAYLOAD 1000
#define NPEERS  3

typedef struct fake_tp {
    fm_tp base;
    int posted; /* regions with the fake provider now */
} fake_tp;

static int fake_post_multi(fm_tp *tp, void *buf, size_t len, fm_tp_mr *mr, void *ctx)
{
    (void)buf, (void)len, (void)mr, (void)ctx;
    ((fake_tp *)tp)->posted++;
    return FM_OK;
}

static int fake_mem_reg(fm_tp *tp, void *buf, size_t len, fm_tp_mr **mr)
{
    (void)tp, (void)buf, (void)len;
    *mr = NULL; /* like shm and tcp: nothing to register */
    return FM_OK;
}

static const struct fm_tp_ops fake_ops = {
    .name = "fake", .post_recv_multi = fake_post_multi, .mem_reg = fake_mem_reg};

typedef struct fixture {
    fake_tp tp;
    fm_context ctx;
    fm_stream stream; /* one message in progress from rank 1, holding every packet below */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->tp.base.ops = &fake_ops;
    f->tp.base.info.multi_recv = 1;
    f->ctx.tp = &f->tp.base;
    f->ctx.size = NPEERS;
    f->ctx.credits = 8;
    f->ctx.packet_size = PAYLOAD;
    f->ctx.cfg.recv_pool = 1; /* regions, two of them */
    f->ctx.peers = calloc(NPEERS, sizeof *f->ctx.peers);
    assert_int_equal(fm_recv_pool_init(&f->ctx), FM_OK);
    assert_int_equal(f->ctx.rpool.nregions, 2);
    assert_int_equal(f->tp.posted, 2);
    f->ctx.peers[1].inbound = &f->stream;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    for (fm_pkt *p = f->stream.ready.head, *next; p; p = next) {
        next = p->next;
        fm_recv_pool_put(&f->ctx, p);
    }
    fm_recv_pool_fini(&f->ctx);
    fm_recv_pool_free(&f->ctx);
    free(f->ctx.peers);
    free(f);
    return 0;
}

/* A packet of rank 1 lands at offset at of region r, payload bytes all `fill`, and is held
 * in the stream's ready list with refs holds on it. */
static fm_pkt *land_at(fixture *f, fm_recv_region *r, size_t at, unsigned char fill, int refs)
{
    fm_pkt *p = fm_recv_pool_landed(&f->ctx, r, r->land + at);
    assert_non_null(p);
    memset(p->buf + FM_WIRE_HDR_LEN, fill, PAYLOAD);
    p->peer = 1;
    p->len = PAYLOAD;
    p->refs = refs;
    fm_pkt_queue_push(&f->stream.ready, p);
    return p;
}

/* One packet at the start of region r; then the provider lets go of r. */
static fm_pkt *land_held(fixture *f, fm_recv_region *r, unsigned char fill, int refs)
{
    fm_pkt *p = land_at(f, r, 0, fill, refs);
    f->tp.posted--;
    assert_int_equal(fm_recv_pool_region_done(&f->ctx, r), FM_OK); /* pinned: stays out */
    return p;
}

static void held_packets_move_out(void **state)
{
    fixture *f = *state;
    size_t before = f->ctx.pool.bytes_recv;
    fm_recv_region *a = f->ctx.rpool.regions, *b = a->next;
    fm_pkt *pa0 = land_at(f, a, FM_WIRE_HDR_LEN + PAYLOAD, 0xa0, 1);
    fm_pkt *pa = land_held(f, a, 0xa1, 1);
    fm_pkt *pb = land_held(f, b, 0xb2, 1);
    assert_int_equal(f->ctx.rpool.nposted, 0);
    assert_int_equal(fm_recv_pool_tend(&f->ctx), FM_OK);
    assert_int_equal(f->ctx.rpool.nregions, 2); /* no region more */
    assert_int_equal(f->ctx.rpool.nposted, 2);
    assert_int_equal(f->tp.posted, 2);
    assert_int_equal(f->ctx.rpool.moved, 3);
    assert_int_equal(f->ctx.pool.bytes_recv, before + 3 * (FM_WIRE_HDR_LEN + PAYLOAD));
    for (int i = 0; i < PAYLOAD; i++) {
        assert_int_equal(pa0->buf[FM_WIRE_HDR_LEN + i], 0xa0);
        assert_int_equal(pa->buf[FM_WIRE_HDR_LEN + i], 0xa1);
        assert_int_equal(pb->buf[FM_WIRE_HDR_LEN + i], 0xb2);
    }
    assert_true(pa->region != a);
    assert_true(pa->buf < a->mem || pa->buf > a->mem + f->ctx.rpool.region_bytes + 64);
    /* Released, their bytes go. */
    f->stream.ready.head = f->stream.ready.tail = NULL;
    assert_int_equal(fm_recv_pool_put(&f->ctx, pa0), FM_OK);
    assert_int_equal(fm_recv_pool_put(&f->ctx, pa), FM_OK);
    assert_int_equal(fm_recv_pool_put(&f->ctx, pb), FM_OK);
    assert_int_equal(f->ctx.pool.bytes_recv, before);
}

static void forwarded_packets_stay_and_a_region_is_made(void **state)
{
    fixture *f = *state;
    size_t before = f->ctx.pool.bytes_recv;
    fm_recv_region *a = f->ctx.rpool.regions, *b = a->next;
    fm_pkt *pa = land_held(f, a, 0xa1, 2); /* a child's copy still sends from it */
    land_held(f, b, 0xb2, 1);
    assert_int_equal(fm_recv_pool_tend(&f->ctx), FM_OK);
    /* b's packet moved, b posted again: still no region more. */
    assert_int_equal(f->ctx.rpool.nregions, 2);
    assert_int_equal(f->ctx.rpool.nposted, 1);
    assert_ptr_equal(pa->region, a);
    /* b fills and is pinned again by a packet being forwarded: nothing can move now. */
    land_held(f, b, 0xb3, 2);
    assert_int_equal(f->ctx.rpool.nposted, 0);
    assert_int_equal(fm_recv_pool_tend(&f->ctx), FM_OK);
    assert_int_equal(f->ctx.rpool.nregions, 3);
    assert_int_equal(f->ctx.rpool.nposted, 1);
    assert_int_equal(f->ctx.rpool.grown, 1);
    assert_int_equal(f->ctx.rpool.moved, 1);
    assert_true(f->ctx.pool.bytes_recv > before);
}

/* A region that one packet still being forwarded keeps pinned is left as it is (moving the
 * others would free nothing); packets waiting out of order move like the rest; what is
 * still held at fm_finalize is freed there. */
static void only_whole_regions_move(void **state)
{
    fixture *f = *state;
    size_t before = f->ctx.pool.bytes_recv;
    fm_recv_region *a = f->ctx.rpool.regions, *b = a->next;
    fm_pkt *stays = land_at(f, a, 0, 0xa1, 1);
    land_held(f, a, 0xa2, 2); /* (lands at 0 too: only the counts matter here) */
    f->stream.ready.tail->next = NULL;
    fm_pkt *early = land_held(f, b, 0xb1, 1);
    /* b's packet waits out of order instead. */
    f->stream.ready.tail = stays->next;
    stays->next->next = NULL;
    f->stream.early = early;
    assert_int_equal(fm_recv_pool_tend(&f->ctx), FM_OK);
    assert_int_equal(f->ctx.rpool.moved, 1);
    assert_ptr_equal(stays->region, a);
    assert_true(early->region != b);
    assert_int_equal(f->ctx.rpool.nregions, 2);
    assert_int_equal(f->ctx.pool.bytes_recv, before + FM_WIRE_HDR_LEN + PAYLOAD);
    /* Left held at the end: fm_recv_pool_free frees the moved packet's memory (valgrind). */
    f->stream.ready.head = f->stream.ready.tail = NULL;
    f->stream.early = NULL;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(held_packets_move_out, setup, teardown),
        cmocka_unit_test_setup_teardown(forwarded_packets_stay_and_a_region_is_made, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(only_whole_regions_move, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
