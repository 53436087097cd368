/* SPDX-License-Identifier: BSD-3-Clause */
/* overflow: the declared length is an upper bound that the sender may not exceed.
 *
 *   fastmsg-run -n 2 overflow CASE...
 *
 * Both ranks send each other one message per case (index m = the case's position), then a
 * plain message that must arrive intact. A piece that would pass the declared length must
 * fail with FM_ERR_OVERFLOW and send nothing (its bytes are 0xEE, so a leak shows). The
 * receiver reads in odd chunks, checks every byte and the final length, and checks that
 * fm_receive returns FM_ERR_UNDERFLOW once the whole message was read (and 0, not
 * FM_ERR_UNDERFLOW, while more may come).
 *   sub       declared 100: 60, 41 (overflow), 40, 1 (overflow)
 *   multi     declared 2P+5: P+3, P+3 (overflow), P+2, 1 (overflow), 0
 *   zero      declared 0: 1 (overflow), 0
 *   exact     declared P: P-10, 11 (overflow), 10, 1 (overflow); the last piece fills a packet
 *   exact2    declared 2P: 2P, 1 (overflow)
 *   short     declared 1000, 300 written: the receiver sees 300 bytes
 *   short-pkt declared 2P, P written: the last packet is empty
 *   cap       3P+1 bytes delivered into a 2P-byte buffer: the first 2P arrive
 *   capfit    2P bytes delivered into a 2P-byte buffer: all of them
 * Zero-copy (pieces of at least FM_ZCOPY bytes, default 32K):
 *   multizc   declared 100005: 5, 100001 (overflow), 100000, 1 (overflow)
 *   exactzc   declared 100000: 100000 (the announcement is the last packet), 1 (overflow)
 *   capzc     one 100000-byte piece delivered into a 40000-byte buffer
 *   capzc2    3, 100000, 7 into a 50000-byte buffer (the piece does not fit what is left)
 *   capzc3    3, 100000, 7 into a 100003-byte buffer (the piece fits exactly; 7 dropped)
 *   capzc4    3, 100000 into a 2-byte buffer
 *   capzc5    3, 100000 into a 100001-byte buffer (the piece fits the buffer, not what is left)
 *   capzcfit  3, 100000 into a 100003-byte buffer (exactly)
 * Delivered ("cap") cases get the first min(written, cap) bytes, checked, and the bytes
 * just past the cap in the buffer must be untouched; the callback's status is FM_ERR_TOO_LONG
 * exactly when the message was longer than the buffer, and fm_stats.deliver_overflow counts
 * the bytes dropped. Every rank also checks fm_stats' zero-copy counters against the pieces
 * of at least FM_ZCOPY bytes it sent and received: a piece goes zero-copy when read in chunks
 * (its bounce buffer is within FM_ZCOPY_BOUNCE) or when it fits what is left of the delivery
 * buffer; otherwise the receiver declines it and it comes through packets.
 */
#include "common.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_STEPS 6
#define GUARD     64
enum { H_READ, H_CAP }; /* H_CAP + m: case m's capped delivery */

typedef struct step {
    const char *len; /* piece size as st_parse_size reads it; NULL ends the list */
    int want;        /* FM_OK or FM_ERR_OVERFLOW */
} step;

typedef struct ocase {
    const char *name;
    const char *declared;
    step steps[MAX_STEPS];
    const char *cap; /* delivered into a buffer of this many bytes; NULL: read in chunks */
    size_t written, declared_len, cap_len; /* filled in at start */
} ocase;

#define OV FM_ERR_OVERFLOW
static ocase all_cases[] = {
    {"sub", "100", {{"60", 0}, {"41", OV}, {"40", 0}, {"1", OV}}, NULL, 0, 0, 0},
    {"multi", "2P+5", {{"P+3", 0}, {"P+3", OV}, {"P+2", 0}, {"1", OV}, {"0", 0}}, NULL, 0, 0, 0},
    {"zero", "0", {{"1", OV}, {"0", 0}}, NULL, 0, 0, 0},
    {"exact", "P", {{"P-10", 0}, {"11", OV}, {"10", 0}, {"1", OV}}, NULL, 0, 0, 0},
    {"exact2", "2P", {{"2P", 0}, {"1", OV}}, NULL, 0, 0, 0},
    {"short", "1000", {{"300", 0}}, NULL, 0, 0, 0},
    {"short-pkt", "2P", {{"P", 0}}, NULL, 0, 0, 0},
    {"cap", "3P+1", {{"3P+1", 0}}, "2P", 0, 0, 0},
    {"capfit", "2P", {{"2P", 0}}, "2P", 0, 0, 0},
    {"multizc", "100005", {{"5", 0}, {"100001", OV}, {"100000", 0}, {"1", OV}}, NULL, 0, 0, 0},
    {"exactzc", "100000", {{"100000", 0}, {"1", OV}}, NULL, 0, 0, 0},
    {"capzc", "100000", {{"100000", 0}}, "40000", 0, 0, 0},
    {"capzc2", "100010", {{"3", 0}, {"100000", 0}, {"7", 0}}, "50000", 0, 0, 0},
    {"capzc3", "100010", {{"3", 0}, {"100000", 0}, {"7", 0}}, "100003", 0, 0, 0},
    {"capzc4", "100003", {{"3", 0}, {"100000", 0}}, "2", 0, 0, 0},
    {"capzc5", "100003", {{"3", 0}, {"100000", 0}}, "100001", 0, 0, 0},
    {"capzcfit", "100003", {{"3", 0}, {"100000", 0}}, "100003", 0, 0, 0},
    {"after", "2P+7", {{"2P+7", 0}}, NULL, 0, 0, 0},
};
#define NCASES (int)(sizeof all_cases / sizeof all_cases[0])

static ocase *cases[NCASES + 1];
static int ncases;
static fm_context *ctx;
static int me, peer, done_count;

static size_t step_len(const char *tok)
{
    int ok;
    return st_parse_size(tok, &ok);
}

/* ---- sending ---- */

static void send_case(int m)
{
    ocase *c = cases[m];
    fm_stream *s;
    int rc = fm_begin_message(ctx, peer, c->declared_len, c->cap ? H_CAP + m : H_READ, &s);
    if (rc)
        fm_abort(ctx, 1, "FAIL: fm_begin_message");
    size_t off = 0;
    for (const step *t = c->steps; t->len; t++) {
        size_t n = step_len(t->len);
        unsigned char *buf = malloc(n + 1);
        if (t->want == FM_OK)
            st_fill(buf, n, me, peer, m, off);
        else
            memset(buf, 0xEE, n + 1);
        rc = fm_send_piece(s, buf, n);
        free(buf);
        if (rc != t->want)
            st_fail("case %s: fm_send_piece of %zu bytes at offset %zu of %zu declared: %d (%s), "
                    "want %d (%s)",
                    c->name, n, off, c->declared_len, rc, fm_strerror(rc), t->want,
                    fm_strerror(t->want));
        if (rc == FM_OK)
            off += n;
    }
    if ((rc = fm_end_message(s)))
        st_fail("case %s: fm_end_message: %s", c->name, fm_strerror(rc));
}

/* ---- receiving ---- */

typedef struct rstate {
    int m;
    size_t off;
    unsigned i;
} rstate;

static int identify(size_t first_len, int byte0)
{
    for (int m = 0; m < ncases; m++)
        if (!cases[m]->cap && (cases[m]->written == 0 ? first_len == 0 : byte0 == m))
            return m;
    return -1;
}

/* Read what has arrived; -1 on a failure that ends the message. */
static int read_some(fm_stream *s, rstate *r, int sender)
{
    unsigned char buf[4096];
    for (;;) {
        ssize_t got = fm_receive(s, buf, st_odd_size(r->i++) % sizeof buf + 1);
        if (got == FM_ERR_UNDERFLOW && !fm_stream_complete(s)) {
            st_fail("fm_receive: FM_ERR_UNDERFLOW before the message is complete");
            return -1;
        }
        if (got == 0 || got == FM_ERR_UNDERFLOW)
            return 0;
        if (got < 0) {
            st_fail("fm_receive: %s", fm_strerror((int)got));
            return -1;
        }
        if (r->m < 0 && (r->m = identify(1, buf[0])) < 0) {
            st_fail("a message from rank %d matches no case (byte 0 = %u)", sender, buf[0]);
            return -1;
        }
        size_t bad = st_mismatch(buf, (size_t)got, sender, me, r->m, r->off);
        if (bad != (size_t)-1)
            st_fail("case %s: wrong byte at offset %zu: %u", cases[r->m]->name, bad,
                    buf[bad - r->off]);
        r->off += (size_t)got;
    }
}

static void read_over(fm_stream *s, rstate *r)
{
    unsigned char b;
    if (r->m < 0)
        r->m = identify(0, -1);
    ocase *c = r->m >= 0 ? cases[r->m] : NULL;
    if (!c)
        st_fail("an empty message matches no case");
    else if (r->off != c->written || fm_stream_length(s) != c->written)
        st_fail("case %s: read %zu bytes, fm_stream_length %zu, want %zu", c->name, r->off,
                fm_stream_length(s), c->written);
    ssize_t u = fm_receive(s, &b, 1);
    if (u != FM_ERR_UNDERFLOW)
        st_fail("case %s: fm_receive after the whole message: %zd, want FM_ERR_UNDERFLOW",
                c ? c->name : "?", u);
    done_count++;
}

static int on_read(fm_stream *s, int sender, void *arg)
{
    (void)arg;
    rstate *r = fm_stream_user(s);
    if (!r) {
        r = calloc(1, sizeof *r);
        r->m = -1;
        fm_stream_set_user(s, r);
    }
    int bad = read_some(s, r, sender);
    if (!bad && (!fm_stream_complete(s) || fm_stream_available(s)))
        return FM_CONTINUE;
    if (bad)
        done_count++;
    else
        read_over(s, r);
    free(r);
    fm_stream_set_user(s, NULL);
    return FM_DONE;
}

/* arg: the case's index m. The buffer holds cap bytes and GUARD bytes of 0x5A after them. */
static void capped(void *buf, size_t len, int status, int sender, void *arg)
{
    int m = (int)(intptr_t)arg;
    ocase *c = cases[m];
    unsigned char *b = buf;
    size_t want = c->written < c->cap_len ? c->written : c->cap_len;
    int want_status = c->written > c->cap_len ? FM_ERR_TOO_LONG : FM_OK;
    size_t bad;
    if (status != want_status)
        st_fail("case %s: delivered with status %d (%s), want %d (%s)", c->name, status,
                fm_strerror(status), want_status, fm_strerror(want_status));
    if (len != want)
        st_fail("case %s: delivered %zu bytes, want %zu", c->name, len, want);
    else if ((bad = st_mismatch(b, len, sender, me, m, 0)) != (size_t)-1)
        st_fail("case %s: wrong byte at offset %zu: %u", c->name, bad, b[bad]);
    for (size_t i = 0; i < GUARD; i++)
        if (b[c->cap_len + i] != 0x5A) {
            st_fail("case %s: byte %zu past the %zu-byte delivery buffer was overwritten", c->name,
                    i, c->cap_len);
            break;
        }
    free(buf);
    done_count++;
}

static int on_cap(fm_stream *s, int sender, void *arg)
{
    (void)sender;
    ocase *c = cases[(int)(intptr_t)arg];
    unsigned char *buf = malloc(c->cap_len + GUARD);
    memset(buf + c->cap_len, 0x5A, GUARD);
    int rc = fm_stream_deliver(s, buf, c->cap_len, capped, arg);
    if (rc) {
        st_fail("case %s: fm_stream_deliver: %s", c->name, fm_strerror(rc));
        free(buf);
        done_count++;
        return FM_DONE;
    }
    return FM_CONTINUE;
}

/* Zero-copy pieces of the cases (each sent to and from the peer): pieces that were sent,
 * and that fit what is left of the delivery buffer, if there is one. */
static uint64_t zcopy_pieces(void)
{
    uint64_t k = 0;
    for (int m = 0; m < ncases; m++) {
        size_t before = 0;
        for (const step *t = cases[m]->steps; t->len; t++) {
            size_t n = t->want == FM_OK ? step_len(t->len) : 0;
            int fits = !cases[m]->cap || before + n <= cases[m]->cap_len;
            k += n && st_is_zcopy(n) && fits;
            before += n;
        }
    }
    return k;
}

/* ---- main ---- */

static int pick_cases(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        int k = 0;
        while (k < NCASES && strcmp(argv[i], all_cases[k].name))
            k++;
        if (k == NCASES) {
            fprintf(stderr, "overflow: unknown case %s\n", argv[i]);
            return -1;
        }
        cases[ncases++] = &all_cases[k];
    }
    cases[ncases++] = &all_cases[NCASES - 1]; /* "after" */
    for (int m = 0; m < ncases; m++) {
        int ok;
        ocase *c = cases[m];
        c->declared_len = st_parse_size(c->declared, &ok);
        c->cap_len = c->cap ? st_parse_size(c->cap, &ok) : 0;
        c->written = 0;
        for (const step *t = c->steps; t->len; t++)
            c->written += t->want == FM_OK ? step_len(t->len) : 0;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (pick_cases(argc, argv))
        return 2;
    ctx = st_init();
    me = fm_rank(ctx);
    if (fm_size(ctx) != 2)
        fm_abort(ctx, 2, "overflow: run with -n 2");
    peer = 1 - me;
    int rc = fm_register_handler(ctx, H_READ, on_read, NULL);
    for (int m = 0; m < ncases && !rc; m++)
        if (cases[m]->cap)
            rc = fm_register_handler(ctx, H_CAP + m, on_cap, (void *)(intptr_t)m);
    if (rc || fm_barrier(ctx))
        fm_abort(ctx, 1, "FAIL: setup");
    for (int m = 0; m < ncases; m++)
        send_case(m);
    while (done_count < ncases) {
        long r = fm_wait(ctx, -1);
        if (r < 0) {
            st_fail("waiting (%d of %d messages in): %s", done_count, ncases, fm_strerror((int)r));
            break;
        }
    }
    uint64_t zc = zcopy_pieces(), over = 0;
    st_check_zcopy(ctx, zc, zc, st_zcopy_min() == 0 || st_zcopy_min() > 8);
    for (int m = 0; m < ncases; m++)
        if (cases[m]->cap && cases[m]->written > cases[m]->cap_len)
            over += cases[m]->written - cases[m]->cap_len;
    fm_stats st;
    if (fm_get_stats(ctx, &st) == FM_OK && st.deliver_overflow != over)
        st_fail("fm_stats.deliver_overflow is %llu, want %llu (bytes past the delivery buffers)",
                (unsigned long long)st.deliver_overflow, (unsigned long long)over);
    return st_finish(ctx, "overflow");
}
