/* SPDX-License-Identifier: BSD-3-Clause */
/* Built against an installed fastmsg with pkg-config only: start, send this rank a message,
 * stop. */
#include <fastmsg.h>
#include <stdio.h>
#include <string.h>

static int got;

static int on_msg(fm_stream *s, int sender, void *arg)
{
    char buf[16] = "";
    (void)sender;
    (void)arg;
    if (fm_receive(s, buf, sizeof buf - 1) == 5 && !strcmp(buf, "hello"))
        got = 1;
    return FM_DONE;
}

int main(void)
{
    fm_context *ctx;
    int rc = fm_init(&ctx);
    if (rc) {
        fprintf(stderr, "fm_init: %s\n", fm_strerror(rc));
        return 1;
    }
    int h = fm_add_handler(ctx, on_msg, NULL);
    fm_stream *s;
    rc = fm_begin_message(ctx, fm_rank(ctx), 5, h, &s);
    if (!rc)
        rc = fm_send_piece(s, "hello", 5);
    if (!rc)
        rc = fm_end_message(s);
    while (!rc && !got)
        rc = fm_wait(ctx, -1) < 0;
    printf("installed fastmsg %s: rank %d of %d, self message %s\n", fm_version(), fm_rank(ctx),
           fm_size(ctx), got ? "ok" : "MISSING");
    return fm_finalize(ctx) == FM_OK && got ? 0 : 1;
}
