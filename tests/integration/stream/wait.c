/* SPDX-License-Identifier: BSD-3-Clause */
/* wait: what blocking waits promise about FM_TIMEOUT, and what fm_wait returns.
 *
 *   fastmsg-run -n N wait MODE      (FM_TIMEOUT small: 1 or 2 s)
 *
 *   idle     (2 ranks) rank 1 does nothing for 3 x FM_TIMEOUT, then sends rank 0 one 8-byte
 *            message. Rank 0 waits with fm_wait(ctx, -1): no call may fail (nothing is owed
 *            while rank 1 is idle), nothing may be logged as given up, the returns add up to
 *            exactly 8, and fm_finalize succeeds.
 *   count    (2 ranks) on rank 0's word, rank 1 sends one 8-byte message and enters
 *            fm_barrier (in fm_finalize), whose own message to rank 0 comes right after. Rank
 *            0 adds up fm_wait's returns until both packets are in: exactly 8 (fastmsg's own
 *            messages are not the caller's bytes).
 *   owed     (3+ ranks) rank 1 sends the first packet of a 3-packet message to rank 0 and
 *            stops (SIGSTOP) while ranks 2.. keep sending rank 0 small messages. Rank 0's
 *            fm_wait(ctx, -1) must fail with FM_ERR_TIMEOUT (rank 1 owes the rest of its
 *            message) although the others keep it busy; rank 0 then continues rank 1
 *            (SIGCONT) and the message completes.
 *   credits  (3+ ranks) rank 1 stops; rank 0 writes a message of FM_CREDITS + 4 packets to
 *            it, one packet per fm_send_piece, while ranks 2.. keep sending rank 0 small
 *            messages: a piece must fail with FM_ERR_TIMEOUT (no credits come back) although
 *            rank 0 is kept busy. Rank 0 continues rank 1 and finishes the message on the
 *            same stream.
 *   end      (2 ranks) rank 1 stops; rank 0 writes exactly FM_CREDITS packets and a few bytes
 *            more: fm_end_message must fail with FM_ERR_TIMEOUT and leave the stream open, so
 *            that after SIGCONT a second fm_end_message ends the message.
 * Every message's bytes are checked. In owed and credits, the senders stop on their own after
 * 20 s and say so: a timeout that comes only after that fails the test (it would have needed
 * rank 0 to be idle). */
#include "common.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

enum { H_DATA, H_PID, H_SPAM, H_STOP, H_HELLO };
#define SPAM_SECS 20

static fm_context *ctx;
static int me, mode;
static long timeout_s;
static size_t packet;
static int credits;
enum { M_IDLE, M_COUNT, M_OWED, M_CREDITS, M_END };

/* rank 0 */
static pid_t stopped_pid;
static int pid_seen, data_done, spam_seen, spam_over;
static size_t data_len;
/* rank 2 (and rank 1 in count: rank 0's word to go) */
static int stop_seen;

static size_t env_long(const char *name, size_t dflt)
{
    return st_env_size(name, dflt);
}

/* ---- handlers ---- */

/* The data message, read in odd chunks and checked; length data_len. */
static int on_data(fm_stream *s, int sender, void *arg)
{
    (void)arg;
    unsigned char buf[4099];
    size_t off = (size_t)(uintptr_t)fm_stream_user(s);
    ssize_t n;
    while ((n = fm_receive(s, buf, st_odd_size((unsigned)off) % sizeof buf + 1)) > 0) {
        size_t bad = st_mismatch(buf, (size_t)n, sender, me, 1, off);
        if (bad != (size_t)-1)
            st_fail("the message from rank %d: wrong byte at offset %zu", sender, bad);
        off += (size_t)n;
    }
    fm_stream_set_user(s, (void *)(uintptr_t)off);
    if (!fm_stream_complete(s) || fm_stream_available(s))
        return FM_CONTINUE;
    if (off != data_len)
        st_fail("the message from rank %d: %zu bytes, want %zu", sender, off, data_len);
    data_done++;
    return FM_DONE;
}

static int on_pid(fm_stream *s, int sender, void *arg)
{
    (void)sender;
    (void)arg;
    int32_t pid;
    if (fm_receive(s, &pid, sizeof pid) != (ssize_t)sizeof pid)
        st_fail("a short pid message");
    stopped_pid = (pid_t)pid;
    pid_seen = 1;
    return FM_DONE;
}

/* One byte: 0 while rank 2 keeps sending, 1 for its last message (it stopped on its own). */
static int on_spam(fm_stream *s, int sender, void *arg)
{
    (void)sender;
    (void)arg;
    unsigned char b = 0;
    if (fm_receive(s, &b, 1) != 1)
        st_fail("an empty spam message");
    spam_seen++;
    spam_over |= b;
    return FM_DONE;
}

static int on_stop(fm_stream *s, int sender, void *arg)
{
    (void)s;
    (void)sender;
    (void)arg;
    stop_seen = 1;
    return FM_DONE;
}

static int hellos;

static int on_hello(fm_stream *s, int sender, void *arg)
{
    (void)s;
    (void)sender;
    (void)arg;
    hellos++;
    return FM_DONE;
}

/* ---- helpers ---- */

static int send_bytes(int dest, int h, const void *buf, size_t len)
{
    fm_stream *s;
    int rc = fm_begin_message(ctx, dest, len, h, &s);
    if (rc == FM_OK)
        rc = fm_send_piece(s, buf, len);
    if (rc == FM_OK)
        rc = fm_end_message(s);
    if (rc)
        st_fail("sending %zu bytes to rank %d: %s", len, dest, fm_strerror(rc));
    return rc;
}

/* Every rank says hello to every other and waits for theirs: the start, without fm_barrier,
 * whose wait for a peer still starting would fail after this test's short FM_TIMEOUT on a
 * loaded machine (a peer that has sent nothing owes nothing: fm_wait(ctx, -1) waits on). */
static long start_bytes; /* what fm_wait returned meanwhile (a slow start may see data) */

static int start_together(int n)
{
    for (int r = 0; r < n; r++)
        if (r != me && send_bytes(r, H_HELLO, NULL, 0))
            return -1;
    while (hellos < n - 1) {
        long w = fm_wait(ctx, -1);
        if (w < 0)
            return -1;
        start_bytes += w;
    }
    return 0;
}

/* Progress until *flag or about 20 s; rank 0 only waits on peers that owe it nothing here. */
static void wait_flag(const int *flag, int want, const char *what)
{
    time_t end = time(NULL) + 20;
    while (*flag < want && time(NULL) < end)
        if (fm_wait(ctx, 10) < 0)
            break;
    if (*flag < want)
        st_fail("no %s", what);
}

/* Tell rank 0 our pid, then stop until rank 0 continues us. The message carries every
 * credit owed to rank 0 (a progress round first makes them owed), so rank 0 has its whole
 * window towards us. */
static void stop_self(void)
{
    int32_t pid = (int32_t)getpid();
    fm_extract(ctx, 0);
    send_bytes(0, H_PID, &pid, sizeof pid);
    fflush(stdout);
    raise(SIGSTOP);
}

static void resume_peer(void)
{
    if (stopped_pid <= 0 || kill(stopped_pid, SIGCONT))
        st_fail("cannot continue the stopped rank (pid %d)", (int)stopped_pid);
}

/* Rank 2: small messages to rank 0 until it says stop (or SPAM_SECS pass). */
static void spam(void)
{
    unsigned char b = 0;
    time_t end = time(NULL) + SPAM_SECS;
    while (!stop_seen) {
        if (time(NULL) >= end)
            b = 1; /* rank 0 is told this is the last one */
        if (send_bytes(0, H_SPAM, &b, 1) || b)
            break;
        if (fm_extract(ctx, 0) < 0)
            break;
    }
    wait_flag(&stop_seen, 1, "stop message from rank 0");
}

/* ---- rank 0 ---- */

static void receive_idle(void)
{
    long total = start_bytes;
    while (!data_done) {
        long r = fm_wait(ctx, -1);
        if (r < 0) {
            st_fail("fm_wait(ctx, -1) while rank 1 was idle: %s", fm_strerror((int)r));
            return;
        }
        total += r;
    }
    if (total != 8)
        st_fail("fm_wait returned %ld bytes in all for one 8-byte message", total);
}

static uint64_t packets_in(void)
{
    fm_stats st;
    fm_get_stats(ctx, &st);
    return st.packets_received;
}

static void receive_count(void)
{
    long total = 0;
    uint64_t base = packets_in();
    unsigned char none = 0;
    send_bytes(1, H_STOP, &none, 0); /* now rank 1 may send */
    /* The data message and rank 1's barrier message: 2 packets. */
    while (!data_done || packets_in() < base + 2) {
        long r = fm_wait(ctx, -1);
        if (r < 0) {
            st_fail("fm_wait: %s", fm_strerror((int)r));
            return;
        }
        total += r;
    }
    if (total != 8)
        st_fail("fm_wait returned %ld bytes in all for one 8-byte message (and a barrier's)",
                total);
}

static void stop_spam(void)
{
    unsigned char none = 0;
    for (int r = 2; r < fm_size(ctx); r++)
        send_bytes(r, H_STOP, &none, 0);
}

/* owed: rank 1 began a message and stopped; rank 2 keeps this rank busy. */
static void receive_owed(void)
{
    wait_flag(&pid_seen, 1, "pid from rank 1");
    int timed_out = 0;
    while (!data_done) {
        long r = fm_wait(ctx, -1);
        if (r == FM_ERR_TIMEOUT && !timed_out) {
            timed_out = 1;
            if (spam_over)
                st_fail("FM_ERR_TIMEOUT came only after rank 2 stopped sending (%d messages)",
                        spam_seen);
            printf("rank 0: fm_wait: FM_ERR_TIMEOUT after %d messages from rank 2\n", spam_seen);
            resume_peer();
            stop_spam();
        } else if (r < 0) {
            st_fail("fm_wait: %s", fm_strerror((int)r));
            return;
        }
    }
    if (!timed_out)
        st_fail("the message completed without any FM_ERR_TIMEOUT while rank 1 was stopped");
}

/* credits: write to the stopped rank 1, one packet per piece. */
static void send_to_stopped(void)
{
    wait_flag(&pid_seen, 1, "pid from rank 1");
    unsigned char *buf = malloc(packet);
    fm_stream *s;
    int rc = fm_begin_message(ctx, 1, data_len, H_DATA, &s), timed_out = 0;
    for (size_t off = 0; rc == FM_OK && off < data_len; off += packet) {
        st_fill(buf, packet, me, 1, 1, off);
        rc = fm_send_piece(s, buf, packet);
        if (rc == FM_ERR_TIMEOUT && !timed_out) {
            /* The piece was one whole packet: it is in the message, queued for a credit. */
            timed_out = 1;
            if (spam_over)
                st_fail("FM_ERR_TIMEOUT came only after rank 2 stopped sending (%d messages)",
                        spam_seen);
            printf("rank 0: fm_send_piece: FM_ERR_TIMEOUT after %d messages from rank 2\n",
                   spam_seen);
            resume_peer();
            stop_spam();
            rc = FM_OK;
        }
    }
    if (rc == FM_OK)
        rc = fm_end_message(s);
    if (rc)
        st_fail("writing to rank 1: %s", fm_strerror(rc));
    if (!timed_out)
        st_fail("no FM_ERR_TIMEOUT while rank 1 was stopped");
    free(buf);
}

/* end: the last packet waits for a credit the stopped rank 1 does not give. */
static void end_to_stopped(void)
{
    wait_flag(&pid_seen, 1, "pid from rank 1");
    unsigned char *buf = malloc(data_len);
    st_fill(buf, data_len, me, 1, 1, 0);
    fm_stream *s;
    int rc = fm_begin_message(ctx, 1, data_len, H_DATA, &s);
    for (size_t off = 0; rc == FM_OK && off < data_len; off += packet)
        rc = fm_send_piece(s, buf + off, data_len - off < packet ? data_len - off : packet);
    if (rc) {
        st_fail("writing to rank 1: %s", fm_strerror(rc));
        return;
    }
    rc = fm_end_message(s);
    if (rc != FM_ERR_TIMEOUT)
        st_fail("fm_end_message to a stopped rank: %s, want FM_ERR_TIMEOUT", fm_strerror(rc));
    resume_peer();
    if (rc == FM_ERR_TIMEOUT && (rc = fm_end_message(s)) != FM_OK)
        st_fail("fm_end_message again, on the stream left open: %s, want FM_OK", fm_strerror(rc));
    free(buf);
}

/* ---- main ---- */

static int parse_mode(const char *m)
{
    const char *names[] = {"idle", "count", "owed", "credits", "end"};
    for (int i = 0; i < 5; i++)
        if (!strcmp(m, names[i]))
            return i;
    return -1;
}

int main(int argc, char **argv)
{
    if (argc != 2 || (mode = parse_mode(argv[1])) < 0) {
        fprintf(stderr, "usage: wait idle|count|owed|credits|end\n");
        return 2;
    }
    /* rank 0 keeps what fastmsg says, to check it after fm_finalize (idle, count) */
    FILE *log = tmpfile();
    int saved_err = dup(2);
    ctx = st_init();
    me = fm_rank(ctx);
    int n = fm_size(ctx), want_n = mode >= M_OWED && mode != M_END ? 3 : 2;
    if (n < want_n || (want_n == 2 && n != 2))
        fm_abort(ctx, 2, "wait: wrong number of ranks for this mode");
    if (me == 0 && mode <= M_COUNT && log && saved_err >= 0)
        dup2(fileno(log), 2);
    timeout_s = (long)env_long("FM_TIMEOUT", 60);
    packet = st_packet_size();
    credits = (int)env_long("FM_CREDITS", 8);
    data_len = mode <= M_COUNT     ? 8
               : mode == M_OWED    ? 3 * packet
               : mode == M_CREDITS ? (size_t)(credits + 4) * packet
                                   : (size_t)credits * packet + 10;
    if (fm_register_handler(ctx, H_DATA, on_data, NULL) ||
        fm_register_handler(ctx, H_PID, on_pid, NULL) ||
        fm_register_handler(ctx, H_SPAM, on_spam, NULL) ||
        fm_register_handler(ctx, H_STOP, on_stop, NULL) ||
        fm_register_handler(ctx, H_HELLO, on_hello, NULL) || start_together(n))
        fm_abort(ctx, 1, "FAIL: setup");
    unsigned char *body = malloc(data_len);
    if (me == 1) {
        st_fill(body, data_len, me, 0, 1, 0);
        if (mode == M_IDLE) {
            struct timespec t = {3 * timeout_s, 0};
            nanosleep(&t, NULL); /* no fastmsg call meanwhile */
            send_bytes(0, H_DATA, body, 8);
        } else if (mode == M_COUNT) {
            wait_flag(&stop_seen, 1, "word from rank 0");
            send_bytes(0, H_DATA, body, 8); /* fm_finalize's barrier follows it */
        } else if (mode == M_OWED) {
            fm_stream *s;
            int rc = fm_begin_message(ctx, 0, data_len, H_DATA, &s);
            if (rc == FM_OK)
                rc = fm_send_piece(s, body, packet); /* a full packet leaves at once */
            if (rc == FM_OK)
                stop_self();
            if (rc == FM_OK)
                rc = fm_send_piece(s, body + packet, data_len - packet);
            if (rc == FM_OK)
                rc = fm_end_message(s);
            if (rc)
                st_fail("sending to rank 0: %s", fm_strerror(rc));
        } else {
            stop_self();
            wait_flag(&data_done, 1, "message from rank 0");
        }
    } else if (me >= 2) {
        spam();
    } else if (mode == M_IDLE) {
        receive_idle();
    } else if (mode == M_COUNT) {
        receive_count();
    } else if (mode == M_OWED) {
        receive_owed();
    } else if (mode == M_CREDITS) {
        send_to_stopped();
    } else {
        end_to_stopped();
    }
    free(body);
    if (me == 0 && mode <= M_COUNT && log && saved_err >= 0) {
        int rc = fm_finalize(ctx);
        fflush(stderr);
        dup2(saved_err, 2);
        char line[512];
        rewind(log);
        while (fgets(line, sizeof line, log)) {
            fputs(line, stderr);
            if (strstr(line, "giving up") || strstr(line, "timed out"))
                st_fail("fastmsg said: %s", line);
        }
        if (rc)
            st_fail("fm_finalize: %s", fm_strerror(rc));
        printf("rank %d: %s wait %s\n", me, st_failures ? "FAIL" : "PASS", argv[1]);
        return st_failures ? 1 : 0;
    }
    return st_finish(ctx, argv[1]);
}
