/* SPDX-License-Identifier: BSD-3-Clause */
/* hello: every rank sends a greeting to every other rank and checks each one it gets.
 *
 *   fastmsg-run -n 4 ./hello
 *
 * Each greeting is "hello from rank S to rank D" followed by a pattern, so that it spans
 * several packets at small FM_PACKET_SIZE and every byte can be checked. */
#include <fastmsg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATTERN_LEN 3000

typedef struct inbox {
    int rank;
    int received; /* greetings that checked out */
    int bad;      /* greetings that did not */
    char *seen;   /* one flag per sender */
} inbox;

/* Greeting from s to d: a text line, then PATTERN_LEN bytes that depend on s and d. */
static size_t greeting(int s, int d, unsigned char *buf)
{
    int n = snprintf((char *)buf, 64, "hello from rank %d to rank %d", s, d);
    for (int i = 0; i < PATTERN_LEN; i++)
        buf[n + 1 + i] = (unsigned char)(s * 131 + d * 7 + i);
    return (size_t)n + 1 + PATTERN_LEN;
}

static void check(void *buf, size_t len, int status, int sender, void *arg)
{
    inbox *in = arg;
    unsigned char want[64 + PATTERN_LEN];
    size_t n = greeting(sender, in->rank, want);
    if (status == FM_OK && len == n && memcmp(buf, want, n) == 0 && !in->seen[sender]) {
        in->seen[sender] = 1;
        in->received++;
    } else {
        fprintf(stderr, "rank %d: bad greeting from rank %d (%zu bytes, %s)\n", in->rank, sender,
                len, fm_strerror(status));
        in->bad++;
    }
    free(buf);
}

/* Runs when the first packet arrives: ask for the whole message in one buffer. */
static int on_greeting(fm_stream *s, int sender, void *arg)
{
    (void)sender;
    size_t cap = fm_stream_length(s);
    fm_stream_deliver(s, malloc(cap), cap, check, arg);
    return FM_CONTINUE;
}

int main(void)
{
    fm_context *ctx;
    int rc = fm_init(&ctx);
    if (rc) {
        fprintf(stderr, "fm_init: %s\n", fm_strerror(rc));
        return 1;
    }
    int me = fm_rank(ctx), n = fm_size(ctx);
    inbox in = {.rank = me, .seen = calloc((size_t)n, 1)};
    int h = fm_add_handler(ctx, on_greeting, &in);

    unsigned char msg[64 + PATTERN_LEN];
    for (int d = 0; d < n && rc == FM_OK; d++) {
        if (d == me)
            continue;
        fm_stream *s;
        size_t len = greeting(me, d, msg);
        rc = fm_begin_message(ctx, d, len, h, &s);
        /* Two pieces, to show that a message is a stream. */
        if (rc == FM_OK)
            rc = fm_send_piece(s, msg, 10);
        if (rc == FM_OK)
            rc = fm_send_piece(s, msg + 10, len - 10);
        if (rc == FM_OK)
            rc = fm_end_message(s);
    }
    while (rc >= 0 && in.received + in.bad < n - 1)
        rc = (int)fm_wait(ctx, -1);
    if (rc < 0)
        fprintf(stderr, "rank %d: %s\n", me, fm_strerror(rc));
    int ok = rc >= 0 && in.bad == 0 && in.received == n - 1;
    printf("rank %d of %d: %d greetings %s\n", me, n, in.received, ok ? "ok" : "FAILED");
    free(in.seen);
    rc = fm_finalize(ctx);
    return ok && rc == FM_OK ? 0 : 1;
}
