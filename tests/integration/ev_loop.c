/* SPDX-License-Identifier: BSD-3-Clause */
/* fastmsg progress from an application's libev loop: every rank sends a message to every
 * rank (itself included) and counts arrivals from its own watcher; ev_run ends when all are
 * in. Checks every byte.
 *   ev_loop            as above
 *   ev_loop --ipmc     rank 0 multicasts one message to every rank down tree "ipmc" (the
 *                      two-stage multicast: datagrams), and the others wait for it in the
 *                      loop, which sleeps on fm_wait_fd: that fd must wake for datagrams
 *                      (run with a long FM_MCAST_REPAIR_WAIT, so that no ring message
 *                      wakes it in time), within a 20 s guard. */
#include <fastmsg_ev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEN 5000

static int me, n, got, bad, timed_out, want, ipmc;

static void fill(unsigned char *b, int s, int d)
{
    for (int i = 0; i < LEN; i++)
        b[i] = (unsigned char)(s * 31 + d * 17 + i);
}

static void arrived(void *buf, size_t len, int status, int sender, void *arg)
{
    (void)arg;
    unsigned char expect[LEN];
    fill(expect, sender, ipmc ? n : me); /* (a multicast's bytes are the same for all) */
    if (status == FM_OK && len == LEN && !memcmp(buf, expect, LEN))
        got++;
    else
        bad++;
    free(buf);
    /* Stop the loop from the callback that completes the work (an ev_check watcher would run
     * before this pass's io callbacks and could miss it). */
    if (got + bad == want)
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
    fprintf(stderr, "rank %d: only %d of %d messages by the guard\n", me, got, want);
    timed_out = 1;
    ev_break(loop, EVBREAK_ALL);
}

/* --ipmc: rank 0's multicast to every rank, written before the loop runs. */
static int multicast(fm_context *ctx, int h)
{
    int *all = malloc(sizeof(int) * (size_t)n);
    unsigned char buf[LEN];
    fm_stream *s;
    for (int r = 0; r < n; r++)
        all[r] = r;
    fill(buf, 0, n);
    int rc = fm_mcast_begin_list(ctx, all, n, "ipmc", 0, LEN, h, &s);
    if (rc == FM_OK && !(rc = fm_send_piece(s, buf, LEN)))
        rc = fm_end_message(s);
    free(all);
    if (rc)
        fprintf(stderr, "rank 0: the multicast: %s\n", fm_strerror(rc));
    return rc;
}

int main(int argc, char **argv)
{
    fm_context *ctx;
    ipmc = argc > 1 && !strcmp(argv[1], "--ipmc");
    if (fm_init(&ctx))
        return 1;
    me = fm_rank(ctx);
    n = fm_size(ctx);
    want = ipmc ? (me != 0) : n;
    int h = fm_add_handler(ctx, on_msg, NULL);
    struct ev_loop *loop = EV_DEFAULT;
    fm_ev *w;
    if (fm_ev_start(ctx, loop, &w))
        return 1;
    unsigned char buf[LEN];
    for (int d = 0; d < n && !ipmc; d++) {
        fm_stream *s;
        fill(buf, me, d);
        if (fm_begin_message(ctx, d, LEN, h, &s) || fm_send_piece(s, buf, LEN) || fm_end_message(s))
            return 1;
    }
    if (ipmc && (fm_barrier(ctx) || (me == 0 && multicast(ctx, h))))
        return 1;
    ev_timer guard;
    ev_timer_init(&guard, on_guard, ipmc ? 20 : 60, 0);
    ev_timer_start(loop, &guard);
    if (got + bad < want)
        ev_run(loop, 0);
    ev_timer_stop(loop, &guard);
    int err = fm_ev_error(w);
    fm_ev_stop(w);
    if (err)
        fprintf(stderr, "rank %d: progress failed: %s\n", me, fm_strerror(err));
    int ok = got == want && !bad && !err && !timed_out;
    printf("rank %d: %d of %d messages through the ev loop %s\n", me, got, want,
           ok ? "ok" : "FAILED");
    return fm_finalize(ctx) == FM_OK && ok ? 0 : 1;
}
