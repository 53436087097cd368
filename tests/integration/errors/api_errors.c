/* SPDX-License-Identifier: BSD-3-Clause */
/* api_errors: every bad input to every public call (fastmsg.h, fastmsg_ev.h) returns its own
 * error code, fm_strerror has a specific text for it, and the runtime stays usable: after
 * every case both ranks exchange a normal message and check its bytes (the teardown of each
 * test). The last case finalizes and checks what calls on the finalized context return.
 *
 *   fastmsg-run -n 2 api_errors          the CMocka cases (both ranks run them in step)
 *   api_errors --init-only               fm_init, then fm_finalize: exit 0, or print the
 *                                        error and exit 1 (bad_env.sh drives it)
 *
 * Handler ids: H_PING (the usability check), H_CHECK (messages whose bytes a case checks),
 * H_LATE (registered only in the unregistered-handler case), and H_PROBE + case number (a
 * handler that runs one case's calls inside a handler: registered by the case itself, so a
 * probe that arrives early waits until the case is ready for it). */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <fastmsg_ev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../stream/common.h"

enum { H_PING = 0, H_CHECK, H_LATE, H_SPARE, H_PROBE };

#define PING_LEN    100
#define MAX_CASES   64
#define MAX_CODES   16
#define WAIT_SECS   20
#define LAST_STATUS FM_ERR_TRUNCATED /* the most negative status code */

static fm_context *ctx;
static int me, peer, case_no;

/* Received per case: pings (the usability check) and checked messages. An empty message
 * carries no case number: those are counted apart, against how many the peer has sent. */
static int pings[MAX_CASES], checked[MAX_CASES], empties, empties_sent;
static size_t checked_len[MAX_CASES][4];
static int bad_bytes;

/* What a probe handler recorded: its return codes, and how often it ran. */
static int probe_codes[MAX_CODES], probe_ncodes, probe_runs;

/* ---- checks ---- */

/* The exact code, and a text of its own for it. */
static void expect_code(long got, int want, const char *call, int line)
{
    if (got != want)
        fail_msg("line %d: %s returned %ld (%s), want %d (%s)", line, call, got,
                 fm_strerror((int)got), want, fm_strerror(want));
    const char *text = fm_strerror(want);
    if (want < 0 && (!text[0] || !strcmp(text, fm_strerror(INT_MIN))))
        fail_msg("line %d: fm_strerror(%d) is not a specific text: \"%s\"", line, want, text);
}
#define EXPECT(call, want) expect_code((long)(call), (want), #call, __LINE__)

/* Progress until *counter reaches want (bounded). */
static void wait_for(const int *counter, int want, const char *what)
{
    time_t end = time(NULL) + WAIT_SECS;
    while (*counter < want) {
        long r = fm_wait(ctx, 10);
        if (r < 0)
            fail_msg("fm_wait, waiting for %s: %s", what, fm_strerror((int)r));
        if (time(NULL) > end)
            fail_msg("%s: %d of %d there after %d s (%d bad)", what, *counter, want, WAIT_SECS,
                     bad_bytes);
    }
}

/* One message of len bytes (pattern me -> dest, index m) for handler h. */
static int send_msg(int dest, int h, int m, size_t len)
{
    fm_stream *s;
    int rc = fm_begin_message(ctx, dest, len, h, &s);
    if (rc == FM_OK)
        rc = st_send_body(s, me, dest, m, len, 1);
    if (rc == FM_OK)
        rc = fm_end_message(s);
    return rc;
}

/* ---- handlers ---- */

/* Byte 0 of every checked message is the case number. */
static void check_bytes(const unsigned char *buf, size_t len, int sender, int *count)
{
    if (!len) {
        empties++;
        return;
    }
    int m = buf[0];
    if (m >= MAX_CASES || st_mismatch(buf, len, sender, me, m, 0) != (size_t)-1) {
        bad_bytes++;
        return;
    }
    if (count == checked && count[m] < 4)
        checked_len[m][count[m]] = len;
    count[m]++;
}

static void delivered(void *buf, size_t len, int status, int sender, void *arg)
{
    if (status)
        bad_bytes++;
    check_bytes(buf, len, sender, arg);
    free(buf);
}

static int on_message(fm_stream *s, int sender, void *arg)
{
    (void)sender;
    size_t cap = fm_stream_length(s);
    void *buf = malloc(cap + 1);
    if (!buf || fm_stream_deliver(s, buf, cap, delivered, arg)) {
        free(buf);
        bad_bytes++;
        return FM_DONE;
    }
    return FM_CONTINUE;
}

static int on_late(fm_stream *s, int sender, void *arg)
{
    return on_message(s, sender, arg);
}

static int on_other(fm_stream *s, int sender, void *arg)
{
    (void)s;
    (void)sender;
    (void)arg;
    fail_msg("a handler that was refused registration ran");
    return FM_DONE;
}

static void record(long code)
{
    if (probe_ncodes < MAX_CODES)
        probe_codes[probe_ncodes++] = (int)code;
}

typedef void (*probe_fn)(fm_stream *s);
static probe_fn probe;

static int on_probe(fm_stream *s, int sender, void *arg)
{
    (void)sender;
    (void)arg;
    probe(s);
    probe_runs++;
    return FM_DONE;
}

/* Register this case's probe handler, send the peer its probe message (len bytes), and wait
 * until the peer's probe has run here. */
static void run_probe(probe_fn fn, size_t len)
{
    probe_ncodes = probe_runs = 0;
    probe = fn;
    EXPECT(fm_register_handler(ctx, H_PROBE + case_no, on_probe, NULL), FM_OK);
    EXPECT(send_msg(peer, H_PROBE + case_no, case_no, len), FM_OK);
    wait_for(&probe_runs, 1, "probe message from the peer");
}

static void expect_probe(const int *want, int n)
{
    assert_int_equal(probe_ncodes, n);
    for (int i = 0; i < n; i++)
        expect_code(probe_codes[i], want[i], "call in the handler", i);
}

/* ---- fixtures ---- */

static int next_case(void **state)
{
    (void)state;
    case_no++;
    return 0;
}

/* The runtime is still usable: a normal message each way, every byte checked. */
static int still_usable(void **state)
{
    (void)state;
    int rc = send_msg(peer, H_PING, case_no, PING_LEN);
    time_t end = time(NULL) + WAIT_SECS;
    while (rc == FM_OK && pings[case_no] < 1 && time(NULL) <= end) {
        long r = fm_wait(ctx, 10);
        if (r < 0)
            rc = (int)r;
    }
    if (rc || pings[case_no] != 1 || bad_bytes) {
        fprintf(stderr, "rank %d: case %d: no longer usable: %s, %d pings, %d bad messages\n", me,
                case_no, fm_strerror(rc), pings[case_no], bad_bytes);
        return -1;
    }
    return 0;
}

static int setup_all(void **state)
{
    (void)state;
    if (fm_init(&ctx))
        return -1;
    me = fm_rank(ctx);
    peer = 1 - me;
    if (fm_size(ctx) != 2) {
        fprintf(stderr, "api_errors: run with 2 ranks\n");
        return -1;
    }
    st_rank = me;
    if (fm_register_handler(ctx, H_PING, on_message, pings) ||
        fm_register_handler(ctx, H_CHECK, on_message, checked) || fm_barrier(ctx))
        return -1;
    return 0;
}

/* ---- cases ---- */

static void strerror_texts(void **state)
{
    (void)state;
    const char *unknown = fm_strerror(INT_MIN);
    assert_non_null(unknown);
    assert_string_equal(fm_strerror(1), unknown);
    assert_string_equal(fm_strerror(LAST_STATUS - 1), unknown);
    for (int a = FM_OK; a >= LAST_STATUS; a--) {
        const char *t = fm_strerror(a);
        assert_non_null(t);
        if (!t[0] || !strcmp(t, unknown))
            fail_msg("fm_strerror(%d) has no text of its own", a);
        for (int b = FM_OK; b > a; b--)
            if (!strcmp(t, fm_strerror(b)))
                fail_msg("fm_strerror(%d) and fm_strerror(%d) are both \"%s\"", a, b, t);
    }
}

/* Before fm_init a program's context is NULL (fm_init leaves it so on error); a pointer that
 * is not the live context is refused the same way without being read. */
static void before_init(void **state)
{
    (void)state;
    fm_stream *s = (fm_stream *)&s;
    fm_group *g = (fm_group *)&g;
    fm_ev *w = (fm_ev *)&w;
    fm_stats st;
    fm_mcast_prediction pred;
    double t;
    int one = 1;
    unsigned char junk[64] = {0};
    fm_context *foreign = (fm_context *)junk;
    fm_context *nil = NULL, *both[] = {nil, foreign};
    for (int i = 0; i < 2; i++) {
        fm_context *c = both[i];
        EXPECT(fm_rank(c), FM_ERR_NOT_INIT);
        EXPECT(fm_size(c), FM_ERR_NOT_INIT);
        assert_true(fm_job_key(c) == 0);
        EXPECT(fm_barrier(c), FM_ERR_NOT_INIT);
        EXPECT(fm_register_handler(c, H_SPARE, on_other, NULL), FM_ERR_NOT_INIT);
        EXPECT(fm_add_handler(c, on_other, NULL), FM_ERR_NOT_INIT);
        EXPECT(fm_begin_message_multi(c, &peer, 1, 8, H_CHECK, &s), FM_ERR_NOT_INIT);
        assert_null(s);
        EXPECT(fm_group_create(c, &one, 1, &g), FM_ERR_NOT_INIT);
        assert_null(g);
        EXPECT(fm_mcast_begin_list(c, &me, 1, NULL, 0, 8, H_CHECK, &s), FM_ERR_NOT_INIT);
        EXPECT(fm_mcast_calibrate(c), FM_ERR_NOT_INIT);
        EXPECT(fm_mcast_predict_time(c, 2, 0, "flat", 0, 8, &t, NULL), FM_ERR_NOT_INIT);
        EXPECT(fm_mcast_predict(c, 2, 0, "flat", 0, 8, &pred), FM_ERR_NOT_INIT);
        EXPECT(fm_get_stats(c, &st), FM_ERR_NOT_INIT);
        EXPECT(fm_reset_peaks(c), FM_ERR_NOT_INIT);
        EXPECT(fm_finalize(c), FM_ERR_NOT_INIT);
        EXPECT(fm_ev_start(c, EV_DEFAULT, &w), FM_ERR_NOT_INIT);
        assert_null(w);
    }
    for (int i = 0; i < 2; i++) {
        EXPECT(fm_begin_message(both[i], peer, 8, H_CHECK, &s), FM_ERR_NOT_INIT);
        EXPECT(fm_extract(both[i], 0), FM_ERR_NOT_INIT);
        EXPECT(fm_wait(both[i], 0), FM_ERR_NOT_INIT);
        EXPECT(fm_wait_fd(both[i]), FM_ERR_NOT_INIT);
        EXPECT(fm_trywait(both[i]), FM_ERR_NOT_INIT);
    }
}

static void init_twice(void **state)
{
    (void)state;
    fm_context *again = (fm_context *)&again;
    EXPECT(fm_init(NULL), FM_ERR_INVALID);
    EXPECT(fm_init(&again), FM_ERR_ALREADY_INIT);
    assert_null(again);
    assert_int_equal(fm_rank(ctx), me); /* the first context is untouched */
}

static void unknown_rank(void **state)
{
    (void)state;
    fm_stream *s;
    fm_group *g;
    int bad[] = {-1, 2, 1000, INT_MAX, INT_MIN};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int list[] = {me, bad[i]}, dests[] = {peer, bad[i]};
        EXPECT(fm_begin_message(ctx, bad[i], 8, H_CHECK, &s), FM_ERR_RANK);
        assert_null(s);
        EXPECT(fm_begin_message_multi(ctx, dests, 2, 8, H_CHECK, &s), FM_ERR_RANK);
        EXPECT(fm_group_create(ctx, list, 2, &g), FM_ERR_RANK);
        assert_null(g);
        EXPECT(fm_mcast_begin_list(ctx, list, 2, "flat", 0, 8, H_CHECK, &s), FM_ERR_RANK);
    }
    /* More entries than ranks: still the first bad entry's code, not a guess. */
    int many[] = {me, 7, peer, me};
    EXPECT(fm_begin_message_multi(ctx, many + 1, 3, 8, H_CHECK, &s), FM_ERR_RANK);
}

static void self_destination(void **state)
{
    (void)state;
    fm_stream *s;
    int self[] = {me}, with_self[] = {peer, me};
    EXPECT(fm_begin_message_multi(ctx, self, 1, 8, H_CHECK, &s), FM_ERR_SELF);
    assert_null(s);
    EXPECT(fm_begin_message_multi(ctx, with_self, 2, 8, H_CHECK, &s), FM_ERR_SELF);
    /* fm_begin_message to this rank is allowed: the message arrives here. */
    EXPECT(send_msg(me, H_CHECK, case_no, 10), FM_OK);
    wait_for(&checked[case_no], 1, "the message to this rank");
    assert_int_equal(checked_len[case_no][0], 10);
}

static void duplicate_rank(void **state)
{
    (void)state;
    fm_stream *s;
    fm_group *g;
    int dests[] = {peer, peer}, members[] = {me, peer, me}, list[] = {peer, me, peer};
    EXPECT(fm_begin_message_multi(ctx, dests, 2, 8, H_CHECK, &s), FM_ERR_DUPLICATE);
    assert_null(s);
    EXPECT(fm_group_create(ctx, members, 3, &g), FM_ERR_DUPLICATE);
    assert_null(g);
    EXPECT(fm_mcast_begin_list(ctx, list, 3, "chain", 0, 8, H_CHECK, &s), FM_ERR_DUPLICATE);
}

static void empty_list(void **state)
{
    (void)state;
    fm_stream *s;
    fm_group *g;
    int all[] = {0, 1};
    EXPECT(fm_begin_message_multi(ctx, all, 0, 8, H_CHECK, &s), FM_ERR_EMPTY);
    assert_null(s);
    EXPECT(fm_begin_message_multi(ctx, NULL, 0, 8, H_CHECK, &s), FM_ERR_EMPTY);
    EXPECT(fm_group_create(ctx, all, 0, &g), FM_ERR_EMPTY);
    EXPECT(fm_mcast_begin_list(ctx, all, 0, "flat", 0, 8, H_CHECK, &s), FM_ERR_EMPTY);
    /* A negative count is no list at all. */
    EXPECT(fm_begin_message_multi(ctx, all, -1, 8, H_CHECK, &s), FM_ERR_INVALID);
    EXPECT(fm_group_create(ctx, all, -2, &g), FM_ERR_INVALID);
    EXPECT(fm_mcast_begin_list(ctx, all, INT_MIN, "flat", 0, 8, H_CHECK, &s), FM_ERR_INVALID);
    /* The root alone is not empty: a multicast that goes nowhere. */
    EXPECT(fm_mcast_begin_list(ctx, &me, 1, "binomial", 0, 5, H_CHECK, &s), FM_OK);
    EXPECT(st_send_body(s, me, peer, case_no, 5, 0), FM_OK);
    EXPECT(fm_end_message(s), FM_OK);
}

/* Pieces past the declared length are refused whole; the stream stays usable and the
 * receiver gets exactly the declared bytes. */
static void more_than_declared(void **state)
{
    (void)state;
    fm_stream *s;
    unsigned char b[64];
    size_t p = st_packet_size();
    st_fill(b, sizeof b, me, peer, case_no, 0);
    /* one destination: 11 of 10, then 10, then 1 more */
    EXPECT(fm_begin_message(ctx, peer, 10, H_CHECK, &s), FM_OK);
    EXPECT(fm_send_piece(s, b, 11), FM_ERR_OVERFLOW);
    EXPECT(fm_send_piece(s, b, 4), FM_OK);
    EXPECT(fm_send_piece(s, b + 4, 7), FM_ERR_OVERFLOW);
    EXPECT(fm_send_piece(s, b + 4, 6), FM_OK);
    EXPECT(fm_send_piece(s, b, 1), FM_ERR_OVERFLOW);
    EXPECT(fm_end_message(s), FM_OK);
    /* many destinations (here one) */
    EXPECT(fm_begin_message_multi(ctx, &peer, 1, 20, H_CHECK, &s), FM_OK);
    EXPECT(fm_send_piece(s, b, 21), FM_ERR_OVERFLOW);
    EXPECT(fm_send_piece(s, b, 20), FM_OK);
    EXPECT(fm_send_piece(s, b, 1), FM_ERR_OVERFLOW);
    EXPECT(fm_end_message(s), FM_OK);
    /* declared empty */
    EXPECT(fm_begin_message(ctx, peer, 0, H_CHECK, &s), FM_OK);
    EXPECT(fm_send_piece(s, b, 1), FM_ERR_OVERFLOW);
    EXPECT(fm_end_message(s), FM_OK);
    empties_sent++;
    /* ends on a packet boundary: the last packet has left when the extra byte comes */
    EXPECT(fm_begin_message(ctx, peer, p, H_CHECK, &s), FM_OK);
    EXPECT(st_send_body(s, me, peer, case_no, p, 1), FM_OK);
    EXPECT(fm_send_piece(s, b, 1), FM_ERR_OVERFLOW);
    EXPECT(fm_end_message(s), FM_OK);
    wait_for(&checked[case_no], 3, "the three nonempty messages");
    wait_for(&empties, empties_sent, "the empty message");
    size_t want[] = {10, 20, p};
    for (int i = 0; i < 3; i++) {
        int found = 0;
        for (int j = 0; j < 3; j++)
            found |= checked_len[case_no][j] == want[i];
        if (!found)
            fail_msg("no %zu-byte message arrived", want[i]);
    }
}

/* The peer sends 5 bytes: reading more than that returns the 5, then FM_ERR_UNDERFLOW. */
static void probe_underflow(fm_stream *s)
{
    unsigned char b[64];
    record(fm_stream_complete(s) ? FM_OK : FM_ERR_INTERNAL);
    record(fm_receive(s, b, sizeof b) == 5 ? FM_OK : FM_ERR_INTERNAL);
    record(fm_receive(s, b, 1));
    record(fm_receive(s, b, 0)); /* asking for nothing is no error */
    record(fm_receive(s, NULL, 1));
    record(fm_receive(NULL, b, 1));
}

static void more_than_sent(void **state)
{
    (void)state;
    run_probe(probe_underflow, 5);
    const int want[] = {FM_OK, FM_OK, FM_ERR_UNDERFLOW, 0, FM_ERR_INVALID, FM_ERR_INVALID};
    expect_probe(want, 6);
}

/* A message for an id the receiver has not registered waits there (the sender cannot know)
 * while other messages pass; it runs, whole, once the id is registered. */
static void unregistered_handler(void **state)
{
    (void)state;
    EXPECT(send_msg(peer, H_LATE, case_no, 3000), FM_OK);
    EXPECT(send_msg(peer, H_CHECK, case_no, 30), FM_OK);
    wait_for(&checked[case_no], 1, "a message behind the held one");
    assert_int_equal(checked_len[case_no][0], 30);
    assert_int_equal(checked[case_no], 1);
    EXPECT(fm_register_handler(ctx, H_LATE, on_late, checked), FM_OK);
    wait_for(&checked[case_no], 2, "the held message");
    assert_int_equal(checked_len[case_no][1], 3000);
    fm_stats st;
    EXPECT(fm_get_stats(ctx, &st), FM_OK);
    assert_true(st.dropped == 0);
}

static void registered_twice(void **state)
{
    (void)state;
    EXPECT(fm_register_handler(ctx, H_PING, on_other, NULL), FM_ERR_REGISTERED);
    EXPECT(fm_register_handler(ctx, H_SPARE, on_message, checked), FM_OK);
    EXPECT(fm_register_handler(ctx, H_SPARE, on_message, checked), FM_ERR_REGISTERED);
    EXPECT(fm_register_handler(ctx, H_SPARE, on_other, NULL), FM_ERR_REGISTERED);
    /* the first registration still serves its id */
    EXPECT(send_msg(peer, H_SPARE, case_no, 40), FM_OK);
    wait_for(&checked[case_no], 1, "a message for the twice-registered id");
}

static void handler_out_of_range(void **state)
{
    (void)state;
    fm_stream *s;
    fm_group *g;
    int all[] = {0, 1}; /* the same list on both ranks: the same group */
    int bad[] = {-1, FM_MAX_HANDLERS, FM_MAX_HANDLERS + 1, INT_MAX, INT_MIN};
    EXPECT(fm_group_create(ctx, all, 2, &g), FM_OK);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        EXPECT(fm_register_handler(ctx, bad[i], on_other, NULL), FM_ERR_HANDLER);
        EXPECT(fm_begin_message(ctx, peer, 8, bad[i], &s), FM_ERR_HANDLER);
        assert_null(s);
        EXPECT(fm_begin_message_multi(ctx, &peer, 1, 8, bad[i], &s), FM_ERR_HANDLER);
        EXPECT(fm_mcast_begin_list(ctx, all, 2, "flat", 0, 8, bad[i], &s), FM_ERR_HANDLER);
        EXPECT(fm_mcast_begin(g, "flat", 0, 8, bad[i], &s), FM_ERR_HANDLER);
    }
    EXPECT(fm_group_destroy(g), FM_OK);
}

static void handler_null(void **state)
{
    (void)state;
    EXPECT(fm_register_handler(ctx, H_SPARE + 1, NULL, NULL), FM_ERR_INVALID);
    EXPECT(fm_add_handler(ctx, NULL, NULL), FM_ERR_INVALID);
}

static void oversize(void **state)
{
    (void)state;
    fm_stream *s;
    fm_group *g;
    int all[] = {0, 1}; /* the same list on both ranks: the same group */
    size_t bad[] = {((size_t)1 << 48) + 1, SIZE_MAX};
    EXPECT(fm_group_create(ctx, all, 2, &g), FM_OK);
    for (int i = 0; i < 2; i++) {
        EXPECT(fm_begin_message(ctx, peer, bad[i], H_CHECK, &s), FM_ERR_TOO_LONG);
        assert_null(s);
        EXPECT(fm_begin_message(ctx, me, bad[i], H_CHECK, &s), FM_ERR_TOO_LONG);
        EXPECT(fm_begin_message_multi(ctx, &peer, 1, bad[i], H_CHECK, &s), FM_ERR_TOO_LONG);
        EXPECT(fm_mcast_begin_list(ctx, all, 2, "chain", 0, bad[i], H_CHECK, &s), FM_ERR_TOO_LONG);
        EXPECT(fm_mcast_begin(g, "chain", 0, bad[i], H_CHECK, &s), FM_ERR_TOO_LONG);
    }
    EXPECT(fm_group_destroy(g), FM_OK);
}

static void bad_tree(void **state)
{
    (void)state;
    fm_stream *s;
    fm_group *g;
    double t = -1;
    char name[64];
    int all[] = {0, 1}; /* the same list on both ranks: the same group */
    const char *bad[] = {"bogus",         "",         "Binomial",    "binomial:",   "binomial:2",
                         "flat:1",        "chain:3",  "kbinomial:0", "kbinomial:x", "kbinomial:-1",
                         "kbinomial:2x",  "postal:0", "postal:1.5",  "postal:",     "auto:2",
                         "kbinomial:1e99"};
    EXPECT(fm_group_create(ctx, all, 2, &g), FM_OK);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        EXPECT(fm_mcast_begin_list(ctx, all, 2, bad[i], 0, 8, H_CHECK, &s), FM_ERR_TREE);
        assert_null(s);
        EXPECT(fm_mcast_begin(g, bad[i], 0, 8, H_CHECK, &s), FM_ERR_TREE);
        EXPECT(fm_mcast_predict_time(ctx, 2, 0, bad[i], 0, 8, &t, name), FM_ERR_TREE);
    }
    /* good names next to them */
    EXPECT(fm_mcast_predict_time(ctx, 2, 0, "kbinomial:2", 0, 8, &t, name), FM_OK);
    assert_true(t > 0);
    /* the details agree with fm_mcast_predict_time: 3 members, 3 packets, FCFS */
    fm_mcast_prediction p;
    size_t len = 2 * st_packet_size() + 1;
    EXPECT(fm_mcast_predict_time(ctx, 3, 0, "chain", FM_MCAST_FCFS, len, &t, name), FM_OK);
    EXPECT(fm_mcast_predict(ctx, 3, 0, "chain", FM_MCAST_FCFS, len, &p), FM_OK);
    assert_true(p.seconds == t && !strcmp(p.resolved, name) && !strcmp(name, "chain"));
    assert_true(p.packet_size == st_packet_size() && p.packets == 3);
    assert_true(p.buffer_bytes >= p.packet_size && p.buffer_bytes % 64 == 0);
    /* member 1 forwards to its one child: it holds at least one packet, never more than 3 */
    assert_true(p.held_packets >= 1 && p.held_packets <= 3);
    /* prefix trees send FM_PREFIX_SEGMENT (8K) packets when FM_PACKET_SIZE is larger */
    EXPECT(fm_mcast_predict(ctx, 3, 0, "prefix", 0, 40000, &p), FM_OK);
    assert_true(p.packet_size == (st_packet_size() < 8192 ? st_packet_size() : 8192));
    assert_true(st_packet_size() <= 8192 || !strcmp(p.resolved, "prefix:2@8192"));
    EXPECT(fm_mcast_predict(ctx, 3, 0, "chain", 0, len, NULL), FM_ERR_INVALID);
    EXPECT(fm_mcast_predict(ctx, 3, 0, "nosuchtree", 0, len, &p), FM_ERR_TREE);
    EXPECT(fm_mcast_predict_time(ctx, 2, 1, NULL, 0, 1000, &t, NULL), FM_OK);
    EXPECT(fm_group_destroy(g), FM_OK);
}

static void bad_mcast_arguments(void **state)
{
    (void)state;
    fm_stream *s;
    fm_group *g, *others;
    double t;
    int all[] = {0, 1}; /* the same list on both ranks: the same group */
    EXPECT(fm_group_create(ctx, all, 2, &g), FM_OK);
    EXPECT(fm_group_create(ctx, &peer, 1, &others), FM_OK);
    EXPECT(fm_barrier(ctx), FM_OK); /* every member has g before a multicast on it comes */
    /* unknown flags */
    EXPECT(fm_mcast_begin_list(ctx, all, 2, "flat", 0x40, 8, H_CHECK, &s), FM_ERR_INVALID);
    EXPECT(fm_mcast_begin(g, "flat", ~0u, 8, H_CHECK, &s), FM_ERR_INVALID);
    EXPECT(fm_mcast_predict_time(ctx, 2, 0, "flat", 0x40, 8, &t, NULL), FM_ERR_INVALID);
    /* FM_MCAST_ACK: for requests only; the model predicts the data's completion with it */
    EXPECT(fm_mcast_begin(g, "flat", FM_MCAST_ACK, 8, H_CHECK, &s), FM_ERR_INVALID);
    EXPECT(fm_mcast_predict_time(ctx, 2, 0, "flat", FM_MCAST_ACK, 8, &t, NULL), FM_OK);
    EXPECT(fm_mcast_predict_time(ctx, 2, 0, "flat", FM_MCAST_STORE_FORWARD | FM_MCAST_FCFS, 8, &t,
                                 NULL),
           FM_ERR_INVALID);
    /* not a member */
    EXPECT(fm_mcast_begin_list(ctx, &peer, 1, "flat", 0, 8, H_CHECK, &s), FM_ERR_NOT_MEMBER);
    EXPECT(fm_mcast_begin(others, "flat", 0, 8, H_CHECK, &s), FM_ERR_NOT_MEMBER);
    EXPECT(fm_group_position(others), -1);
    EXPECT(fm_group_size(others), 1);
    /* positions and counts of fm_mcast_predict_time */
    EXPECT(fm_mcast_predict_time(ctx, 0, 0, "flat", 0, 8, &t, NULL), FM_ERR_INVALID);
    EXPECT(fm_mcast_predict_time(ctx, -3, 0, "flat", 0, 8, &t, NULL), FM_ERR_INVALID);
    EXPECT(fm_mcast_predict_time(ctx, 2, -1, "flat", 0, 8, &t, NULL), FM_ERR_INVALID);
    EXPECT(fm_mcast_predict_time(ctx, 2, 2, "flat", 0, 8, &t, NULL), FM_ERR_INVALID);
    EXPECT(fm_group_destroy(others), FM_OK);
    /* a multicast that is fine goes through */
    EXPECT(fm_mcast_begin(g, "flat", 0, 12, H_CHECK, &s), FM_OK);
    EXPECT(st_send_body(s, me, peer, case_no, 12, 0), FM_OK);
    EXPECT(fm_end_message(s), FM_OK);
    wait_for(&checked[case_no], 1, "the good multicast"); /* (before the peer destroys g) */
    EXPECT(fm_barrier(ctx), FM_OK);
    EXPECT(fm_group_destroy(g), FM_OK);
}

static void null_pointers(void **state)
{
    (void)state;
    fm_stream *s;
    fm_group *g;
    fm_ev *w;
    int all[] = {0, 1}; /* the same list on both ranks: the same group */
    unsigned char b[8] = {0};
    EXPECT(fm_begin_message(ctx, peer, 8, H_CHECK, NULL), FM_ERR_INVALID);
    EXPECT(fm_begin_message_multi(ctx, NULL, 1, 8, H_CHECK, &s), FM_ERR_INVALID);
    EXPECT(fm_begin_message_multi(ctx, &peer, 1, 8, H_CHECK, NULL), FM_ERR_INVALID);
    EXPECT(fm_group_create(ctx, NULL, 2, &g), FM_ERR_INVALID);
    EXPECT(fm_group_create(ctx, all, 2, NULL), FM_ERR_INVALID);
    EXPECT(fm_group_destroy(NULL), FM_ERR_INVALID);
    EXPECT(fm_group_size(NULL), FM_ERR_INVALID);
    EXPECT(fm_group_position(NULL), FM_ERR_INVALID);
    EXPECT(fm_mcast_begin(NULL, "flat", 0, 8, H_CHECK, &s), FM_ERR_INVALID);
    EXPECT(fm_mcast_begin_list(ctx, NULL, 2, "flat", 0, 8, H_CHECK, &s), FM_ERR_INVALID);
    EXPECT(fm_mcast_begin_list(ctx, all, 2, "flat", 0, 8, H_CHECK, NULL), FM_ERR_INVALID);
    EXPECT(fm_mcast_predict_time(ctx, 2, 0, "flat", 0, 8, NULL, NULL), FM_ERR_INVALID);
    EXPECT(fm_send_piece(NULL, b, 1), FM_ERR_INVALID);
    EXPECT(fm_end_message(NULL), FM_ERR_INVALID);
    EXPECT(fm_receive(NULL, b, 1), FM_ERR_INVALID);
    EXPECT(fm_stream_deliver(NULL, b, 1, delivered, NULL), FM_ERR_INVALID);
    assert_int_equal(fm_stream_available(NULL), 0);
    assert_int_equal(fm_stream_length(NULL), 0);
    assert_int_equal(fm_stream_complete(NULL), 0);
    assert_null(fm_stream_user(NULL));
    fm_stream_set_user(NULL, b);
    EXPECT(fm_get_stats(ctx, NULL), FM_ERR_INVALID);
    EXPECT(fm_ev_start(ctx, NULL, &w), FM_ERR_INVALID);
    assert_null(w);
    EXPECT(fm_ev_start(ctx, EV_DEFAULT, NULL), FM_ERR_INVALID);
    EXPECT(fm_ev_error(NULL), FM_ERR_INVALID);
    fm_ev_stop(NULL);
    /* NULL with nothing to read or write is fine */
    EXPECT(fm_begin_message(ctx, peer, 0, H_CHECK, &s), FM_OK);
    EXPECT(fm_send_piece(s, NULL, 0), FM_OK);
    EXPECT(fm_send_piece(s, NULL, 1), FM_ERR_INVALID);
    EXPECT(fm_end_message(s), FM_OK);
    empties_sent++;
    wait_for(&empties, empties_sent, "the empty message");
}

/* A group is checked against the live context's groups before it is read. */
static void destroyed_group(void **state)
{
    (void)state;
    fm_stream *s;
    fm_group *g;
    int all[] = {0, 1}; /* the same list on both ranks: the same group */
    EXPECT(fm_group_create(ctx, all, 2, &g), FM_OK);
    EXPECT(fm_group_size(g), 2);
    EXPECT(fm_group_position(g), me);
    EXPECT(fm_group_destroy(g), FM_OK);
    EXPECT(fm_group_destroy(g), FM_ERR_INVALID);
    EXPECT(fm_group_size(g), FM_ERR_INVALID);
    EXPECT(fm_group_position(g), FM_ERR_INVALID);
    EXPECT(fm_mcast_begin(g, "flat", 0, 8, H_CHECK, &s), FM_ERR_INVALID);
    assert_null(s);
}

/* In a handler, on the inbound stream: it is not a sending stream; deliver takes one buffer. */
static void probe_state(fm_stream *s)
{
    unsigned char *buf = malloc(64), b[4] = {0};
    record(fm_send_piece(s, b, 1));
    record(fm_end_message(s));
    record(fm_stream_deliver(s, buf, 64, delivered, checked)); /* delivered() frees buf */
    record(fm_stream_deliver(s, buf, 64, delivered, checked));
    record(fm_stream_deliver(s, NULL, 8, delivered, checked));
}

static void stream_wrong_state(void **state)
{
    (void)state;
    fm_stream *s;
    unsigned char b[16];
    /* a sending stream is not read from */
    EXPECT(fm_begin_message(ctx, peer, 16, H_CHECK, &s), FM_OK);
    EXPECT(fm_receive(s, b, 1), FM_ERR_INVALID);
    EXPECT(fm_stream_deliver(s, b, sizeof b, delivered, NULL), FM_ERR_INVALID);
    assert_int_equal(fm_stream_available(s), 0);
    assert_int_equal(fm_stream_complete(s), 0);
    EXPECT(st_send_body(s, me, peer, case_no, 16, 0), FM_OK);
    EXPECT(fm_end_message(s), FM_OK);
    wait_for(&checked[case_no], 1, "the 16-byte message");
    /* the peer's probe: its deliver buffer gets the 5 bytes (checked as message case_no) */
    run_probe(probe_state, 5);
    const int want[] = {FM_ERR_STATE, FM_ERR_STATE, FM_OK, FM_ERR_STATE, FM_ERR_INVALID};
    expect_probe(want, 5);
    wait_for(&checked[case_no], 2, "the probe's delivery");
}

/* Calls that wait are refused inside a handler; sending is allowed. */
static void probe_in_handler(fm_stream *s)
{
    (void)s;
    record(fm_extract(ctx, 0));
    record(fm_wait(ctx, 0));
    record(fm_barrier(ctx));
    record(fm_mcast_calibrate(ctx));
    record(fm_finalize(ctx));
    record(send_msg(peer, H_CHECK, case_no, 7));
}

static void inside_handler(void **state)
{
    (void)state;
    run_probe(probe_in_handler, 1);
    const int want[] = {FM_ERR_IN_HANDLER, FM_ERR_IN_HANDLER, FM_ERR_IN_HANDLER,
                        FM_ERR_IN_HANDLER, FM_ERR_IN_HANDLER, FM_OK};
    expect_probe(want, 6);
    wait_for(&checked[case_no], 1, "the reply sent from the peer's handler");
}

/* The fm_stream_deliver callback is part of the handler: the same calls are refused in it (a
 * wait from it could release the stream it is called for). */
static void deliver_probe_done(void *buf, size_t len, int status, int sender, void *arg)
{
    (void)len;
    (void)sender;
    (void)arg;
    record(status);
    record(fm_extract(ctx, 0));
    record(fm_wait(ctx, 0));
    record(fm_wait(ctx, -1));
    record(fm_barrier(ctx));
    record(fm_mcast_calibrate(ctx));
    record(fm_finalize(ctx));
    record(send_msg(peer, H_CHECK, case_no, 9));
    free(buf);
}

static void probe_deliver(fm_stream *s)
{
    record(fm_stream_deliver(s, malloc(8), 8, deliver_probe_done, NULL));
}

static void inside_deliver(void **state)
{
    (void)state;
    run_probe(probe_deliver, 3);
    const int want[] = {FM_OK,
                        FM_OK,
                        FM_ERR_IN_HANDLER,
                        FM_ERR_IN_HANDLER,
                        FM_ERR_IN_HANDLER,
                        FM_ERR_IN_HANDLER,
                        FM_ERR_IN_HANDLER,
                        FM_ERR_IN_HANDLER,
                        FM_OK};
    expect_probe(want, 9);
    wait_for(&checked[case_no], 1, "the message sent from the peer's deliver callback");
}

static void handlers_full(void **state)
{
    (void)state;
    int added = 0, id;
    while ((id = fm_add_handler(ctx, on_other, NULL)) >= 0)
        added++;
    EXPECT(id, FM_ERR_HANDLER);
    assert_true(added > 0 && added < FM_MAX_HANDLERS);
    EXPECT(fm_register_handler(ctx, FM_MAX_HANDLERS - 1, on_other, NULL), FM_ERR_REGISTERED);
}

/* After fm_finalize the context is gone: every call given it says so, and no call reads it. */
static void after_finalize(void **state)
{
    (void)state;
    fm_stream *s;
    fm_group *g, *kept;
    fm_stats st;
    fm_ev *w;
    double t;
    int all[] = {0, 1}; /* the same list on both ranks: the same group */
    EXPECT(fm_group_create(ctx, all, 2, &kept), FM_OK);
    /* A message begun and never ended: fm_finalize frees its stream (the sanitizer and
     * valgrind runs of this test see a leak otherwise). Nothing of it has left. */
    fm_stream *open;
    EXPECT(fm_begin_message(ctx, peer, 100, H_CHECK, &open), FM_OK);
    EXPECT(fm_finalize(ctx), FM_OK);
    EXPECT(fm_finalize(ctx), FM_ERR_NOT_INIT);
    EXPECT(fm_rank(ctx), FM_ERR_NOT_INIT);
    EXPECT(fm_size(ctx), FM_ERR_NOT_INIT);
    assert_true(fm_job_key(ctx) == 0);
    EXPECT(fm_barrier(ctx), FM_ERR_NOT_INIT);
    EXPECT(fm_register_handler(ctx, H_SPARE + 2, on_other, NULL), FM_ERR_NOT_INIT);
    EXPECT(fm_add_handler(ctx, on_other, NULL), FM_ERR_NOT_INIT);
    EXPECT(fm_begin_message_multi(ctx, &peer, 1, 8, H_CHECK, &s), FM_ERR_NOT_INIT);
    EXPECT(fm_group_create(ctx, all, 2, &g), FM_ERR_NOT_INIT);
    EXPECT(fm_group_destroy(kept), FM_ERR_NOT_INIT);
    EXPECT(fm_group_size(kept), FM_ERR_NOT_INIT);
    EXPECT(fm_group_position(kept), FM_ERR_NOT_INIT);
    EXPECT(fm_mcast_begin(kept, "flat", 0, 8, H_CHECK, &s), FM_ERR_NOT_INIT);
    EXPECT(fm_mcast_begin_list(ctx, all, 2, "flat", 0, 8, H_CHECK, &s), FM_ERR_NOT_INIT);
    EXPECT(fm_mcast_calibrate(ctx), FM_ERR_NOT_INIT);
    EXPECT(fm_mcast_predict_time(ctx, 2, 0, "flat", 0, 8, &t, NULL), FM_ERR_NOT_INIT);
    EXPECT(fm_get_stats(ctx, &st), FM_ERR_NOT_INIT);
    EXPECT(fm_ev_start(ctx, EV_DEFAULT, &w), FM_ERR_NOT_INIT);
    EXPECT(fm_begin_message(ctx, peer, 8, H_CHECK, &s), FM_ERR_NOT_INIT);
    EXPECT(fm_extract(ctx, 0), FM_ERR_NOT_INIT);
    EXPECT(fm_wait(ctx, 0), FM_ERR_NOT_INIT);
    EXPECT(fm_wait_fd(ctx), FM_ERR_NOT_INIT);
    EXPECT(fm_trywait(ctx), FM_ERR_NOT_INIT);
    ctx = NULL;
}

/* ---- main ---- */

static int init_only(void)
{
    fm_context *c;
    int rc = fm_init(&c);
    if (rc) {
        fprintf(stderr, "api_errors: fm_init: %s (%d)\n", fm_strerror(rc), rc);
        return 1;
    }
    int rank = fm_rank(c), size = fm_size(c);
    rc = fm_finalize(c);
    if (rc) {
        fprintf(stderr, "api_errors: fm_finalize: %s (%d)\n", fm_strerror(rc), rc);
        return 1;
    }
    printf("api_errors: rank %d of %d: fm_init ok\n", rank, size);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--init-only"))
        return init_only();
    if (argc > 1) {
        fprintf(stderr, "usage: api_errors [--init-only]\n");
        return 2;
    }
    /* Each case, then the check that a normal message still goes through both ways. */
    const struct CMUnitTest cases[] = {
        cmocka_unit_test_setup_teardown(strerror_texts, next_case, still_usable),
        cmocka_unit_test_setup_teardown(before_init, next_case, still_usable),
        cmocka_unit_test_setup_teardown(init_twice, next_case, still_usable),
        cmocka_unit_test_setup_teardown(unknown_rank, next_case, still_usable),
        cmocka_unit_test_setup_teardown(self_destination, next_case, still_usable),
        cmocka_unit_test_setup_teardown(duplicate_rank, next_case, still_usable),
        cmocka_unit_test_setup_teardown(empty_list, next_case, still_usable),
        cmocka_unit_test_setup_teardown(more_than_declared, next_case, still_usable),
        cmocka_unit_test_setup_teardown(more_than_sent, next_case, still_usable),
        cmocka_unit_test_setup_teardown(unregistered_handler, next_case, still_usable),
        cmocka_unit_test_setup_teardown(registered_twice, next_case, still_usable),
        cmocka_unit_test_setup_teardown(handler_out_of_range, next_case, still_usable),
        cmocka_unit_test_setup_teardown(handler_null, next_case, still_usable),
        cmocka_unit_test_setup_teardown(oversize, next_case, still_usable),
        cmocka_unit_test_setup_teardown(bad_tree, next_case, still_usable),
        cmocka_unit_test_setup_teardown(bad_mcast_arguments, next_case, still_usable),
        cmocka_unit_test_setup_teardown(null_pointers, next_case, still_usable),
        cmocka_unit_test_setup_teardown(destroyed_group, next_case, still_usable),
        cmocka_unit_test_setup_teardown(stream_wrong_state, next_case, still_usable),
        cmocka_unit_test_setup_teardown(inside_handler, next_case, still_usable),
        cmocka_unit_test_setup_teardown(inside_deliver, next_case, still_usable),
        cmocka_unit_test_setup_teardown(handlers_full, next_case, still_usable),
        cmocka_unit_test_setup(after_finalize, next_case),
    };
    return cmocka_run_group_tests_name("api_errors", cases, setup_all, NULL);
}
