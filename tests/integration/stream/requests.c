/* SPDX-License-Identifier: BSD-3-Clause */
/* requests: fm_isend, fm_isend_multi, fm_imcast, fm_imcast_list and their tests and waits.
 *
 *   fastmsg-run -n N requests MODE [--tree T]
 *
 * all:    every rank starts, at once, requests of every kind and size to the others (one
 *         destination, several, a multicast on a group and on a list down tree T), from the
 *         main program, and completes them with test, wait, wait-any and wait-some in turn;
 *         every byte is checked at the receivers, and the handlers of one sender's direct
 *         messages must start in the order the requests were made.
 * handler: requests started inside handlers and callbacks (a reply to every ping, larger
 *         than what fm_begin_message may promise there; a multicast from a callback), with
 *         callbacks and detached requests, never tested.
 * bound:  FM_REQUESTS requests to a rank that sleeps (no progress): the next start gets
 *         FM_EAGAIN at once, the send buffers stay within FM_OVERFLOW's budget while the
 *         requests wait, and everything arrives once the rank wakes.
 * ack:    each rank in turn multicasts with FM_MCAST_ACK (on a list and on a group, in every
 *         forwarding mode) and, once its request completes, asks every member whether the
 *         whole message is there: it must be (a member's handler delivers it in the round its
 *         last packet arrives, before anything the acknowledgement caused can come).
 * api:    bad arguments and the calls' edge cases.
 * In every mode no handler or callback may run inside a starting call. */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { H_DIRECT, H_MCAST, H_PING, H_REPLY, H_PROBE };

static fm_context *ctx;
static int me, nranks;
static const char *tree = "binomial";
static int starting; /* inside a starting call: no handler or callback may run */
static int check_bytes = 1;
/* The length of direct message k from any one sender, in the order the sender started them
 * (NULL: not checked): its handler must start in that order. */
static size_t (*direct_len)(int k);

static size_t sizes[16];
static int nsizes;

/* Message payloads: an 8-byte header (sender, index m) then st_pat bytes from offset 8, so a
 * receiver can check a message whatever order it comes in. */
static unsigned char *make_msg(int from, int to, int m, size_t len)
{
    unsigned char *b = malloc(len ? len : 1);
    st_fill(b, len, from, to, m, 0);
    if (len >= 8) {
        uint32_t h[2] = {(uint32_t)from, (uint32_t)m};
        memcpy(b, h, 8);
    }
    return b;
}

static void check_msg(const unsigned char *b, size_t len, int from, int to, int m)
{
    if (len < 8)
        return; /* (short ones are checked by their length and order only) */
    uint32_t h[2];
    memcpy(h, b, 8);
    if ((int)h[0] != from || (int)h[1] != m)
        st_fail("message from %d: header says %u/%u, expected %d/%d", from, h[0], h[1], from, m);
    size_t bad = st_mismatch(b + 8, len - 8, from, to, m, 8);
    if (bad != (size_t)-1)
        st_fail("message %d from %d (%zu bytes): byte %zu wrong", m, from, len, bad + 8);
}

static void not_starting(const char *who)
{
    if (starting)
        st_fail("%s ran inside a starting call", who);
}

/* Mode ack: multicast m = ACK_BASE + i from root r has been delivered here. */
#define ACK_BASE 3000
#define ACK_MAX  64
static unsigned char *ack_seen; /* [root * ACK_MAX + i] */
static long probes_in;

/* ---- receiving: every message delivered whole, checked ---- */

static int *next_direct; /* [sender]: index of the next direct message expected */
static long got_direct, got_mcast, got_replies;

typedef struct rx {
    unsigned char *buf;
    int kind;
} rx;

static void delivered(void *buf, size_t len, int status, int sender, void *arg)
{
    rx *x = arg;
    not_starting("a delivery callback");
    if (status)
        st_fail("message from %d: %s", sender, fm_strerror(status));
    int m = -1;
    if (len >= 8)
        memcpy(&m, (unsigned char *)buf + 4, 4);
    if (x->kind == H_DIRECT) {
        got_direct++;
    } else if (x->kind == H_MCAST) {
        got_mcast++;
    } else {
        got_replies++;
    }
    /* Written for this rank: direct messages with an even index and replies; for every
     * receiver (-1): multi-destination ones (odd) and multicasts. */
    int to = x->kind == H_REPLY || (x->kind == H_DIRECT && !(m & 1)) ? me : -1;
    if (m >= 0 && check_bytes)
        check_msg(buf, len, sender, to, m);
    if (x->kind == H_MCAST && m >= ACK_BASE && m < ACK_BASE + ACK_MAX)
        ack_seen[sender * ACK_MAX + m - ACK_BASE] = 1;
    free(x->buf);
    free(x);
}

static int on_message(fm_stream *s, int kind)
{
    size_t len = fm_stream_length(s);
    rx *x = malloc(sizeof *x);
    x->buf = malloc(len ? len : 1);
    x->kind = kind;
    int rc = fm_stream_deliver(s, x->buf, len, delivered, x);
    if (rc)
        st_fail("fm_stream_deliver: %s", fm_strerror(rc));
    return FM_DONE;
}

/* Direct messages (one destination or several): the first 8 bytes, once they are in, must
 * carry the index this sender's next request had (order of starting = order of handlers). */
static int on_direct(fm_stream *s, int sender, void *arg)
{
    (void)arg;
    not_starting("a handler");
    size_t len = fm_stream_length(s);
    int want = next_direct[sender]++;
    size_t expect = direct_len ? direct_len(want) : len;
    if (len != expect)
        st_fail("direct message %d from %d: %zu bytes, expected %zu (out of order?)", want, sender,
                len, expect);
    return on_message(s, H_DIRECT);
}

static int on_mcast(fm_stream *s, int sender, void *arg)
{
    (void)arg;
    not_starting("a multicast handler");
    (void)sender;
    return on_message(s, H_MCAST);
}

/* ---- mode all ---- */

#define KINDS 4 /* per size: to one rank, to all others, multicast on a group, on a list */

/* Mode all: per size, one request to this rank and one to all others. */
static size_t all_len(int k)
{
    return sizes[(k / 2) % nsizes];
}

static int mode_all(void)
{
    direct_len = all_len;
    int others = nranks - 1;
    int *dests = malloc(sizeof(int) * (size_t)nranks), nd = 0;
    int *all = malloc(sizeof(int) * (size_t)nranks);
    for (int r = 0; r < nranks; r++) {
        all[r] = r;
        if (r != me)
            dests[nd++] = r;
    }
    fm_group *g;
    if (fm_group_create(ctx, all, nranks, &g))
        st_fail("fm_group_create");
    fm_barrier(ctx);
    /* Per size i: direct requests to each other rank with index i (messages 2i: to one rank,
     * in a loop; 2i+1: one multi-destination request), so each receiver expects, from each
     * sender, sizes[0], sizes[0], sizes[1], sizes[1], ...; then two multicasts. */
    int cap = nsizes * (others + 3);
    fm_request **reqs = calloc((size_t)cap, sizeof *reqs);
    unsigned char **bufs = calloc((size_t)cap, sizeof *bufs);
    int n = 0, rc;
    for (int i = 0; i < nsizes; i++) {
        size_t len = sizes[i];
        for (int d = 0; d < nd; d++) {
            bufs[n] = make_msg(me, dests[d], 2 * i, len);
            starting = 1;
            rc = fm_isend(ctx, dests[d], bufs[n], len, H_DIRECT, NULL, NULL, &reqs[n]);
            starting = 0;
            if (rc)
                st_fail("fm_isend %zu bytes to %d: %s", len, dests[d], fm_strerror(rc));
            n++;
        }
        bufs[n] = make_msg(me, -1, 2 * i + 1, len);
        starting = 1;
        rc = fm_isend_multi(ctx, dests, nd, bufs[n], len, H_DIRECT, NULL, NULL, &reqs[n]);
        starting = 0;
        if (rc)
            st_fail("fm_isend_multi %zu bytes: %s", len, fm_strerror(rc));
        n++;
        bufs[n] = make_msg(me, -1, 1000 + 2 * i, len);
        starting = 1;
        rc = fm_imcast(g, tree, 0, bufs[n], len, H_MCAST, NULL, NULL, &reqs[n]);
        starting = 0;
        if (rc)
            st_fail("fm_imcast %zu bytes: %s", len, fm_strerror(rc));
        n++;
        bufs[n] = make_msg(me, -1, 1001 + 2 * i, len);
        starting = 1;
        /* (a list, or every other size the same members as a destination set) */
        rc = i % 2 ? fm_imcast_dests(ctx, dests, nd, tree, 0, bufs[n], len, H_MCAST, NULL, NULL,
                                     &reqs[n])
                   : fm_imcast_list(ctx, all, nranks, tree, 0, bufs[n], len, H_MCAST, NULL, NULL,
                                    &reqs[n]);
        starting = 0;
        if (rc)
            st_fail("fm_imcast_list/dests %zu bytes: %s", len, fm_strerror(rc));
        n++;
    }
    /* Complete them four ways in turn: test until done, wait, wait-any, wait-some. */
    int left = n;
    for (int i = 0; i < n && left > 0; i++) {
        if (!reqs[i])
            continue;
        int idx = -1, cnt = 0, idxs[64], sts[64];
        switch (i % 4) {
        case 0:
            while ((rc = fm_request_test(&reqs[i])) == FM_EAGAIN)
                fm_wait(ctx, 10);
            left--;
            break;
        case 1:
            rc = fm_request_wait(&reqs[i]);
            left--;
            break;
        case 2:
            rc = fm_request_waitany(reqs, n, &idx);
            if (idx < 0 || reqs[idx])
                st_fail("fm_request_waitany: index %d", idx);
            left--;
            break;
        default:
            rc = fm_request_waitsome(reqs + i, n - i < 64 ? n - i : 64, idxs, sts, &cnt);
            if (cnt < 1)
                st_fail("fm_request_waitsome: count %d", cnt);
            for (int j = 0; j < cnt; j++) {
                if (reqs[i + idxs[j]])
                    st_fail("fm_request_waitsome left entry %d", i + idxs[j]);
                if (sts[j])
                    st_fail("request %d: %s", i + idxs[j], fm_strerror(sts[j]));
            }
            left -= cnt;
            break;
        }
        if (rc)
            st_fail("completing request %d: %s", i, fm_strerror(rc));
        if (i % 4 != 2 && reqs[i])
            st_fail("request %d not freed", i);
    }
    int idx;
    while (left > 0 && fm_request_waitany(reqs, n, &idx) == FM_OK && idx >= 0)
        left--;
    if (left)
        st_fail("%d requests never completed", left);
    /* Every rank gets 2 direct messages per size from each other rank, and 2 multicasts per
     * size from each other rank (its own group and list multicasts do not come back). */
    long want_direct = 2L * nsizes * others, want_mcast = 2L * nsizes * others;
    while (got_direct < want_direct || got_mcast < want_mcast)
        if ((rc = (int)fm_wait(ctx, 1000)) < 0) {
            st_fail("fm_wait: %s", fm_strerror(rc));
            break;
        }
    fm_barrier(ctx);
    if (got_direct != want_direct || got_mcast != want_mcast)
        st_fail("got %ld direct and %ld multicast messages, expected %ld and %ld", got_direct,
                got_mcast, want_direct, want_mcast);
    for (int i = 0; i < n; i++)
        free(bufs[i]);
    free(bufs);
    free(reqs);
    fm_group_destroy(g);
    free(all);
    free(dests);
    return 0;
}

/* ---- mode handler: requests from handlers and callbacks ---- */

#define PINGS 6
static long callbacks_run, replies_sent;
static unsigned char *reply_bufs[64];
static int nreply_bufs;

static size_t reply_size(int m)
{
    size_t p = st_packet_size();
    size_t lens[] = {0, 1, p, 3 * p + 1, 60 * p + 3, 1000003};
    return lens[m % 6];
}

static void reply_done(int status, void *arg)
{
    not_starting("a request callback");
    if (status)
        st_fail("a reply request: %s", fm_strerror(status));
    (void)arg;
    callbacks_run++;
}

static int on_ping(fm_stream *s, int sender, void *arg)
{
    (void)arg;
    not_starting("a ping handler");
    uint32_t m = 0;
    if (fm_receive(s, &m, sizeof m) != sizeof m)
        return FM_CONTINUE;
    size_t len = reply_size((int)m);
    unsigned char *b = make_msg(me, sender, (int)m, len);
    reply_bufs[nreply_bufs++] = b; /* freed at the end: it must stay until completion */
    starting = 1;
    /* Detached (no request pointer): only the callback tells. */
    int rc = fm_isend(ctx, sender, b, len, H_REPLY, reply_done, NULL, NULL);
    starting = 0;
    if (rc)
        st_fail("fm_isend from a handler (%zu bytes): %s", len, fm_strerror(rc));
    else
        replies_sent++;
    return FM_DONE;
}

static int on_reply(fm_stream *s, int sender, void *arg)
{
    (void)arg;
    not_starting("a reply handler");
    (void)sender;
    return on_message(s, H_REPLY);
}

static int *all_ranks;
static unsigned char *mc_buf;

/* The last ping's completion starts a multicast (a callback runs as a handler). */
static void ping_done(int status, void *arg)
{
    not_starting("a ping callback");
    if (status)
        st_fail("a ping request: %s", fm_strerror(status));
    if (!arg)
        return;
    callbacks_run++;
    starting = 1;
    int rc =
        fm_imcast_list(ctx, all_ranks, nranks, tree, 0, mc_buf, 200000, H_MCAST, NULL, NULL, NULL);
    starting = 0;
    if (rc)
        st_fail("fm_imcast_list from a callback: %s", fm_strerror(rc));
}

static int mode_handler(void)
{
    all_ranks = malloc(sizeof(int) * (size_t)nranks);
    for (int r = 0; r < nranks; r++)
        all_ranks[r] = r;
    mc_buf = make_msg(me, -1, 77, 200000);
    fm_barrier(ctx);
    /* Every rank pings every other rank PINGS times; each ping is answered from the
     * handler. The last ping's callback (from rank 0 only) starts a multicast to all. */
    fm_request *reqs[PINGS * 64];
    uint32_t ms[PINGS * 64];
    int n = 0, rc;
    for (int p = 0; p < PINGS; p++)
        for (int r = 0; r < nranks; r++) {
            if (r == me)
                continue;
            ms[n] = (uint32_t)p;
            int last = me == 0 && p == PINGS - 1 && r == nranks - 1;
            starting = 1;
            rc = fm_isend(ctx, r, &ms[n], sizeof ms[n], H_PING, ping_done, last ? ctx : NULL,
                          &reqs[n]);
            starting = 0;
            if (rc)
                st_fail("ping: %s", fm_strerror(rc));
            n++;
        }
    int done = 0, idxs[PINGS * 64];
    while (done < n) {
        int cnt;
        if ((rc = fm_request_waitsome(reqs, n, idxs, NULL, &cnt)) != FM_OK) {
            st_fail("fm_request_waitsome: %s", fm_strerror(rc));
            break;
        }
        done += cnt;
    }
    long want_replies = (long)PINGS * (nranks - 1), want_mcast = me == 0 ? 0 : 1;
    while (got_replies < want_replies || got_mcast < want_mcast ||
           callbacks_run < replies_sent + (me == 0))
        if ((rc = (int)fm_wait(ctx, 1000)) < 0) {
            st_fail("fm_wait: %s", fm_strerror(rc));
            break;
        }
    fm_barrier(ctx);
    if (replies_sent != want_replies)
        st_fail("%ld replies sent from handlers, expected %ld", replies_sent, want_replies);
    for (int i = 0; i < nreply_bufs; i++)
        free(reply_bufs[i]);
    free(mc_buf);
    free(all_ranks);
    return 0;
}

/* ---- mode bound: a sleeping receiver ---- */

/* Large and small in turn: the small ones, which always find a buffer, must not start
 * before a large one made earlier that waits for buffers. */
static size_t bound_len(int k)
{
    return k % 2 ? 100 : 256 * 1024;
}

static int mode_bound(void)
{
    long limit = (long)st_env_size("FM_REQUESTS", 65536);
    direct_len = bound_len;
    int rc = fm_barrier(ctx);
    if (rc)
        st_fail("fm_barrier: %s", fm_strerror(rc));
    /* Both ranks drive progress until both are past the barrier: fm_barrier may return while
     * this rank's own signal is still on its way out (shm delivers a first message only as its
     * sender progresses), and a rank that then stops would hold the other in it. */
    char mine[32], theirs[32];
    snprintf(mine, sizeof mine, "bound-in%d", me);
    snprintf(theirs, sizeof theirs, "bound-in%d", 1 - me);
    st_go_say(ctx, mine);
    while (!st_go_seen(ctx, theirs))
        fm_wait(ctx, 10);
    if (me == 1) {
        /* Then rank 1 drives none until rank 0 has started its requests and looked at them,
         * however long that takes: none of them is taken before. */
        st_go_say(ctx, "bound-ready");
        st_go_wait(ctx, "bound", 60);
        while (got_direct < limit)
            if (fm_wait(ctx, 1000) < 0)
                break;
        if (got_direct != limit)
            st_fail("got %ld messages, expected %ld", got_direct, limit);
    } else if (me == 0) {
        st_go_wait(ctx, "bound-ready", 60); /* rank 1 drives no progress from now on */
        fm_request **reqs = calloc((size_t)limit + 1, sizeof *reqs);
        unsigned char **bufs = calloc((size_t)limit + 1, sizeof *bufs);
        for (long i = 0; i <= limit; i++) {
            size_t len = bound_len((int)i);
            bufs[i] = make_msg(0, 1, 2 * (int)i, len);
            starting = 1;
            int rc = fm_isend(ctx, 1, bufs[i], len, H_DIRECT, NULL, NULL, &reqs[i]);
            starting = 0;
            if (i < limit && rc)
                st_fail("request %ld of %ld: %s", i, limit, fm_strerror(rc));
            if (i == limit && rc != FM_EAGAIN)
                st_fail("request %ld beyond FM_REQUESTS=%ld: %s, not FM_EAGAIN", i, limit,
                        fm_strerror(rc));
        }
        /* The requests wait for rank 1, their packets within the send budget:
         * FM_CREDITS x ranks packets plus FM_OVERFLOW bytes. */
        fm_stats st;
        fm_get_stats(ctx, &st);
        size_t pkt = (40 + st_packet_size() + 63) / 64 * 64;
        size_t budget = (st_env_size("FM_CREDITS", 8) * (size_t)nranks +
                         st_env_size("FM_OVERFLOW", 64 << 20) / pkt) *
                        pkt;
        if (st.mem_send_bytes > budget)
            st_fail("send buffers %llu bytes while requests wait, budget %zu",
                    (unsigned long long)st.mem_send_bytes, budget);
        int pending = 0;
        for (long i = 0; i < limit; i++)
            pending += reqs[i] && fm_request_test(&reqs[i]) == FM_EAGAIN;
        if (pending == 0)
            st_fail("every request completed while the receiver drove no progress (budget not "
                    "in force?)");
        st_go_say(ctx, "bound");
        printf("rank 0: %d of %ld requests waiting, send buffers %llu of %zu bytes\n", pending,
               limit, (unsigned long long)st.mem_send_bytes, budget);
        for (long i = 0; i < limit; i++)
            if (reqs[i] && fm_request_wait(&reqs[i]) != FM_OK)
                st_fail("request %ld failed", i);
        for (long i = 0; i <= limit; i++)
            free(bufs[i]);
        free(bufs);
        free(reqs);
    }
    if ((rc = fm_barrier(ctx)))
        st_fail("fm_barrier: %s", fm_strerror(rc));
    return 0;
}

/* ---- mode ack ---- */

static int on_probe_ack(fm_stream *s, int sender, void *arg)
{
    (void)arg;
    uint32_t i;
    if (fm_receive(s, &i, sizeof i) != sizeof i)
        return FM_CONTINUE;
    if (i >= ACK_MAX || !ack_seen[sender * ACK_MAX + i])
        st_fail("rank %d's acknowledged multicast %u completed before it was all here", sender, i);
    probes_in++;
    return FM_DONE;
}

/* Whether ack mode sends a multicast of len bytes in mode (the same answer on every rank):
 * not store-and-forward or FCFS beyond FM_MCAST_BUFFER's share, nor a mode the tree has not
 * (ipmc sends FPFS only). */
static int ack_runs(size_t len, unsigned mode)
{
    fm_mcast_prediction pr;
    if (mode && len > 200000)
        return 0;
    return fm_mcast_predict(ctx, nranks, 0, tree, mode, len, &pr) != FM_ERR_INVALID;
}

static int mode_ack(void)
{
    int *all = malloc(sizeof(int) * (size_t)nranks), *others = malloc(sizeof(int) * (size_t)nranks);
    int no = 0;
    for (int r = 0; r < nranks; r++) {
        all[r] = r;
        if (r != me)
            others[no++] = r;
    }
    fm_group *g;
    if (fm_group_create(ctx, all, nranks, &g))
        st_fail("fm_group_create");
    size_t p = st_packet_size();
    size_t lens[] = {8, p, 100000, p < 500 ? 500 * p + 3 : 1000003};
    unsigned modes[] = {0, FM_MCAST_STORE_FORWARD, FM_MCAST_FCFS};
    int per_root = 0;
    fm_barrier(ctx);
    for (int root = 0; root < nranks; root++) {
        uint32_t i = 0;
        for (int k = 0; k < 4; k++)
            for (int md = 0; md < 3; md++, i++) {
                if (root != me)
                    continue;
                size_t len = lens[k];
                if (!ack_runs(len, modes[md]))
                    continue;
                unsigned char *b = make_msg(me, -1, ACK_BASE + (int)i, len);
                fm_request *r;
                starting = 1;
                int rc = i % 2 ? fm_imcast(g, tree, modes[md] | FM_MCAST_ACK, b, len, H_MCAST, NULL,
                                           NULL, &r)
                               : fm_imcast_list(ctx, all, nranks, tree, modes[md] | FM_MCAST_ACK, b,
                                                len, H_MCAST, NULL, NULL, &r);
                starting = 0;
                if (rc == FM_OK)
                    rc = fm_request_wait(&r);
                if (rc)
                    st_fail("acknowledged multicast %u (%zu bytes): %s", i, len, fm_strerror(rc));
                /* Now every member must have it: ask them. */
                if ((rc = fm_isend_multi(ctx, others, no, &i, sizeof i, H_PROBE, NULL, NULL, &r)) ||
                    (rc = fm_request_wait(&r)))
                    st_fail("probe: %s", fm_strerror(rc));
                free(b);
            }
        if (root != me)
            per_root++;
        fm_barrier(ctx);
    }
    /* Every multicast of every other root was probed here once. */
    long want = 0;
    for (int k = 0; k < 4; k++)
        for (int md = 0; md < 3; md++)
            want += ack_runs(lens[k], modes[md]);
    want *= per_root;
    /* (the barrier says every rank entered it, not that the probes before it arrived: from a
     * rank on another host they may come after the barrier's messages, sm before tcp) */
    for (int waits = 0; probes_in < want && waits < 30; waits++)
        if (fm_wait(ctx, 1000) < 0)
            break;
    if (probes_in != want)
        st_fail("%ld probes came, expected %ld", probes_in, want);
    fm_group_destroy(g);
    free(all);
    free(others);
    return 0;
}

/* ---- mode api ---- */

static void expect(int got, int want, const char *what)
{
    if (got != want)
        st_fail("%s: %s, expected %s", what, fm_strerror(got), fm_strerror(want));
}

static int in_handler_checked;
static int on_probe(fm_stream *s, int sender, void *arg)
{
    (void)s;
    (void)sender;
    fm_request **r = arg;
    expect(fm_request_wait(r), FM_ERR_IN_HANDLER, "fm_request_wait in a handler");
    int idx, cnt;
    expect(fm_request_waitany(r, 1, &idx), FM_ERR_IN_HANDLER, "fm_request_waitany in a handler");
    expect(fm_request_waitsome(r, 1, &idx, NULL, &cnt), FM_ERR_IN_HANDLER,
           "fm_request_waitsome in a handler");
    in_handler_checked = 1;
    return FM_DONE;
}

static int mode_api(void)
{
    char b[8] = {0};
    fm_request *r = (fm_request *)b, *null = NULL;
    int idx = 5, cnt = 5, self = me, other = (me + 1) % nranks;
    expect(fm_isend(NULL, other, b, 1, H_DIRECT, NULL, NULL, &r), FM_ERR_NOT_INIT, "no context");
    if (r)
        st_fail("*req not NULL after an error");
    expect(fm_isend(ctx, other, NULL, 1, H_DIRECT, NULL, NULL, &r), FM_ERR_INVALID, "buf NULL");
    expect(fm_isend(ctx, nranks, b, 1, H_DIRECT, NULL, NULL, &r), FM_ERR_RANK, "bad rank");
    expect(fm_isend(ctx, other, b, 1, FM_MAX_HANDLERS, NULL, NULL, &r), FM_ERR_HANDLER,
           "bad handler");
    expect(fm_isend_multi(ctx, &self, 1, b, 1, H_DIRECT, NULL, NULL, &r), FM_ERR_SELF, "self");
    expect(fm_isend_multi(ctx, &other, 0, b, 1, H_DIRECT, NULL, NULL, &r), FM_ERR_EMPTY, "empty");
    expect(fm_imcast_list(ctx, &other, 1, "flat", 0, b, 1, H_MCAST, NULL, NULL, &r),
           FM_ERR_NOT_MEMBER, "not a member");
    int pair[2] = {me, other};
    expect(fm_imcast_list(ctx, pair, 2, "nosuchtree", 0, b, 1, H_MCAST, NULL, NULL, &r),
           FM_ERR_TREE, "bad tree");
    expect(fm_imcast(NULL, "flat", 0, b, 1, H_MCAST, NULL, NULL, &r), FM_ERR_INVALID, "group NULL");
    int dup[2] = {other, other}, bad[1] = {nranks};
    expect(fm_imcast_dests(ctx, &self, 1, "prefix", 0, b, 1, H_MCAST, NULL, NULL, &r), FM_ERR_SELF,
           "dests with this rank");
    expect(fm_imcast_dests(ctx, dup, 2, "prefix", 0, b, 1, H_MCAST, NULL, NULL, &r),
           FM_ERR_DUPLICATE, "dests twice");
    expect(fm_imcast_dests(ctx, bad, 1, "prefix", 0, b, 1, H_MCAST, NULL, NULL, &r), FM_ERR_RANK,
           "dests out of range");
    expect(fm_imcast_dests(ctx, dup, 0, "prefix", 0, b, 1, H_MCAST, NULL, NULL, &r), FM_ERR_EMPTY,
           "no dests");
    fm_stream *st;
    expect(fm_mcast_begin_list(ctx, pair, 2, "flat", FM_MCAST_ACK, 1, H_MCAST, &st), FM_ERR_INVALID,
           "a streaming multicast with FM_MCAST_ACK");
    expect(fm_imcast_list(ctx, pair, 2, "flat", 64, b, 1, H_MCAST, NULL, NULL, &r), FM_ERR_INVALID,
           "unknown flags");
    expect(fm_request_test(NULL), FM_ERR_INVALID, "test NULL");
    expect(fm_request_test(&null), FM_ERR_INVALID, "test *NULL");
    r = (fm_request *)b;
    expect(fm_request_test(&r), FM_ERR_INVALID, "test of a foreign pointer");
    expect(fm_request_wait(&r), FM_ERR_INVALID, "wait of a foreign pointer");
    expect(fm_request_free(&r), FM_ERR_INVALID, "free of a foreign pointer");
    fm_request *none[3] = {NULL, NULL, NULL};
    expect(fm_request_waitany(none, 3, &idx), FM_OK, "waitany of none");
    if (idx != -1)
        st_fail("waitany of none: index %d", idx);
    expect(fm_request_waitsome(none, 3, &idx, NULL, &cnt), FM_OK, "waitsome of none");
    if (cnt != 0)
        st_fail("waitsome of none: count %d", cnt);
    expect(fm_request_waitany(NULL, 1, &idx), FM_ERR_INVALID, "waitany NULL");
    expect(fm_request_waitany(none, -1, &idx), FM_ERR_INVALID, "waitany n < 0");
    /* A completed request reported twice: the stale pointer is refused. */
    fm_request *q, *stale;
    expect(fm_isend(ctx, other, b, 8, H_DIRECT, NULL, NULL, &q), FM_OK, "isend");
    stale = q;
    expect(fm_request_wait(&q), FM_OK, "wait");
    if (q)
        st_fail("wait left the pointer");
    expect(fm_request_test(&stale), FM_ERR_INVALID, "test of a reported request");
    /* Freed while in progress, and one kept for the handler to try waiting on. */
    expect(fm_isend(ctx, other, b, 8, H_DIRECT, NULL, NULL, &q), FM_OK, "isend");
    expect(fm_request_free(&q), FM_OK, "free");
    if (q)
        st_fail("free left the pointer");
    static fm_request *kept;
    expect(fm_isend(ctx, other, b, 8, H_DIRECT, NULL, NULL, &kept), FM_OK, "isend");
    fm_register_handler(ctx, H_PING, on_probe, &kept);
    fm_barrier(ctx);
    uint32_t zero = 0;
    expect(fm_isend(ctx, other, &zero, 4, H_PING, NULL, NULL, NULL), FM_OK, "detached isend");
    while (!in_handler_checked || got_direct < 3)
        if (fm_wait(ctx, 1000) < 0)
            break;
    expect(fm_request_wait(&kept), FM_OK, "wait kept");
    fm_barrier(ctx);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "all";
    for (int i = 2; i + 1 < argc; i += 2)
        if (!strcmp(argv[i], "--tree"))
            tree = argv[i + 1];
    ctx = st_init();
    me = fm_rank(ctx);
    nranks = fm_size(ctx);
    size_t p = st_packet_size();
    /* (the largest: at most 2000 packets, so 64-byte packets stay quick) */
    size_t sz[] = {0, 1, 8, p - 1, p, p + 1, 3 * p + 7, 100000, p < 500 ? 2000 * p + 3 : 1000003};
    nsizes = (int)(sizeof sz / sizeof sz[0]);
    memcpy(sizes, sz, sizeof sz);
    next_direct = calloc((size_t)nranks, sizeof *next_direct);
    ack_seen = calloc((size_t)nranks * ACK_MAX, 1);
    /* api's messages carry no header: unchecked from the start, since a peer may run ahead
     * and its first ones be delivered as soon as their handlers are registered here. */
    check_bytes = strcmp(mode, "api") != 0;
    fm_register_handler(ctx, H_PROBE, on_probe_ack, NULL);
    fm_register_handler(ctx, H_DIRECT, on_direct, NULL);
    fm_register_handler(ctx, H_MCAST, on_mcast, NULL);
    if (strcmp(mode, "api"))
        fm_register_handler(ctx, H_PING, on_ping, NULL);
    fm_register_handler(ctx, H_REPLY, on_reply, NULL);
    if (!strcmp(mode, "all"))
        mode_all();
    else if (!strcmp(mode, "handler"))
        mode_handler();
    else if (!strcmp(mode, "bound"))
        mode_bound();
    else if (!strcmp(mode, "api"))
        mode_api();
    else if (!strcmp(mode, "ack"))
        mode_ack();
    else
        st_fail("unknown mode %s", mode);
    free(next_direct);
    free(ack_seen);
    return st_finish(ctx, mode);
}
