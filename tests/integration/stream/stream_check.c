/* SPDX-License-Identifier: BSD-3-Clause */
/* stream_check: every rank streams a set of messages to its peers and checks every byte.
 *
 *   fastmsg-run -n 4 stream_check [--sizes 0,1,P-1,P,P+1,1M+7]
 *       [--modes deliver,chunks,mixed,full] [--pieces whole,odd,mix] [--mix 7,100000,3,40000]
 *       [--reps K] [--to all|zero|hub] [--self] [--batch G] [--expect-zcopy] [--expect-bytes]
 *
 * The messages to each destination are the cross product reps x modes x pieces x sizes
 * (index m in that order). Sizes may name P, the packet size (FM_PACKET_SIZE). The receive
 * mode picks the receiver's handler:
 *   deliver  fm_stream_deliver of the whole message;
 *   chunks   fm_receive in odd chunk sizes, FM_CONTINUE between packets, state kept with
 *            fm_stream_set_user; checks FM_ERR_UNDERFLOW once everything was read;
 *   mixed    fm_receive of a 5-byte header, then fm_stream_deliver of the rest;
 *   full     fm_receive of everything not read yet in one call (a buffer of the declared
 *            length), which must return exactly fm_stream_available() bytes.
 * Pieces: whole = one fm_send_piece; odd = pieces of 1, 3, 7, 1000, 4093, ... bytes;
 * mix = the --mix sizes in turn (default 7,100000,3,40000: small pieces in packets and large
 * ones zero-copy, FM_ZCOPY, interleaved in one message).
 * --to zero: every rank but 0 sends to rank 0 only; hub: that, and rank 0 sends to every
 * other rank too. --self: also send to oneself.
 * --batch G: G messages to each destination are open at once (all destinations at once
 * too), their pieces written in turn.
 * --expect-zcopy: each rank checks fm_stats' zcopy_received / zcopy_sent against the pieces
 * of at least FM_ZCOPY bytes it received / sent (0 when FM_ZCOPY=0), so the test fails if
 * the zero-copy path silently stops (or starts) being used (a piece read with fm_receive
 * counts only when it fits FM_ZCOPY_BOUNCE).
 * --expect-bytes: each rank checks fm_stats' bytes_sent / bytes_received ("payload bytes",
 * zero-copy pieces included) against the payload it sent / received, the barrier's 8-byte
 * messages included. */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MODE_DELIVER, MODE_CHUNKS, MODE_MIXED, MODE_FULL, NMODES };
static const char *mode_names[NMODES] = {"deliver", "chunks", "mixed", "full"};
enum { PIECES_WHOLE, PIECES_ODD, PIECES_MIX, NPIECES };
static const char *const piece_names[NPIECES] = {"whole", "odd", "mix"};
enum { TO_ALL, TO_ZERO, TO_HUB };

#define MAX_SIZES 32
#define HDR       5
#define ODD_MAX   16411 /* the largest st_odd_size */

typedef struct plan {
    size_t sizes[MAX_SIZES];
    int nsizes;
    int modes[NMODES], nmodes;
    int pieces[NPIECES], npieces;
    size_t mix[MAX_SIZES];
    int nmix;
    int reps, to, self, batch, expect_zcopy, expect_bytes;
    int count; /* messages to each destination */
} plan;

typedef struct msg_spec {
    size_t len;
    int mode, pieces;
} msg_spec;

static plan P;
static msg_spec *specs;
static fm_context *ctx;
static int me, nranks;
static char *seen;  /* [sender * count + m] */
static int arrived; /* messages fully checked (or failed) */
static size_t bytes_in;

/* ---- the plan ---- */

static msg_spec spec_of(int m)
{
    int ns = P.nsizes, np = P.npieces, nm = P.nmodes;
    return (msg_spec){.len = P.sizes[m % ns],
                      .pieces = P.pieces[(m / ns) % np],
                      .mode = P.modes[(m / (ns * np)) % nm]};
}

/* Size of piece i of a message of len bytes of which off are written already. */
static size_t piece_len(const msg_spec *sp, unsigned i, size_t off)
{
    size_t n = sp->pieces == PIECES_ODD   ? st_odd_size(i)
               : sp->pieces == PIECES_MIX ? P.mix[i % (unsigned)P.nmix]
                                          : sp->len;
    return n < sp->len - off ? n : sp->len - off;
}

/* The largest piece of a message: the sender's buffer size. */
static size_t piece_max(const msg_spec *sp)
{
    size_t n = sp->pieces == PIECES_ODD ? ODD_MAX : sp->len;
    if (sp->pieces == PIECES_MIX) {
        n = 0;
        for (int k = 0; k < P.nmix; k++)
            n = P.mix[k] > n ? P.mix[k] : n;
    }
    return n < sp->len ? n : sp->len;
}

/* Pieces of message m that go zero-copy (sent outside handlers, >= FM_ZCOPY bytes). */
static uint64_t zcopy_pieces(int m)
{
    uint64_t k = 0;
    unsigned i = 0;
    /* A handler that reads with fm_receive takes a piece through a bounce buffer, only when
     * it fits FM_ZCOPY_BOUNCE; a larger piece is declined and comes through packets. */
    size_t bounce = st_env_size("FM_ZCOPY_BOUNCE", (size_t)4 << 20);
    for (size_t off = 0; off < specs[m].len; i++) {
        size_t n = piece_len(&specs[m], i, off);
        k += st_is_zcopy(n) && (specs[m].mode == 0 || n <= bounce);
        off += n;
    }
    return k;
}

static int sends_to(int s, int d)
{
    if (P.to == TO_ZERO)
        return d == 0 && s != 0;
    if (P.to == TO_HUB)
        return (d == 0) != (s == 0);
    return s != d || P.self;
}

static int expected_total(void)
{
    int senders = 0;
    for (int s = 0; s < nranks; s++)
        senders += sends_to(s, me);
    return senders * P.count;
}

/* ---- receiving ---- */

/* Which message this is: byte 0 names it; zero-length ones are matched in index order. */
static int identify(int s, int mode, size_t len, int byte0)
{
    for (int m = 0; m < P.count; m++) {
        if (seen[s * P.count + m] || specs[m].mode != mode || specs[m].len != len)
            continue;
        if (len == 0 || m % 256 == byte0) {
            seen[s * P.count + m] = 1;
            return m;
        }
    }
    st_fail("%s message of %zu bytes from rank %d (byte 0 = %d) matches no message not yet "
            "received",
            mode_names[mode], len, s, byte0);
    return -1;
}

static void check_bytes(const unsigned char *buf, size_t len, int s, int m, size_t off)
{
    size_t bad = st_mismatch(buf, len, s, me, m, off);
    if (bad != (size_t)-1)
        st_fail("message %d (%zu bytes, %s) from rank %d: wrong byte at offset %zu: %u, want %u", m,
                specs[m].len, mode_names[specs[m].mode], s, bad, buf[bad - off],
                st_pat(s, me, m, bad));
}

static void message_over(size_t len)
{
    arrived++;
    bytes_in += len;
}

/* deliver: the whole message in one buffer. */
static void delivered(void *buf, size_t len, int status, int sender, void *arg)
{
    if (status)
        st_fail("a delivered message from rank %d: %s", sender, fm_strerror(status));
    (void)arg;
    int m = identify(sender, MODE_DELIVER, len, len ? ((unsigned char *)buf)[0] : -1);
    if (m >= 0)
        check_bytes(buf, len, sender, m, 0);
    free(buf);
    message_over(len);
}

static int on_deliver(fm_stream *s, int sender, void *arg)
{
    (void)sender;
    (void)arg;
    size_t cap = fm_stream_length(s);
    void *buf = malloc(cap ? cap : 1);
    int rc = fm_stream_deliver(s, buf, cap, delivered, NULL);
    if (rc) {
        st_fail("fm_stream_deliver: %s", fm_strerror(rc));
        free(buf);
    }
    return FM_CONTINUE;
}

/* chunks: odd-sized fm_receive calls, re-entered per packet. */
typedef struct chunk_state {
    int m;
    size_t off, len;
    unsigned i;
} chunk_state;

/* Read everything that has arrived; 0, or -1 when the message cannot be identified. */
static int read_chunks(fm_stream *s, chunk_state *c, int sender)
{
    unsigned char buf[16411];
    for (;;) {
        ssize_t got = fm_receive(s, buf, st_odd_size(c->i++));
        if (got == 0 || got == FM_ERR_UNDERFLOW)
            return 0;
        if (got < 0) {
            st_fail("fm_receive: %s", fm_strerror((int)got));
            return -1;
        }
        if (c->m < 0 && (c->m = identify(sender, MODE_CHUNKS, c->len, buf[0])) < 0)
            return -1;
        check_bytes(buf, (size_t)got, sender, c->m, c->off);
        c->off += (size_t)got;
    }
}

static void chunks_over(fm_stream *s, chunk_state *c, int sender)
{
    unsigned char b;
    if (c->m < 0)
        c->m = identify(sender, MODE_CHUNKS, 0, -1);
    if (c->m >= 0 && (c->off != specs[c->m].len || fm_stream_length(s) != c->off))
        st_fail("message %d from rank %d: read %zu bytes, length %zu, want %zu", c->m, sender,
                c->off, fm_stream_length(s), specs[c->m].len);
    ssize_t r = fm_receive(s, &b, 1);
    if (r != FM_ERR_UNDERFLOW)
        st_fail("fm_receive after the whole message: %zd, want FM_ERR_UNDERFLOW", r);
    message_over(c->off);
}

static int on_chunks(fm_stream *s, int sender, void *arg)
{
    (void)arg;
    chunk_state *c = fm_stream_user(s);
    if (!c) {
        c = calloc(1, sizeof *c);
        c->m = -1;
        c->len = fm_stream_length(s);
        fm_stream_set_user(s, c);
    }
    int bad = read_chunks(s, c, sender);
    if (!bad && (!fm_stream_complete(s) || fm_stream_available(s)))
        return FM_CONTINUE;
    if (bad)
        message_over(0);
    else
        chunks_over(s, c, sender);
    free(c);
    fm_stream_set_user(s, NULL);
    return FM_DONE;
}

/* mixed: a header by fm_receive, the rest by fm_stream_deliver. */
typedef struct mixed_state {
    int m, sender;
    size_t len, hlen, got;
    unsigned char hdr[HDR];
    unsigned char *rest;
} mixed_state;

static void mixed_done(void *buf, size_t len, int status, int sender, void *arg)
{
    if (status)
        st_fail("a delivered message from rank %d: %s", sender, fm_strerror(status));
    mixed_state *x = arg;
    if (len != x->len - x->hlen)
        st_fail("message %d from rank %d: delivered %zu bytes after the header, want %zu", x->m,
                sender, len, x->len - x->hlen);
    else
        check_bytes(buf, len, sender, x->m, x->hlen);
    message_over(x->hlen + len);
    free(x->rest);
    free(x);
}

static int on_mixed(fm_stream *s, int sender, void *arg)
{
    (void)arg;
    mixed_state *x = fm_stream_user(s);
    if (!x) {
        x = calloc(1, sizeof *x);
        x->len = fm_stream_length(s);
        x->hlen = x->len < HDR ? x->len : HDR;
        x->sender = sender;
        fm_stream_set_user(s, x);
    }
    ssize_t r = fm_receive(s, x->hdr + x->got, x->hlen - x->got);
    if (r > 0)
        x->got += (size_t)r;
    if (x->got < x->hlen)
        return FM_CONTINUE;
    if ((x->m = identify(sender, MODE_MIXED, x->len, x->hlen ? x->hdr[0] : -1)) < 0) {
        message_over(0);
        free(x);
        return FM_DONE;
    }
    check_bytes(x->hdr, x->hlen, sender, x->m, 0);
    x->rest = malloc(x->len - x->hlen + 1);
    int rc = fm_stream_deliver(s, x->rest, x->len - x->hlen, mixed_done, x);
    if (rc)
        st_fail("fm_stream_deliver after a header: %s", fm_strerror(rc));
    return FM_CONTINUE;
}

/* full: one fm_receive of everything not read yet, into a buffer of the declared length. */
typedef struct full_state {
    size_t len, off;
    unsigned char *buf;
} full_state;

static int on_full(fm_stream *s, int sender, void *arg)
{
    (void)arg;
    full_state *x = fm_stream_user(s);
    if (!x) {
        x = calloc(1, sizeof *x);
        x->len = fm_stream_length(s);
        x->buf = malloc(x->len + 1);
        fm_stream_set_user(s, x);
    }
    size_t avail = fm_stream_available(s);
    int bad = 0;
    if (x->off + avail > x->len) {
        st_fail("rank %d's message: %zu bytes read, %zu available, more than declared %zu", sender,
                x->off, avail, x->len);
        bad = 1;
    } else if (x->off < x->len) {
        ssize_t got = fm_receive(s, x->buf + x->off, x->len - x->off);
        if (got != (ssize_t)avail) {
            st_fail("fm_receive of all %zu available bytes (at offset %zu of %zu) from rank %d "
                    "returned %zd",
                    avail, x->off, x->len, sender, got);
            bad = 1;
        }
        if (got > 0)
            x->off += (size_t)got;
        if (fm_stream_available(s)) {
            st_fail("fm_stream_available is %zu after reading everything", fm_stream_available(s));
            bad = 1;
        }
    }
    if (!fm_stream_complete(s) && !bad)
        return FM_CONTINUE;
    size_t len = fm_stream_length(s);
    int m = identify(sender, MODE_FULL, len, len ? x->buf[0] : -1);
    if (m >= 0 && x->off != len)
        st_fail("message %d from rank %d: read %zu bytes, length %zu", m, sender, x->off, len);
    else if (m >= 0)
        check_bytes(x->buf, len, sender, m, 0);
    message_over(x->off);
    free(x->buf);
    free(x);
    fm_stream_set_user(s, NULL);
    return FM_DONE;
}

/* ---- sending ---- */

typedef struct out_msg {
    fm_stream *s;
    int d, m;
    size_t off;
    unsigned piece;
    unsigned char *buf;
} out_msg;

static void fatal(const char *what, int rc)
{
    char line[256];
    snprintf(line, sizeof line, "FAIL: %s: %s", what, fm_strerror(rc));
    fm_abort(ctx, 1, line);
}

static void open_msg(out_msg *o, int d, int m)
{
    msg_spec sp = specs[m];
    *o = (out_msg){.d = d, .m = m};
    int rc = fm_begin_message(ctx, d, sp.len, sp.mode, &o->s);
    if (rc)
        fatal("fm_begin_message", rc);
    o->buf = malloc(piece_max(&sp) + 1);
}

/* Write the next piece; 1 once the message is ended. */
static int step_msg(out_msg *o)
{
    msg_spec sp = specs[o->m];
    size_t n = piece_len(&sp, o->piece++, o->off);
    st_fill(o->buf, n, me, o->d, o->m, o->off);
    int rc = n ? fm_send_piece(o->s, o->buf, n) : FM_OK;
    if (rc)
        fatal("fm_send_piece", rc);
    o->off += n;
    if (o->off < sp.len)
        return 0;
    if ((rc = fm_end_message(o->s)))
        fatal("fm_end_message", rc);
    free(o->buf);
    o->buf = NULL;
    return 1;
}

/* Messages m0..m1-1 to every destination, all open at once, pieces in turn. */
static void send_batch(const int *dests, int nd, int m0, int m1)
{
    int n = nd * (m1 - m0), open = n;
    out_msg *o = calloc((size_t)n, sizeof *o);
    for (int i = 0; i < n; i++)
        open_msg(&o[i], dests[i % nd], m0 + i / nd);
    while (open > 0)
        for (int i = 0; i < n; i++)
            if (o[i].s && step_msg(&o[i])) {
                o[i].s = NULL;
                open--;
            }
    free(o);
}

static void send_all(void)
{
    int *dests = calloc((size_t)nranks, sizeof *dests), nd = 0;
    for (int k = 1; k <= nranks; k++) {
        int d = (me + k) % nranks; /* spread the load: start with the next rank */
        if (sends_to(me, d))
            dests[nd++] = d;
    }
    for (int m0 = 0; nd && m0 < P.count; m0 += P.batch)
        send_batch(dests, nd, m0, m0 + P.batch < P.count ? m0 + P.batch : P.count);
    free(dests);
}

/* fm_stats' payload byte counts against what was sent and received here. */
static void check_bytes_counted(void)
{
    uint64_t per = 0, barrier = 0;
    int dests = 0;
    for (int m = 0; m < P.count; m++)
        per += specs[m].len;
    for (int r = 0; r < nranks; r++)
        dests += sends_to(me, r);
    for (int dist = 1; dist < nranks; dist <<= 1)
        barrier += 8; /* one fm_barrier: a message out and one in per round */
    /* In: up to a barrier's worth more, from ranks already in fm_finalize's barrier. */
    uint64_t want_out = per * (uint64_t)dests + barrier, want_in = bytes_in + barrier;
    fm_stats st;
    fm_get_stats(ctx, &st);
    printf("rank %d: payload bytes: %llu sent (want %llu), %llu received (want %llu + 0..%llu)\n",
           me, (unsigned long long)st.bytes_sent, (unsigned long long)want_out,
           (unsigned long long)st.bytes_received, (unsigned long long)want_in,
           (unsigned long long)barrier);
    if (st.bytes_sent != want_out || st.bytes_received < want_in ||
        st.bytes_received > want_in + barrier)
        st_fail("fm_stats counts %llu payload bytes sent and %llu received, want %llu and %llu "
                "(%llu zero-copy pieces out, %llu in)",
                (unsigned long long)st.bytes_sent, (unsigned long long)st.bytes_received,
                (unsigned long long)want_out, (unsigned long long)want_in,
                (unsigned long long)st.zcopy_sent, (unsigned long long)st.zcopy_received);
}

/* ---- options ---- */

static int parse_list(char *arg, const char *const *names, int nnames, int *out)
{
    int n = 0;
    for (char *t = strtok(arg, ","); t; t = strtok(NULL, ",")) {
        int k = 0;
        while (k < nnames && strcmp(t, names[k]))
            k++;
        if (k == nnames)
            return -1;
        out[n++] = k;
    }
    return n;
}

/* A comma-separated list of sizes into out (at most MAX_SIZES); the count, or -1. */
static int parse_size_list(char *arg, size_t *out)
{
    int n = 0;
    for (char *t = strtok(arg, ","); t; t = strtok(NULL, ",")) {
        int ok;
        if (n == MAX_SIZES || (out[n++] = st_parse_size(t, &ok), !ok))
            return -1;
    }
    return n ? n : -1;
}

static int parse_sizes(char *arg)
{
    return (P.nsizes = parse_size_list(arg, P.sizes)) > 0 ? 0 : -1;
}

static int parse_mix(char *arg)
{
    if ((P.nmix = parse_size_list(arg, P.mix)) <= 0)
        return -1;
    for (int k = 0; k < P.nmix; k++)
        if (P.mix[k] == 0)
            return -1;
    return 0;
}

static int parse_args(int argc, char **argv)
{
    char sizes[] = "0,1,P-1,P,P+1,1M+7", modes[] = "deliver,chunks,mixed", pieces[] = "whole,odd";
    char mix[] = "7,100000,3,40000";
    P = (plan){.reps = 1, .batch = 1};
    parse_sizes(sizes);
    parse_mix(mix);
    P.nmodes = parse_list(modes, mode_names, NMODES, P.modes);
    P.npieces = parse_list(pieces, piece_names, NPIECES, P.pieces);
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0, flag = 1;
        if (!strcmp(o, "--self"))
            P.self = 1;
        else if (!strcmp(o, "--expect-zcopy"))
            P.expect_zcopy = 1;
        else if (!strcmp(o, "--expect-bytes"))
            P.expect_bytes = 1;
        else if ((flag = 0), !v)
            bad = 1;
        else if (!strcmp(o, "--sizes"))
            bad = parse_sizes(v) < 0;
        else if (!strcmp(o, "--modes"))
            bad = (P.nmodes = parse_list(v, mode_names, NMODES, P.modes)) <= 0;
        else if (!strcmp(o, "--pieces"))
            bad = (P.npieces = parse_list(v, piece_names, NPIECES, P.pieces)) <= 0;
        else if (!strcmp(o, "--mix"))
            bad = parse_mix(v) < 0;
        else if (!strcmp(o, "--reps"))
            bad = (P.reps = atoi(v)) <= 0;
        else if (!strcmp(o, "--batch"))
            bad = (P.batch = atoi(v)) <= 0;
        else if (!strcmp(o, "--to"))
            bad = (P.to = !strcmp(v, "zero")  ? TO_ZERO
                          : !strcmp(v, "hub") ? TO_HUB
                                              : TO_ALL) == TO_ALL &&
                  strcmp(v, "all");
        else
            bad = 1;
        if (bad) {
            fprintf(stderr, "stream_check: bad option %s %s\n", o, v ? v : "");
            return -1;
        }
        i += !flag;
    }
    P.count = P.reps * P.nmodes * P.npieces * P.nsizes;
    return 0;
}

int main(int argc, char **argv)
{
    if (parse_args(argc, argv))
        return 2;
    ctx = st_init();
    me = fm_rank(ctx);
    nranks = fm_size(ctx);
    specs = calloc((size_t)P.count, sizeof *specs);
    for (int m = 0; m < P.count; m++)
        specs[m] = spec_of(m);
    seen = calloc((size_t)nranks * (size_t)P.count, 1);
    fm_handler_fn fns[NMODES] = {on_deliver, on_chunks, on_mixed, on_full};
    for (int k = 0; k < NMODES; k++)
        if (fm_add_handler(ctx, fns[k], NULL) != k)
            fatal("fm_add_handler", FM_ERR_HANDLER);
    int rc = fm_barrier(ctx);
    if (rc)
        fatal("fm_barrier", rc);
    send_all();
    int want = expected_total();
    while (arrived < want) {
        long r = fm_wait(ctx, -1);
        if (r < 0) {
            st_fail("waiting for messages (%d of %d in): %s", arrived, want, fm_strerror((int)r));
            break;
        }
    }
    if (P.expect_zcopy) {
        /* (The barrier's messages never go zero-copy.) */
        uint64_t per = 0;
        int senders = 0, dests = 0;
        for (int m = 0; m < P.count; m++)
            per += zcopy_pieces(m);
        for (int r = 0; r < nranks; r++) {
            senders += sends_to(r, me);
            dests += sends_to(me, r);
        }
        st_check_zcopy(ctx, per * (uint64_t)senders, per * (uint64_t)dests,
                       st_zcopy_min() == 0 || st_zcopy_min() > 8);
    }
    if (P.expect_bytes)
        check_bytes_counted();
    char what[128];
    snprintf(what, sizeof what, "stream_check: %d messages, %zu bytes in, packet %zu", arrived,
             bytes_in, st_packet_size());
    int status = st_finish(ctx, what);
    free(specs);
    free(seen);
    return status;
}
