/* SPDX-License-Identifier: BSD-3-Clause */
/* multicast: rank 0 sends one 1 MiB message to every other rank down a tree.
 *
 *   fastmsg-run -n 4 ./multicast
 *
 * Every rank creates the same group of all ranks and registers the same handler; the handler
 * has fastmsg deliver the whole message into a buffer and checks it. The tree is FM_TREE's
 * (default "auto": the shape the model predicts fastest); inner ranks forward each packet as
 * it arrives, so the message streams down the tree. */
#include <fastmsg.h>
#include <stdio.h>
#include <stdlib.h>

#define LEN (1u << 20)

typedef struct inbox {
    unsigned char *buf;
    int done, ok;
} inbox;

static unsigned char pattern(size_t i)
{
    return (unsigned char)(i * 7 + 3);
}

/* Runs once the whole message is in box->buf. */
static void arrived(void *buf, size_t len, int status, int sender, void *arg)
{
    (void)sender;
    inbox *box = arg;
    const unsigned char *p = buf;
    box->ok = status == FM_OK && len == LEN; /* not cut short, nor longer than the box */
    for (size_t i = 0; i < len && box->ok; i++)
        box->ok = p[i] == pattern(i);
    box->done = 1;
}

/* Runs on the first packet: hand fastmsg the buffer for the rest. */
static int on_mcast(fm_stream *s, int sender, void *arg)
{
    (void)sender;
    inbox *box = arg;
    fm_stream_deliver(s, box->buf, LEN, arrived, box);
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
    int *all = malloc(sizeof *all * (size_t)n);
    inbox box = {.buf = malloc(LEN)};
    for (int i = 0; i < n; i++)
        all[i] = i;
    fm_group *group = NULL;
    if (!all || !box.buf)
        rc = FM_ERR_NOMEM;
    if (rc == FM_OK)
        rc = fm_group_create(ctx, all, n, &group);
    int h = fm_add_handler(ctx, on_mcast, &box);
    fm_barrier(ctx); /* every rank has its group and handler from here on */

    if (rc == FM_OK && me == 0) {
        for (size_t i = 0; i < LEN; i++)
            box.buf[i] = pattern(i);
        fm_stream *s;
        rc = fm_mcast_begin(group, NULL /* FM_TREE, default auto */, 0, LEN, h, &s);
        if (rc == FM_OK)
            rc = fm_send_piece(s, box.buf, LEN);
        if (rc == FM_OK)
            rc = fm_end_message(s);
        if (rc == FM_OK)
            printf("rank 0: sent %u B to %d ranks\n", LEN, n - 1);
    } else if (rc == FM_OK) {
        while (!box.done && rc == FM_OK) {
            long w = fm_wait(ctx, -1);
            rc = w < 0 ? (int)w : FM_OK;
        }
        if (rc == FM_OK)
            printf("rank %d: received %u B, %s\n", me, LEN, box.ok ? "correct" : "CORRUPT");
    }
    if (rc != FM_OK)
        fprintf(stderr, "rank %d: %s\n", me, fm_strerror(rc));
    else if (me != 0 && !box.ok)
        rc = FM_ERR_INTERNAL; /* a corrupt copy fails the run */
    if (group)
        fm_group_destroy(group); /* before fm_finalize, which frees the context */
    int frc = fm_finalize(ctx);
    free(box.buf);
    free(all);
    return rc == FM_OK && frc == FM_OK ? 0 : 1;
}
