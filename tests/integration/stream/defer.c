/* SPDX-License-Identifier: BSD-3-Clause */
/* defer: a handler may leave a complete message for a later progress call.
 *
 *   fastmsg-run -n 2 defer implicit|explicit
 *
 *   implicit  (FM_CREDITS=16: 8 packets may wait) rank 1 sends rank 0 5 messages, 8 bytes
 *             and 1 packet + 3 bytes in turn (7 packets). Rank 0's handler reads nothing
 *             until the message is complete (fm_stream_defer is FM_ERR_STATE until then) and
 *             then, the first time it is, returns FM_CONTINUE without reading: it must be
 *             called again, from a later fm_extract or fm_wait call (never the one that
 *             deferred it), and then reads and checks every byte.
 *   explicit  (FM_CREDITS=4: half the window is 2 packets) rank 1 sends rank 0 three
 *             one-packet messages. Rank 0's handler asks fm_stream_defer for each: the first
 *             two may wait (FM_OK), the third must be refused (FM_EAGAIN) and is read at
 *             once; the two waiting ones keep deferring (each later call asks again) until
 *             the refusal came, then are read.
 * Rank 0 counts its progress calls; each handler call notes the count it ran in. */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { H_IMPLICIT, H_EXPLICIT };
#define IMPLICIT_N 5
#define EXPLICIT_N 3

static fm_context *ctx;
static int me, done_count, refused, deferred_ok, explicit_mode;
static unsigned progress_calls; /* rank 0's fm_extract and fm_wait calls so far */

static size_t msg_len(int m)
{
    return explicit_mode || m % 2 == 0 ? 8 : st_packet_size() + 3;
}

typedef struct dstate {
    int m;
    unsigned deferred_in; /* the progress call that deferred it last */
    int deferred;         /* deferred at least once (deferred_in is 0 when that happened in
                           * another progress, such as fm_barrier's at the start) */
} dstate;

static dstate *state_of(fm_stream *s)
{
    dstate *x = fm_stream_user(s);
    if (!x) {
        x = calloc(1, sizeof *x);
        x->m = -1;
        fm_stream_set_user(s, x);
    }
    return x;
}

/* Read the whole (complete) message, check it, and finish. */
static int read_all(fm_stream *s, dstate *x, int sender)
{
    size_t len = fm_stream_length(s);
    unsigned char *buf = malloc(len + 1);
    ssize_t got = fm_receive(s, buf, len);
    int m = got > 0 ? buf[0] : -1;
    if (got != (ssize_t)len || m < 0 || msg_len(m) != len)
        st_fail("message from rank %d: %zd of %zu bytes (m %d)", sender, got, len, m);
    else if (st_mismatch(buf, len, sender, me, m, 0) != (size_t)-1)
        st_fail("message %d from rank %d: wrong bytes", m, sender);
    free(buf);
    free(x);
    fm_stream_set_user(s, NULL);
    done_count++;
    return FM_DONE;
}

static int on_implicit(fm_stream *s, int sender, void *arg)
{
    (void)arg;
    dstate *x = state_of(s);
    if (!fm_stream_complete(s)) {
        int rc = fm_stream_defer(s);
        if (rc != FM_ERR_STATE)
            st_fail("fm_stream_defer on an incomplete message: %s", fm_strerror(rc));
        return FM_CONTINUE; /* nothing read: called again when more arrives */
    }
    if (!x->deferred) {
        x->deferred = 1;
        x->deferred_in = progress_calls;
        return FM_CONTINUE; /* complete, nothing read: deferred */
    }
    if (x->deferred_in && progress_calls == x->deferred_in)
        st_fail("a deferred message ran again in the progress call that deferred it (%u)",
                progress_calls);
    return read_all(s, x, sender);
}

static int on_explicit(fm_stream *s, int sender, void *arg)
{
    (void)arg;
    dstate *x = state_of(s);
    if (x->deferred_in && progress_calls == x->deferred_in)
        st_fail("a deferred message ran again in the progress call that deferred it (%u)",
                progress_calls);
    if (!refused) {
        int rc = fm_stream_defer(s);
        if (rc == FM_OK) {
            deferred_ok += !x->deferred;
            x->deferred = 1;
            x->deferred_in = progress_calls;
            return FM_CONTINUE;
        }
        if (rc != FM_EAGAIN)
            st_fail("fm_stream_defer: %s", fm_strerror(rc));
        refused = 1;
        if (deferred_ok != EXPLICIT_N - 1)
            st_fail("fm_stream_defer refused after %d deferred messages, want %d", deferred_ok,
                    EXPLICIT_N - 1);
    }
    return read_all(s, x, sender);
}

static void send_all(int n, int handler)
{
    for (int m = 0; m < n; m++) {
        fm_stream *s;
        int rc = fm_begin_message(ctx, 0, msg_len(m), handler, &s);
        if (rc == FM_OK)
            rc = st_send_body(s, me, 0, m, msg_len(m), 1);
        if (rc == FM_OK)
            rc = fm_end_message(s);
        if (rc)
            st_fail("sending message %d: %s", m, fm_strerror(rc));
    }
}

static void receive_all(int n)
{
    time_t end = time(NULL) + 15;
    while (done_count < n && time(NULL) < end) {
        progress_calls++;
        long r = progress_calls % 2 ? fm_extract(ctx, 0) : fm_wait(ctx, 10);
        if (r < 0) {
            st_fail("progress: %s", fm_strerror((int)r));
            return;
        }
    }
    if (done_count < n)
        st_fail("%d of %d messages read (deferred ones never ran again?)", done_count, n);
    if (explicit_mode && !refused)
        st_fail("fm_stream_defer never said FM_EAGAIN");
}

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "implicit") && strcmp(argv[1], "explicit"))) {
        fprintf(stderr, "usage: defer implicit|explicit\n");
        return 2;
    }
    explicit_mode = !strcmp(argv[1], "explicit");
    ctx = st_init();
    me = fm_rank(ctx);
    if (fm_size(ctx) != 2)
        fm_abort(ctx, 2, "defer: run with -n 2");
    if (st_env_size("FM_CREDITS", 8) != (explicit_mode ? 4 : 16))
        fm_abort(ctx, 2, "defer: run with FM_CREDITS=4 (explicit) or 16 (implicit)");
    if (fm_register_handler(ctx, H_IMPLICIT, on_implicit, NULL) ||
        fm_register_handler(ctx, H_EXPLICIT, on_explicit, NULL) || fm_barrier(ctx))
        fm_abort(ctx, 1, "FAIL: setup");
    int n = explicit_mode ? EXPLICIT_N : IMPLICIT_N;
    if (me == 1)
        send_all(n, explicit_mode ? H_EXPLICIT : H_IMPLICIT);
    else
        receive_all(n);
    if (fm_barrier(ctx))
        st_fail("fm_barrier");
    return st_finish(ctx, explicit_mode ? "defer explicit" : "defer implicit");
}
