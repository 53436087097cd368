/* SPDX-License-Identifier: BSD-3-Clause */
/* Fuzz target: the text of fastmsg-run's gets, puts and replies (run_wire.c, kvline.c), fed
 * what a hostile rank or launcher could send. Input: one control byte (bits 0-3: the job size
 * - 1 and the records a payload should hold; bits 4-7: the rank and count a cmd=vals should
 * answer), then bytes. Every line of them goes through every line parser, and what a parse
 * accepts must stay in bounds and read back the same once formatted; the whole of them is
 * also split as a cmd=vals payload, which must format back to exactly those bytes (numbers
 * have one spelling). */
#include <string.h>

#include "fastmsg.h"
#include "fuzz.h"
#include "kvline.h"
#include "run_protocol.h"
#include "run_wire.h"

static int key_chars(const char *k)
{
    size_t n = strlen(k);
    return n >= 1 && n <= FM_RUN_KEY_MAX &&
           strspn(k, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

/* line (no '\n') as the launcher and the client would parse it. */
static void check_line(const char *line, int size, const struct fm_run_get *asked)
{
    size_t n = strlen(line);
    char *copy = malloc(n + 2), out[FM_RUN_LINE_MAX + 64];
    fm_kvline l;
    FUZZ_CHECK(copy);
    FUZZ_CHECK(fm_run_key_ok(line) == key_chars(line));
    memcpy(copy, line, n + 1);
    if (fm_kvline_parse(copy, &l)) {
        free(copy);
        return;
    }
    struct fm_run_get g;
    if (!fm_run_parse_get(&l, size, &g)) {
        FUZZ_CHECK(g.rank >= 0 && g.rank < size && g.count >= 1 && g.count <= size - g.rank);
        FUZZ_CHECK(fm_run_key_ok(g.key));
        int w = fm_run_fmt_get(out, sizeof out, &g);
        FUZZ_CHECK(w > 0 && out[w - 1] == '\n');
        fm_kvline l2;
        struct fm_run_get g2;
        FUZZ_CHECK(!fm_kvline_parse(out, &l2) && !fm_run_parse_get(&l2, size, &g2));
        FUZZ_CHECK(g2.rank == g.rank && g2.count == g.count && !strcmp(g2.key, g.key));
    }
    const char *key;
    size_t bytes;
    if (!fm_run_parse_put(&l, &key, &bytes)) {
        FUZZ_CHECK(fm_run_key_ok(key) && bytes <= FM_RUN_VALUE_MAX);
        int w = fm_run_fmt_put(out, sizeof out, key, bytes);
        FUZZ_CHECK(w > 0 && out[w - 1] == '\n');
        fm_kvline l2;
        const char *k2;
        size_t b2;
        FUZZ_CHECK(!fm_kvline_parse(out, &l2) && !fm_run_parse_put(&l2, &k2, &b2));
        FUZZ_CHECK(!strcmp(k2, key) && b2 == bytes);
    }
    int count;
    if (!fm_run_parse_vals(&l, asked, &count, &bytes)) {
        FUZZ_CHECK(count >= 1 && count <= asked->count && bytes <= FM_RUN_VALS_MAX);
        int w = fm_run_fmt_vals(out, sizeof out, asked, count, bytes);
        FUZZ_CHECK(w > 0);
        fm_kvline l2;
        int c2;
        size_t b2;
        FUZZ_CHECK(!fm_kvline_parse(out, &l2) && !fm_run_parse_vals(&l2, asked, &c2, &b2));
        FUZZ_CHECK(c2 == count && b2 == bytes);
    }
    free(copy);
}

/* data as a cmd=vals payload of n records: every value inside data, and the records format
 * back to exactly data. */
static void check_payload(const char *data, size_t len, int n)
{
    struct fm_run_val vals[16];
    if (fm_run_split_vals(data, len, n, vals))
        return;
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        char rec[FM_RUN_RECORD_MAX];
        int r = fm_run_fmt_record(rec, &vals[i]);
        FUZZ_CHECK(r > 0 && off + (size_t)r <= len && !memcmp(data + off, rec, (size_t)r));
        off += (size_t)r;
        if (vals[i].data) {
            FUZZ_CHECK(vals[i].data == data + off && vals[i].len <= FM_RUN_VALUE_MAX);
            off += vals[i].len;
        } else {
            FUZZ_CHECK(vals[i].len == 0);
        }
        FUZZ_CHECK(off <= len);
    }
    FUZZ_CHECK(off == len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int low = data[0] & 15, high = data[0] >> 4;
    struct fm_run_get asked = {high, 1 + (high ^ 5), "fm.card"};
    const char *in = (const char *)data + 1;
    size_t left = size - 1;
    check_payload(in, left, 1 + low);
    for (size_t start = 0; start < left;) {
        const char *nl = memchr(in + start, '\n', left - start);
        size_t n = (nl ? (size_t)(nl - in) : left) - start;
        if (n < FM_RUN_LINE_MAX && !memchr(in + start, '\0', n)) {
            char *line = malloc(n + 1);
            FUZZ_CHECK(line);
            memcpy(line, in + start, n);
            line[n] = '\0';
            check_line(line, 1 + low, &asked);
            free(line);
        }
        start += n + 1;
    }
    return 0;
}
