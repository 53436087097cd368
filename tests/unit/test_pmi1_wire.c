/* SPDX-License-Identifier: BSD-3-Clause */
/* PMI-1 wire protocol: formatters, every reply parser (hydra and Slurm flavours, rc != 0, wrong
 * cmd, missing fields, malformed tokens) and the line assembler. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fastmsg.h"
#include "pmi1_wire.h"

static char line[2048];
static char err[256];

/* A writable copy of a reply, as the parsers modify their input. */
static char *L(const char *s)
{
    snprintf(line, sizeof line, "%s", s);
    err[0] = '\0';
    return line;
}

static void assert_err_has(const char *needle)
{
    if (!strstr(err, needle))
        fail_msg("error '%s' lacks '%s'", err, needle);
}

/* ---- formatters ---- */

static void test_fmt_simple(void **state)
{
    (void)state;
    char b[256];
    assert_int_equal(fm_pmi1_fmt_init(b, sizeof b), 40);
    assert_string_equal(b, "cmd=init pmi_version=1 pmi_subversion=1\n");
    fm_pmi1_fmt_get_maxes(b, sizeof b);
    assert_string_equal(b, "cmd=get_maxes\n");
    fm_pmi1_fmt_get_my_kvsname(b, sizeof b);
    assert_string_equal(b, "cmd=get_my_kvsname\n");
    fm_pmi1_fmt_barrier_in(b, sizeof b);
    assert_string_equal(b, "cmd=barrier_in\n");
    fm_pmi1_fmt_finalize(b, sizeof b);
    assert_string_equal(b, "cmd=finalize\n");
    fm_pmi1_fmt_abort(b, sizeof b, 3);
    assert_string_equal(b, "cmd=abort exitcode=3\n");
    fm_pmi1_fmt_initack(b, sizeof b, 12);
    assert_string_equal(b, "cmd=initack pmiid=12\n");
    assert_int_equal(fm_pmi1_fmt_initack(b, sizeof b, -1), FM_ERR_INVALID);
}

static void test_fmt_put_get(void **state)
{
    (void)state;
    char b[256];
    int n = fm_pmi1_fmt_put(b, sizeof b, "kvs_1_0", "r3.addr", "12/00ff");
    assert_string_equal(b, "cmd=put kvsname=kvs_1_0 key=r3.addr value=12/00ff\n");
    assert_int_equal(n, (int)strlen(b));
    fm_pmi1_fmt_get(b, sizeof b, "77.0", "r0.fm.jobkey");
    assert_string_equal(b, "cmd=get kvsname=77.0 key=r0.fm.jobkey\n");
}

static void test_fmt_rejects(void **state)
{
    (void)state;
    char b[2048], big[1100];
    assert_int_equal(fm_pmi1_fmt_put(b, sizeof b, "k", "a key", "v"), FM_ERR_INVALID);
    assert_int_equal(fm_pmi1_fmt_put(b, sizeof b, "k", "a=b", "v"), FM_ERR_INVALID);
    assert_int_equal(fm_pmi1_fmt_put(b, sizeof b, "k", "key", "v v"), FM_ERR_INVALID);
    assert_int_equal(fm_pmi1_fmt_put(b, sizeof b, "k", "key", "v\n"), FM_ERR_INVALID);
    assert_int_equal(fm_pmi1_fmt_put(b, sizeof b, "k", "key", ""), FM_ERR_INVALID);
    assert_int_equal(fm_pmi1_fmt_put(b, sizeof b, "", "key", "v"), FM_ERR_INVALID);
    assert_int_equal(fm_pmi1_fmt_get(b, sizeof b, "k", "\x01"), FM_ERR_INVALID);
    /* Over Slurm's 1024-byte line, though the buffer would hold it. */
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_int_equal(fm_pmi1_fmt_put(b, sizeof b, "k", "key", big), FM_ERR_TOO_LONG);
    /* Buffer too small. */
    assert_int_equal(fm_pmi1_fmt_init(b, 10), FM_ERR_TOO_LONG);
    assert_int_equal(fm_pmi1_fmt_finalize(b, 13), FM_ERR_TOO_LONG);
    assert_int_equal(fm_pmi1_fmt_finalize(b, 14), 13);
}

static void test_fmt_line_limit(void **state)
{
    (void)state;
    char b[2048], val[1024];
    /* "cmd=put kvsname=k key=k value=" is 30 bytes; with '\n' a 993-char value is 1024. */
    memset(val, 'v', 993);
    val[993] = '\0';
    assert_int_equal(fm_pmi1_fmt_put(b, sizeof b, "k", "k", val), 1024);
    val[993] = 'v';
    val[994] = '\0';
    assert_int_equal(fm_pmi1_fmt_put(b, sizeof b, "k", "k", val), FM_ERR_TOO_LONG);
}

/* ---- response_to_init ---- */

static void test_init_ok(void **state)
{
    (void)state;
    assert_int_equal(
        fm_pmi1_parse_response_to_init(
            L("cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n"), err, sizeof err),
        FM_OK);
    assert_int_equal(
        fm_pmi1_parse_response_to_init(
            L("cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=1"), err, sizeof err),
        FM_OK);
}

static void test_init_errors(void **state)
{
    (void)state;
    assert_int_equal(
        fm_pmi1_parse_response_to_init(
            L("cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1"), err, sizeof err),
        FM_ERR_BOOTSTRAP);
    assert_err_has("rc=-1");
    assert_int_equal(
        fm_pmi1_parse_response_to_init(
            L("cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0"), err, sizeof err),
        FM_ERR_BOOTSTRAP);
    assert_err_has("pmi_version=2");
    assert_int_equal(fm_pmi1_parse_response_to_init(
                         L("cmd=response_to_init pmi_version=1 pmi_subversion=1"), err, sizeof err),
                     FM_ERR_BOOTSTRAP);
    assert_err_has("no rc=");
    assert_int_equal(fm_pmi1_parse_response_to_init(L("cmd=maxes rc=0"), err, sizeof err),
                     FM_ERR_BOOTSTRAP);
    assert_err_has("expected cmd=response_to_init, got cmd=maxes");
}

/* ---- maxes ---- */

static void test_maxes(void **state)
{
    (void)state;
    struct fm_pmi1_maxes m;
    assert_int_equal(
        fm_pmi1_parse_maxes(L("cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n"), &m, err,
                            sizeof err),
        FM_OK);
    assert_int_equal(m.kvsname_max, 256);
    assert_int_equal(m.keylen_max, 64);
    assert_int_equal(m.vallen_max, 1024);
    assert_int_equal(
        fm_pmi1_parse_maxes(L("cmd=maxes rc=0 kvsname_max=256 keylen_max=256 vallen_max=1024"), &m,
                            err, sizeof err),
        FM_OK);
    assert_int_equal(m.keylen_max, 256);
}

static void test_maxes_errors(void **state)
{
    (void)state;
    struct fm_pmi1_maxes m;
    assert_int_equal(
        fm_pmi1_parse_maxes(L("cmd=maxes kvsname_max=256 keylen_max=64"), &m, err, sizeof err),
        FM_ERR_BOOTSTRAP);
    assert_err_has("vallen_max");
    assert_int_equal(
        fm_pmi1_parse_maxes(L("cmd=maxes kvsname_max=256 keylen_max=abc vallen_max=1024"), &m, err,
                            sizeof err),
        FM_ERR_BOOTSTRAP);
    assert_err_has("keylen_max=abc");
    assert_int_equal(fm_pmi1_parse_maxes(L("cmd=maxes kvsname_max=0 keylen_max=64 vallen_max=1024"),
                                         &m, err, sizeof err),
                     FM_ERR_BOOTSTRAP);
    assert_int_equal(
        fm_pmi1_parse_maxes(L("cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=99999999999"), &m,
                            err, sizeof err),
        FM_ERR_BOOTSTRAP);
    assert_int_equal(fm_pmi1_parse_maxes(L("cmd=maxes rc=1 kvsname_max=256 keylen_max=64 "
                                           "vallen_max=1024"),
                                         &m, err, sizeof err),
                     FM_ERR_BOOTSTRAP);
    assert_err_has("rc=1");
    assert_int_equal(fm_pmi1_parse_maxes(L("cmd=my_kvsname kvsname=x"), &m, err, sizeof err),
                     FM_ERR_BOOTSTRAP);
}

/* ---- my_kvsname ---- */

static void test_kvsname(void **state)
{
    (void)state;
    char k[64];
    assert_int_equal(fm_pmi1_parse_my_kvsname(L("cmd=my_kvsname kvsname=kvs_4191_0_855949334_vm\n"),
                                              k, sizeof k, err, sizeof err),
                     FM_OK);
    assert_string_equal(k, "kvs_4191_0_855949334_vm");
    assert_int_equal(fm_pmi1_parse_my_kvsname(L("cmd=my_kvsname rc=0 kvsname=1234.0"), k, sizeof k,
                                              err, sizeof err),
                     FM_OK);
    assert_string_equal(k, "1234.0");
}

static void test_kvsname_errors(void **state)
{
    (void)state;
    char k[8];
    assert_int_equal(fm_pmi1_parse_my_kvsname(L("cmd=my_kvsname kvsname=kvs_4191_0"), k, sizeof k,
                                              err, sizeof err),
                     FM_ERR_TOO_LONG);
    assert_int_equal(
        fm_pmi1_parse_my_kvsname(L("cmd=my_kvsname kvsname=1234567"), k, sizeof k, err, sizeof err),
        FM_OK);
    assert_int_equal(
        fm_pmi1_parse_my_kvsname(L("cmd=my_kvsname rc=0"), k, sizeof k, err, sizeof err),
        FM_ERR_BOOTSTRAP);
    assert_err_has("no kvsname=");
    assert_int_equal(
        fm_pmi1_parse_my_kvsname(L("cmd=my_kvsname kvsname="), k, sizeof k, err, sizeof err),
        FM_ERR_BOOTSTRAP);
    assert_int_equal(
        fm_pmi1_parse_my_kvsname(L("cmd=my_kvsname rc=2 kvsname=x"), k, sizeof k, err, sizeof err),
        FM_ERR_BOOTSTRAP);
    assert_int_equal(
        fm_pmi1_parse_my_kvsname(L("cmd=put_result rc=0"), k, sizeof k, err, sizeof err),
        FM_ERR_BOOTSTRAP);
}

/* ---- put_result ---- */

static void test_put_result(void **state)
{
    (void)state;
    assert_int_equal(
        fm_pmi1_parse_put_result(L("cmd=put_result rc=0 msg=success\n"), err, sizeof err), FM_OK);
    assert_int_equal(fm_pmi1_parse_put_result(L("cmd=put_result rc=0"), err, sizeof err), FM_OK);
    assert_int_equal(
        fm_pmi1_parse_put_result(L("cmd=put_result rc=-1 msg=duplicate_keyr0.x"), err, sizeof err),
        FM_ERR_BOOTSTRAP);
    assert_err_has("put_result failed: rc=-1 msg=duplicate_keyr0.x");
    assert_int_equal(fm_pmi1_parse_put_result(L("cmd=put_result rc=1"), err, sizeof err),
                     FM_ERR_BOOTSTRAP);
    assert_int_equal(fm_pmi1_parse_put_result(L("cmd=put_result msg=success"), err, sizeof err),
                     FM_ERR_BOOTSTRAP);
    assert_err_has("no rc=");
    assert_int_equal(fm_pmi1_parse_put_result(L("cmd=get_result rc=0 value=x"), err, sizeof err),
                     FM_ERR_BOOTSTRAP);
    assert_err_has("got cmd=get_result");
}

/* ---- get_result ---- */

static void test_get_result(void **state)
{
    (void)state;
    char v[32];
    assert_int_equal(fm_pmi1_parse_get_result(L("cmd=get_result rc=0 msg=success value=8/0a0b\n"),
                                              v, sizeof v, err, sizeof err),
                     FM_OK);
    assert_string_equal(v, "8/0a0b");
    assert_int_equal(
        fm_pmi1_parse_get_result(L("cmd=get_result rc=0 value=abc"), v, sizeof v, err, sizeof err),
        FM_OK);
    assert_string_equal(v, "abc");
    /* Only the first '=' splits. */
    assert_int_equal(
        fm_pmi1_parse_get_result(L("cmd=get_result rc=0 value=a=b"), v, sizeof v, err, sizeof err),
        FM_OK);
    assert_string_equal(v, "a=b");
}

static void test_get_result_errors(void **state)
{
    (void)state;
    char v[8];
    assert_int_equal(
        fm_pmi1_parse_get_result(L("cmd=get_result rc=-1 msg=key_r1.x_not_found value=unknown"), v,
                                 sizeof v, err, sizeof err),
        FM_ERR_BOOTSTRAP);
    assert_err_has("key_r1.x_not_found");
    assert_int_equal(
        fm_pmi1_parse_get_result(L("cmd=get_result rc=1"), v, sizeof v, err, sizeof err),
        FM_ERR_BOOTSTRAP);
    assert_err_has("rc=1");
    assert_int_equal(fm_pmi1_parse_get_result(L("cmd=get_result rc=0 msg=success"), v, sizeof v,
                                              err, sizeof err),
                     FM_ERR_BOOTSTRAP);
    assert_err_has("no value=");
    assert_int_equal(
        fm_pmi1_parse_get_result(L("cmd=get_result value=abc"), v, sizeof v, err, sizeof err),
        FM_ERR_BOOTSTRAP);
    assert_int_equal(fm_pmi1_parse_get_result(L("cmd=get_result rc=0 value=12345678"), v, sizeof v,
                                              err, sizeof err),
                     FM_ERR_TOO_LONG);
    assert_int_equal(fm_pmi1_parse_get_result(L("cmd=get_result rc=0 value=1234567"), v, sizeof v,
                                              err, sizeof err),
                     FM_OK);
    assert_int_equal(
        fm_pmi1_parse_get_result(L("cmd=put_result rc=0"), v, sizeof v, err, sizeof err),
        FM_ERR_BOOTSTRAP);
}

/* ---- barrier_out, finalize_ack ---- */

static void test_barrier_finalize(void **state)
{
    (void)state;
    assert_int_equal(fm_pmi1_parse_barrier_out(L("cmd=barrier_out\n"), err, sizeof err), FM_OK);
    assert_int_equal(fm_pmi1_parse_barrier_out(L("cmd=barrier_out rc=0"), err, sizeof err), FM_OK);
    assert_int_equal(
        fm_pmi1_parse_barrier_out(L("cmd=barrier_out rc=5 msg=kvs_send_failed"), err, sizeof err),
        FM_ERR_BOOTSTRAP);
    assert_err_has("barrier_out failed: rc=5");
    assert_int_equal(fm_pmi1_parse_barrier_out(L("cmd=barrier_in"), err, sizeof err),
                     FM_ERR_BOOTSTRAP);
    assert_int_equal(fm_pmi1_parse_finalize_ack(L("cmd=finalize_ack\n"), err, sizeof err), FM_OK);
    assert_int_equal(fm_pmi1_parse_finalize_ack(L("cmd=finalize_ack rc=0"), err, sizeof err),
                     FM_OK);
    assert_int_equal(fm_pmi1_parse_finalize_ack(L("cmd=finalize_ack rc=-1"), err, sizeof err),
                     FM_ERR_BOOTSTRAP);
    assert_int_equal(fm_pmi1_parse_finalize_ack(L("cmd=barrier_out"), err, sizeof err),
                     FM_ERR_BOOTSTRAP);
}

/* ---- PMI_PORT handshake ---- */

static void test_initack(void **state)
{
    (void)state;
    int v = -1;
    assert_int_equal(fm_pmi1_parse_initack(L("cmd=initack\n"), err, sizeof err), FM_OK);
    assert_int_equal(fm_pmi1_parse_initack(L("cmd=initack rc=0"), err, sizeof err), FM_OK);
    assert_int_equal(fm_pmi1_parse_initack(L("cmd=set size=4"), err, sizeof err), FM_ERR_BOOTSTRAP);
    assert_int_equal(fm_pmi1_parse_set(L("cmd=set size=4\n"), "size", &v, err, sizeof err), FM_OK);
    assert_int_equal(v, 4);
    assert_int_equal(fm_pmi1_parse_set(L("cmd=set rank=3"), "rank", &v, err, sizeof err), FM_OK);
    assert_int_equal(v, 3);
    assert_int_equal(fm_pmi1_parse_set(L("cmd=set debug=0"), "debug", &v, err, sizeof err), FM_OK);
    assert_int_equal(v, 0);
}

static void test_initack_errors(void **state)
{
    (void)state;
    int v;
    assert_int_equal(fm_pmi1_parse_set(L("cmd=set rank=3"), "size", &v, err, sizeof err),
                     FM_ERR_BOOTSTRAP);
    assert_err_has("size");
    assert_int_equal(fm_pmi1_parse_set(L("cmd=set size=-2"), "size", &v, err, sizeof err),
                     FM_ERR_BOOTSTRAP);
    assert_int_equal(fm_pmi1_parse_set(L("cmd=set size=4x"), "size", &v, err, sizeof err),
                     FM_ERR_BOOTSTRAP);
    assert_int_equal(fm_pmi1_parse_set(L("cmd=set size="), "size", &v, err, sizeof err),
                     FM_ERR_BOOTSTRAP);
    assert_int_equal(fm_pmi1_parse_set(L("cmd=initack size=4"), "size", &v, err, sizeof err),
                     FM_ERR_BOOTSTRAP);
    assert_err_has("expected cmd=set");
}

/* ---- malformed tokens, shared by every parser ---- */

static void test_malformed(void **state)
{
    (void)state;
    const char *bad[] = {
        "",
        "   ",
        "\n",
        "cmd",
        "=barrier_out",
        "cmd=barrier_out rc",
        "cmd=barrier_out =0",
        "rc=0",
        "cmd=barrier_out rc=",
        "cmd=barrier_out rc=0x",
        "cmd=barrier_out rc=zero",
        "cmd=barrier_out a=1 b=2 c=3 d=4 e=5 f=6 g=7 h=8 i=9 j=10 k=11 l=12 m=13 n=14 o=15 p=16",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (fm_pmi1_parse_barrier_out(L(bad[i]), err, sizeof err) != FM_ERR_BOOTSTRAP)
            fail_msg("accepted '%s'", bad[i]);
        assert_true(err[0] != '\0');
    }
    /* A NULL error buffer is allowed. */
    assert_int_equal(fm_pmi1_parse_barrier_out(L("junk"), NULL, 0), FM_ERR_BOOTSTRAP);
}

/* ---- line assembler ---- */

static const char hydra_initack[] =
    "cmd=initack\ncmd=set size=4\ncmd=set rank=2\ncmd=set debug=0\n";
static const char *const hydra_lines[] = {"cmd=initack", "cmd=set size=4", "cmd=set rank=2",
                                          "cmd=set debug=0"};

/* Feed stream in chunks of the given sizes (cycled) and check the lines that come out. */
static void feed_and_check(const char *stream, const size_t *chunks, size_t nchunks,
                           const char *const *want, size_t nwant)
{
    fm_pmi1_lines a;
    fm_pmi1_lines_init(&a);
    size_t len = strlen(stream), off = 0, got = 0, c = 0;
    char *l;
    while (off < len) {
        size_t n = chunks[c++ % nchunks];
        if (n > len - off)
            n = len - off;
        assert_int_equal(fm_pmi1_lines_feed(&a, stream + off, n), n);
        off += n;
        int r;
        while ((r = fm_pmi1_lines_next(&a, &l)) == 1) {
            assert_true(got < nwant);
            assert_string_equal(l, want[got]);
            got++;
        }
        assert_int_equal(r, 0);
    }
    assert_int_equal(got, nwant);
}

static void test_lines_whole(void **state)
{
    (void)state;
    size_t all[] = {sizeof hydra_initack};
    feed_and_check(hydra_initack, all, 1, hydra_lines, 4);
}

static void test_lines_byte_by_byte(void **state)
{
    (void)state;
    size_t one[] = {1};
    feed_and_check(hydra_initack, one, 1, hydra_lines, 4);
}

static void test_lines_odd_chunks(void **state)
{
    (void)state;
    size_t odd[] = {3, 7, 1, 13, 2, 29};
    feed_and_check(hydra_initack, odd, 6, hydra_lines, 4);
    /* Split right at the newlines too. */
    size_t at_nl[] = {12, 15, 15, 16};
    feed_and_check(hydra_initack, at_nl, 4, hydra_lines, 4);
}

static void test_lines_long_values(void **state)
{
    (void)state;
    /* Three get_result lines of about 500 bytes, fed in chunks that straddle them. */
    static char stream[3 * 600], want[3][600];
    const char *wp[3] = {want[0], want[1], want[2]};
    size_t off = 0;
    for (int i = 0; i < 3; i++) {
        int n = snprintf(want[i], sizeof want[i], "cmd=get_result rc=0 msg=success value=%d/", i);
        memset(want[i] + n, 'a' + i, 450);
        want[i][n + 450] = '\0';
        off += (size_t)snprintf(stream + off, sizeof stream - off, "%s\n", want[i]);
    }
    size_t chunks[] = {1000, 1, 511, 77};
    feed_and_check(stream, chunks, 4, wp, 3);
}

static void test_lines_limit(void **state)
{
    (void)state;
    fm_pmi1_lines a;
    char buf[1100], *l;
    /* Exactly 1024 bytes with the '\n' is allowed. */
    memset(buf, 'x', 1023);
    buf[1023] = '\n';
    fm_pmi1_lines_init(&a);
    assert_int_equal(fm_pmi1_lines_feed(&a, buf, 1024), 1024);
    assert_int_equal(fm_pmi1_lines_next(&a, &l), 1);
    assert_int_equal(strlen(l), 1023);
    assert_int_equal(fm_pmi1_lines_next(&a, &l), 0);
    /* 1025: the buffer fills with no '\n', and that is an error, and it sticks. */
    fm_pmi1_lines_init(&a);
    memset(buf, 'y', 1024);
    buf[1024] = '\n';
    assert_int_equal(fm_pmi1_lines_feed(&a, buf, 1025), 1024);
    assert_int_equal(fm_pmi1_lines_space(&a), 0);
    assert_int_equal(fm_pmi1_lines_next(&a, &l), FM_ERR_TOO_LONG);
    assert_int_equal(fm_pmi1_lines_next(&a, &l), FM_ERR_TOO_LONG);
}

static void test_lines_overlong_bytewise(void **state)
{
    (void)state;
    fm_pmi1_lines a;
    char *l;
    int r = 0;
    fm_pmi1_lines_init(&a);
    for (int i = 0; i < 2000 && r == 0; i++) {
        fm_pmi1_lines_feed(&a, "z", 1);
        r = fm_pmi1_lines_next(&a, &l);
    }
    assert_int_equal(r, FM_ERR_TOO_LONG);
}

static void test_lines_space_and_partial_feed(void **state)
{
    (void)state;
    fm_pmi1_lines a;
    char buf[1024], *l;
    fm_pmi1_lines_init(&a);
    assert_int_equal(fm_pmi1_lines_space(&a), FM_PMI1_LINE_MAX);
    memset(buf, 'q', sizeof buf);
    buf[9] = '\n';
    /* 1024 bytes: a 10-byte line and the start of the next. */
    assert_int_equal(fm_pmi1_lines_feed(&a, buf, sizeof buf), sizeof buf);
    assert_int_equal(fm_pmi1_lines_space(&a), 0);
    assert_int_equal(fm_pmi1_lines_feed(&a, "x", 1), 0);
    assert_int_equal(fm_pmi1_lines_next(&a, &l), 1);
    assert_string_equal(l, "qqqqqqqqq");
    /* Taking the line frees its 10 bytes. */
    assert_int_equal(fm_pmi1_lines_space(&a), 10);
    assert_int_equal(fm_pmi1_lines_feed(&a, "abc\n", 4), 4);
    assert_int_equal(fm_pmi1_lines_next(&a, &l), 1);
    assert_int_equal(strlen(l), 1014 + 3);
    assert_string_equal(l + 1014, "abc");
    assert_int_equal(fm_pmi1_lines_next(&a, &l), 0);
    assert_int_equal(fm_pmi1_lines_space(&a), FM_PMI1_LINE_MAX);
}

static void test_lines_nul_and_empty(void **state)
{
    (void)state;
    fm_pmi1_lines a;
    char *l;
    fm_pmi1_lines_init(&a);
    fm_pmi1_lines_feed(&a, "\ncmd=barrier_out\n", 17);
    assert_int_equal(fm_pmi1_lines_next(&a, &l), 1);
    assert_string_equal(l, "");
    assert_int_equal(fm_pmi1_lines_next(&a, &l), 1);
    assert_string_equal(l, "cmd=barrier_out");
    fm_pmi1_lines_init(&a);
    fm_pmi1_lines_feed(&a, "cmd=bar\0rier_out\n", 17);
    assert_int_equal(fm_pmi1_lines_next(&a, &l), FM_ERR_BOOTSTRAP);
    assert_int_equal(fm_pmi1_lines_next(&a, &l), FM_ERR_BOOTSTRAP);
}

/* A line from the assembler goes straight into a parser. */
static void test_lines_into_parser(void **state)
{
    (void)state;
    fm_pmi1_lines a;
    char *l, v[16];
    const char s[] = "cmd=get_result rc=0 msg=success value=4/beef\ncmd=barrier_out\n";
    fm_pmi1_lines_init(&a);
    for (size_t i = 0; i < sizeof s - 1; i += 5)
        fm_pmi1_lines_feed(&a, s + i, sizeof s - 1 - i < 5 ? sizeof s - 1 - i : 5);
    assert_int_equal(fm_pmi1_lines_next(&a, &l), 1);
    assert_int_equal(fm_pmi1_parse_get_result(l, v, sizeof v, err, sizeof err), FM_OK);
    assert_string_equal(v, "4/beef");
    assert_int_equal(fm_pmi1_lines_next(&a, &l), 1);
    assert_int_equal(fm_pmi1_parse_barrier_out(l, err, sizeof err), FM_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fmt_simple),
        cmocka_unit_test(test_fmt_put_get),
        cmocka_unit_test(test_fmt_rejects),
        cmocka_unit_test(test_fmt_line_limit),
        cmocka_unit_test(test_init_ok),
        cmocka_unit_test(test_init_errors),
        cmocka_unit_test(test_maxes),
        cmocka_unit_test(test_maxes_errors),
        cmocka_unit_test(test_kvsname),
        cmocka_unit_test(test_kvsname_errors),
        cmocka_unit_test(test_put_result),
        cmocka_unit_test(test_get_result),
        cmocka_unit_test(test_get_result_errors),
        cmocka_unit_test(test_barrier_finalize),
        cmocka_unit_test(test_initack),
        cmocka_unit_test(test_initack_errors),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_lines_whole),
        cmocka_unit_test(test_lines_byte_by_byte),
        cmocka_unit_test(test_lines_odd_chunks),
        cmocka_unit_test(test_lines_long_values),
        cmocka_unit_test(test_lines_limit),
        cmocka_unit_test(test_lines_overlong_bytewise),
        cmocka_unit_test(test_lines_space_and_partial_feed),
        cmocka_unit_test(test_lines_nul_and_empty),
        cmocka_unit_test(test_lines_into_parser),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
