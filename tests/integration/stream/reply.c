/* SPDX-License-Identifier: BSD-3-Clause */
/* reply: handlers that send from inside themselves.
 *
 *   fastmsg-run -n 4 reply [--reps R] [--expect-eagain] [--expect-too-long] [--split]
 *
 * Every rank sends R small requests to every other rank. The request handler answers each
 * with a reply sent from inside the handler (fm_begin_message there must not block: every
 * rank does this at once, replies are larger than the credit window, and a blocking send
 * would deadlock). When fm_begin_message returns FM_EAGAIN the reply is kept and retried
 * later, from the next request handler or from the main loop; a reply that needs more packet
 * buffers than the FM_OVERFLOW budget can ever give gets FM_ERR_TOO_LONG in a handler and is
 * sent from the main loop instead. Every byte of every request
 * and reply is checked. --expect-eagain fails the test if no reply was refused in a handler
 * (FM_EAGAIN, or FM_ERR_TOO_LONG: for runs with a small FM_OVERFLOW). --expect-too-long
 * (with FM_OVERFLOW=0, so the budget is FM_CREDITS packets per rank): in a handler, exactly
 * the replies that need more packets than that must get FM_ERR_TOO_LONG. --split: a
 * handler opens the reply and writes its first half; the main loop writes the rest and ends
 * it (a stream opened inside a handler, finished outside). */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { H_REQUEST, H_REPLY };
#define REQ_MAX 48

static fm_context *ctx;
static int me, nranks, reps, expect_eagain, expect_too_long, split;
static char *replied; /* [sender * reps + m]: replies received */
static int replies_in, answered;
static long eagains, too_longs, sent_in_handler, sent_from_main;

/* Request m is 16 + m % 29 bytes; its reply has one of five sizes. */
static size_t request_len(int m)
{
    return 16 + (size_t)(m % 29);
}

static size_t reply_len(int m)
{
    size_t p = st_packet_size();
    size_t lens[] = {1, 100, p + 1, 20 * p + 3, 50 * p + 5};
    return lens[m % 5];
}

/* ---- replies owed, oldest first ---- */

typedef struct owed {
    struct owed *next;
    int dest, m;
} owed;
static owed *owed_head, **owed_tail = &owed_head;

static void owe(int dest, int m)
{
    owed *o = malloc(sizeof *o);
    *o = (owed){NULL, dest, m};
    *owed_tail = o;
    owed_tail = &o->next;
}

/* Replies opened in a handler whose second half the main loop writes (--split). */
typedef struct half {
    struct half *next;
    fm_stream *s;
    int dest, m;
} half;
static half *halves;

static void reply_failed(int dest, int m, int rc)
{
    st_fail("sending reply %d to rank %d: %s", m, dest, fm_strerror(rc));
}

/* Write the second half of each reply opened with --split and end it. */
static void finish_halves(void)
{
    while (halves) {
        half *h = halves;
        halves = h->next; /* first: writing runs handlers, which add to the list */
        size_t len = reply_len(h->m);
        int rc = st_send_range(h->s, me, h->dest, h->m, len / 2, len, h->m % 2);
        if (rc == FM_OK)
            rc = fm_end_message(h->s);
        if (rc)
            reply_failed(h->dest, h->m, rc);
        free(h);
    }
}

/* With FM_OVERFLOW=0 a handler may hold at most FM_CREDITS send buffers per rank: whether a
 * reply of len bytes (packets of FM_PACKET_SIZE, or one small one) needs more. */
static int never_fits(size_t len)
{
    size_t p = st_packet_size();
    return len >= p && len / p + 1 > (size_t)nranks * st_env_size("FM_CREDITS", 8);
}

/* Send reply m to dest; FM_EAGAIN if it cannot start now (or, in a handler, at all). */
static int send_reply(int dest, int m, int in_handler)
{
    fm_stream *s;
    size_t len = reply_len(m);
    int rc = fm_begin_message(ctx, dest, len, H_REPLY, &s);
    if (in_handler && expect_too_long && (rc == FM_ERR_TOO_LONG) != never_fits(len))
        st_fail("a %zu-byte reply in a handler: %s (%s FM_ERR_TOO_LONG)", len, fm_strerror(rc),
                never_fits(len) ? "want" : "not");
    if (rc == FM_ERR_TOO_LONG && in_handler) {
        too_longs++; /* the main loop sends it */
        return FM_EAGAIN;
    }
    if (rc == FM_EAGAIN) {
        eagains++;
        return rc;
    }
    answered++;
    size_t end = split && in_handler ? len / 2 : len;
    if (rc == FM_OK)
        rc = st_send_range(s, me, dest, m, 0, end, m % 2);
    if (rc == FM_OK && end < len) {
        half *h = malloc(sizeof *h);
        *h = (half){halves, s, dest, m};
        halves = h;
        return FM_OK;
    }
    if (rc == FM_OK)
        rc = fm_end_message(s);
    if (rc)
        reply_failed(dest, m, rc);
    return FM_OK;
}

/* Send owed replies in order until one meets FM_EAGAIN. Each is taken off the list before
 * sending: outside handlers sending runs handlers, which pay from the same list. */
static void pay_owed(int in_handler)
{
    while (owed_head) {
        owed *o = owed_head;
        owed_head = o->next;
        if (!owed_head)
            owed_tail = &owed_head;
        if (send_reply(o->dest, o->m, in_handler) == FM_EAGAIN) {
            o->next = owed_head; /* back to the front, to keep the order */
            owed_head = o;
            if (!o->next)
                owed_tail = &o->next;
            return;
        }
        free(o);
        if (in_handler)
            sent_in_handler++;
        else
            sent_from_main++;
    }
}

/* ---- handlers ---- */

typedef struct req_state {
    size_t got;
    unsigned char buf[REQ_MAX];
} req_state;

/* With --expect-too-long, the first request handler also opens a reply that can never fit:
 * whether the real ones of that length are tried in a handler depends on when earlier replies
 * got FM_EAGAIN (then they wait for the main loop), so this one makes the check certain. */
static void probe_too_long(int sender)
{
    static int probed;
    if (!expect_too_long || probed++)
        return;
    fm_stream *s;
    int rc = fm_begin_message(ctx, sender, reply_len(4), H_REPLY, &s);
    if (rc == FM_OK) /* a stream is open that nothing will write: the job cannot end well */
        fm_abort(ctx, 1, "FAIL: a reply that never fits was accepted in a handler");
    if (rc != FM_ERR_TOO_LONG)
        st_fail("a never-fitting reply in a handler: %s, want FM_ERR_TOO_LONG", fm_strerror(rc));
    else
        too_longs++;
}

static int on_request(fm_stream *s, int sender, void *arg)
{
    (void)arg;
    req_state *r = fm_stream_user(s);
    if (!r) {
        r = calloc(1, sizeof *r);
        fm_stream_set_user(s, r);
    }
    ssize_t n = fm_receive(s, r->buf + r->got, REQ_MAX - r->got);
    if (n > 0)
        r->got += (size_t)n;
    if (!fm_stream_complete(s) || fm_stream_available(s))
        return FM_CONTINUE;
    int m = r->got ? r->buf[0] : -1;
    if (m < 0 || m >= reps || r->got != request_len(m) ||
        st_mismatch(r->buf, r->got, sender, me, m, 0) != (size_t)-1)
        st_fail("bad request from rank %d (%zu bytes, m %d)", sender, r->got, m);
    else {
        probe_too_long(sender);
        pay_owed(1); /* older replies first */
        if (owed_head || send_reply(sender, m, 1) == FM_EAGAIN)
            owe(sender, m);
        else
            sent_in_handler++;
    }
    free(r);
    fm_stream_set_user(s, NULL);
    return FM_DONE;
}

static void reply_in(void *buf, size_t len, int status, int sender, void *arg)
{
    if (status)
        st_fail("a delivered message from rank %d: %s", sender, fm_strerror(status));
    (void)arg;
    unsigned char *b = buf;
    int m = len ? b[0] : -1;
    if (m < 0 || m >= reps || len != reply_len(m) || replied[sender * reps + m])
        st_fail("unexpected reply from rank %d: %zu bytes, m %d", sender, len, m);
    else if (st_mismatch(b, len, sender, me, m, 0) != (size_t)-1)
        st_fail("reply %d from rank %d: wrong bytes", m, sender);
    else
        replied[sender * reps + m] = 1;
    replies_in++;
    free(buf);
}

static int on_reply(fm_stream *s, int sender, void *arg)
{
    (void)sender;
    size_t cap = fm_stream_length(s);
    int rc = fm_stream_deliver(s, malloc(cap + 1), cap, reply_in, arg);
    if (rc)
        st_fail("fm_stream_deliver: %s", fm_strerror(rc));
    return FM_CONTINUE;
}

/* ---- main ---- */

static void send_requests(void)
{
    unsigned char buf[REQ_MAX];
    for (int m = 0; m < reps; m++)
        for (int k = 1; k < nranks; k++) {
            int d = (me + k) % nranks;
            fm_stream *s;
            size_t len = request_len(m);
            st_fill(buf, len, me, d, m, 0);
            int rc = fm_begin_message(ctx, d, len, H_REQUEST, &s);
            if (rc == FM_OK)
                rc = fm_send_piece(s, buf, len);
            if (rc == FM_OK)
                rc = fm_end_message(s);
            if (rc)
                fm_abort(ctx, 1, "FAIL: sending a request");
        }
}

static void serve(void)
{
    int want = (nranks - 1) * reps;
    time_t deadline = time(NULL) + 60;
    while ((replies_in < want || answered < want || halves) && time(NULL) < deadline) {
        long r = fm_wait(ctx, 10);
        if (r < 0) {
            st_fail("fm_wait: %s", fm_strerror((int)r));
            return;
        }
        pay_owed(0);
        finish_halves();
    }
    if (replies_in < want || answered < want || halves)
        st_fail("after 60 s: %d of %d replies in, %d of %d answered (%s owed, %s half sent)",
                replies_in, want, answered, want, owed_head ? "some" : "none",
                halves ? "some" : "none");
}

int main(int argc, char **argv)
{
    reps = 20;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--expect-eagain"))
            expect_eagain = 1;
        else if (!strcmp(argv[i], "--expect-too-long"))
            expect_too_long = 1;
        else if (!strcmp(argv[i], "--split"))
            split = 1;
        else {
            fprintf(stderr, "reply: bad option %s\n", argv[i]);
            return 2;
        }
    }
    if (reps < 1 || reps > 255)
        return 2;
    ctx = st_init();
    me = fm_rank(ctx);
    nranks = fm_size(ctx);
    replied = calloc((size_t)nranks * (size_t)reps, 1);
    if (fm_register_handler(ctx, H_REQUEST, on_request, NULL) ||
        fm_register_handler(ctx, H_REPLY, on_reply, NULL) || fm_barrier(ctx))
        fm_abort(ctx, 1, "FAIL: setup");
    send_requests();
    serve();
    if (expect_eagain && eagains + too_longs == 0)
        st_fail("no FM_EAGAIN (nor FM_ERR_TOO_LONG) from fm_begin_message in a handler "
                "(FM_OVERFLOW too large?)");
    if (expect_too_long && too_longs == 0)
        st_fail("no FM_ERR_TOO_LONG from fm_begin_message in a handler");
    char what[160];
    snprintf(what, sizeof what,
             "reply: %d replies in; sent %ld from handlers, %ld from main, %ld FM_EAGAIN, %ld "
             "FM_ERR_TOO_LONG",
             replies_in, sent_in_handler, sent_from_main, eagains, too_longs);
    int status = st_finish(ctx, what);
    free(replied);
    return status;
}
