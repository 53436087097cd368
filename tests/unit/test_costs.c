/* SPDX-License-Identifier: BSD-3-Clause */
/* The model's costs as text (runtime/mcast/costs.c): key=value items and the older three-number
 * form, partial overrides, every bad input refused with nothing changed, and the cost file's
 * round trip (written, read back equal, replaced atomically). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "costs.h"

static int close_to(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fabs(b) + 1e-30;
}

static void key_values(void **state)
{
    (void)state;
    struct fm_costs c = {.wake = 7e-6};
    unsigned set = 0;
    char err[160];
    assert_int_equal(fm_costs_parse("send_pkt_ns=1500, latency_ns=250\ngap_ns_per_kib=1024 "
                                    "# a comment, ignored=1\nburst_bytes=25000",
                                    &c, &set, err, sizeof err),
                     0);
    assert_true(close_to(c.send_pkt, 1.5e-6));
    assert_true(close_to(c.latency, 250e-9));
    assert_true(close_to(c.gap_byte, 1e-9)); /* 1024 ns per KiB = 1 ns per byte */
    assert_true(close_to(c.burst, 25000));
    assert_true(close_to(c.wake, 7e-6)); /* not named: kept */
    unsigned want = 0;
    for (int i = 0; fm_costs_key(i); i++)
        if (!strcmp(fm_costs_key(i), "send_pkt_ns") || !strcmp(fm_costs_key(i), "latency_ns") ||
            !strcmp(fm_costs_key(i), "gap_ns_per_kib") || !strcmp(fm_costs_key(i), "burst_bytes"))
            want |= 1u << i;
    assert_int_equal(set, want);
    /* the latency's growth per KiB, a key that shares latency_ns's start */
    assert_int_equal(fm_costs_parse("latency_ns_per_kib=2048", &c, &set, err, sizeof err), 0);
    assert_true(close_to(c.lat_byte, 2e-9) && close_to(c.latency, 250e-9));
}

static void older_form(void **state)
{
    (void)state;
    struct fm_costs c = {0};
    unsigned set = 0;
    assert_int_equal(fm_costs_parse("1000:2048:500", &c, &set, NULL, 0), 0);
    assert_true(close_to(c.send_pkt, 1e-6));
    assert_true(close_to(c.send_byte, 2e-9));
    assert_true(close_to(c.latency, 500e-9));
    assert_int_equal(__builtin_popcount(set), 3);
}

static void bad_text_changes_nothing(void **state)
{
    (void)state;
    const char *bad[] = {"1:2",
                         "a:b:c",
                         "-1:0:0",
                         "0:0:0",
                         "1:2:3:4",
                         "send_pkt_ns",
                         "send_pkt_ns=",
                         "send_pkt_ns=-1",
                         "nosuch_ns=3",
                         "latency_ns=1x",
                         "latency_ns=nan",
                         "latency_ns=inf",
                         "wake_ns=1,send_pkt_ns=abc"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct fm_costs c = {.send_pkt = 3, .wake = 4};
        char err[160] = "";
        assert_int_equal(fm_costs_parse(bad[i], &c, NULL, err, sizeof err), -1);
        assert_true(err[0] != '\0');
        assert_true(c.send_pkt == 3 && c.wake == 4); /* all or nothing */
    }
}

static void file_round_trip(void **state)
{
    (void)state;
    char path[] = "/tmp/fm-costs-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    struct fm_costs c, back;
    fm_costs_estimate(&c, 0, 0);
    c.send_msg = 123.456e-9;
    c.burst = 3028;
    char err[160];
    assert_int_equal(fm_costs_save(path, &c, "a test", err, sizeof err), 0);
    memset(&back, 0, sizeof back);
    assert_int_equal(fm_costs_load(path, &back, err, sizeof err), 0);
    /* (written with 6 significant digits) */
    for (int i = 0; i < FM_COSTS_NFIELDS; i++)
        assert_true(fabs(*fm_costs_field(&back, i) - *fm_costs_field(&c, i)) <=
                    1e-5 * fabs(*fm_costs_field(&c, i)));
    /* Every key is in the file, once. */
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char text[4096];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    for (int i = 0; fm_costs_key(i); i++) { /* (a line "key=...": one key can start another) */
        char line[64];
        snprintf(line, sizeof line, "\n%s=", fm_costs_key(i));
        char *at = strstr(text, line);
        assert_non_null(at);
        assert_null(strstr(at + 1, line));
    }
    /* Replaced whole; a directory that does not exist is an error, not a crash. */
    c.latency = 9e-6;
    assert_int_equal(fm_costs_save(path, &c, NULL, err, sizeof err), 0);
    assert_int_equal(fm_costs_load(path, &back, err, sizeof err), 0);
    assert_true(close_to(back.latency, 9e-6));
    assert_int_equal(fm_costs_save("/nonexistent-dir/costs", &c, NULL, err, sizeof err), -1);
    assert_int_equal(fm_costs_load("/nonexistent-dir/costs", &back, err, sizeof err), -1);
    /* A file with a bad line is refused whole. */
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("latency_ns=100\nsend_pkt_ns=oops\n", f);
    fclose(f);
    back.latency = 1;
    assert_int_equal(fm_costs_load(path, &back, err, sizeof err), -1);
    assert_true(back.latency == 1);
    unlink(path);
}

/* A packet size's own link costs: parsed, chosen by the nearest size, merged, refused when
 * bad (nothing changed), and through the cost file. */
static void per_size(void **state)
{
    (void)state;
    struct fm_costs c = {.gap_byte = 1e-9, .lat_byte = 0};
    unsigned set = 0;
    char err[160];
    assert_int_equal(fm_costs_parse("gap_ns_per_kib@16384=2048, latency_ns_per_kib@16384=1024,"
                                    "gap_ns_per_kib@65536=512",
                                    &c, &set, err, sizeof err),
                     0);
    assert_int_equal(set, FM_COSTS_SIZES_BIT);
    assert_true(close_to(c.gap_byte, 1e-9)); /* the value for other sizes: kept */
    struct fm_costs at;
    fm_costs_at(&c, 16384, &at);
    assert_true(close_to(at.gap_byte, 2e-9) && close_to(at.lat_byte, 1e-9));
    fm_costs_at(&c, 8192, &at); /* (2x from 16 KiB, 8x from 64 KiB) */
    assert_true(close_to(at.gap_byte, 2e-9));
    fm_costs_at(&c, 40000, &at); /* (1.6x from 64 KiB, 2.4x from 16 KiB) */
    assert_true(close_to(at.gap_byte, 0.5e-9) && at.lat_byte == 0);
    fm_costs_at(&c, 1 << 20, &at);
    assert_true(close_to(at.gap_byte, 0.5e-9));
    const char *bad[] = {"gap_ns_per_kib@0=1", "send_pkt_ns@1024=1", "gap_ns_per_kib@x=1",
                         "latency_ns_per_kib@1024=-1", "gap_ns_per_kib@1024="};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct fm_costs b = c;
        assert_int_equal(fm_costs_parse(bad[i], &b, NULL, err, sizeof err), -1);
        assert_memory_equal(&b, &c, sizeof c);
    }
    struct fm_costs full = {0};
    char many[400] = "";
    for (int k = 0; k <= FM_COSTS_SIZES; k++) /* one size more than the table holds */
        snprintf(many + strlen(many), sizeof many - strlen(many), "gap_ns_per_kib@%d=1 ",
                 1024 << k);
    assert_int_equal(fm_costs_parse(many, &full, NULL, err, sizeof err), -1);
    assert_true(full.at_bytes[0] == 0);
    /* merged with the sizes' bit, the table comes along; a gap given without it holds at
     * every size (the table is emptied) */
    struct fm_costs dst = {0};
    fm_costs_merge(&dst, &c, FM_COSTS_SIZES_BIT);
    fm_costs_at(&dst, 16384, &at);
    assert_true(close_to(at.gap_byte, 2e-9));
    unsigned gap_only = 0;
    struct fm_costs env = {0};
    assert_int_equal(fm_costs_parse("gap_ns_per_kib=4096", &env, &gap_only, err, sizeof err), 0);
    fm_costs_merge(&dst, &env, gap_only);
    fm_costs_at(&dst, 16384, &at);
    assert_true(close_to(at.gap_byte, 4e-9));
    /* the cost file keeps the table */
    char path[] = "/tmp/fm-costs-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(fm_costs_save(path, &c, NULL, err, sizeof err), 0);
    struct fm_costs back = {0};
    assert_int_equal(fm_costs_load(path, &back, err, sizeof err), 0);
    unlink(path);
    for (size_t size = 1024; size <= (1u << 20); size *= 2) {
        struct fm_costs x, y;
        fm_costs_at(&c, size, &x);
        fm_costs_at(&back, size, &y);
        assert_true(fabs(x.gap_byte - y.gap_byte) <= 1e-5 * x.gap_byte &&
                    fabs(x.lat_byte - y.lat_byte) <= 1e-5 * x.lat_byte);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(key_values),
        cmocka_unit_test(older_form),
        cmocka_unit_test(bad_text_changes_nothing),
        cmocka_unit_test(file_round_trip),
        cmocka_unit_test(per_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
