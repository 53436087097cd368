/* SPDX-License-Identifier: BSD-3-Clause */
/* Fuzz target: the PMI-1 client's text handling (pmi1_wire.c, kvline.c), fed what a process
 * manager could send. Input: one control byte (bits 0-3: read size - 1 for the line assembler,
 * bits 4-7: the caller's value buffer size / 4), then the byte stream. The stream goes through
 * the line assembler in reads of that size, as boot_pmi1.c does; every line it yields goes
 * through every reply parser, the kvline splitter, the escaper and the request formatters. */
#include <string.h>

#include "fastmsg.h"
#include "fuzz.h"
#include "kvline.h"
#include "pmi1_wire.h"

/* err filled by a parser: always a terminated string within its buffer. */
static void check_err(const char *err, size_t errlen)
{
    FUZZ_CHECK(memchr(err, '\0', errlen));
}

static void check_kvline(const char *line)
{
    size_t n = strlen(line);
    char *copy = malloc(n + 1);
    FUZZ_CHECK(copy);
    memcpy(copy, line, n + 1);
    fm_kvline kv;
    if (fm_kvline_parse(copy, &kv) == 0) {
        FUZZ_CHECK(kv.n >= 1 && kv.n <= FM_KVLINE_MAX_PAIRS);
        for (int i = 0; i < kv.n; i++) {
            FUZZ_CHECK(kv.key[i][0] && !strpbrk(kv.key[i], " =\n"));
            FUZZ_CHECK(!strchr(kv.val[i], ' '));
            /* Pointers stay inside the caller's line. */
            FUZZ_CHECK(kv.key[i] >= copy && kv.val[i] <= copy + n);
            const char *v = fm_kvline_get(&kv, kv.key[i]);
            int first = 0;
            while (strcmp(kv.key[first], kv.key[i]))
                first++;
            FUZZ_CHECK(v == kv.val[first]);
        }
    }
    free(copy);
}

static void check_escape(const char *line)
{
    size_t n = strlen(line), cap = 3 * n + 1;
    char *esc = malloc(cap), *small = malloc(n + 1);
    FUZZ_CHECK(esc && small);
    int e = fm_kvline_escape(line, esc, cap);
    FUZZ_CHECK(e >= 0 && (size_t)e == strlen(esc) && (size_t)e < cap);
    for (const unsigned char *c = (const unsigned char *)esc; *c; c++)
        FUZZ_CHECK(*c > ' ' && *c < 0x7f && *c != '=' && (*c != '%' || c[1]));
    FUZZ_CHECK(fm_kvline_unescape(esc) == 0 && !strcmp(esc, line));
    /* A buffer too small fails cleanly instead of overflowing. */
    int s = fm_kvline_escape(line, small, n / 2 + 1);
    FUZZ_CHECK(s == -1 || ((size_t)s == strlen(small) && (size_t)s <= n / 2));
    /* Arbitrary text unescapes to at most its own length. */
    memcpy(esc, line, n + 1);
    if (fm_kvline_unescape(esc) == 0)
        FUZZ_CHECK(strlen(esc) <= n);
    free(small);
    free(esc);
}

/* Requests built from tokens of the line must read back as those tokens. */
static void check_formatters(const char *line)
{
    char tok[3][FM_PMI1_LINE_MAX + 1] = {{0}}, req[FM_PMI1_LINE_MAX + 1];
    const char *p = line;
    for (int i = 0; i < 3; i++) {
        size_t len = strcspn(p, " ");
        memcpy(tok[i], p, len);
        tok[i][len] = '\0';
        p += len + (p[len] == ' ');
    }
    int n = fm_pmi1_fmt_put(req, sizeof req, tok[0], tok[1], tok[2]);
    FUZZ_CHECK(n > 0 || n == FM_ERR_INVALID || n == FM_ERR_TOO_LONG);
    if (n > 0) {
        FUZZ_CHECK((size_t)n == strlen(req) && n <= FM_PMI1_LINE_MAX && req[n - 1] == '\n');
        fm_kvline kv;
        FUZZ_CHECK(fm_kvline_parse(req, &kv) == 0 && kv.n == 4);
        FUZZ_CHECK(!strcmp(fm_kvline_get(&kv, "cmd"), "put"));
        FUZZ_CHECK(!strcmp(fm_kvline_get(&kv, "kvsname"), tok[0]));
        FUZZ_CHECK(!strcmp(fm_kvline_get(&kv, "key"), tok[1]));
        FUZZ_CHECK(!strcmp(fm_kvline_get(&kv, "value"), tok[2]));
    }
    n = fm_pmi1_fmt_get(req, 64, tok[0], tok[1]); /* a small buffer: must refuse, not overflow */
    FUZZ_CHECK(n == FM_ERR_INVALID || n == FM_ERR_TOO_LONG || (n > 0 && n < 64));
}

/* Every reply parser on its own copy of line (they modify it in place). */
static void check_parsers(const char *line, size_t vlen)
{
    size_t n = strlen(line);
    char *copy = malloc(n + 1), *value = malloc(vlen ? vlen : 1), err[128];
    FUZZ_CHECK(copy && value);
#define COPY()    memcpy(copy, line, n + 1)
#define RC_OK(rc) ((rc) == FM_OK || (rc) == FM_ERR_BOOTSTRAP || (rc) == FM_ERR_TOO_LONG)
    int rc;
    COPY();
    rc = fm_pmi1_parse_response_to_init(copy, err, sizeof err);
    FUZZ_CHECK(RC_OK(rc));
    if (rc)
        check_err(err, sizeof err);
    struct fm_pmi1_maxes m;
    COPY();
    rc = fm_pmi1_parse_maxes(copy, &m, err, sizeof err);
    FUZZ_CHECK(RC_OK(rc));
    if (rc == FM_OK)
        FUZZ_CHECK(m.kvsname_max >= 1 && m.keylen_max >= 1 && m.vallen_max >= 1);
    COPY();
    rc = fm_pmi1_parse_my_kvsname(copy, value, vlen, err, sizeof err);
    FUZZ_CHECK(RC_OK(rc));
    if (rc == FM_OK)
        FUZZ_CHECK(strlen(value) < vlen && value[0]);
    COPY();
    rc = fm_pmi1_parse_get_result(copy, value, vlen, err, sizeof err);
    FUZZ_CHECK(RC_OK(rc));
    if (rc == FM_OK)
        FUZZ_CHECK(strlen(value) < vlen && value[0] && !strchr(value, ' '));
    else
        check_err(err, sizeof err);
    int (*plain[])(char *, char *, size_t) = {fm_pmi1_parse_put_result, fm_pmi1_parse_barrier_out,
                                              fm_pmi1_parse_finalize_ack, fm_pmi1_parse_initack};
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
        COPY();
        rc = plain[i](copy, err, 3); /* a tiny err buffer: truncated, still terminated */
        FUZZ_CHECK(RC_OK(rc));
        if (rc)
            check_err(err, 3);
    }
    const char *names[] = {"size", "rank", "debug"};
    for (int i = 0; i < 3; i++) {
        int v = -1;
        COPY();
        rc = fm_pmi1_parse_set(copy, names[i], &v, err, sizeof err);
        FUZZ_CHECK(RC_OK(rc));
        if (rc == FM_OK)
            FUZZ_CHECK(v >= 0);
    }
#undef RC_OK
#undef COPY
    free(value);
    free(copy);
}

static void check_line(const char *line, size_t vlen)
{
    size_t n = strlen(line);
    FUZZ_CHECK(n < FM_PMI1_LINE_MAX && !memchr(line, '\n', n));
    check_parsers(line, vlen);
    check_kvline(line);
    check_escape(line);
    check_formatters(line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t chunk = 1 + (data[0] & 15), vlen = 4 * (size_t)(data[0] >> 4);
    const char *in = (const char *)data + 1;
    size_t left = size - 1, fed = 0, consumed = 0;
    fm_pmi1_lines *a = malloc(sizeof *a);
    FUZZ_CHECK(a);
    fm_pmi1_lines_init(a);
    int r = 0;
    while (r >= 0) {
        char *line;
        while ((r = fm_pmi1_lines_next(a, &line)) == 1) {
            size_t len = strlen(line);
            /* Lines come out in order, whole: exactly the next bytes of the stream. */
            FUZZ_CHECK(consumed + len + 1 <= fed);
            FUZZ_CHECK(!memcmp(line, (const char *)data + 1 + consumed, len));
            FUZZ_CHECK(data[1 + consumed + len] == '\n');
            consumed += len + 1;
            check_line(line, vlen);
        }
        if (r < 0 || !left)
            break;
        size_t space = fm_pmi1_lines_space(a);
        /* A reader that is told "need more" must be able to give more, or it spins. */
        FUZZ_CHECK(space > 0 && space <= FM_PMI1_LINE_MAX);
        size_t n = chunk < left ? chunk : left;
        n = n < space ? n : space;
        FUZZ_CHECK(fm_pmi1_lines_feed(a, in, n) == n);
        in += n;
        left -= n;
        fed += n;
    }
    if (r == FM_ERR_TOO_LONG) /* only when no '\n' came in the next FM_PMI1_LINE_MAX bytes */
        FUZZ_CHECK(fed - consumed >= FM_PMI1_LINE_MAX &&
                   !memchr(data + 1 + consumed, '\n', FM_PMI1_LINE_MAX));
    else if (r == FM_ERR_BOOTSTRAP) /* a NUL inside the next line */
        FUZZ_CHECK(memchr(data + 1 + consumed, '\0', fed - consumed));
    else
        FUZZ_CHECK(r == 0 && !left);
    free(a);
    return 0;
}
