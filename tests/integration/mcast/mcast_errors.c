/* SPDX-License-Identifier: BSD-3-Clause */
/* mcast_errors: every bad argument of the multi-destination and multicast calls gets its own
 * error code, and the runtime stays usable; a multicast for a group a member never created
 * is dropped there and counted; calibration and predictions work.
 *
 *   fastmsg-run -n 3 mcast_errors [--no-calibrate] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../stream/common.h"

static fm_context *ctx;
static int me, got;

#define EXPECT(call, want)                                                                         \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != (want))                                                                         \
            st_fail("%s: %s (%d), want %s", #call, fm_strerror(rc_), rc_, fm_strerror(want));      \
    } while (0)

static int on_msg(fm_stream *s, int sender, void *arg)
{
    (void)arg;
    unsigned char b[8];
    if (fm_stream_length(s) != 8 || fm_receive(s, b, 8) != 8 ||
        st_mismatch(b, 8, sender, 255, 9, 0) != (size_t)-1)
        st_fail("the good multicast arrived wrong");
    got++;
    return FM_DONE;
}

static void bad_multi(void)
{
    fm_stream *s = (fm_stream *)&s;
    int other = (me + 1) % 3, dup[] = {other, other}, self[] = {me}, far[] = {3}, neg[] = {-1};
    EXPECT(fm_begin_message_multi(ctx, dup, 0, 8, 0, &s), FM_ERR_EMPTY);
    if (s)
        st_fail("*stream not NULL after an error");
    EXPECT(fm_begin_message_multi(ctx, NULL, 1, 8, 0, &s), FM_ERR_INVALID);
    EXPECT(fm_begin_message_multi(ctx, dup, 2, 8, 0, &s), FM_ERR_DUPLICATE);
    EXPECT(fm_begin_message_multi(ctx, self, 1, 8, 0, &s), FM_ERR_SELF);
    EXPECT(fm_begin_message_multi(ctx, far, 1, 8, 0, &s), FM_ERR_RANK);
    EXPECT(fm_begin_message_multi(ctx, neg, 1, 8, 0, &s), FM_ERR_RANK);
    EXPECT(fm_begin_message_multi(ctx, &other, 1, 8, FM_MAX_HANDLERS, &s), FM_ERR_HANDLER);
    EXPECT(fm_begin_message_multi(NULL, &other, 1, 8, 0, &s), FM_ERR_NOT_INIT);
    EXPECT(fm_begin_message_multi(ctx, &other, 1, 8, 0, NULL), FM_ERR_INVALID);
}

static void bad_mcast(void)
{
    fm_stream *s;
    fm_group *g;
    int all[] = {0, 1, 2}, dup[] = {0, 1, 1}, far[] = {0, 5}, others[2], k = 0;
    int nine[9] = {0, 1, 2};
    for (int r = 0; r < 3; r++)
        if (r != me)
            others[k++] = r;
    EXPECT(fm_group_create(ctx, all, 0, &g), FM_ERR_EMPTY);
    EXPECT(fm_group_create(ctx, dup, 3, &g), FM_ERR_DUPLICATE);
    EXPECT(fm_group_create(ctx, far, 2, &g), FM_ERR_RANK);
    EXPECT(fm_group_create(ctx, NULL, 2, &g), FM_ERR_INVALID);
    EXPECT(fm_mcast_begin_list(ctx, all, 3, "bogus", 0, 8, 0, &s), FM_ERR_TREE);
    EXPECT(fm_mcast_begin_list(ctx, all, 3, "kbinomial:x", 0, 8, 0, &s), FM_ERR_TREE);
    EXPECT(fm_mcast_begin_list(ctx, all, 3, "flat:2", 0, 8, 0, &s), FM_ERR_TREE);
    EXPECT(fm_mcast_begin_list(ctx, all, 3, "binomial", 0x40, 8, 0, &s), FM_ERR_INVALID);
    EXPECT(fm_mcast_begin_list(ctx, others, 2, "binomial", 0, 8, 0, &s), FM_ERR_NOT_MEMBER);
    EXPECT(fm_mcast_begin_list(ctx, all, 3, "binomial", 0, 8, -1, &s), FM_ERR_HANDLER);
    EXPECT(fm_mcast_begin_list(ctx, nine, 9, "binomial", 0, 8, 0, &s), FM_ERR_DUPLICATE);
    EXPECT(fm_mcast_begin(NULL, "binomial", 0, 8, 0, &s), FM_ERR_INVALID);
    if (fm_group_create(ctx, others, 2, &g) == FM_OK) {
        EXPECT(fm_mcast_begin(g, "chain", 0, 8, 0, &s), FM_ERR_NOT_MEMBER);
        EXPECT(fm_group_position(g), -1);
        EXPECT(fm_group_destroy(g), FM_OK);
    } else {
        st_fail("fm_group_create of the other two ranks");
    }
    double t;
    char name[64];
    EXPECT(fm_mcast_predict_time(ctx, 3, 0, "nope", 0, 8, &t, name), FM_ERR_TREE);
    EXPECT(fm_mcast_predict_time(ctx, 0, 0, "auto", 0, 8, &t, name), FM_ERR_INVALID);
    const int codes[] = {FM_ERR_EMPTY, FM_ERR_SELF, FM_ERR_DUPLICATE, FM_ERR_TREE,
                         FM_ERR_NOT_MEMBER};
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < i; j++)
            if (!strcmp(fm_strerror(codes[i]), fm_strerror(codes[j])) ||
                !strcmp(fm_strerror(codes[i]), fm_strerror(12345)))
                st_fail("fm_strerror(%d) is not a text of its own", codes[i]);
}

static uint64_t dropped(void)
{
    fm_stats st;
    fm_get_stats(ctx, &st);
    return st.dropped;
}

/* Rank 2 never creates the group {0,1,2}: rank 0's multicast on it is dropped there, counted,
 * and a good one (a list) after it arrives everywhere. */
static void foreign_group_then_good(void)
{
    int all[] = {0, 1, 2};
    fm_group *g = NULL;
    if (me != 2 && fm_group_create(ctx, all, 3, &g))
        st_fail("fm_group_create");
    if (fm_barrier(ctx))
        st_fail("fm_barrier");
    unsigned char b[8];
    st_fill(b, 8, 0, 255, 9, 0);
    if (me == 0) {
        fm_stream *s;
        int rc = fm_mcast_begin(g, "flat", 0, 8, 0, &s); /* rank 2 never made g */
        if (rc == FM_OK)
            rc = fm_send_piece(s, b, 8);
        if (rc == FM_OK)
            rc = fm_end_message(s);
        if (rc == FM_OK)
            rc = fm_mcast_begin_list(ctx, all, 3, "chain", 0, 8, 0, &s);
        if (rc == FM_OK)
            rc = fm_send_piece(s, b, 8);
        if (rc == FM_OK)
            rc = fm_end_message(s);
        if (rc)
            st_fail("multicasting: %s", fm_strerror(rc));
    }
    int want = me == 0 ? 0 : me == 1 ? 2 : 1;
    time_t end = time(NULL) + 20;
    while (got < want && time(NULL) < end)
        fm_wait(ctx, 50);
    if (got != want)
        st_fail("%d multicasts arrived, want %d", got, want);
    if (me == 2 && dropped() < 1)
        st_fail("the multicast for an unknown group was not counted as dropped");
    printf("rank %d: %d multicasts in, %llu packets dropped\n", me, got,
           (unsigned long long)dropped());
    if (g)
        fm_group_destroy(g);
}

static void calibrate_and_predict(void)
{
    int rc = fm_mcast_calibrate(ctx);
    if (rc)
        st_fail("fm_mcast_calibrate: %s", fm_strerror(rc));
    double t = 0;
    char name[64] = "";
    rc = fm_mcast_predict_time(ctx, 3, 0, "auto", 0, 1 << 20, &t, name);
    if (rc || !(t > 0) || !name[0])
        st_fail("fm_mcast_predict_time after calibration: %s, %g s, \"%s\"", fm_strerror(rc), t,
                name);
    printf("rank %d: calibrated; auto for 1 MiB to 3: %s, predicted %.1f us\n", me, name, t * 1e6);
}

int main(int argc, char **argv)
{
    int calibrate = !(argc > 1 && !strcmp(argv[1], "--no-calibrate"));
    ctx = st_init();
    me = fm_rank(ctx);
    if (fm_size(ctx) != 3)
        fm_abort(ctx, 2, "mcast_errors: run with -n 3");
    if (fm_register_handler(ctx, 0, on_msg, NULL))
        fm_abort(ctx, 1, "FAIL: setup");
    bad_multi();
    bad_mcast();
    foreign_group_then_good();
    if (calibrate)
        calibrate_and_predict();
    /* (Not st_finish: it fails on dropped packets, and rank 2 drops one on purpose.) */
    int rc = fm_finalize(ctx);
    if (rc)
        st_fail("fm_finalize: %s", fm_strerror(rc));
    printf("rank %d: %s mcast_errors (%d failures)\n", me, st_failures ? "FAIL" : "PASS",
           st_failures);
    return st_failures ? 1 : 0;
}
