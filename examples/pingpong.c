/* SPDX-License-Identifier: BSD-3-Clause */
/* pingpong: two ranks bounce one small message back and forth and print the one-way latency.
 *
 *   fastmsg-run -n 2 ./pingpong [ROUNDS]
 *
 * Rank 0 sends, rank 1 answers each message with one of its own. A handler takes each arrival
 * straight into a buffer and counts it; the main loop polls with fm_extract, because a
 * ping-pong is all waiting and fm_wait would back off and add latency. */
#include <fastmsg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MSG_LEN 8

typedef struct mailbox {
    char data[MSG_LEN];
    long arrived; /* messages received so far */
} mailbox;

/* Runs when a message arrives; it fits one packet, so it is all here. */
static int on_ping(fm_stream *s, int sender, void *arg)
{
    (void)sender;
    mailbox *box = arg;
    fm_receive(s, box->data, sizeof box->data);
    box->arrived++;
    return FM_DONE;
}

static int send_to(fm_context *ctx, int dest, int handler, const char *data)
{
    fm_stream *s;
    int rc = fm_begin_message(ctx, dest, MSG_LEN, handler, &s);
    if (rc == FM_OK)
        rc = fm_send_piece(s, data, MSG_LEN);
    if (rc == FM_OK)
        rc = fm_end_message(s);
    return rc;
}

/* Poll until the count-th message has arrived. */
static int await(fm_context *ctx, mailbox *box, long count)
{
    while (box->arrived < count) {
        long rc = fm_extract(ctx, 0);
        if (rc < 0)
            return (int)rc;
    }
    return FM_OK;
}

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 10000;
    fm_context *ctx;
    int rc = fm_init(&ctx);
    if (rc) {
        fprintf(stderr, "fm_init: %s\n", fm_strerror(rc));
        return 1;
    }
    int me = fm_rank(ctx);
    if (fm_size(ctx) != 2 || rounds < 1) {
        fprintf(stderr, "usage: fastmsg-run -n 2 pingpong [ROUNDS >= 1]\n");
        fm_finalize(ctx);
        return 2;
    }
    mailbox box = {.arrived = 0};
    int h = fm_add_handler(ctx, on_ping, &box);
    fm_barrier(ctx); /* the peer's handler is registered from here on */

    char ball[MSG_LEN] = "ping";
    double start = now_us();
    for (long i = 1; i <= rounds && rc == FM_OK; i++) {
        if (me == 0) {
            rc = send_to(ctx, 1, h, ball);
            if (rc == FM_OK)
                rc = await(ctx, &box, i);
        } else {
            rc = await(ctx, &box, i);
            if (rc == FM_OK)
                rc = send_to(ctx, 0, h, box.data);
        }
    }
    double elapsed = now_us() - start;

    if (rc != FM_OK)
        fprintf(stderr, "rank %d: %s\n", me, fm_strerror(rc));
    else if (me == 0)
        printf("pingpong: %ld round trips of %d B, one-way latency %.2f us\n", rounds, MSG_LEN,
               elapsed / (2.0 * (double)rounds));
    int frc = fm_finalize(ctx);
    return rc == FM_OK && frc == FM_OK ? 0 : 1;
}
