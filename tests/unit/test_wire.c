/* SPDX-License-Identifier: BSD-3-Clause */
/* The packet header: encode/decode round trip and every validation rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "wire.h"

#define KEY 0x0123456789abcdefULL

static fm_wire_hdr sample(void)
{
    return (fm_wire_hdr){.version = FM_WIRE_VERSION,
                         .type = FM_PKT_DATA,
                         .flags = FM_PKT_LAST,
                         .src = 3,
                         .job_key = KEY,
                         .msg_id = 0xdeadbeef,
                         .seq = 2,
                         .payload_len = 100,
                         .handler = 7,
                         .credits = 513,
                         .msg_len = 2 * 1024 + 100};
}

static void round_trip(void **state)
{
    (void)state;
    unsigned char buf[FM_WIRE_HDR_LEN + 100];
    fm_wire_hdr h = sample(), d;
    fm_wire_encode(&h, buf);
    assert_int_equal(buf[0], FM_WIRE_VERSION);
    assert_int_equal(buf[8], 0xef); /* little-endian job key */
    assert_int_equal(fm_wire_decode(buf, sizeof buf, KEY, 4, 1024, &d), FM_WIRE_OK);
    assert_memory_equal(&h, &d, sizeof h);
}

/* A credit packet may carry a clear-to-send: its tag rides in msg_len. */
static void clear_to_send(void **state)
{
    (void)state;
    unsigned char buf[FM_WIRE_HDR_LEN];
    fm_wire_hdr h = sample(), d;
    h.type = FM_PKT_CREDIT;
    h.flags = FM_PKT_CTS;
    h.payload_len = 0;
    h.msg_len = (3ULL << 40) | 12345;
    fm_wire_encode(&h, buf);
    assert_int_equal(fm_wire_decode(buf, sizeof buf, KEY, 4, 1024, &d), FM_WIRE_OK);
    assert_int_equal(d.flags, FM_PKT_CTS);
    assert_true(d.msg_len == h.msg_len);
    h.flags = FM_PKT_LAST; /* "last" means nothing on a credit packet */
    fm_wire_encode(&h, buf);
    assert_int_equal(fm_wire_decode(buf, sizeof buf, KEY, 4, 1024, &d), FM_WIRE_TYPE_BAD);
}

/* A whole message of at most FM_WIRE_SHORT_MAX bytes behind the compact header: it reads as
 * packet 0 flagged last; a foreign key, rank or length is refused as in the full header. */
static void compact_header(void **state)
{
    (void)state;
    /* within the 32 bytes shm moves fastest */
    assert_true(FM_WIRE_SHORT_LEN + FM_WIRE_SHORT_MAX <= 32);
    unsigned char buf[FM_WIRE_SHORT_LEN + FM_WIRE_SHORT_MAX + 1];
    fm_wire_hdr h = sample(), d;
    h.payload_len = 8;
    fm_wire_encode_short(&h, buf);
    assert_int_equal(buf[1], FM_PKT_SHORT);
    assert_int_equal(buf[8], 0xef); /* the whole job key, little-endian */
    assert_int_equal(buf[15], 0x01);
    assert_int_equal(fm_wire_decode(buf, FM_WIRE_SHORT_LEN + 8, KEY, 4, 1024, &d), FM_WIRE_OK);
    assert_int_equal(d.type, FM_PKT_SHORT);
    assert_int_equal(d.flags, FM_PKT_LAST);
    assert_int_equal(d.seq, 0);
    assert_int_equal(d.src, 3);
    assert_int_equal(d.handler, 7);
    assert_int_equal(d.credits, 513);
    assert_int_equal(d.msg_id, h.msg_id & 0xffff); /* its low 16 bits (recv.c widens them) */
    assert_int_equal(d.payload_len, 8);
    assert_true(d.msg_len == 8 && d.job_key == KEY);
    assert_int_equal(fm_wire_decode(buf, FM_WIRE_SHORT_LEN + 8, KEY ^ 1, 4, 1024, &d),
                     FM_WIRE_KEY_BAD);
    /* every bit of the key counts, as in the full header */
    for (int bit = 0; bit < 64; bit++)
        assert_int_equal(
            fm_wire_decode(buf, FM_WIRE_SHORT_LEN + 8, KEY ^ (1ULL << bit), 4, 1024, &d),
            FM_WIRE_KEY_BAD);
    assert_int_equal(fm_wire_decode(buf, FM_WIRE_SHORT_LEN + 8, KEY, 3, 1024, &d), FM_WIRE_SRC_BAD);
    /* the payload is the rest of the packet, whatever its length up to FM_WIRE_SHORT_MAX */
    assert_int_equal(fm_wire_decode(buf, FM_WIRE_SHORT_LEN + 7, KEY, 4, 1024, &d), FM_WIRE_OK);
    assert_true(d.payload_len == 7 && d.msg_len == 7);
    assert_int_equal(fm_wire_decode(buf, FM_WIRE_SHORT_LEN - 1, KEY, 4, 1024, &d), FM_WIRE_SHORT);
    h.payload_len = FM_WIRE_SHORT_MAX;
    fm_wire_encode_short(&h, buf);
    assert_int_equal(fm_wire_decode(buf, FM_WIRE_SHORT_LEN + FM_WIRE_SHORT_MAX, KEY, 4, 1024, &d),
                     FM_WIRE_OK);
    h.payload_len = FM_WIRE_SHORT_MAX + 1; /* too long for the compact form */
    fm_wire_encode_short(&h, buf);
    assert_int_equal(fm_wire_decode(buf, sizeof buf, KEY, 4, 1024, &d), FM_WIRE_LEN_BAD);
    buf[0] = 9;
    assert_int_equal(fm_wire_decode(buf, sizeof buf, KEY, 4, 1024, &d), FM_WIRE_VERSION_BAD);
}

static fm_wire_status decode_changed(void (*change)(fm_wire_hdr *), size_t len, int nranks)
{
    unsigned char buf[FM_WIRE_HDR_LEN + 2048];
    fm_wire_hdr h = sample(), d;
    change(&h);
    fm_wire_encode(&h, buf);
    return fm_wire_decode(buf, len, KEY, nranks, 1024, &d);
}

static void no_change(fm_wire_hdr *h)
{
    (void)h;
}
static void bad_version(fm_wire_hdr *h)
{
    h->version = 9;
}
static void bad_key(fm_wire_hdr *h)
{
    h->job_key ^= 1;
}
static void bad_type(fm_wire_hdr *h)
{
    h->type = 77;
}
static void bad_flags(fm_wire_hdr *h)
{
    h->flags = 0x80;
}
static void cts_on_data(fm_wire_hdr *h)
{
    h->flags = FM_PKT_CTS;
}
static void too_long_for_msg(fm_wire_hdr *h)
{
    h->msg_len = 10;
}
static void credit_with_payload(fm_wire_hdr *h)
{
    h->type = FM_PKT_CREDIT;
    h->flags = 0;
}

static void rejects_each_fault(void **state)
{
    (void)state;
    size_t full = FM_WIRE_HDR_LEN + 100;
    assert_int_equal(decode_changed(no_change, FM_WIRE_HDR_LEN - 1, 4), FM_WIRE_SHORT);
    assert_int_equal(decode_changed(bad_version, full, 4), FM_WIRE_VERSION_BAD);
    assert_int_equal(decode_changed(bad_key, full, 4), FM_WIRE_KEY_BAD);
    assert_int_equal(decode_changed(bad_type, full, 4), FM_WIRE_TYPE_BAD);
    assert_int_equal(decode_changed(bad_flags, full, 4), FM_WIRE_TYPE_BAD);
    assert_int_equal(decode_changed(cts_on_data, full, 4), FM_WIRE_TYPE_BAD);
    assert_int_equal(decode_changed(no_change, full, 3), FM_WIRE_SRC_BAD);
    assert_int_equal(decode_changed(no_change, full + 1, 4), FM_WIRE_LEN_BAD);
    assert_int_equal(decode_changed(too_long_for_msg, full, 4), FM_WIRE_LEN_BAD);
    assert_int_equal(decode_changed(credit_with_payload, full, 4), FM_WIRE_LEN_BAD);
    assert_string_equal(fm_wire_status_str(FM_WIRE_KEY_BAD), "foreign job key");
}

static void random_bytes_never_crash(void **state)
{
    (void)state;
    unsigned char buf[256];
    unsigned x = 12345;
    fm_wire_hdr d;
    for (int i = 0; i < 100000; i++) {
        for (size_t k = 0; k < sizeof buf; k++)
            buf[k] = (unsigned char)((x = x * 1103515245 + 12345) >> 16);
        size_t len = x % sizeof buf;
        fm_wire_status st = fm_wire_decode(buf, len, KEY, 16, 200, &d);
        assert_true(st >= FM_WIRE_OK && st < FM_WIRE_NREASONS);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip),
        cmocka_unit_test(clear_to_send),
        cmocka_unit_test(compact_header),
        cmocka_unit_test(rejects_each_fault),
        cmocka_unit_test(random_bytes_never_crash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
