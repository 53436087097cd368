/* SPDX-License-Identifier: BSD-3-Clause */
/* FM_TREE=auto's choice of tree and packet size (runtime/mcast/tree_choice.c), on a bare context
 * whose costs come from FM_MCAST_COSTS: named trees keep FM_PACKET_SIZE; auto halves the
 * packet when per-packet overhead is cheap next to the bytes, keeps it when it is dear, never
 * goes below the descriptor, and its choice is the model's minimum over the candidates. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "mcast.h"
#include "mcast_state.h"
#include "tree_choice.h"
#include "model.h"

static fm_context ctx_with(const char *costs, size_t packet)
{
    fm_context c;
    memset(&c, 0, sizeof c);
    c.packet_size = packet;
    c.mcast = calloc(1, sizeof *c.mcast);
    assert_non_null(c.mcast);
    snprintf(c.cfg.tree, sizeof c.cfg.tree, "auto");
    snprintf(c.cfg.mcast_costs, sizeof c.cfg.mcast_costs, "%s", costs);
    return c;
}

static size_t choose(fm_context *c, const char *spec, int n, size_t bytes, size_t min_payload,
                     struct fm_tree_desc *d)
{
    size_t payload = 0;
    *d = (struct fm_tree_desc){.n = n, .root = 0};
    assert_int_equal(fm_mcast_choose(c, spec, bytes, min_payload, 0, d, &payload), FM_OK);
    return payload;
}

static double predict(fm_context *c, const struct fm_tree_desc *d, size_t bytes, size_t payload)
{
    double t = -1;
    assert_int_equal(fm_mcast_model_predict(c, d, bytes, payload, 0, &t, NULL), FM_OK);
    return t;
}

static void named_tree_keeps_packet_size(void **state)
{
    (void)state;
    fm_context c = ctx_with("100:100000:0", 8192);
    struct fm_tree_desc d;
    assert_int_equal(choose(&c, "chain", 8, 1 << 20, 0, &d), 8192);
    assert_int_equal(choose(&c, "binomial", 8, 1 << 20, 0, &d), 8192);
    fm_mcast_fini(&c);
}

static void cheap_packets_get_smaller(void **state)
{
    (void)state;
    /* 100 ns per packet, 100 us per KiB: bytes dominate, more packets pipeline deeper. */
    fm_context c = ctx_with("100:100000:0", 8192);
    struct fm_tree_desc d;
    size_t p = choose(&c, NULL, 8, 1 << 20, 0, &d);
    assert_true(p < 8192);
    assert_true(p >= 1024);
    /* The pick is the least predicted time among the candidates, for its tree. */
    double t = predict(&c, &d, 1 << 20, p);
    for (size_t q = 8192; q >= 1024; q /= 2)
        assert_true(t <= predict(&c, &d, 1 << 20, q) * (1 + 1e-9));
    /* Never below the descriptor that packet 0 must hold. */
    assert_true(choose(&c, NULL, 8, 1 << 20, 4000, &d) >= 4000);
    /* One packet's worth is never split. */
    assert_int_equal(choose(&c, NULL, 8, 4096, 0, &d), 8192);
    fm_mcast_fini(&c);
}

/* Store-and-forward members hold the whole message: with costs as calibrated on the emulated
 * torus (a shaped link with a bucket), auto cuts a 64 KiB message to 16 members in two
 * packets where members may hold any number; where they may hold 3 (the message's packets
 * and 2), it cuts none that would make more (mcast.c would refuse them, FM_ERR_TOO_LONG). */
static void held_packets_bound_the_cut(void **state)
{
    (void)state;
    static const char *costs = "send_pkt_ns=5649,send_ns_per_kib=217,gap_ns_per_kib=86181,"
                               "recv_pkt_ns=5813,latency_ns=21133,burst_bytes=25000,"
                               "wake_ns=8826,spin_ns=11902,poll_ns=11870";
    size_t p = 0, bytes = 65536;
    for (int i = 0; i < 2; i++) {
        int held = i == 0 ? 3 : 1 << 20;
        fm_context c = ctx_with(costs, 65536);
        struct fm_tree_desc d = {.n = 16, .root = 0};
        c.pool.held_max = held;
        assert_int_equal(fm_mcast_choose(&c, NULL, bytes, 0, FM_MODEL_STORE_FORWARD, &d, &p),
                         FM_OK);
        assert_int_equal(p, held == 3 ? 65536 : 32768);
        fm_mcast_fini(&c);
    }
}

static void dear_packets_stay_large(void **state)
{
    (void)state;
    /* 1 ms per packet, 1 ns per KiB: every extra packet costs more than it saves. */
    fm_context c = ctx_with("1000000:1:0", 8192);
    struct fm_tree_desc d;
    assert_int_equal(choose(&c, NULL, 8, 1 << 20, 0, &d), 8192);
    fm_mcast_fini(&c);
}

static void cached_choice_is_the_same(void **state)
{
    (void)state;
    fm_context c = ctx_with("100:100000:0", 8192);
    struct fm_tree_desc a, b;
    size_t p1 = choose(&c, NULL, 16, 3 << 20, 0, &a);
    size_t p2 = choose(&c, NULL, 16, 3 << 20, 0, &b);
    assert_int_equal(p1, p2);
    assert_int_equal(a.builder, b.builder);
    assert_int_equal(a.param, b.param);
    assert_int_equal(a.m, b.m);
    fm_mcast_fini(&c);
}

/* Past 256 packets the prediction is extended along a line: it must stay within 3% of the
 * full simulation for every tree and all three modes, with the window limiting and not (FCFS
 * on kbinomial:2 is 2% off: some members wait long enough to nap only in the longer message;
 * without wake-ups every case is within 0.5%). */
static void long_messages_extrapolate(void **state)
{
    (void)state;
    fm_context c = ctx_with("send_pkt_ns=1000,send_ns_per_kib=200,latency_ns=500,recv_pkt_ns=700,"
                            "copy_ns_per_kib=100,wake_ns=20000",
                            1024);
    const char *trees[] = {"flat", "chain", "binomial", "kbinomial:2", "postal:2"};
    for (int window = 0; window <= 8; window += 8) {
        c.cfg.credits = window;
        for (size_t i = 0; i < sizeof trees / sizeof *trees; i++)
            for (int mode = 0; mode <= FM_MODEL_FCFS; mode++) {
                struct fm_tree_desc d = {.n = 13, .root = 3};
                size_t payload = 0, bytes = 1000 * 1024;
                assert_int_equal(fm_mcast_choose(&c, trees[i], bytes, 0, mode, &d, &payload),
                                 FM_OK);
                double fast = -1;
                assert_int_equal(fm_mcast_model_predict(&c, &d, bytes, payload, mode, &fast, NULL),
                                 FM_OK);
                int first[14], kids[12];
                assert_int_equal(fm_tree_layout(&d, first, kids), FM_OK);
                struct fm_model_tree t = {13, 3, first, kids, NULL, NULL};
                struct fm_model_job job = {.window = window};
                struct fm_model_out out = {0};
                assert_int_equal(fm_model_sim(&t, 1000, payload, bytes, (enum fm_model_mode)mode,
                                              fm_mcast_costs(&c, NULL), &job, &out),
                                 FM_OK);
                assert_true(fast > 0 && out.T > 0);
                assert_true(fast <= out.T * 1.03 && fast >= out.T * 0.97);
            }
    }
    fm_mcast_fini(&c);
}

/* Auto's choice is the model's minimum over every tree and parameter, and it follows the
 * costs: where receivers do the work (shared memory's copy) every member copies in parallel
 * and the root's fan-out is cheap, so the root sends to everyone (flat, or postal's flat
 * shape); where each copy costs its sender (a network stack), a deep pipeline wins. */
static void choice_follows_costs(void **state)
{
    (void)state;
    const char *named[] = {"flat",        "chain",    "binomial", "kbinomial:2",
                           "kbinomial:3", "postal:2", "postal:4"};
    struct {
        const char *costs;
        int flat_wins;
    } cases[] = {{"send_pkt_ns=100,recv_pkt_ns=1000,recv_ns_per_kib=100000,latency_ns=1000", 1},
                 {"send_pkt_ns=1000,send_ns_per_kib=100000,latency_ns=1000", 0}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        fm_context c = ctx_with(cases[k].costs, 65536);
        struct fm_tree_desc d;
        size_t p = choose(&c, NULL, 8, 1 << 20, 0, &d);
        double t = predict(&c, &d, 1 << 20, p);
        for (size_t i = 0; i < sizeof named / sizeof *named; i++) {
            struct fm_tree_desc e;
            size_t q = choose(&c, named[i], 8, 1 << 20, 0, &e);
            assert_true(t <= predict(&c, &e, 1 << 20, q) * (1 + 1e-9));
        }
        int first[9], kids[7];
        assert_int_equal(fm_tree_layout(&d, first, kids), FM_OK);
        int root_kids = first[1] - first[0];
        if (cases[k].flat_wins)
            assert_int_equal(root_kids, 7);
        else
            assert_true(root_kids <= 2);
        fm_mcast_fini(&c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(named_tree_keeps_packet_size), cmocka_unit_test(cheap_packets_get_smaller),
        cmocka_unit_test(dear_packets_stay_large),      cmocka_unit_test(cached_choice_is_the_same),
        cmocka_unit_test(long_messages_extrapolate),    cmocka_unit_test(choice_follows_costs),
        cmocka_unit_test(held_packets_bound_the_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
