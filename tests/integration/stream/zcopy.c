/* SPDX-License-Identifier: BSD-3-Clause */
/* zcopy: corner cases of the zero-copy path (pieces of at least FM_ZCOPY bytes, default 32K,
 * sent outside handlers go as an announcement packet plus a tagged message).
 *
 *   fastmsg-run -n 2 zcopy done [--rounds R]
 *   FM_TIMEOUT=1 fastmsg-run -n 2 zcopy timeout
 *
 * done: both ranks send each other R rounds of two messages. The first goes to a handler that
 * returns FM_DONE partway, while (or before) a zero-copy piece of it is under way, in one of
 * four ways (round % 4):
 *   0  pieces 10, 100000, 5: FM_DONE after reading 4 bytes of the first packet;
 *   1  pieces 100000, 7: FM_DONE at the first call, which sees only the announcement;
 *   2  pieces 10, 100000, 3, 40000, 9: FM_DONE after reading 30 bytes (20 of the first
 *      piece, from its bounce buffer), so the second piece is drained and dropped;
 *   3  pieces 10, 100000, 1M+5: FM_DONE once the first piece is read, before the second.
 * The second message (pieces 7, 100000, 3) is delivered with fm_stream_deliver and must
 * arrive intact. Every byte read is checked. At the end every message must have been
 * released (fm_stats.messages_received counts them, within 5 s), and exactly the pieces that
 * reach a handler still reading must have gone zero-copy (fm_stats.zcopy_received); those
 * that reach a handler done with its message are declined and come through packets.
 *
 * flood [--piece N] [--len N]: as in timeout, rank 0 sleeps (1 s) while rank 1 writes one
 * message of N bytes (default 4M) in pieces of N bytes (default 32K). Without the receiver,
 * fm_send_piece may accept no more than the credit window, (FM_CREDITS + 1) packets, as it
 * does for pieces that go in packets; the message must then arrive intact.
 *
 * timeout: rank 0 tells rank 1 it is going to sleep, and once rank 1 has answered, does not
 * drive progress for 3 s; rank 1 meanwhile (0.2 s after its answer) sends it a message of one 1 MiB
 * piece, so fm_send_piece waits for the receiver and gives up after FM_TIMEOUT (1 s).
 * fm_send_piece's contract: "buf is the caller's again when the call returns", so rank 1 then
 * overwrites its buffer with 0xEE. Rank 0 must never receive those bytes: it gets the original
 * bytes or no piece. Rank 0 then tells rank 1 it is done. No fm_barrier at the start (with
 * FM_TIMEOUT=1 a slow start would fail it): a message that arrives before its handler is registered
 * waits. */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { H_QUIT, H_CHECK, H_ACK, H_FLOOD };
#define MAX_PIECES 8

static fm_context *ctx;
static int me, peer, rounds = 8;
static size_t flood_piece = 32 * 1024, flood_len = (size_t)4 << 20;
static int quits, checks, acks;

/* ---- the messages of "done" ---- */

typedef struct shape {
    size_t pieces[MAX_PIECES]; /* 0 ends the list */
    size_t stop;               /* H_QUIT: bytes read before FM_DONE */
} shape;

static const shape quit_shapes[4] = {
    {{10, 100000, 5}, 4},
    {{100000, 7}, 0},
    {{10, 100000, 3, 40000, 9}, 30},
    {{10, 100000, (1 << 20) + 5}, 10 + 100000},
};
static const shape check_shape = {{7, 100000, 3}, 0};

static size_t shape_len(const shape *sh)
{
    size_t n = 0;
    for (int i = 0; i < MAX_PIECES && sh->pieces[i]; i++)
        n += sh->pieces[i];
    return n;
}

/* Pieces that go zero-copy: those the handler is still reading when they come (a piece that
 * reaches a handler already done with its message is declined and comes through packets). */
static uint64_t shape_zcopy(const shape *sh)
{
    uint64_t k = 0;
    size_t off = 0;
    for (int i = 0; i < MAX_PIECES && sh->pieces[i]; i++) {
        k += st_is_zcopy(sh->pieces[i]) && (sh == &check_shape || off < sh->stop);
        off += sh->pieces[i];
    }
    return k;
}

/* Message index m: 2 * round for H_QUIT, 2 * round + 1 for H_CHECK. */
static const shape *shape_of(int m)
{
    return m % 2 ? &check_shape : &quit_shapes[(m / 2) % 4];
}

static void send_shape(int dest, int handler, int m)
{
    const shape *sh = shape_of(m);
    fm_stream *s;
    int rc = fm_begin_message(ctx, dest, shape_len(sh), handler, &s);
    size_t off = 0;
    for (int i = 0; rc == FM_OK && i < MAX_PIECES && sh->pieces[i]; i++) {
        rc = st_send_range(s, me, dest, m, off, off + sh->pieces[i], 0);
        off += sh->pieces[i];
    }
    if (rc == FM_OK)
        rc = fm_end_message(s);
    if (rc)
        st_fail("sending message %d: %s", m, fm_strerror(rc));
}

typedef struct quit_state {
    int shape, m;
    size_t off;
} quit_state;

/* Reads up to its shape's stop (the shape is known by the declared length), then FM_DONE. */
static int on_quit(fm_stream *s, int sender, void *arg)
{
    (void)arg;
    quit_state *q = fm_stream_user(s);
    if (!q) {
        q = calloc(1, sizeof *q);
        q->shape = -1;
        for (int k = 0; k < 4; k++)
            if (fm_stream_length(s) == shape_len(&quit_shapes[k]))
                q->shape = k;
        q->m = -1;
        fm_stream_set_user(s, q);
        if (q->shape < 0)
            st_fail("a message of %zu bytes from rank %d matches no shape", fm_stream_length(s),
                    sender);
    }
    size_t stop = q->shape < 0 ? 0 : quit_shapes[q->shape].stop;
    unsigned char buf[4096];
    while (q->off < stop) {
        size_t want = stop - q->off < sizeof buf ? stop - q->off : sizeof buf;
        ssize_t got = fm_receive(s, buf, want);
        if (got < 0)
            st_fail("fm_receive in the FM_DONE handler: %s", fm_strerror((int)got));
        if (got <= 0)
            break;
        if (q->off == 0 && ((q->m = buf[0]) % 2 || (q->m / 2) % 4 != q->shape))
            st_fail("message %d from rank %d has the shape of round %d", q->m, sender, q->shape);
        size_t bad = st_mismatch(buf, (size_t)got, sender, me, q->m, q->off);
        if (bad != (size_t)-1)
            st_fail("message %d from rank %d: wrong byte at offset %zu", q->m, sender, bad);
        q->off += (size_t)got;
    }
    if (q->off < stop) {
        if (!fm_stream_complete(s) || fm_stream_available(s))
            return FM_CONTINUE;
        st_fail("message %d from rank %d ended after %zu bytes, before its stop %zu", q->m, sender,
                q->off, stop);
    }
    quits++;
    free(q);
    fm_stream_set_user(s, NULL);
    return FM_DONE;
}

static void checked(void *buf, size_t len, int status, int sender, void *arg)
{
    if (status)
        st_fail("a delivered message from rank %d: %s", sender, fm_strerror(status));
    (void)arg;
    unsigned char *b = buf;
    int m = len ? b[0] : -1;
    size_t bad;
    if (m < 0 || m % 2 != 1 || len != shape_len(&check_shape))
        st_fail("unexpected delivered message from rank %d: %zu bytes, m %d", sender, len, m);
    else if ((bad = st_mismatch(b, len, sender, me, m, 0)) != (size_t)-1)
        st_fail("message %d from rank %d (after an FM_DONE): wrong byte at offset %zu", m, sender,
                bad);
    checks++;
    free(buf);
}

static int on_check(fm_stream *s, int sender, void *arg)
{
    (void)sender;
    size_t cap = fm_stream_length(s);
    int rc = fm_stream_deliver(s, malloc(cap + 1), cap, checked, arg);
    if (rc)
        st_fail("fm_stream_deliver: %s", fm_strerror(rc));
    return FM_CONTINUE;
}

static int on_ack(fm_stream *s, int sender, void *arg)
{
    (void)s;
    (void)sender;
    (void)arg;
    acks++;
    return FM_DONE;
}

/* Progress until *count reaches want or seconds pass; 0 when reached. */
static int wait_count(const int *count, int want, int seconds)
{
    time_t end = time(NULL) + seconds;
    while (*count < want && time(NULL) < end)
        if (fm_wait(ctx, 10) < 0)
            break;
    return *count >= want ? 0 : -1;
}

static uint64_t released(void)
{
    fm_stats st;
    fm_get_stats(ctx, &st);
    return st.messages_received;
}

static void run_done(void)
{
    /* Counted from here: fastmsg's own messages before (the start's barrier, and over tcp the
     * wire-up's hello) are not this test's. No handler runs before the first send. */
    const uint64_t base = released();
    for (int r = 0; r < rounds; r++) {
        send_shape(peer, H_QUIT, 2 * r);
        send_shape(peer, H_CHECK, 2 * r + 1);
    }
    if (wait_count(&checks, rounds, 20) || wait_count(&quits, rounds, 5))
        st_fail("%d of %d delivered messages and %d of %d FM_DONE messages arrived", checks, rounds,
                quits, rounds);
    /* Every message is released once its last packet is in. */
    uint64_t want = base + 2 * (uint64_t)rounds;
    time_t end = time(NULL) + 5;
    while (released() < want && time(NULL) < end)
        fm_wait(ctx, 10);
    /* (+1 more: the peer's message of fm_finalize's barrier, if it is there already) */
    if (released() < want || released() > want + 1)
        st_fail("%llu messages released, want %llu (streams ended with FM_DONE not released?)",
                (unsigned long long)released(), (unsigned long long)want);
    uint64_t zc = 0;
    for (int m = 0; m < 2 * rounds; m++)
        zc += shape_zcopy(shape_of(m));
    st_check_zcopy(ctx, zc, zc, st_zcopy_min() == 0 || st_zcopy_min() > 8);
}

/* ---- timeout ---- */

#define T_LEN ((size_t)1 << 20)

static void send_ack(int dest)
{
    fm_stream *s;
    int rc = fm_begin_message(ctx, dest, 0, H_ACK, &s);
    if (rc == FM_OK)
        rc = fm_end_message(s);
    if (rc)
        st_fail("sending an ack: %s", fm_strerror(rc));
}

/* Rank 1: wait until rank 0 says it goes to sleep, answer, and drive progress 0.2 s more (the
 * answer may wait in the transport's queue) while rank 0, once it has the answer, sleeps.
 * Rank 0 sends a second ack when it is awake again. 0 when rank 0 is asleep now. */
static int until_asleep(void)
{
    if (wait_count(&acks, 1, 15)) {
        st_fail("rank 0 did not say it sleeps");
        return -1;
    }
    send_ack(0);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        fm_wait(ctx, 10);
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < 200);
    return 0;
}

/* Rank 0: tell rank 1, wait for its answer, sleep without driving progress. */
static void go_to_sleep(unsigned seconds)
{
    send_ack(1);
    if (wait_count(&acks, 1, 15))
        st_fail("no answer from rank 1");
    sleep(seconds);
}

static void timeout_sender(void)
{
    if (until_asleep())
        return;
    unsigned char *buf = malloc(T_LEN);
    st_fill(buf, T_LEN, me, 0, 1, 0);
    fm_stream *s;
    int rc = fm_begin_message(ctx, 0, T_LEN, H_CHECK, &s);
    if (rc) {
        st_fail("fm_begin_message: %s", fm_strerror(rc));
        return;
    }
    rc = fm_send_piece(s, buf, T_LEN);
    printf("rank %d: fm_send_piece of %zu bytes to a receiver not driving progress: %s\n", me,
           T_LEN, fm_strerror(rc));
    if (rc != FM_OK && rc != FM_ERR_TIMEOUT)
        st_fail("fm_send_piece: %s, want FM_OK or FM_ERR_TIMEOUT", fm_strerror(rc));
    memset(buf, 0xEE, T_LEN); /* the caller's again */
    rc = fm_end_message(s);
    if (rc)
        printf("rank %d: fm_end_message: %s\n", me, fm_strerror(rc));
    if (wait_count(&acks, 2, 15))
        st_fail("no word from rank 0");
    free(buf);
}

static void timeout_receiver(void)
{
    go_to_sleep(3);
    wait_count(&checks, 1, 3);
    printf("rank %d: %d messages delivered after the sleep\n", me, checks);
    send_ack(1); /* done */
}

/* Delivered into rank 0 in "timeout": the original bytes, or none (never 0xEE). */
static void timeout_in(void *buf, size_t len, int status, int sender, void *arg)
{
    (void)status; /* the piece withdrawn or not: only its bytes are checked */
    (void)arg;
    unsigned char *b = buf;
    size_t bad = st_mismatch(b, len, sender, me, 1, 0);
    if (bad != (size_t)-1) {
        size_t ee = 0;
        for (size_t i = 0; i < len; i++)
            ee += b[i] == 0xEE;
        st_fail("the %zu-byte message has wrong bytes from offset %zu (%zu bytes are 0xEE, "
                "written into the sender's buffer after fm_send_piece returned)",
                len, bad, ee);
    }
    checks++;
    free(buf);
}

static int on_timeout_msg(fm_stream *s, int sender, void *arg)
{
    (void)sender;
    size_t cap = fm_stream_length(s);
    int rc = fm_stream_deliver(s, malloc(cap + 1), cap, timeout_in, arg);
    if (rc)
        st_fail("fm_stream_deliver: %s", fm_strerror(rc));
    return FM_CONTINUE;
}

/* ---- flood ---- */

static void flood_sender(void)
{
    size_t packet = st_packet_size(), credits = st_env_size("FM_CREDITS", 8);
    size_t window = (credits + 1) * packet;
    if (until_asleep())
        return;
    unsigned char *buf = malloc(flood_piece);
    fm_stream *s;
    int rc = fm_begin_message(ctx, 0, flood_len, H_FLOOD, &s);
    size_t off = 0, asleep = 0;
    while (rc == FM_OK && off < flood_len) {
        size_t n = flood_piece < flood_len - off ? flood_piece : flood_len - off;
        st_fill(buf, n, me, 0, 1, off);
        rc = fm_send_piece(s, buf, n);
        off += n;
        if (acks < 2)
            asleep = off;
    }
    if (rc == FM_OK)
        rc = fm_end_message(s);
    if (rc)
        st_fail("sending: %s", fm_strerror(rc));
    printf("rank %d: %zu bytes in %zu-byte pieces accepted by fm_send_piece while the receiver "
           "slept (credit window %zu)\n",
           me, asleep, flood_piece, window);
    if (asleep > window)
        st_fail("%zu bytes sent while the receiver slept: more than FM_CREDITS+1 packets (%zu); "
                "credits no longer bound what is in flight",
                asleep, window);
    if (wait_count(&acks, 3, 10))
        st_fail("no word from rank 0");
    free(buf);
}

static void flooded(void *buf, size_t len, int status, int sender, void *arg)
{
    if (status)
        st_fail("a delivered message from rank %d: %s", sender, fm_strerror(status));
    (void)arg;
    size_t bad = st_mismatch(buf, len, sender, me, 1, 0);
    if (len != flood_len || bad != (size_t)-1)
        st_fail("flood: %zu bytes (want %zu), wrong byte at %zu", len, flood_len, bad);
    checks++;
    free(buf);
}

static int on_flood(fm_stream *s, int sender, void *arg)
{
    (void)sender;
    size_t cap = fm_stream_length(s);
    if (fm_stream_deliver(s, malloc(cap + 1), cap, flooded, arg))
        st_fail("fm_stream_deliver");
    return FM_CONTINUE;
}

static void flood_receiver(void)
{
    go_to_sleep(1);
    send_ack(1); /* awake */
    if (wait_count(&checks, 1, 5))
        st_fail("the flood did not arrive within 5 s");
    send_ack(1); /* done */
}

int main(int argc, char **argv)
{
    int timeout_case = argc >= 2 && !strcmp(argv[1], "timeout");
    int flood_case = argc >= 2 && !strcmp(argv[1], "flood");
    if (argc < 2 || (!timeout_case && !flood_case && strcmp(argv[1], "done")))
        goto usage;
    for (int i = 2; i < argc; i++) {
        int ok = 1;
        if (!strcmp(argv[i], "--rounds") && i + 1 < argc && (rounds = atoi(argv[++i])) > 0 &&
            rounds < 120)
            continue;
        if (!strcmp(argv[i], "--piece") && i + 1 < argc &&
            (flood_piece = st_parse_size(argv[++i], &ok)) > 0 && ok)
            continue;
        if (!strcmp(argv[i], "--len") && i + 1 < argc &&
            (flood_len = st_parse_size(argv[++i], &ok)) > 0 && ok)
            continue;
        goto usage;
    }
    ctx = st_init();
    me = fm_rank(ctx);
    if (fm_size(ctx) != 2)
        fm_abort(ctx, 2, "zcopy: run with -n 2");
    peer = 1 - me;
    if (fm_register_handler(ctx, H_QUIT, on_quit, NULL) ||
        fm_register_handler(ctx, H_CHECK, timeout_case ? on_timeout_msg : on_check, NULL) ||
        fm_register_handler(ctx, H_ACK, on_ack, NULL) ||
        fm_register_handler(ctx, H_FLOOD, on_flood, NULL) ||
        (!timeout_case && !flood_case && fm_barrier(ctx)))
        fm_abort(ctx, 1, "FAIL: setup");
    if (flood_case)
        me == 1 ? flood_sender() : flood_receiver();
    else if (!timeout_case)
        run_done();
    else if (me == 1)
        timeout_sender();
    else
        timeout_receiver();
    return st_finish(ctx, flood_case     ? "zcopy flood"
                          : timeout_case ? "zcopy timeout"
                                         : "zcopy done");
usage:
    fprintf(stderr, "usage: zcopy done [--rounds R] | timeout | flood [--piece N] [--len N]\n");
    return 2;
}
