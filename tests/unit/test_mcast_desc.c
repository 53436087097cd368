/* SPDX-License-Identifier: BSD-3-Clause */
/* The multicast descriptor: round trips in both modes and every validation rule; random and
 * mutated bytes never crash the decoder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "mcast_desc.h"
#include "prefix/prefix_route.h"

#define NRANKS    16
#define NBUILDERS 14 /* ids 0..13 (trees/registry.c) */

static unsigned char seen[NRANKS];
static int set_out[NRANKS];

static size_t encode_list(const int *members, int n, int root_pos, unsigned char *buf)
{
    fm_mcast_desc d = {.builder = 3,
                       .flags = FM_DESC_STORE_FORWARD,
                       .param = 2,
                       .lambda_milli = 1500,
                       .n = (uint32_t)n,
                       .root_pos = (uint32_t)root_pos,
                       .root_rank = (uint32_t)members[root_pos]};
    fm_mcast_desc_encode(&d, members, buf);
    return fm_mcast_desc_size(n);
}

static void list_round_trip(void **state)
{
    (void)state;
    int members[] = {5, 2, 9, 0, 15};
    unsigned char buf[256];
    size_t len = encode_list(members, 5, 2, buf);
    assert_int_equal(len, 32 + 20);
    fm_mcast_desc d;
    assert_int_equal(fm_mcast_desc_decode(buf, len + 10, NRANKS, seen, set_out, &d), 0);
    assert_int_equal(d.desc_len, len);
    assert_int_equal(d.builder, 3);
    assert_int_equal(d.flags, FM_DESC_STORE_FORWARD);
    assert_int_equal(d.param, 2);
    assert_int_equal(d.lambda_milli, 1500);
    assert_int_equal(d.n, 5);
    assert_int_equal(d.root_rank, 9);
    for (int i = 0; i < 5; i++)
        assert_int_equal(fm_mcast_desc_member(&d, (uint32_t)i), members[i]);
    for (int r = 0; r < NRANKS; r++)
        assert_int_equal(seen[r], 0); /* scratch left clean */
}

/* First-Child-First-Served is a flag of its own, in list and group mode. */
static void fcfs_round_trip(void **state)
{
    (void)state;
    int members[] = {4, 0, 7};
    fm_mcast_desc d = {.builder = 1, .flags = FM_DESC_FCFS, .n = 3, .root_rank = 4}, e;
    unsigned char buf[64];
    fm_mcast_desc_encode(&d, members, buf);
    assert_int_equal(fm_mcast_desc_decode(buf, fm_mcast_desc_size(3), NRANKS, seen, set_out, &e),
                     0);
    assert_int_equal(e.flags, FM_DESC_FCFS);
    d.flags = FM_DESC_FCFS | FM_DESC_GROUP;
    d.group = 42;
    fm_mcast_desc_encode(&d, NULL, buf);
    assert_int_equal(fm_mcast_desc_decode(buf, 32, NRANKS, seen, set_out, &e), 0);
    assert_int_equal(e.flags, FM_DESC_FCFS | FM_DESC_GROUP);
    d.flags |= FM_DESC_STORE_FORWARD;
    fm_mcast_desc_encode(&d, NULL, buf);
    assert_int_equal(fm_mcast_desc_decode(buf, 32, NRANKS, seen, set_out, &e), -1);
}

/* Delivery acknowledgement: 8 bytes after the fixed part and the list (the id, then a zero
 * word), in list and group mode; a length without them, or a non-zero reserved word, is
 * refused. */
/* A split multicast's id after the acknowledgement's fields, both present or either alone. */
static void split_round_trip(void **state)
{
    (void)state;
    int members[] = {4, 0, 7};
    fm_mcast_desc d = {.builder = 13,
                       .flags = FM_DESC_SPLIT,
                       .n = 3,
                       .root_rank = 4,
                       .split_id = 0x01020304u},
                  e;
    unsigned char buf[64];
    fm_mcast_desc_encode(&d, members, buf);
    assert_int_equal(fm_mcast_desc_len(&d), 32 + 12 + 8);
    assert_int_equal(buf[44], 0x04); /* little-endian id right after the list */
    assert_int_equal(buf[48] | buf[49] | buf[50] | buf[51], 0);
    assert_int_equal(fm_mcast_desc_decode(buf, 52, NRANKS, seen, set_out, &e), 0);
    assert_int_equal(e.split_id, 0x01020304u);
    buf[50] = 1;
    assert_int_equal(fm_mcast_desc_decode(buf, 52, NRANKS, seen, set_out, &e), -1); /* reserved */
    d.flags = FM_DESC_SPLIT | FM_DESC_ACK;
    d.ack_id = 0xAABBCCDDu;
    fm_mcast_desc_encode(&d, members, buf);
    assert_int_equal(fm_mcast_desc_len(&d), 32 + 12 + 16);
    assert_int_equal(buf[44], 0xDD); /* the acknowledgement's id first, then the split's */
    assert_int_equal(buf[52], 0x04);
    assert_int_equal(fm_mcast_desc_decode(buf, 60, NRANKS, seen, set_out, &e), 0);
    assert_int_equal(e.ack_id, 0xAABBCCDDu);
    assert_int_equal(e.split_id, 0x01020304u);
    assert_int_equal(fm_mcast_desc_decode(buf, 59, NRANKS, seen, set_out, &e), -1); /* cut */
}

static void ack_round_trip(void **state)
{
    (void)state;
    int members[] = {4, 0, 7};
    fm_mcast_desc d = {.builder = 1,
                       .flags = FM_DESC_ACK,
                       .n = 3,
                       .root_rank = 4,
                       .ack_id = 0xA1B2C3D4u},
                  e;
    unsigned char buf[64];
    fm_mcast_desc_encode(&d, members, buf);
    assert_int_equal(fm_mcast_desc_len(&d), 32 + 12 + 8);
    assert_int_equal(buf[0], 52);
    assert_int_equal(buf[44], 0xD4); /* little-endian id right after the list */
    assert_int_equal(fm_mcast_desc_decode(buf, 52, NRANKS, seen, set_out, &e), 0);
    assert_int_equal(e.ack_id, 0xA1B2C3D4u);
    assert_int_equal(e.flags, FM_DESC_ACK);
    assert_int_equal(fm_mcast_desc_member(&e, 2), 7);
    assert_int_equal(fm_mcast_desc_decode(buf, 51, NRANKS, seen, set_out, &e), -1); /* cut */
    buf[51] = 1;
    assert_int_equal(fm_mcast_desc_decode(buf, 52, NRANKS, seen, set_out, &e), -1); /* reserved */
    buf[51] = 0;
    buf[0] = 44; /* the length of a descriptor without the fields */
    assert_int_equal(fm_mcast_desc_decode(buf, 52, NRANKS, seen, set_out, &e), -1);
    d.flags = FM_DESC_ACK | FM_DESC_GROUP | FM_DESC_FCFS;
    d.group = 9;
    fm_mcast_desc_encode(&d, NULL, buf);
    assert_int_equal(fm_mcast_desc_decode(buf, 40, NRANKS, seen, set_out, &e), 0);
    assert_int_equal(e.ack_id, 0xA1B2C3D4u);
    assert_int_equal(e.group, 9);
}

/* A member list in ascending order as a set (FM_DESC_SET): gaps or a bitmap in place of 4
 * bytes a member; decoded into the caller's array; the root must be where root_pos says, the
 * count must be n, and a group cannot be a set. */
static void set_round_trip(void **state)
{
    (void)state;
    int members[] = {0, 1, 2, 3, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15};
    int n = 14;
    unsigned char set[32], buf[128];
    int sl = fm_prefix_dests_encode(members, n, NRANKS, set, sizeof set);
    assert_true(sl > 0 && sl < 4 * n);
    fm_mcast_desc d = {.builder = 5,
                       .flags = FM_DESC_SET | FM_DESC_ACK,
                       .n = (uint32_t)n,
                       .root_pos = 4,
                       .root_rank = 5,
                       .set_len = (uint32_t)sl,
                       .set_bytes = set,
                       .ack_id = 7},
                  e;
    fm_mcast_desc_encode(&d, NULL, buf);
    size_t len = fm_mcast_desc_len(&d);
    assert_int_equal(len, 32 + (size_t)sl + 8);
    assert_int_equal(fm_mcast_desc_decode(buf, len, NRANKS, seen, set_out, &e), 0);
    assert_int_equal(e.n, n);
    assert_int_equal(e.ack_id, 7);
    assert_ptr_equal(e.set, set_out);
    for (int i = 0; i < n; i++)
        assert_int_equal(fm_mcast_desc_member(&e, (uint32_t)i), members[i]);
    assert_int_equal(fm_mcast_desc_decode(buf, len, NRANKS, seen, NULL, &e), -1); /* no room */
    d.root_rank = 6; /* not the rank at root_pos */
    fm_mcast_desc_encode(&d, NULL, buf);
    assert_int_equal(fm_mcast_desc_decode(buf, len, NRANKS, seen, set_out, &e), -1);
    d.root_rank = 5;
    d.n = 13; /* the set holds 14 */
    fm_mcast_desc_encode(&d, NULL, buf);
    assert_int_equal(fm_mcast_desc_decode(buf, len, NRANKS, seen, set_out, &e), -1);
    d.n = 14;
    d.flags |= FM_DESC_GROUP;
    d.group = 3;
    fm_mcast_desc_encode(&d, NULL, buf);
    assert_int_equal(fm_mcast_desc_decode(buf, len, NRANKS, seen, set_out, &e), -1);
    /* a rank beyond the job */
    d.flags = FM_DESC_SET;
    d.group = 0;
    fm_mcast_desc_encode(&d, NULL, buf);
    assert_int_equal(fm_mcast_desc_decode(buf, 32 + (size_t)sl, 15, seen, set_out, &e), -1);
    assert_int_equal(fm_mcast_desc_decode(buf, 32 + (size_t)sl, 16, seen, set_out, &e), 0);
}

static void group_round_trip(void **state)
{
    (void)state;
    fm_mcast_desc d = {.builder = 2,
                       .flags = FM_DESC_GROUP,
                       .n = 12,
                       .root_pos = 11,
                       .root_rank = 4,
                       .group = 0x1234567890abcdefULL},
                  e;
    unsigned char buf[64];
    fm_mcast_desc_encode(&d, NULL, buf);
    assert_int_equal(fm_mcast_desc_decode(buf, 32, NRANKS, seen, set_out, &e), 0);
    assert_true(e.group == d.group);
    assert_int_equal(e.n, 12);
    assert_null(e.members);
}

/* Encode a 4-member list, change one byte range, expect a rejection. */
static int decode_with(void (*change)(unsigned char *buf), size_t len)
{
    int members[] = {1, 3, 5, 7};
    unsigned char buf[128];
    encode_list(members, 4, 1, buf);
    change(buf);
    fm_mcast_desc d;
    return fm_mcast_desc_decode(buf, len, NRANKS, seen, set_out, &d);
}

static void none(unsigned char *b)
{
    (void)b;
}
static void dup_member(unsigned char *b)
{
    b[32 + 8] = 1; /* member 2 = member 0 */
}
static void rank_range(unsigned char *b)
{
    b[32 + 12] = NRANKS;
}
static void builder_range(unsigned char *b)
{
    b[2] = NBUILDERS;
}
static void bad_flags(unsigned char *b)
{
    b[3] = 0x80;
}
static void root_pos_range(unsigned char *b)
{
    b[16] = 4;
}
static void root_rank_wrong(unsigned char *b)
{
    b[20] = 5; /* member at root_pos 1 is 3 */
}
static void zero_members(unsigned char *b)
{
    b[12] = 0;
}
static void length_wrong(unsigned char *b)
{
    b[0] = 44;
}
static void fcfs_and_store_forward(unsigned char *b)
{
    b[3] = FM_DESC_STORE_FORWARD | FM_DESC_FCFS; /* two forwarding modes at once */
}
static void group_with_list(unsigned char *b)
{
    b[3] = FM_DESC_GROUP; /* group mode needs desc_len 32 and a group id */
}

static void rejects_each_fault(void **state)
{
    (void)state;
    assert_int_equal(decode_with(none, 48), 0);
    assert_int_equal(decode_with(none, 47), -1); /* truncated */
    assert_int_equal(decode_with(none, 10), -1);
    assert_int_equal(decode_with(dup_member, 48), -1);
    assert_int_equal(decode_with(rank_range, 48), -1);
    assert_int_equal(decode_with(builder_range, 48), -1);
    assert_int_equal(decode_with(bad_flags, 48), -1);
    assert_int_equal(decode_with(root_pos_range, 48), -1);
    assert_int_equal(decode_with(root_rank_wrong, 48), -1);
    assert_int_equal(decode_with(zero_members, 48), -1);
    assert_int_equal(decode_with(length_wrong, 48), -1);
    assert_int_equal(decode_with(group_with_list, 48), -1);
    assert_int_equal(decode_with(fcfs_and_store_forward, 48), -1);
    for (int r = 0; r < NRANKS; r++)
        assert_int_equal(seen[r], 0);
}

static void random_bytes_never_crash(void **state)
{
    (void)state;
    unsigned char buf[128];
    int members[] = {0, 1, 2, 3, 4, 5};
    unsigned x = 99;
    fm_mcast_desc d;
    for (int i = 0; i < 200000; i++) {
        size_t len = encode_list(members, 6, 0, buf);
        int flips = 1 + (int)((x = x * 1103515245 + 12345) >> 16) % 4;
        for (int f = 0; f < flips; f++) {
            x = x * 1103515245 + 12345;
            buf[(x >> 16) % len] = (unsigned char)(x >> 8);
        }
        x = x * 1103515245 + 12345;
        size_t cut = (x >> 16) % (sizeof buf + 1);
        int rc = fm_mcast_desc_decode(buf, cut, NRANKS, seen, set_out, &d);
        if (rc == 0) { /* whatever it accepted must be usable */
            assert_true(d.desc_len <= cut && d.root_pos < d.n);
            for (uint32_t k = 0; d.members && k < d.n; k++)
                assert_true(fm_mcast_desc_member(&d, k) < NRANKS);
        }
    }
    for (int r = 0; r < NRANKS; r++)
        assert_int_equal(seen[r], 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(list_round_trip),  cmocka_unit_test(group_round_trip),
        cmocka_unit_test(fcfs_round_trip),  cmocka_unit_test(rejects_each_fault),
        cmocka_unit_test(ack_round_trip),   cmocka_unit_test(set_round_trip),
        cmocka_unit_test(split_round_trip), cmocka_unit_test(random_bytes_never_crash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
