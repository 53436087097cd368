/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the stream tests; see common.h. */
#include "common.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int st_failures;
int st_rank = -1;

void st_fill(unsigned char *buf, size_t len, int s, int d, int m, size_t off)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = st_pat(s, d, m, off + i);
}

size_t st_mismatch(const unsigned char *buf, size_t len, int s, int d, int m, size_t off)
{
    for (size_t i = 0; i < len; i++)
        if (buf[i] != st_pat(s, d, m, off + i))
            return off + i;
    return (size_t)-1;
}

size_t st_odd_size(unsigned i)
{
    static const size_t sizes[] = {1, 3, 7, 1000, 4093, 5, 17, 65, 129, 8191, 2, 33, 16411};
    return sizes[i % (sizeof sizes / sizeof sizes[0])];
}

/* A decimal number with an optional K, M or G suffix (as the FM_* size variables). */
static size_t with_suffix(const char *s, char **end)
{
    size_t v = strtoull(s, end, 10);
    int shift = 0;
    if (**end == 'K' || **end == 'k')
        shift = 10;
    else if (**end == 'M' || **end == 'm')
        shift = 20;
    else if (**end == 'G' || **end == 'g')
        shift = 30;
    if (shift)
        (*end)++;
    return v << shift;
}

size_t st_env_size(const char *name, size_t dflt)
{
    const char *e = getenv(name);
    if (!e || !*e)
        return dflt;
    char *end;
    return with_suffix(e, &end);
}

/* A number with an optional K, M, G or P suffix; advances *p. */
static size_t parse_number(const char **p, int *ok)
{
    const char *s = *p;
    if (*s == 'P') {
        *p = s + 1;
        return st_packet_size();
    }
    if (!isdigit((unsigned char)*s)) {
        *ok = 0;
        return 0;
    }
    char *end;
    size_t v = with_suffix(s, &end);
    if (*end == 'P')
        v *= st_packet_size(), end++;
    *p = end;
    return v;
}

size_t st_parse_size(const char *tok, int *ok)
{
    *ok = 1;
    const char *p = tok;
    size_t v = parse_number(&p, ok);
    while (*ok && (*p == '+' || *p == '-')) {
        char op = *p++;
        size_t t = parse_number(&p, ok);
        v = op == '+' ? v + t : v - t;
    }
    if (*p)
        *ok = 0;
    return v;
}

size_t st_packet_size(void)
{
    return st_env_size("FM_PACKET_SIZE", 64 * 1024); /* defaults: runtime/util/config_table.h */
}

size_t st_zcopy_min(void)
{
    return st_env_size("FM_ZCOPY", 32 * 1024);
}

int st_is_zcopy(size_t len)
{
    size_t min = st_zcopy_min();
    return min && len >= min;
}

void st_check_zcopy(fm_context *ctx, uint64_t want_in, uint64_t want_out, int exact)
{
    fm_stats st;
    if (fm_get_stats(ctx, &st) != FM_OK) {
        st_fail("fm_get_stats");
        return;
    }
    printf("rank %d: zero-copy pieces: %llu in (want %s%llu), %llu out (want %s%llu)\n", st_rank,
           (unsigned long long)st.zcopy_received,
           exact || !want_in ? "" : ">= ", (unsigned long long)want_in,
           (unsigned long long)st.zcopy_sent,
           exact || !want_out ? "" : ">= ", (unsigned long long)want_out);
    int bad_in = exact || !want_in ? st.zcopy_received != want_in : st.zcopy_received < want_in;
    int bad_out = exact || !want_out ? st.zcopy_sent != want_out : st.zcopy_sent < want_out;
    if (bad_in || bad_out)
        st_fail("zero-copy pieces: %llu received, %llu sent; want %llu and %llu (FM_ZCOPY %zu)",
                (unsigned long long)st.zcopy_received, (unsigned long long)st.zcopy_sent,
                (unsigned long long)want_in, (unsigned long long)want_out, st_zcopy_min());
}

int st_send_range(fm_stream *s, int me, int d, int m, size_t off, size_t end, int odd)
{
    size_t cap = odd ? 16411 : (end > off ? end - off : 1);
    unsigned char *buf = malloc(cap);
    if (!buf)
        return FM_ERR_NOMEM;
    int rc = FM_OK;
    for (size_t i = 0; off < end && rc == FM_OK; i++) {
        size_t n = odd ? st_odd_size((unsigned)i) : end - off;
        if (n > end - off)
            n = end - off;
        st_fill(buf, n, me, d, m, off);
        rc = fm_send_piece(s, buf, n);
        off += n;
    }
    free(buf);
    return rc;
}

int st_send_body(fm_stream *s, int me, int d, int m, size_t len, int odd)
{
    return st_send_range(s, me, d, m, 0, len, odd);
}

void st_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "rank %d: FAIL: ", st_rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    st_failures++;
}

fm_context *st_init(void)
{
    fm_context *ctx;
    int rc = fm_init(&ctx);
    if (rc) {
        fprintf(stderr, "FAIL: fm_init: %s\n", fm_strerror(rc));
        exit(1);
    }
    st_rank = fm_rank(ctx);
    return ctx;
}

int st_finish(fm_context *ctx, const char *what)
{
    fm_stats st;
    if (fm_get_stats(ctx, &st) == FM_OK && st.dropped)
        st_fail("%llu packets dropped", (unsigned long long)st.dropped);
    int rc = fm_finalize(ctx);
    if (rc)
        st_fail("fm_finalize: %s", fm_strerror(rc));
    if (st_failures)
        printf("rank %d: FAIL %s (%d failures)\n", st_rank, what, st_failures);
    else
        printf("rank %d: PASS %s\n", st_rank, what);
    fflush(stdout);
    return st_failures ? 1 : 0;
}

/* The word's file: named by the job's key, so two jobs never share one. */
static void go_path(fm_context *ctx, const char *name, char *path, size_t len)
{
    const char *dir = getenv("TMPDIR");
    snprintf(path, len, "%s/fm-test-%s-%016llx", dir && *dir ? dir : "/tmp", name,
             (unsigned long long)fm_job_key(ctx));
}

void st_go_say(fm_context *ctx, const char *name)
{
    char path[512];
    go_path(ctx, name, path, sizeof path);
    FILE *f = fopen(path, "w");
    if (!f || fclose(f) != 0)
        st_fail("cannot create %s", path);
}

int st_go_wait(fm_context *ctx, const char *name, int secs)
{
    char path[512];
    go_path(ctx, name, path, sizeof path);
    for (int i = 0; i < 20 * secs && access(path, F_OK) != 0; i++)
        usleep(50 * 1000);
    if (unlink(path) == 0)
        return 0;
    st_fail("no word \"%s\" from the other rank in %d s (%s)", name, secs, path);
    return -1;
}

int st_go_seen(fm_context *ctx, const char *name)
{
    char path[512];
    go_path(ctx, name, path, sizeof path);
    return unlink(path) == 0;
}
