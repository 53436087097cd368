/* SPDX-License-Identifier: BSD-3-Clause */
/* reserve: a stream opened inside a handler and finished by the main program must not starve
 * the main program's other streams.
 *
 *   FM_OVERFLOW=0 fastmsg-run -n 2 reserve
 *
 * With FM_OVERFLOW=0 the send-buffer budget is size x FM_CREDITS packets. Rank 0 sends rank 1
 * a request; rank 1's handler opens a reply H of budget-2 packets (so budget-1 buffers are
 * set aside for it) and leaves it to the main program. Rank 1's main program then opens two
 * messages X and Y to rank 0, writes one byte to each (X's partial packet holds a buffer),
 * ends them, and then writes and ends H. Nothing here needs more buffers than the budget at
 * once, so every send must finish; rank 0 checks every byte of X, Y and H. */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { H_REQUEST, H_DATA };
enum { M_X = 1, M_Y = 2, M_H = 3 };

static fm_context *ctx;
static int me, nranks, got;
static fm_stream *reply; /* H, opened in the handler */
static size_t reply_len;

static int on_request(fm_stream *s, int sender, void *arg)
{
    (void)s;
    (void)arg;
    int rc = fm_begin_message(ctx, sender, reply_len, H_DATA, &reply);
    if (rc)
        st_fail("fm_begin_message inside the handler: %s", fm_strerror(rc));
    return FM_DONE;
}

static void data_in(void *buf, size_t len, int status, int sender, void *arg)
{
    if (status)
        st_fail("a delivered message from rank %d: %s", sender, fm_strerror(status));
    (void)arg;
    unsigned char *b = buf;
    int m = len ? b[0] : -1;
    size_t want = m == M_H ? reply_len : 1;
    if ((m != M_X && m != M_Y && m != M_H) || len != want)
        st_fail("unexpected message: %zu bytes, m %d", len, m);
    else if (st_mismatch(b, len, sender, me, m, 0) != (size_t)-1)
        st_fail("message %d: wrong bytes", m);
    got++;
    free(buf);
}

static int on_data(fm_stream *s, int sender, void *arg)
{
    (void)sender;
    size_t cap = fm_stream_length(s);
    fm_stream_deliver(s, malloc(cap + 1), cap, data_in, arg);
    return FM_CONTINUE;
}

static void check(int rc, const char *what)
{
    if (rc)
        st_fail("%s: %s", what, fm_strerror(rc));
}

static fm_stream *open_one_byte(int m)
{
    fm_stream *s = NULL;
    unsigned char b = st_pat(me, 0, m, 0);
    check(fm_begin_message(ctx, 0, 1, H_DATA, &s), "fm_begin_message");
    if (s)
        check(fm_send_piece(s, &b, 1), m == M_X ? "fm_send_piece to X" : "fm_send_piece to Y");
    return s;
}

static void rank1(void)
{
    while (!reply && !st_failures)
        if (fm_wait(ctx, -1) < 0)
            return;
    fm_stream *x = open_one_byte(M_X);
    fm_stream *y = open_one_byte(M_Y);
    if (x)
        check(fm_end_message(x), "fm_end_message of X");
    if (y)
        check(fm_end_message(y), "fm_end_message of Y");
    if (reply) {
        check(st_send_body(reply, me, 0, M_H, reply_len, 1), "writing H");
        check(fm_end_message(reply), "fm_end_message of H");
    }
}

int main(void)
{
    ctx = st_init();
    me = fm_rank(ctx);
    nranks = fm_size(ctx);
    const char *c = getenv("FM_CREDITS");
    size_t budget = (size_t)nranks * (size_t)(c && *c ? atoi(c) : 8);
    reply_len = (budget - 2) * st_packet_size();
    if (nranks != 2 || budget < 4)
        fm_abort(ctx, 2, "reserve: run with -n 2, FM_OVERFLOW=0 and FM_CREDITS >= 2");
    if (fm_register_handler(ctx, H_REQUEST, on_request, NULL) ||
        fm_register_handler(ctx, H_DATA, on_data, NULL) || fm_barrier(ctx))
        fm_abort(ctx, 1, "FAIL: setup");
    if (me == 0) {
        fm_stream *s;
        check(fm_begin_message(ctx, 1, 0, H_REQUEST, &s), "sending the request");
        check(fm_end_message(s), "ending the request");
        while (got < 3 && !st_failures)
            if (fm_wait(ctx, -1) < 0) {
                st_fail("only %d of 3 messages arrived", got);
                break;
            }
    } else
        rank1();
    return st_finish(ctx, "reserve");
}
