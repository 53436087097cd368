/* SPDX-License-Identifier: BSD-3-Clause */
/* run_protocol.h's value-carrying lines and records. Numbers are plain decimal digits,
 * nothing else, so what one side writes the other reads back exactly, and only that. */
#include "run_wire.h"

#include <stdio.h>
#include <string.h>

#include "run_protocol.h"

#define FM_RUN_WIRE_KEY_MAX "64"
_Static_assert(FM_RUN_KEY_MAX == 64 && FM_RUN_VALUE_MAX == 65536, "the messages below name them");

/* s[0..n) as a decimal in 0..max, digits only (no sign, no spaces, no leading zero, at most
 * 9): 0, or -1. One spelling per number, as snprintf writes it. */
static int fm_run_wire_digits(const char *s, size_t n, long max, long *out)
{
    long v = 0;
    if (!n || n > 9 || (n > 1 && s[0] == '0'))
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    if (v > max)
        return -1;
    *out = v;
    return 0;
}

static int fm_run_wire_uint(const char *s, long max, long *out)
{
    return s ? fm_run_wire_digits(s, strlen(s), max, out) : -1;
}

int fm_run_key_ok(const char *key)
{
    size_t n = 0;
    if (!key)
        return 0;
    for (; key[n]; n++) {
        char c = key[n];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '_' || c == '.' || c == '-';
        if (!ok || n == FM_RUN_KEY_MAX)
            return 0;
    }
    return n > 0;
}

const char *fm_run_parse_put(const fm_kvline *l, const char **key, size_t *bytes)
{
    long len;
    const char *k = fm_kvline_get(l, "key");
    if (!fm_run_key_ok(k))
        return "cmd=put without a key of 1 to " FM_RUN_WIRE_KEY_MAX " of [A-Za-z0-9_.-]";
    if (fm_run_wire_uint(fm_kvline_get(l, "bytes"), FM_RUN_VALUE_MAX, &len))
        return "cmd=put without a byte count up to 65536";
    *key = k;
    *bytes = (size_t)len;
    return NULL;
}

const char *fm_run_parse_get(const fm_kvline *l, int size, struct fm_run_get *g)
{
    long rank, count;
    const char *key = fm_kvline_get(l, "key");
    if (fm_run_wire_uint(fm_kvline_get(l, "rank"), size - 1L, &rank))
        return "cmd=get without a rank of the job";
    if (fm_run_wire_uint(fm_kvline_get(l, "count"), size - rank, &count) || count < 1)
        return "cmd=get without a count from 1 to the ranks left";
    if (!fm_run_key_ok(key))
        return "cmd=get without a key of 1 to " FM_RUN_WIRE_KEY_MAX " of [A-Za-z0-9_.-]";
    g->rank = (int)rank;
    g->count = (int)count;
    g->key = key;
    return NULL;
}

const char *fm_run_parse_vals(const fm_kvline *l, const struct fm_run_get *asked, int *n,
                              size_t *bytes)
{
    long rank, count, len;
    const char *cmd = fm_kvline_get(l, "cmd"), *key = fm_kvline_get(l, "key");
    if (!cmd || strcmp(cmd, "vals"))
        return "not a cmd=vals";
    if (fm_run_wire_uint(fm_kvline_get(l, "rank"), 999999999L, &rank) || rank != asked->rank ||
        !key || strcmp(key, asked->key))
        return "cmd=vals for another rank or key than asked";
    if (fm_run_wire_uint(fm_kvline_get(l, "count"), asked->count, &count) || count < 1)
        return "cmd=vals with a count from none to more than asked";
    if (fm_run_wire_uint(fm_kvline_get(l, "bytes"), FM_RUN_VALS_MAX, &len))
        return "cmd=vals without a byte count up to FM_RUN_VALS_MAX";
    *n = (int)count;
    *bytes = (size_t)len;
    return NULL;
}

static int fm_run_wire_fit(int n, size_t len)
{
    return n < 0 || (size_t)n >= len ? -1 : n;
}

int fm_run_fmt_put(char *buf, size_t len, const char *key, size_t bytes)
{
    return fm_run_wire_fit(snprintf(buf, len, "cmd=put key=%s bytes=%zu\n", key, bytes), len);
}

int fm_run_fmt_get(char *buf, size_t len, const struct fm_run_get *g)
{
    return fm_run_wire_fit(
        snprintf(buf, len, "cmd=get rank=%d key=%s count=%d\n", g->rank, g->key, g->count), len);
}

int fm_run_fmt_vals(char *buf, size_t len, const struct fm_run_get *g, int n, size_t bytes)
{
    return fm_run_wire_fit(snprintf(buf, len, "cmd=vals rank=%d key=%s count=%d bytes=%zu\n",
                                    g->rank, g->key, n, bytes),
                           len);
}

int fm_run_fmt_record(char *buf, const struct fm_run_val *v)
{
    if (!v->data) {
        memcpy(buf, "-\n", 2);
        return 2;
    }
    return snprintf(buf, FM_RUN_RECORD_MAX, "%zu\n", v->len);
}

const char *fm_run_split_vals(const char *data, size_t bytes, int n, struct fm_run_val *vals)
{
    const char *p = data, *end = data + bytes;
    for (int i = 0; i < n; i++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p) < 10 ? (size_t)(end - p) : 10);
        long len;
        if (!nl)
            return "a record without its length";
        if (nl - p == 1 && *p == '-') {
            vals[i].data = NULL;
            vals[i].len = 0;
            p = nl + 1;
            continue;
        }
        if (fm_run_wire_digits(p, (size_t)(nl - p), FM_RUN_VALUE_MAX, &len))
            return "a record length that is not a number up to 65536";
        p = nl + 1;
        if ((size_t)(end - p) < (size_t)len)
            return "a record longer than the bytes left";
        vals[i].data = p;
        vals[i].len = (size_t)len;
        p += len;
    }
    return p == end ? NULL : "more bytes than its records";
}
