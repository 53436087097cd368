/* SPDX-License-Identifier: BSD-3-Clause */
/* mcast_errors: every bad argument of the multi-destination and multicast calls gets its own
 * error code, and the runtime stays usable; a multicast for a group a member has not created
 * yet waits there until it does (from its main program, or from inside a handler), and is
 * then handled and forwarded; calibration and predictions work.
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

#define LONG_LEN (3 * (size_t)65536 + 5) /* several packets (FM_PACKET_SIZE's default) */

/* A long multicast, read in odd chunks as it comes: it counts in got once complete. */
static int on_long(fm_stream *s, int sender, void *arg)
{
    (void)arg;
    unsigned char buf[5003];
    size_t off = (size_t)(uintptr_t)fm_stream_user(s);
    ssize_t n;
    while ((n = fm_receive(s, buf, st_odd_size((unsigned)off) % sizeof buf + 1)) > 0) {
        if (st_mismatch(buf, (size_t)n, sender, 255, 10, off) != (size_t)-1)
            st_fail("the long multicast arrived wrong at offset %zu", off);
        off += (size_t)n;
    }
    fm_stream_set_user(s, (void *)(uintptr_t)off);
    if (!fm_stream_complete(s) || fm_stream_available(s))
        return FM_CONTINUE;
    if (off != LONG_LEN)
        st_fail("the long multicast: %zu bytes, want %zu", off, LONG_LEN);
    got++;
    return FM_DONE;
}

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
    /* two forwarding modes at once */
    EXPECT(fm_mcast_begin_list(ctx, all, 3, "binomial", FM_MCAST_STORE_FORWARD | FM_MCAST_FCFS, 8,
                               0, &s),
           FM_ERR_INVALID);
    /* a message that the members could not hold (FM_MCAST_BUFFER's default, 16 MiB) */
    EXPECT(fm_mcast_begin_list(ctx, all, 3, "binomial", FM_MCAST_FCFS, 64u << 20, 0, &s),
           FM_ERR_TOO_LONG);
    EXPECT(fm_mcast_begin_list(ctx, all, 3, "binomial", FM_MCAST_STORE_FORWARD, 64u << 20, 0, &s),
           FM_ERR_TOO_LONG);
    EXPECT(fm_mcast_begin_list(ctx, others, 2, "binomial", 0, 8, 0, &s), FM_ERR_NOT_MEMBER);
    EXPECT(fm_mcast_begin_list(ctx, all, 3, "binomial", 0, 8, -1, &s), FM_ERR_HANDLER);
    EXPECT(fm_mcast_begin_list(ctx, nine, 9, "binomial", 0, 8, 0, &s), FM_ERR_DUPLICATE);
    EXPECT(fm_mcast_begin(NULL, "binomial", 0, 8, 0, &s), FM_ERR_INVALID);
    if (fm_group_create(ctx, all, 3, &g) == FM_OK) {
        EXPECT(fm_mcast_begin(g, "chain", FM_MCAST_FCFS | FM_MCAST_STORE_FORWARD, 8, 0, &s),
               FM_ERR_INVALID);
        EXPECT(fm_group_destroy(g), FM_OK);
    } else {
        st_fail("fm_group_create of every rank");
    }
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

/* Progress until got reaches want (bounded); 0 when it did. */
static int wait_got(int want)
{
    time_t end = time(NULL) + 20;
    while (got < want && time(NULL) < end)
        if (fm_wait(ctx, 50) < 0)
            break;
    return got >= want ? 0 : -1;
}

static void multicast(fm_group *g, const int *list, const char *tree)
{
    unsigned char b[8];
    st_fill(b, 8, 0, 255, 9, 0);
    fm_stream *s;
    int rc = g ? fm_mcast_begin(g, tree, 0, 8, 0, &s)
               : fm_mcast_begin_list(ctx, list, 3, tree, 0, 8, 0, &s);
    if (rc == FM_OK)
        rc = fm_send_piece(s, b, 8);
    if (rc == FM_OK)
        rc = fm_end_message(s);
    if (rc)
        st_fail("multicasting: %s", fm_strerror(rc));
}

static void multicast_long(fm_group *g, const char *tree)
{
    fm_stream *s;
    int rc = fm_mcast_begin(g, tree, 0, LONG_LEN, 2, &s);
    if (rc == FM_OK)
        rc = st_send_range(s, 0, 255, 10, 0, LONG_LEN, 1);
    if (rc == FM_OK)
        rc = fm_end_message(s);
    if (rc)
        st_fail("multicasting: %s", fm_strerror(rc));
}

/* Group b = {0, 2, 1} is created by rank 2 inside this handler: the multicast held for it
 * starts at the next progress round. */
static fm_group *late_b;
static int on_create_b(fm_stream *s, int sender, void *arg)
{
    (void)s;
    (void)sender;
    (void)arg;
    int members[] = {0, 2, 1};
    if (fm_group_create(ctx, members, 3, &late_b))
        st_fail("fm_group_create inside a handler");
    return FM_DONE;
}

/* Rank 1 has not created group a = {0, 1, 2} when rank 0 multicasts on it down the chain
 * 0 -> 1 -> 2 (8 bytes, then a message of several packets), then multicasts to the list
 * {0, 1, 2}. The list's message runs on ranks 1 and 2; a's wait at rank 1 (not forwarded, no
 * handler run, their packets held) until rank 1 creates a, then run and go on to rank 2. Then the
 * same for group b = {0, 2, 1} (chain 0 -> 2 -> 1), which rank 2 creates last, from inside a
 * handler. */
static void group_not_created_yet(void)
{
    int a_members[] = {0, 1, 2}, b_members[] = {0, 2, 1}, all[] = {0, 1, 2};
    fm_group *a = NULL, *b = NULL;
    if (me != 1 && fm_group_create(ctx, a_members, 3, &a))
        st_fail("fm_group_create");
    if (me != 2 && fm_group_create(ctx, b_members, 3, &b))
        st_fail("fm_group_create");
    if (me == 2 && fm_register_handler(ctx, 1, on_create_b, NULL))
        st_fail("fm_register_handler");
    if (fm_register_handler(ctx, 2, on_long, NULL))
        st_fail("fm_register_handler");
    if (fm_barrier(ctx))
        st_fail("fm_barrier");
    if (me == 0) {
        multicast(a, NULL, "chain");
        multicast_long(a, "chain");
        multicast(NULL, all, "chain");
    } else if (wait_got(1)) {
        st_fail("the list multicast did not run (%d in)", got);
    }
    if (me == 2 && got != 1) /* (rank 1 creates a only after the barrier) */
        st_fail("%d multicasts ran before rank 1 created the group, want 1", got);
    if (fm_barrier(ctx)) /* everything sent so far has arrived */
        st_fail("fm_barrier");
    if (me == 1 && got != 1)
        st_fail("%d multicasts ran before this rank created the group, want 1", got);
    if (me == 1 && fm_group_create(ctx, a_members, 3, &a))
        st_fail("fm_group_create after the multicast came");
    if (me == 1 && got < 2) /* (the long one may still be arriving) */
        st_fail("the held multicast did not run inside fm_group_create (%d in)", got);
    if (me != 0 && wait_got(3))
        st_fail("the held multicasts did not arrive (%d in)", got);
    if (fm_barrier(ctx)) /* a is over everywhere before b begins */
        st_fail("fm_barrier");
    /* b: rank 2 creates it in a handler, on a message from rank 0 sent after the multicast */
    if (me == 0) {
        multicast(b, NULL, "chain");
        fm_stream *s;
        int rc = fm_begin_message(ctx, 2, 0, 1, &s);
        if (rc == FM_OK)
            rc = fm_end_message(s);
        if (rc)
            st_fail("sending the message that creates b: %s", fm_strerror(rc));
    } else if (wait_got(4)) {
        st_fail("the multicast held for group b did not arrive (%d in)", got);
    }
    if (me == 2 && !late_b)
        st_fail("group b was not created");
    if (dropped())
        st_fail("%llu packets dropped", (unsigned long long)dropped());
    printf("rank %d: %d multicasts in\n", me, got);
    if (fm_barrier(ctx))
        st_fail("fm_barrier");
    if (a)
        fm_group_destroy(a);
    if (b)
        fm_group_destroy(b);
    if (late_b)
        fm_group_destroy(late_b);
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
    group_not_created_yet();
    if (calibrate)
        calibrate_and_predict();
    return st_finish(ctx, "mcast_errors");
}
