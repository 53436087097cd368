/* SPDX-License-Identifier: BSD-3-Clause */
/* fastmsg progress from an application's libev loop: every rank sends a message to every
 * rank (itself included) and counts arrivals from its own watcher; ev_run ends when all are
 * in. Checks every byte. */
#include <fastmsg_ev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEN 5000

static int me, n, got, bad, timed_out;

static void fill(unsigned char *b, int s, int d)
{
    for (int i = 0; i < LEN; i++)
        b[i] = (unsigned char)(s * 31 + d * 17 + i);
}

static void arrived(void *buf, size_t len, int status, int sender, void *arg)
{
    (void)arg;
    unsigned char want[LEN];
    fill(want, sender, me);
    if (status == FM_OK && len == LEN && !memcmp(buf, want, LEN))
        got++;
    else
        bad++;
    free(buf);
    /* Stop the loop from the callback that completes the work (an ev_check watcher would run
     * before this pass's io callbacks and could miss it). */
    if (got + bad == n)
        ev_break(EV_DEFAULT, EVBREAK_ALL);
}

static int on_msg(fm_stream *s, int sender, void *arg)
{
    (void)sender;
    fm_stream_deliver(s, malloc(LEN), LEN, arrived, arg);
    return FM_CONTINUE;
}

static void on_guard(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)w;
    (void)revents;
    fprintf(stderr, "rank %d: only %d of %d messages after 60 s\n", me, got, n);
    timed_out = 1;
    ev_break(loop, EVBREAK_ALL);
}

int main(void)
{
    fm_context *ctx;
    if (fm_init(&ctx))
        return 1;
    me = fm_rank(ctx);
    n = fm_size(ctx);
    int h = fm_add_handler(ctx, on_msg, NULL);
    struct ev_loop *loop = EV_DEFAULT;
    fm_ev *w;
    if (fm_ev_start(ctx, loop, &w))
        return 1;
    unsigned char buf[LEN];
    for (int d = 0; d < n; d++) {
        fm_stream *s;
        fill(buf, me, d);
        if (fm_begin_message(ctx, d, LEN, h, &s) || fm_send_piece(s, buf, LEN) || fm_end_message(s))
            return 1;
    }
    ev_timer guard;
    ev_timer_init(&guard, on_guard, 60, 0);
    ev_timer_start(loop, &guard);
    if (got + bad < n)
        ev_run(loop, 0);
    ev_timer_stop(loop, &guard);
    int err = fm_ev_error(w);
    fm_ev_stop(w);
    if (err)
        fprintf(stderr, "rank %d: progress failed: %s\n", me, fm_strerror(err));
    int ok = got == n && !bad && !err && !timed_out;
    printf("rank %d: %d of %d messages through the ev loop %s\n", me, got, n, ok ? "ok" : "FAILED");
    return fm_finalize(ctx) == FM_OK && ok ? 0 : 1;
}
