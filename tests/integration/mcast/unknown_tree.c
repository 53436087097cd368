/* SPDX-License-Identifier: BSD-3-Clause */
/* unknown_tree: a multicast whose descriptor names a tree builder id this member does not
 * know (a newer peer's builder, or a corrupted packet) is dropped and counted as a bad
 * descriptor, its handler never runs, and a good multicast after it arrives. Rank 0 sends the
 * bad one through the core's multi-destination stream with a hand-made descriptor (builder id
 * 201, no such line in the registry).
 *
 *   fastmsg-run -n 2 unknown_tree */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../stream/common.h"
#include "context.h"
#include "mcast_desc.h"
#include "multi.h"
#include "trees/tree.h"

#define BAD_ID 201

static int got;

static int on_msg(fm_stream *s, int sender, void *arg)
{
    (void)arg;
    unsigned char b[8];
    if (fm_stream_length(s) != 8 || fm_receive(s, b, 8) != 8 ||
        st_mismatch(b, 8, sender, 255, 9, 0) != (size_t)-1)
        st_fail("a multicast arrived wrong");
    got++;
    return FM_DONE;
}

/* The descriptor of a flat multicast from rank 0 to {0, 1}, but with builder id BAD_ID. */
static int send_bad(fm_context *ctx, const unsigned char *b)
{
    const int members[] = {0, 1};
    fm_mcast_desc d = {.builder = BAD_ID, .n = 2, .root_pos = 0, .root_rank = 0};
    unsigned char desc[64];
    if (fm_mcast_desc_size(2) > sizeof desc)
        return FM_ERR_INTERNAL;
    fm_mcast_desc_encode(&d, members, desc);
    fm_stream *s;
    int dest = 1;
    int rc = fm_multi_open(ctx, &dest, 1, 8, ctx->packet_size, 0, desc, fm_mcast_desc_size(2), &s);
    if (rc == FM_OK)
        rc = fm_send_piece(s, b, 8);
    return rc == FM_OK ? fm_end_message(s) : rc;
}

int main(void)
{
    fm_context *ctx = st_init();
    int me = fm_rank(ctx);
    if (fm_size(ctx) != 2)
        fm_abort(ctx, 2, "unknown_tree: run with -n 2");
    if (fm_tree_builder_get(BAD_ID))
        fm_abort(ctx, 2, "unknown_tree: builder id 201 exists now; pick another");
    if (fm_register_handler(ctx, 0, on_msg, NULL))
        fm_abort(ctx, 1, "FAIL: setup");
    unsigned char b[8];
    st_fill(b, 8, 0, 255, 9, 0);
    if (me == 0) {
        const int all[] = {0, 1};
        fm_stream *s;
        int rc = send_bad(ctx, b);
        if (rc == FM_OK)
            rc = fm_mcast_begin_list(ctx, all, 2, "flat", 0, 8, 0, &s);
        if (rc == FM_OK)
            rc = fm_send_piece(s, b, 8);
        if (rc == FM_OK)
            rc = fm_end_message(s);
        if (rc)
            st_fail("multicasting: %s", fm_strerror(rc));
    } else {
        time_t end = time(NULL) + 20;
        while (got < 1 && time(NULL) < end)
            fm_wait(ctx, 50);
        fm_stats st;
        fm_get_stats(ctx, &st);
        if (got != 1)
            st_fail("%d multicasts ran their handler, want 1 (the good one)", got);
        if (ctx->drops[FM_WIRE_DESC_BAD] != 1 || st.dropped < 1)
            st_fail("bad descriptors counted %llu, dropped %llu: want 1 and at least 1",
                    (unsigned long long)ctx->drops[FM_WIRE_DESC_BAD],
                    (unsigned long long)st.dropped);
        printf("rank 1: the unknown builder's multicast dropped and counted (%llu), the good "
               "one ran\n",
               (unsigned long long)ctx->drops[FM_WIRE_DESC_BAD]);
    }
    int rc = fm_finalize(ctx);
    if (rc)
        st_fail("fm_finalize: %s", fm_strerror(rc));
    printf("rank %d: %s unknown_tree\n", me, st_failures ? "FAIL" : "PASS");
    return st_failures ? 1 : 0;
}
