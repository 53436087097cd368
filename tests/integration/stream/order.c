/* SPDX-License-Identifier: BSD-3-Clause */
/* order: the handlers of one sender's messages start in the order it sent them.
 *
 *   fastmsg-run -n N order mixed [--count K]
 *   fastmsg-run -n 2 order late
 *
 *   mixed  every rank but 0 sends rank 0 K messages (default 300), each of the next kind in
 *          turn: 8 bytes; exactly one full packet; 3 packets + 5 in odd pieces; empty; one
 *          piece of 100000 bytes (zero-copy where the provider allows: its first packet is
 *          an announcement); a multi-destination message to rank 0 and the next sender; a
 *          multicast to rank 0 and itself; and two handler ids in turn. Rank 0 checks that
 *          the first call of each message's handler comes in send order per sender (messages
 *          from different senders interleave freely), and every byte. Over tcp;ofi_rxm a
 *          small packet can overtake a large one sent before it: fastmsg must put them back
 *          in order.
 *   late   rank 1 sends rank 0 three one-packet messages for a handler id rank 0 has not
 *          registered, then a message whose handler registers that id (inside a handler),
 *          then three more for the id, all before rank 0 looks (rank 0 sleeps a second
 *          first, so that they arrive together). The held three must start before the
 *          later three. */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { H_A, H_B, H_LATE, H_REGISTER };
#define KINDS 8

static fm_context *ctx;
static int me, nranks, count = 300;
static int *next_index; /* per sender: the index whose handler must start next */
static int started, done_count, bad_order;

/* Message index m is of kind m % KINDS. */
static size_t kind_len(int kind)
{
    size_t p = st_packet_size();
    const size_t lens[KINDS] = {8, p, 3 * p + 5, 0, 100000, 20, 30, 9};
    return lens[kind];
}

static int kind_handler(int kind)
{
    return kind == 7 ? H_B : H_A;
}

/* ---- receiving ---- */

typedef struct rstate {
    int m;     /* the index due when its handler first ran */
    int first; /* byte 0 read and checked */
    size_t off;
    unsigned i;
} rstate;

/* Byte 0 of message m is m mod 256: the message whose handler started must be the one due. */
static void check_index(int sender, const rstate *x, int byte0)
{
    if (byte0 != x->m % 256 && !bad_order++)
        st_fail("rank %d: a message with index %d (mod 256) started when message %d was due",
                sender, byte0, x->m);
}

static int on_msg(fm_stream *s, int sender, void *arg)
{
    (void)arg;
    rstate *x = fm_stream_user(s);
    if (!x) { /* the first call: this message takes the next place in its sender's order */
        x = calloc(1, sizeof *x);
        x->m = next_index[sender]++;
        started++;
        fm_stream_set_user(s, x);
        if ((fm_stream_length(s) == 0) != (x->m % KINDS == 3) && !bad_order++)
            st_fail("rank %d: a %zu-byte message started when message %d was due", sender,
                    fm_stream_length(s), x->m);
    }
    unsigned char buf[4099];
    ssize_t got;
    while ((got = fm_receive(s, buf, st_odd_size(x->i++) % sizeof buf + 1)) > 0) {
        if (!x->first++)
            check_index(sender, x, buf[0]);
        size_t bad = st_mismatch(buf, (size_t)got, sender, 0, x->m, x->off);
        if (bad != (size_t)-1 && !bad_order)
            st_fail("message %d from rank %d: wrong byte at offset %zu", x->m, sender, bad);
        x->off += (size_t)got;
    }
    if (!fm_stream_complete(s) || fm_stream_available(s))
        return FM_CONTINUE;
    if (x->off != kind_len(x->m % KINDS) && !bad_order)
        st_fail("message %d from rank %d: %zu bytes", x->m, sender, x->off);
    free(x);
    fm_stream_set_user(s, NULL);
    done_count++;
    return FM_DONE;
}

/* ---- sending (ranks > 0) ---- */

static int send_body(fm_stream *s, int m, size_t len, int kind)
{
    /* kind 2 in odd pieces; kind 4 in one piece (zero-copy if the provider has it) */
    return st_send_body(s, me, 0, m, len, kind == 2);
}

static void send_all(void)
{
    int other = me + 1 < nranks ? me + 1 : 1, two[2] = {0, other}, pair[2] = {me, 0};
    for (int m = 0; m < count; m++) {
        int kind = m % KINDS;
        size_t len = kind_len(kind);
        fm_stream *s;
        int rc;
        if (kind == 5 && other != me)
            rc = fm_begin_message_multi(ctx, two, 2, len, H_A, &s);
        else if (kind == 6)
            rc = fm_mcast_begin_list(ctx, pair, 2, "flat", 0, len, H_A, &s);
        else
            rc = fm_begin_message(ctx, 0, len, kind_handler(kind), &s);
        if (rc == FM_OK)
            rc = send_body(s, m, len, kind);
        if (rc == FM_OK)
            rc = fm_end_message(s);
        if (rc) {
            st_fail("sending message %d: %s", m, fm_strerror(rc));
            return;
        }
    }
}

/* A multi-destination message to the next sender also reaches it: read and dropped. */
static int on_side(fm_stream *s, int sender, void *arg)
{
    (void)s;
    (void)sender;
    (void)arg;
    return FM_DONE;
}

/* ---- late: held messages and a registration inside a handler ---- */

static int late_next;

static int on_late(fm_stream *s, int sender, void *arg)
{
    (void)arg;
    unsigned char b = 0;
    if (fm_receive(s, &b, 1) != 1)
        st_fail("an empty late message");
    if (b != late_next && !bad_order++)
        st_fail("late message %d from rank %d started when %d was due", b, sender, late_next);
    late_next++;
    done_count++;
    return FM_DONE;
}

static int on_register(fm_stream *s, int sender, void *arg)
{
    (void)s;
    (void)sender;
    (void)arg;
    int rc = fm_register_handler(ctx, H_LATE, on_late, NULL);
    if (rc)
        st_fail("fm_register_handler inside a handler: %s", fm_strerror(rc));
    return FM_DONE;
}

static void late_send(void)
{
    for (int m = 0; m < 7; m++) {
        unsigned char b = (unsigned char)(m < 3 ? m : m - 1);
        fm_stream *s;
        int rc = fm_begin_message(ctx, 0, m == 3 ? 0 : 1, m == 3 ? H_REGISTER : H_LATE, &s);
        if (rc == FM_OK && m != 3)
            rc = fm_send_piece(s, &b, 1);
        if (rc == FM_OK)
            rc = fm_end_message(s);
        if (rc)
            st_fail("sending late message %d: %s", m, fm_strerror(rc));
    }
}

/* ---- main ---- */

static void wait_done(int want)
{
    time_t end = time(NULL) + 60;
    while (done_count < want && time(NULL) < end)
        if (fm_wait(ctx, 10) < 0)
            break;
    if (done_count < want)
        st_fail("%d of %d messages done", done_count, want);
}

int main(int argc, char **argv)
{
    int late = argc > 1 && !strcmp(argv[1], "late");
    if (argc < 2 || (!late && strcmp(argv[1], "mixed")))
        goto usage;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--count") && i + 1 < argc)
            count = atoi(argv[++i]);
        else
            goto usage;
    }
    ctx = st_init();
    me = fm_rank(ctx);
    nranks = fm_size(ctx);
    next_index = calloc((size_t)nranks, sizeof *next_index);
    fm_handler_fn h0 = me == 0 ? on_msg : on_side;
    if (fm_register_handler(ctx, H_A, h0, NULL) || fm_register_handler(ctx, H_B, h0, NULL) ||
        fm_register_handler(ctx, H_REGISTER, on_register, NULL) || fm_barrier(ctx))
        fm_abort(ctx, 1, "FAIL: setup");
    if (late) {
        if (me == 0) {
            struct timespec t = {1, 0};
            nanosleep(&t, NULL); /* rank 1 sends everything meanwhile */
            wait_done(6);
        } else if (me == 1) {
            late_send();
        }
    } else if (me == 0) {
        wait_done(count * (nranks - 1));
        for (int r = 1; r < nranks; r++)
            if (next_index[r] != count)
                st_fail("%d of %d messages from rank %d started", next_index[r], count, r);
        printf("rank 0: %d messages from %d ranks, %d out of order\n", started, nranks - 1,
               bad_order);
    } else {
        send_all();
    }
    if (fm_barrier(ctx))
        st_fail("fm_barrier");
    int status = st_finish(ctx, late ? "order late" : "order");
    free(next_index);
    return status;
usage:
    fprintf(stderr, "usage: order mixed [--count K] | order late\n");
    return 2;
}
