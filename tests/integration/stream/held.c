/* SPDX-License-Identifier: BSD-3-Clause */
/* held: messages that arrive before their handler is registered wait for it.
 *
 *   fastmsg-run -n 3 held main|in-handler [--strict-order] [--zcopy]
 *
 * Every rank but 0 sends rank 0, right after fm_init, K = FM_CREDITS-1 one-packet messages
 * and then (main only) one message of (FM_CREDITS+3) packets, all for a handler rank 0 has
 * not registered. Rank 0 waits until exactly FM_CREDITS packets per sender have arrived (the
 * held packets keep their credits, so no more may come) and checks that no handler ran.
 *   main        rank 0 then registers the handler from its main program: the complete held
 *               messages must run inside fm_register_handler, and the large ones finish.
 *   in-handler  rank 0 registers it from inside another handler (a message to itself): the
 *               held messages must then run from a later progress round.
 * Every byte is checked. Held messages that begin out of send order are noted; with
 * --strict-order that fails the test.
 * --zcopy (main): the large message is sent as one piece of at least FM_ZCOPY bytes: no
 * handler reads it, so the receiver declines the zero-copy transfer (a bounce buffer would
 * hold memory no credit bounds) and the piece comes through packets, held within the window
 * like any other (rank 0 checks fm_stats.zcopy_received is 0 while the message is held and
 * after), to be read through fm_receive once the handler runs. */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { H_LATE = 5, H_TRIGGER = 6 };

static fm_context *ctx;
static int me, nranks, credits, in_handler_mode, strict_order, zcopy_mode;
static int done_count, first_calls;
static int *order; /* [sender * (credits + 1) + k]: m of the k-th message begun */
static int *begun; /* per sender */

static int small_count(void)
{
    return credits - 1;
}

static int per_sender(void)
{
    return small_count() + !in_handler_mode;
}

static size_t msg_len(int m)
{
    return m < small_count() ? 8 + (size_t)m : (size_t)(credits + 3) * st_packet_size() + 7;
}

static int env_credits(void)
{
    const char *e = getenv("FM_CREDITS");
    return e && *e ? atoi(e) : 8;
}

/* ---- the late handler: odd chunks, every byte checked ---- */

typedef struct late_state {
    int m;
    size_t off;
    unsigned i;
} late_state;

static void note_begun(int sender, int m)
{
    first_calls++;
    order[sender * (credits + 1) + begun[sender]++] = m;
}

static int late_read(fm_stream *s, late_state *x, int sender)
{
    unsigned char buf[16411];
    ssize_t got;
    while ((got = fm_receive(s, buf, st_odd_size(x->i++))) > 0) {
        if (x->m < 0) {
            x->m = buf[0];
            if (x->m >= per_sender() || fm_stream_length(s) != msg_len(x->m)) {
                st_fail("a message from rank %d matches none sent (m %d)", sender, x->m);
                return -1;
            }
            note_begun(sender, x->m);
        }
        size_t bad = st_mismatch(buf, (size_t)got, sender, me, x->m, x->off);
        if (bad != (size_t)-1)
            st_fail("message %d from rank %d: wrong byte at offset %zu", x->m, sender, bad);
        x->off += (size_t)got;
    }
    return 0;
}

static int on_late(fm_stream *s, int sender, void *arg)
{
    (void)arg;
    late_state *x = fm_stream_user(s);
    if (!x) {
        x = calloc(1, sizeof *x);
        x->m = -1;
        fm_stream_set_user(s, x);
    }
    int bad = late_read(s, x, sender);
    if (!bad && (!fm_stream_complete(s) || fm_stream_available(s)))
        return FM_CONTINUE;
    if (!bad && x->off != msg_len(x->m))
        st_fail("message %d from rank %d: %zu bytes, want %zu", x->m, sender, x->off,
                msg_len(x->m));
    done_count++;
    free(x);
    fm_stream_set_user(s, NULL);
    return FM_DONE;
}

static int on_trigger(fm_stream *s, int sender, void *arg)
{
    (void)s;
    (void)sender;
    (void)arg;
    int rc = fm_register_handler(ctx, H_LATE, on_late, NULL);
    if (rc)
        st_fail("fm_register_handler inside a handler: %s", fm_strerror(rc));
    return FM_DONE;
}

/* ---- senders ---- */

static void send_all(void)
{
    for (int m = 0; m < per_sender(); m++) {
        fm_stream *s;
        int rc = fm_begin_message(ctx, 0, msg_len(m), H_LATE, &s);
        if (rc == FM_OK)
            rc = st_send_body(s, me, 0, m, msg_len(m), zcopy_mode ? 0 : m % 2);
        if (rc == FM_OK)
            rc = fm_end_message(s);
        if (rc)
            st_fail("sending message %d: %s", m, fm_strerror(rc));
    }
}

/* ---- rank 0 ---- */

static uint64_t packets_in(void)
{
    fm_stats st;
    fm_get_stats(ctx, &st);
    return st.packets_received;
}

/* Progress until pred() or the deadline; 0 when pred() holds. */
static int wait_for(int (*pred)(void), int seconds)
{
    time_t end = time(NULL) + seconds;
    while (!pred() && time(NULL) < end)
        if (fm_wait(ctx, 5) < 0)
            return -1;
    return pred() ? 0 : -1;
}

static uint64_t zcopy_in(void)
{
    fm_stats st;
    fm_get_stats(ctx, &st);
    return st.zcopy_received;
}

static uint64_t held_target;
static int all_held(void)
{
    return packets_in() >= held_target;
}
static int smalls_done(void)
{
    return done_count >= (nranks - 1) * small_count();
}
static int all_done(void)
{
    return done_count >= (nranks - 1) * per_sender();
}

static void register_now(void)
{
    if (!in_handler_mode) {
        int rc = fm_register_handler(ctx, H_LATE, on_late, NULL);
        if (rc)
            st_fail("fm_register_handler: %s", fm_strerror(rc));
        if (!smalls_done())
            st_fail("after fm_register_handler only %d of %d complete held messages ran",
                    done_count, (nranks - 1) * small_count());
        return;
    }
    fm_stream *s;
    int rc = fm_begin_message(ctx, me, 0, H_TRIGGER, &s);
    if (rc == FM_OK)
        rc = fm_end_message(s);
    if (rc)
        st_fail("sending the trigger to myself: %s", fm_strerror(rc));
}

/* Print the order held messages began in when it is not the send order; with --strict-order
 * that is a failure. */
static void report_order(void)
{
    for (int s = 1; s < nranks; s++)
        for (int k = 1; k < begun[s]; k++)
            if (order[s * (credits + 1) + k] < order[s * (credits + 1) + k - 1]) {
                printf("rank 0: note: held messages from rank %d began out of send order:", s);
                for (int j = 0; j < begun[s]; j++)
                    printf(" %d", order[s * (credits + 1) + j]);
                printf("\n");
                if (strict_order)
                    st_fail("held messages from rank %d did not begin in send order", s);
                break;
            }
}

static void receive_all(void)
{
    held_target = (uint64_t)(nranks - 1) * (uint64_t)(in_handler_mode ? small_count() : credits);
    if (wait_for(all_held, 20))
        st_fail("only %llu of %llu packets arrived", (unsigned long long)packets_in(),
                (unsigned long long)held_target);
    for (int i = 0; i < 20; i++)
        fm_wait(ctx, 5);
    /* In in-handler mode the senders may already be in fm_finalize's barrier. */
    if ((!in_handler_mode && packets_in() != held_target) || first_calls)
        st_fail("while held: %llu packets in (want %llu), %d handler calls (want 0)",
                (unsigned long long)packets_in(), (unsigned long long)held_target, first_calls);
    if (zcopy_mode && zcopy_in() != 0)
        st_fail("while held: %llu zero-copy pieces arrived (want 0: declined)",
                (unsigned long long)zcopy_in());
    register_now();
    if (wait_for(all_done, 5))
        st_fail("%d of %d held messages delivered 5 s after fm_register_handler%s", done_count,
                (nranks - 1) * per_sender(), in_handler_mode ? " ran inside a handler" : "");
    report_order();
    if (zcopy_mode && zcopy_in() != 0)
        st_fail("%llu zero-copy pieces received, want 0 (declined)",
                (unsigned long long)zcopy_in());
}

int main(int argc, char **argv)
{
    int bad = argc < 2 || (strcmp(argv[1], "main") && strcmp(argv[1], "in-handler"));
    for (int i = 2; i < argc && !bad; i++) {
        if (!strcmp(argv[i], "--strict-order"))
            strict_order = 1;
        else if (!strcmp(argv[i], "--zcopy"))
            zcopy_mode = 1;
        else
            bad = 1;
    }
    in_handler_mode = !bad && !strcmp(argv[1], "in-handler");
    if (bad || (zcopy_mode && in_handler_mode)) {
        fprintf(stderr, "usage: held main|in-handler [--strict-order] [--zcopy] (--zcopy: main)\n");
        return 2;
    }
    credits = env_credits();
    if (credits < 2 || credits > 50) {
        fprintf(stderr, "held: needs 2 <= FM_CREDITS <= 50\n");
        return 2;
    }
    ctx = st_init();
    me = fm_rank(ctx);
    nranks = fm_size(ctx);
    order = calloc((size_t)nranks * (size_t)(credits + 1), sizeof *order);
    begun = calloc((size_t)nranks, sizeof *begun);
    if (me == 0) {
        if (fm_register_handler(ctx, H_TRIGGER, on_trigger, NULL))
            fm_abort(ctx, 1, "FAIL: registering the trigger");
        receive_all();
    } else
        send_all();
    int status = st_finish(ctx, in_handler_mode ? "held (registered in a handler)" : "held");
    free(order);
    free(begun);
    return status;
}
