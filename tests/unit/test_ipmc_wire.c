/* SPDX-License-Identifier: BSD-3-Clause */
/* The two-stage multicast's datagram header (runtime/mcast/ipmc/ipmc_wire.c): a round trip,
 * and every rule a received datagram must pass, each broken on its own; and its model
 * (ipmc_model.c) against sums done by hand. The expected byte
 * offsets are written out here from the layout in ipmc_wire.h, not taken from the encoder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "costs.h"
#include "fastmsg.h"
#include "ipmc/ipmc_model.h"
#include "ipmc/ipmc_wire.h"
#include "transport.h"

#define KEY   0x1122334455667788ull
#define RANKS 16

/* A 3-chunk message of 3000 bytes in chunks of 1416 (a group's: extra 8), chunk `index`. */
static size_t datagram(unsigned char *b, uint32_t index)
{
    fm_ipmc_hdr h = {.flags = FM_IPMC_GROUP,
                     .handler = 7,
                     .extra_len = 8,
                     .job_key = KEY,
                     .root = 3,
                     .mid = 42,
                     .index = index,
                     .chunk = 1416,
                     .len = 3000,
                     .ack_id = 9,
                     .n = 5};
    fm_ipmc_hdr_encode(&h, b);
    memset(b + FM_IPMC_HDR_LEN, 0xab, 8); /* the group's id */
    size_t payload = index < 2 ? 1416 : 3000 - 2 * 1416;
    memset(b + FM_IPMC_HDR_LEN + 8, (int)index, payload);
    return FM_IPMC_HDR_LEN + 8 + payload;
}

static fm_ipmc_status decode(const unsigned char *b, size_t len, fm_ipmc_hdr *h)
{
    return fm_ipmc_hdr_decode(b, len, KEY, RANKS, 64, 1, h);
}

static void round_trip(void **state)
{
    (void)state;
    unsigned char b[FM_TP_DGRAM_MAX];
    fm_ipmc_hdr h;
    size_t len = datagram(b, 2);
    assert_int_equal(len, 48 + 8 + 168);
    assert_int_equal(decode(b, len, &h), FM_IPMC_OK);
    assert_int_equal(h.flags, FM_IPMC_GROUP);
    assert_int_equal(h.handler, 7);
    assert_int_equal(h.extra_len, 8);
    assert_int_equal(h.root, 3);
    assert_int_equal(h.mid, 42);
    assert_int_equal(h.index, 2);
    assert_int_equal(h.chunk, 1416);
    assert_int_equal(h.len, 3000);
    assert_int_equal(h.ack_id, 9);
    assert_int_equal(h.n, 5);
    /* Little-endian at the documented offsets. */
    assert_int_equal(b[0] | b[1] << 8, 0x4d49);
    assert_int_equal(b[2], FM_IPMC_VERSION);
    assert_int_equal(b[16], 3);
    assert_int_equal(b[20], 42);
    assert_int_equal(b[24], 2);
    assert_int_equal(b[28] | b[29] << 8, 1416);
    assert_int_equal(b[32] | b[33] << 8, 3000);
    assert_int_equal(b[40], 9);
    assert_int_equal(b[44], 5);
    /* An offer: the header and extra alone. */
    assert_int_equal(fm_ipmc_hdr_decode(b, 48 + 8, KEY, RANKS, 64, 0, &h), FM_IPMC_OK);
}

static void chunk_arithmetic(void **state)
{
    (void)state;
    assert_int_equal(fm_ipmc_chunks(0, 1416), 1);
    assert_int_equal(fm_ipmc_chunks(1, 1416), 1);
    assert_int_equal(fm_ipmc_chunks(1416, 1416), 1);
    assert_int_equal(fm_ipmc_chunks(1417, 1416), 2);
    assert_int_equal(fm_ipmc_chunk_len(1417, 1416, 0), 1416);
    assert_int_equal(fm_ipmc_chunk_len(1417, 1416, 1), 1);
    assert_int_equal(fm_ipmc_chunk_len(0, 1416, 0), 0);
}

/* Byte off of a valid datagram set to v (or a 32-bit field when wide): the status. */
static fm_ipmc_status broken(size_t off, uint32_t v, int wide, size_t cut)
{
    unsigned char b[FM_TP_DGRAM_MAX];
    size_t len = datagram(b, 0);
    if (wide) {
        for (int i = 0; i < 4; i++)
            b[off + (size_t)i] = (unsigned char)(v >> (8 * i));
    } else if (off < len) {
        b[off] = (unsigned char)v;
    }
    fm_ipmc_hdr h;
    return decode(b, len - cut, &h);
}

static void every_rule(void **state)
{
    (void)state;
    assert_int_equal(broken(SIZE_MAX, 0, 0, 0), FM_IPMC_OK);
    assert_int_equal(broken(SIZE_MAX, 0, 0, 1417), FM_IPMC_SHORT); /* no room for the extra */
    unsigned char b[FM_TP_DGRAM_MAX];
    fm_ipmc_hdr h;
    datagram(b, 0);
    assert_int_equal(decode(b, 47, &h), FM_IPMC_SHORT);
    assert_int_equal(broken(0, 0x4e, 0, 0), FM_IPMC_FOREIGN);   /* magic */
    assert_int_equal(broken(2, 9, 0, 0), FM_IPMC_FOREIGN);      /* version */
    assert_int_equal(broken(8, 0x89, 0, 0), FM_IPMC_KEY);       /* another job's key */
    assert_int_equal(broken(3, 0, 0, 0), FM_IPMC_BAD);          /* neither group nor set */
    assert_int_equal(broken(3, 3, 0, 0), FM_IPMC_BAD);          /* both */
    assert_int_equal(broken(6, 9, 0, 0), FM_IPMC_BAD);          /* a group id of 9 bytes */
    assert_int_equal(broken(16, RANKS, 1, 0), FM_IPMC_BAD);     /* root out of range */
    assert_int_equal(broken(24, 3, 1, 0), FM_IPMC_BAD);         /* index past the last */
    assert_int_equal(broken(24, 1, 1, 0), FM_IPMC_OK);          /* chunk 1: 1416 bytes too */
    assert_int_equal(broken(24, 2, 1, 0), FM_IPMC_BAD);         /* the last is shorter */
    assert_int_equal(broken(28, 0, 1, 0), FM_IPMC_BAD);         /* chunk 0 */
    assert_int_equal(broken(28, 1417, 1, 0), FM_IPMC_BAD);      /* past one datagram */
    assert_int_equal(broken(4, 64, 0, 0), FM_IPMC_BAD);         /* handler id out of range */
    assert_int_equal(broken(44, 1, 1, 0), FM_IPMC_BAD);         /* one member */
    assert_int_equal(broken(44, RANKS + 1, 1, 0), FM_IPMC_BAD); /* more than the job */
    assert_int_equal(broken(SIZE_MAX, 0, 0, 1), FM_IPMC_BAD);   /* payload a byte short */
    assert_int_equal(broken(38, 1, 0, 0), FM_IPMC_BAD);         /* len over 2^48 */
}

/* The model (ipmc_model.h) on costs chosen so that its terms are easy to add by hand: a
 * 100 Mbit/s link (80 ns a byte), 2 us a send, 3 us a receive, 50 us latency. */
static void model_by_hand(void **state)
{
    (void)state;
    struct fm_costs c = {.send_pkt = 2e-6, .gap_byte = 80e-9, .recv_pkt = 3e-6, .latency = 50e-6};
    /* 10 chunks of 1416 bytes: 14160 + 10 x 84 = 15000 bytes on the wire, 1.2 ms at 80 ns;
     * the root's 10 sends (20 us) and a member's 10 receives (30 us) are faster: the link
     * paces. Plus latency, the first send and the last receive: 1.255 ms. */
    assert_float_equal(fm_ipmc_model(&c, 16, 1, 14160, 0), 1.255e-3, 1e-12);
    /* Two members to a core: 2.4 ms of pace. */
    assert_float_equal(fm_ipmc_model(&c, 16, 2, 14160, 0), 2.455e-3, 1e-12);
    /* 10 % lost: a round trip more and a tenth of the bytes over the link, 113.28 us. */
    assert_float_equal(fm_ipmc_model(&c, 16, 1, 14160, 0.1), 1.255e-3 + 100e-6 + 113.28e-6, 1e-12);
    /* Within a 20000-byte burst the link costs nothing: the receives pace (30 us). */
    c.burst = 20000;
    assert_float_equal(fm_ipmc_model(&c, 16, 1, 14160, 0), 85e-6, 1e-12);
    /* One member: nothing to send. */
    assert_float_equal(fm_ipmc_model(&c, 1, 1, 14160, 0), 0, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip),
        cmocka_unit_test(chunk_arithmetic),
        cmocka_unit_test(every_rule),
        cmocka_unit_test(model_by_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
