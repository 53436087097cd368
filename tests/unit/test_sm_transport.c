/* SPDX-License-Identifier: BSD-3-Clause */
/* fastmsg's shared-memory transport in one process: two endpoints (rank 0 and rank 1), each
 * mapping the other's segment. Packets of every path (inline records, chunks, a wrap of the
 * ring), rings and chunk pools filled before the receiver polls, sendv, multi-receive regions,
 * payloads shared by several destinations (three endpoints), tagged messages, the wake-up bell, bad
 * arguments, and malformed records written straight into a ring. Every loop is bounded; nothing
 * asserts timing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fastmsg.h"
#include "sm/sm_internal.h"
#include "transport.h"

#include <poll.h>
#include <stdlib.h>
#include <string.h>

#define NRECV     64
#define RBUF      (80 * 1024)
#define MAX_POLLS 20000000L

typedef struct pair {
    fm_tp *tp[2];
    unsigned char *rbuf[2];
    int sends[2], recvs[2], errs[2];
    /* What arrived at rank 1, in order: lengths and whether the bytes were right. */
    size_t got_len[4096];
    uint32_t got_seq[4096];
    int got_ok[4096];
    int ngot;
} pair;

static unsigned char pattern(uint32_t seq, size_t k)
{
    return (unsigned char)(seq * 131u + k * 7u + 1u);
}

static void fill(unsigned char *b, size_t len, uint32_t seq)
{
    for (size_t k = 0; k < len; k++)
        b[k] = pattern(seq, k);
}

static int check(const unsigned char *b, size_t len, uint32_t seq)
{
    for (size_t k = 0; k < len; k++)
        if (b[k] != pattern(seq, k))
            return 0;
    return 1;
}

/* Endpoints 0..n-1 of one host, connected (n <= 4), with receives posted unless they take
 * multi-receive regions (multi_min > 0); lend: they take loans (fm_tp_config.lend). */
static void open_lend(int n, size_t multi_min, int lend, fm_tp **tp, unsigned char **rbuf)
{
    char err[256] = "";
    unsigned char table[4 * 64];
    fm_tp_config cfg = {.provider = "sm",
                        .all_local = 1,
                        .host_ranks = n,
                        .name = "unit",
                        .multi_recv_min = multi_min,
                        .lend = lend};
    for (int i = 0; i < n; i++) {
        size_t len = 64;
        if (fm_tp_open(&cfg, &tp[i], err, sizeof err) != FM_OK)
            fail_msg("open sm: %s", err);
        assert_int_equal(tp[i]->ops->addr(tp[i], table + 64 * i, &len), FM_OK);
    }
    for (int i = 0; i < n; i++) {
        assert_int_equal(tp[i]->ops->connect(tp[i], table, 64, n), FM_OK);
        rbuf[i] = malloc((size_t)NRECV * RBUF);
        assert_non_null(rbuf[i]);
        for (int j = 0; j < NRECV && !multi_min; j++) {
            unsigned char *b = rbuf[i] + (size_t)j * RBUF;
            assert_int_equal(tp[i]->ops->post_recv(tp[i], b, RBUF, NULL, b), FM_OK);
        }
    }
}

static void open_n(int n, size_t multi_min, fm_tp **tp, unsigned char **rbuf)
{
    open_lend(n, multi_min, 0, tp, rbuf);
}

static pair *open_pair(size_t multi_min)
{
    pair *p = calloc(1, sizeof *p);
    assert_non_null(p);
    open_n(2, multi_min, p->tp, p->rbuf);
    return p;
}

static void close_n(int n, fm_tp **tp, unsigned char **rbuf)
{
    for (int i = 0; i < n; i++) {
        tp[i]->ops->close(tp[i]);
        free(rbuf[i]);
    }
}

static void close_pair(pair *p)
{
    close_n(2, p->tp, p->rbuf);
    free(p);
}

/* Packets carry their sequence number in their first 4 bytes (when long enough). */
static void on_packet(pair *p, int side, const unsigned char *b, size_t len)
{
    uint32_t seq = 0;
    if (len >= 4)
        memcpy(&seq, b, 4);
    int ok = len < 4 || check(b + 4, len - 4, seq);
    if (side == 1 && p->ngot < 4096) {
        p->got_len[p->ngot] = len;
        p->got_seq[p->ngot] = seq;
        p->got_ok[p->ngot++] = ok;
    }
}

static void pump(pair *p)
{
    fm_tp_event ev[16];
    for (int i = 0; i < 2; i++) {
        int n = p->tp[i]->ops->poll(p->tp[i], ev, 16);
        assert_true(n >= 0);
        for (int e = 0; e < n; e++) {
            if (ev[e].status != FM_OK)
                p->errs[i]++;
            if (ev[e].kind == FM_TP_SEND_DONE) {
                p->sends[i]++;
                continue;
            }
            assert_int_equal(ev[e].kind, FM_TP_RECV_DONE);
            p->recvs[i]++;
            on_packet(p, i, ev[e].buf, ev[e].len);
            unsigned char *b = ev[e].ctx;
            assert_int_equal(p->tp[i]->ops->post_recv(p->tp[i], b, RBUF, NULL, b), FM_OK);
        }
    }
}

static void pump_until(pair *p, int sends0, int recvs1)
{
    for (long it = 0; it < MAX_POLLS; it++) {
        if (p->sends[0] >= sends0 && p->recvs[1] >= recvs1)
            return;
        pump(p);
    }
    fail_msg("gave up: sends %d/%d, received %d/%d", p->sends[0], sends0, p->recvs[1], recvs1);
}

static unsigned char *packet(size_t len, uint32_t seq)
{
    unsigned char *b = malloc(len + 4);
    assert_non_null(b);
    memcpy(b, &seq, 4);
    fill(b + 4, len, seq);
    return b;
}

/* Sends counted as done at once (FM_TP_SENT) or by their event. */
static void send_one(pair *p, const unsigned char *b, size_t len)
{
    int rc = p->tp[0]->ops->send(p->tp[0], 1, b, len, NULL, (void *)b);
    assert_true(rc == FM_OK || rc == FM_TP_SENT);
    if (rc == FM_TP_SENT)
        p->sends[0]++;
}

static void test_sizes(void **state)
{
    (void)state;
    pair *p = open_pair(0);
    size_t inl = fm_sm_of(p->tp[0])->inline_max;
    size_t sizes[] = {4, 5, inl, inl + 1, FM_SM_CHUNK_BYTES, FM_SM_CHUNK_BYTES + 1, 65576};
    size_t n = sizeof sizes / sizeof sizes[0];
    for (size_t i = 0; i < n; i++) {
        unsigned char *b = packet(sizes[i] - 4, (uint32_t)i);
        send_one(p, b, sizes[i]);
        pump_until(p, (int)i + 1, (int)i + 1);
        free(b);
    }
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(p->got_len[i], sizes[i]);
        assert_true(p->got_ok[i]);
    }
    assert_int_equal(p->errs[0] + p->errs[1], 0);
    close_pair(p);
}

/* Far more than a ring and the chunk pool hold, all handed over before the receiver polls:
 * sends wait in the queue, complete by their events, and arrive in order, every byte right. */
static void test_many_queued(void **state)
{
    (void)state;
    pair *p = open_pair(0);
    enum { N = 1500 };
    size_t lens[] = {12, 3000, 70000, 1, 33000};
    unsigned char *bufs[N];
    int queued = 0;
    for (uint32_t i = 0; i < N; i++) {
        size_t len = lens[i % 5];
        bufs[i] = packet(len < 4 ? 0 : len - 4, i);
        int rc = p->tp[0]->ops->send(p->tp[0], 1, bufs[i], len, NULL, bufs[i]);
        assert_true(rc == FM_OK || rc == FM_TP_SENT);
        p->sends[0] += rc == FM_TP_SENT;
        queued += rc == FM_OK;
    }
    assert_true(queued > 0); /* the ring and pool did fill */
    pump_until(p, N, N);
    for (uint32_t i = 0; i < N; i++) {
        size_t len = lens[i % 5];
        assert_int_equal(p->got_len[i], len);
        if (len >= 4) { /* in order, every byte right (checked on arrival) */
            assert_int_equal(p->got_seq[i], i);
            assert_true(p->got_ok[i]);
        }
        free(bufs[i]);
    }
    assert_int_equal(p->errs[0] + p->errs[1], 0);
    close_pair(p);
}

/* A ring filled exactly with the largest inline records, all read in one poll that could take
 * more: every packet arrives, in order, and the sender's ring keeps working (the line after
 * the last one read is the lap's first record until the head is published). */
static void test_full_ring(void **state)
{
    (void)state;
    pair *p = open_pair(0);
    fm_sm_tp *t = fm_sm_of(p->tp[0]);
    size_t len = t->inline_max, nfit = t->lay.ring_bytes / fm_sm_rec_bytes(len);
    enum { EXTRA = 3 };
    unsigned char *bufs[NRECV + EXTRA];
    assert_true(nfit < NRECV); /* (one poll takes them all) */
    for (uint32_t i = 0; i < nfit + EXTRA; i++) {
        bufs[i] = packet(len - 4, i);
        int rc = p->tp[0]->ops->send(p->tp[0], 1, bufs[i], len, NULL, bufs[i]);
        /* the first nfit fill the ring exactly; the rest wait in the queue */
        assert_int_equal(rc, i < nfit ? FM_TP_SENT : FM_OK);
        p->sends[0] += rc == FM_TP_SENT;
    }
    fm_tp_event ev[NRECV];
    int n = p->tp[1]->ops->poll(p->tp[1], ev, NRECV);
    assert_int_equal(n, (int)nfit);
    for (int e = 0; e < n; e++) {
        assert_int_equal(ev[e].kind, FM_TP_RECV_DONE);
        assert_int_equal(ev[e].status, FM_OK);
        on_packet(p, 1, ev[e].buf, ev[e].len);
        p->recvs[1]++;
        unsigned char *b = ev[e].ctx;
        assert_int_equal(p->tp[1]->ops->post_recv(p->tp[1], b, RBUF, NULL, b), FM_OK);
    }
    pump_until(p, (int)nfit + EXTRA, (int)nfit + EXTRA);
    for (uint32_t i = 0; i < nfit + EXTRA; i++) {
        assert_int_equal(p->got_len[i], len);
        assert_int_equal(p->got_seq[i], i);
        assert_true(p->got_ok[i]);
        free(bufs[i]);
    }
    assert_int_equal(p->errs[0] + p->errs[1], 0);
    close_pair(p);
}

static void test_sendv(void **state)
{
    (void)state;
    pair *p = open_pair(0);
    size_t plens[] = {0, 100, 50000};
    for (int i = 0; i < 3; i++) {
        unsigned char *b = packet(plens[i] + 36, (uint32_t)i); /* 4 + 36 header bytes */
        int rc = p->tp[0]->ops->sendv(p->tp[0], 1, b, 40, NULL, b + 40, plens[i], NULL, b);
        assert_true(rc == FM_OK || rc == FM_TP_SENT);
        p->sends[0] += rc == FM_TP_SENT;
        pump_until(p, i + 1, i + 1);
        assert_int_equal(p->got_len[i], 40 + plens[i]);
        assert_true(p->got_ok[i]);
        free(b);
    }
    close_pair(p);
}

/* Regions: packets land packed in the order they came, each region let go of (REGION_DONE)
 * after its last packet's event, when less than the threshold is left. */
static void test_regions(void **state)
{
    (void)state;
    const size_t min = 70000, rlen = 200000;
    pair *p = open_pair(min);
    assert_true(p->tp[1]->info.multi_recv);
    unsigned char *region[2] = {malloc(rlen), malloc(rlen)};
    for (int r = 0; r < 2; r++)
        assert_int_equal(p->tp[1]->ops->post_recv_multi(p->tp[1], region[r], rlen, NULL, region[r]),
                         FM_OK);
    enum { N = 6 };
    size_t lens[N] = {60000, 10, 50000, 40000, 7, 65000};
    unsigned char *bufs[N];
    for (uint32_t i = 0; i < N; i++) {
        bufs[i] = packet(lens[i] - 4, i);
        send_one(p, bufs[i], lens[i]);
    }
    int got = 0, done = 0, done_after = -1;
    fm_tp_event ev[8];
    for (long it = 0; it < MAX_POLLS && (got < N || !done); it++) {
        fm_tp_event sev[8];
        int ns = p->tp[0]->ops->poll(p->tp[0], sev, 8);
        assert_true(ns >= 0);
        int n = p->tp[1]->ops->poll(p->tp[1], ev, 8);
        assert_true(n >= 0);
        for (int e = 0; e < n; e++) {
            assert_int_equal(ev[e].status, FM_OK);
            if (ev[e].kind == FM_TP_RECV_REGION_DONE) {
                assert_ptr_equal(ev[e].ctx, region[0]);
                done++;
                done_after = got;
                continue;
            }
            assert_int_equal(ev[e].kind, FM_TP_RECV_MULTI);
            unsigned char *b = ev[e].buf;
            assert_int_equal(ev[e].len, lens[got]);
            assert_true(check(b + 4, lens[got] - 4, (uint32_t)got));
            /* 60000 + 10 (taking 16) + 50000 leave 89984 of 200000, more than 70000; with
             * the 40000 after them 49984 are left: region 0 takes the first four packets,
             * region 1 the rest. */
            assert_ptr_equal(ev[e].ctx, region[got < 4 ? 0 : 1]);
            assert_true(b >= (unsigned char *)ev[e].ctx &&
                        b + ev[e].len <= (unsigned char *)ev[e].ctx + rlen);
            got++;
        }
    }
    assert_int_equal(got, N);
    /* Region 0 is let go of once, after its last packet's event; region 1 is not (more than
     * 70000 bytes are left in it). */
    assert_int_equal(done, 1);
    assert_true(done_after >= 4);
    for (int i = 0; i < N; i++)
        free(bufs[i]);
    close_pair(p);
    free(region[0]);
    free(region[1]);
}

/* A tagged message: read straight from the sender; the send completes after the receive. */
static void test_tagged(void **state)
{
    (void)state;
    pair *p = open_pair(0);
    if (!p->tp[0]->info.tagged) {
        close_pair(p);
        skip(); /* no cross-memory attach here (the log says why) */
    }
    size_t len = (1u << 20) + 13;
    unsigned char *src = packet(len - 4, 77), *dst = calloc(1, len);
    assert_int_equal(p->tp[1]->ops->trecv(p->tp[1], 0, dst, len, NULL, 0xabcdef, dst), FM_OK);
    assert_int_equal(p->tp[0]->ops->tsend(p->tp[0], 1, src, len, NULL, 0xabcdef, src), FM_OK);
    int tsend = 0, trecv = 0;
    fm_tp_event ev[8];
    for (long it = 0; it < MAX_POLLS && !(tsend && trecv); it++)
        for (int i = 0; i < 2; i++) {
            int n = p->tp[i]->ops->poll(p->tp[i], ev, 8);
            for (int e = 0; e < n; e++) {
                assert_int_equal(ev[e].status, FM_OK);
                if (ev[e].kind == FM_TP_TRECV_DONE) {
                    assert_int_equal(ev[e].len, len);
                    assert_ptr_equal(ev[e].ctx, dst);
                    trecv = 1;
                } else {
                    assert_int_equal(ev[e].kind, FM_TP_TSEND_DONE);
                    assert_true(trecv); /* the FIN comes after the read */
                    assert_ptr_equal(ev[e].ctx, src);
                    tsend = 1;
                }
            }
        }
    assert_true(tsend && trecv);
    assert_memory_equal(src, dst, len);
    free(src);
    free(dst);
    close_pair(p);
}

/* trywait says "sleep" on an empty ring, "work" once a record waits; a send to a sleeper
 * makes its wait fd readable, and the next poll empties it. */
static void test_bell(void **state)
{
    (void)state;
    pair *p = open_pair(0);
    fm_tp *rx = p->tp[1];
    int fd = rx->ops->wait_fd(rx);
    assert_true(fd >= 0);
    assert_int_equal(rx->ops->trywait(rx), FM_OK);
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    assert_int_equal(poll(&pfd, 1, 0), 0);
    unsigned char *b = packet(60, 1);
    send_one(p, b, 64);
    assert_int_equal(poll(&pfd, 1, 10000), 1);
    assert_int_equal(rx->ops->trywait(rx), FM_EAGAIN);
    pump_until(p, 1, 1);
    assert_int_equal(poll(&pfd, 1, 0), 0); /* emptied */
    free(b);
    close_pair(p);
}

/* Polls every endpoint until `want` packets arrived at ranks 1.. in all, each compared with
 * the header (its first 4 bytes name the copy: hdrs[k]) followed by the payload pay. */
static void shared_drain(fm_tp **tp, int n, int want, unsigned char hdrs[][40],
                         const unsigned char *pay, size_t plen, int *sends)
{
    int got = 0;
    fm_tp_event ev[16];
    for (long it = 0; it < MAX_POLLS && got < want; it++)
        for (int i = 0; i < n; i++) {
            int k = tp[i]->ops->poll(tp[i], ev, 16);
            assert_true(k >= 0);
            for (int e = 0; e < k; e++) {
                assert_int_equal(ev[e].status, FM_OK);
                if (ev[e].kind == FM_TP_SEND_DONE) {
                    (*sends)++;
                    continue;
                }
                assert_int_equal(ev[e].kind, FM_TP_RECV_DONE);
                assert_null(ev[e].lent); /* (not asked for) */
                assert_int_equal(ev[e].len, 40 + plen);
                uint32_t c;
                memcpy(&c, ev[e].buf, 4);
                assert_memory_equal(ev[e].buf, hdrs[c], 40);
                assert_memory_equal((unsigned char *)ev[e].buf + 40, pay, plen);
                got++;
                assert_int_equal(tp[i]->ops->post_recv(tp[i], ev[e].ctx, RBUF, NULL, ev[e].ctx),
                                 FM_OK);
            }
        }
    assert_int_equal(got, want);
}

static uint32_t chunk_count(fm_tp *tp, uint32_t c)
{
    fm_sm_tp *t = fm_sm_of(tp);
    return atomic_load(&fm_sm_flag(&t->lay, t->seg, c)->busy);
}

/* One payload to ranks 1 and 2 (twice to 1), each copy behind its own header: the payload is
 * written into chunks once, each chunk counted once per reader plus once for the sender until
 * released, and every copy arrives whole. */
static void test_shared(void **state)
{
    (void)state;
    fm_tp *tp[3];
    unsigned char *rbuf[3];
    open_n(3, 0, tp, rbuf);
    assert_non_null(tp[0]->ops->sendv_shared);
    size_t plen = 70000; /* three chunks */
    unsigned char *pay = malloc(plen), hdrs[3][40];
    assert_non_null(pay);
    fill(pay, plen, 77);
    int dests[3] = {1, 2, 1}, sends = 0;
    void *share = NULL;
    for (uint32_t k = 0; k < 3; k++) {
        memcpy(hdrs[k], &k, 4);
        fill(hdrs[k] + 4, 36, k + 1);
        int rc = tp[0]->ops->sendv_shared(tp[0], dests[k], hdrs[k], 40, NULL, pay, plen, NULL,
                                          &share, hdrs[k]);
        assert_true(rc == FM_OK || rc == FM_TP_SENT);
        sends += rc == FM_TP_SENT;
        assert_non_null(share);
    }
    fm_sm_share *sh = share;
    assert_int_equal(sh->nchunks, 3);
    for (uint32_t i = 0; i < sh->nchunks; i++)
        assert_int_equal(chunk_count(tp[0], sh->chunk[i]), 1 + 3);
    assert_int_equal(tp[0]->shared, 3);
    shared_drain(tp, 3, 3, hdrs, pay, plen, &sends);
    assert_int_equal(sends, 3);
    uint32_t chunks[3];
    memcpy(chunks, sh->chunk, sizeof chunks);
    for (int i = 0; i < 3; i++) /* read by all: the sender's count is left */
        assert_int_equal(chunk_count(tp[0], chunks[i]), 1);
    tp[0]->ops->share_release(tp[0], share);
    for (uint32_t c = 0; c < FM_SM_NCHUNKS; c++)
        assert_int_equal(chunk_count(tp[0], c), 0);
    /* A payload small enough for a ring record is not shared. */
    share = NULL;
    int rc = tp[0]->ops->sendv_shared(tp[0], 2, hdrs[0], 40, NULL, pay, 100, NULL, &share, NULL);
    assert_int_equal(rc, FM_TP_SENT);
    assert_null(share);
    shared_drain(tp, 3, 1, hdrs, pay, 100, &sends);
    close_n(3, tp, rbuf);
    free(pay);
}

/* Shared payloads that are not let go of take at most half the chunk pool: the next payloads
 * are not shared but sent the ordinary way, through the other half, and they all arrive while
 * the shared ones still hold theirs (a shared payload waits for the runtime's credits, which
 * may wait for these sends). */
static void test_shared_pool_full(void **state)
{
    (void)state;
    enum { P = FM_SM_NCHUNKS / 4 + FM_SM_NCHUNKS / 2 }; /* (more than both halves hold) */
    fm_tp *tp[2];
    unsigned char *rbuf[2];
    open_n(2, 0, tp, rbuf);
    size_t plen = 2 * FM_SM_CHUNK_BYTES;
    unsigned char *pay = malloc(plen), hdrs[1][40] = {{0}};
    assert_non_null(pay);
    fill(pay, plen, 5);
    void *share[P] = {0};
    int sends = 0, shared = 0, queued = 0;
    for (int k = 0; k < P; k++) {
        int rc =
            tp[0]->ops->sendv_shared(tp[0], 1, hdrs[0], 40, NULL, pay, plen, NULL, &share[k], NULL);
        assert_true(rc == FM_OK || rc == FM_TP_SENT);
        sends += rc == FM_TP_SENT;
        queued += rc == FM_OK;
        shared += share[k] != NULL;
    }
    assert_int_equal(shared, FM_SM_NCHUNKS / 4); /* two chunks each: half the pool */
    assert_true(queued > 0);                     /* the other half filled too */
    shared_drain(tp, 2, P, hdrs, pay, plen, &sends);
    assert_int_equal(sends, P);
    uint32_t held = 0;
    for (uint32_t c = 0; c < FM_SM_NCHUNKS; c++)
        held += chunk_count(tp[0], c);
    assert_int_equal(held, FM_SM_NCHUNKS / 2); /* the sender's counts only */
    for (int k = 0; k < P; k++)
        if (share[k])
            tp[0]->ops->share_release(tp[0], share[k]);
    for (uint32_t c = 0; c < FM_SM_NCHUNKS; c++)
        assert_int_equal(chunk_count(tp[0], c), 0);
    close_n(2, tp, rbuf);
    free(pay);
}

/* The next receive event at endpoint tp (polling every endpoint of n meanwhile). */
static fm_tp_event next_recv(fm_tp **tp, int n, fm_tp *at)
{
    fm_tp_event ev;
    for (long it = 0; it < MAX_POLLS; it++)
        for (int i = 0; i < n; i++) {
            int k = tp[i]->ops->poll(tp[i], &ev, 1);
            assert_true(k >= 0);
            if (k && ev.kind != FM_TP_SEND_DONE) {
                assert_ptr_equal(tp[i], at);
                assert_int_equal(ev.status, FM_OK);
                return ev;
            }
        }
    fail_msg("no packet arrived");
    return ev;
}

/* Bytes [0, len) of a received packet: from the receive buffer below lent_at, from the loan
 * above it. */
static int event_matches(const fm_tp_event *e, const unsigned char *hdr, size_t hlen,
                         const unsigned char *pay, size_t plen)
{
    if (e->len != hlen + plen)
        return 0;
    for (size_t k = 0; k < e->len; k++) {
        unsigned char want = k < hlen ? hdr[k] : pay[k - hlen];
        unsigned char got = e->lent && k >= e->lent_at ? e->lent[k - e->lent_at]
                                                       : ((const unsigned char *)e->buf)[k];
        if (got != want)
            return 0;
    }
    return 1;
}

/* Loans (fm_tp_config.lend): a shared payload is read where the sender wrote it, by every
 * reader behind the header each has in its buffer, its chunks counted for each reader until
 * lend_release. An ordinary packet in chunks is copied (its sender writes its later chunks
 * as readers free earlier ones), and so is a shared payload whose chunks do not follow each
 * other in the pool. */
static void test_lend(void **state)
{
    (void)state;
    fm_tp *tp[3];
    unsigned char *rbuf[3];
    open_lend(3, 0, 1, tp, rbuf);
    fm_sm_tp *t0 = fm_sm_of(tp[0]);
    size_t plen = 70000; /* with a header, three chunks */
    unsigned char *pay = malloc(plen), hdr[40];
    assert_non_null(pay);
    fill(pay, plen, 9);
    fill(hdr, sizeof hdr, 4);

    /* An ordinary packet: copied, its chunks free again once read. */
    int rc = tp[0]->ops->sendv(tp[0], 1, hdr, 40, NULL, pay, plen, NULL, NULL);
    assert_int_equal(rc, FM_TP_SENT);
    fm_tp_event e = next_recv(tp, 3, tp[1]);
    assert_null(e.lent);
    assert_true(event_matches(&e, hdr, 40, pay, plen));
    for (uint32_t c = 0; c < FM_SM_NCHUNKS; c++)
        assert_int_equal(chunk_count(tp[0], c), 0);
    assert_int_equal(tp[1]->ops->post_recv(tp[1], e.ctx, RBUF, NULL, e.ctx), FM_OK);

    /* A shared payload to ranks 1 and 2: each has the header in its buffer, the payload lent.
     * Its chunks are a run: not the pool's last one and its first two, but its first three. */
    t0->chunk_next = FM_SM_NCHUNKS - 1;
    void *share = NULL;
    for (int d = 1; d <= 2; d++) {
        rc = tp[0]->ops->sendv_shared(tp[0], d, hdr, 40, NULL, pay, plen, NULL, &share, NULL);
        assert_int_equal(rc, FM_TP_SENT);
    }
    fm_sm_share *sh = share;
    assert_int_equal(sh->nchunks, 3);
    for (uint32_t i = 0; i < 3; i++)
        assert_int_equal(sh->chunk[i], i);
    fm_tp_event got[2] = {next_recv(tp, 2, tp[1]), next_recv(tp + 2, 1, tp[2])};
    fm_sm_tp *t1 = fm_sm_of(tp[1]); /* (its own map of rank 0's segment) */
    assert_ptr_equal(got[0].lent, fm_sm_chunk(&t1->lay, t1->peers[0].base, 0));
    for (int i = 0; i < 2; i++) {
        assert_non_null(got[i].lent);
        assert_int_equal(got[i].lent_at, 40);
        assert_memory_equal(got[i].buf, hdr, 40);
        assert_true(event_matches(&got[i], hdr, 40, pay, plen));
    }
    assert_int_equal(chunk_count(tp[0], sh->chunk[0]), 1 + 2); /* sender, two readers */
    tp[1]->ops->lend_release(tp[1], got[0].lend);
    assert_int_equal(chunk_count(tp[0], sh->chunk[0]), 1 + 1);
    tp[0]->ops->share_release(tp[0], share);
    assert_int_equal(chunk_count(tp[0], sh->chunk[0]), 1); /* still lent to rank 2 */
    tp[2]->ops->lend_release(tp[2], got[1].lend);
    for (uint32_t c = 0; c < FM_SM_NCHUNKS; c++)
        assert_int_equal(chunk_count(tp[0], c), 0);
    assert_int_equal(tp[1]->ops->post_recv(tp[1], got[0].ctx, RBUF, NULL, got[0].ctx), FM_OK);

    /* Every other chunk taken (by hand): no run of three is free, the payload's chunks are
     * apart, and it is copied into the buffer, nothing lent or held. */
    for (uint32_t c = 1; c < FM_SM_NCHUNKS; c += 2)
        atomic_store(&fm_sm_flag(&t0->lay, t0->seg, c)->busy, 1);
    share = NULL;
    rc = tp[0]->ops->sendv_shared(tp[0], 1, hdr, 40, NULL, pay, plen, NULL, &share, NULL);
    assert_int_equal(rc, FM_TP_SENT);
    assert_non_null(share);
    e = next_recv(tp, 2, tp[1]);
    assert_null(e.lent);
    assert_true(event_matches(&e, hdr, 40, pay, plen));
    tp[0]->ops->share_release(tp[0], share);
    for (uint32_t c = 0; c < FM_SM_NCHUNKS; c++)
        assert_int_equal(chunk_count(tp[0], c), c % 2);
    /* A handle that names no loan of this endpoint changes nothing. */
    tp[1]->ops->lend_release(tp[1], (uint64_t)9 << 32 | 1);
    close_n(3, tp, rbuf);

    /* A malformed record in the middle of a lent packet (header, two chunks, then this): the
     * chunks lent so far go back. */
    open_lend(2, 0, 1, tp, rbuf);
    share = NULL;
    rc = tp[0]->ops->sendv_shared(tp[0], 1, hdr, 40, NULL, pay, plen, NULL, &share, NULL);
    assert_int_equal(rc, FM_TP_SENT);
    fm_sm_tp *r = fm_sm_of(tp[1]);
    unsigned char *third = fm_sm_ring(&r->lay, r->seg, 0) + 3 * FM_SM_LINE;
    atomic_store((_Atomic uint64_t *)(void *)third, fm_sm_word(99, FM_SM_REC_CHUNK, 16));
    fm_tp_event bad;
    assert_int_equal(tp[1]->ops->poll(tp[1], &bad, 1), 1);
    assert_int_equal(bad.status, FM_ERR_TOO_LONG);
    assert_null(bad.lent);
    assert_int_equal(r->dropped, 1);
    assert_int_equal(chunk_count(tp[0], 0), 1); /* the sender's count alone */
    assert_int_equal(chunk_count(tp[0], 1), 1);
    assert_int_equal(chunk_count(tp[0], 2), 2); /* its record was never read */
    tp[0]->ops->share_release(tp[0], share);
    close_n(2, tp, rbuf);
    free(pay);
}

static void test_bad_args(void **state)
{
    (void)state;
    pair *p = open_pair(0);
    char b[8] = {0};
    assert_int_equal(p->tp[0]->ops->send(p->tp[0], 2, b, 8, NULL, b), FM_ERR_INVALID);
    assert_int_equal(p->tp[0]->ops->send(p->tp[0], -1, b, 8, NULL, b), FM_ERR_INVALID);
    assert_int_equal(p->tp[0]->ops->send(p->tp[0], 1, NULL, 8, NULL, b), FM_ERR_INVALID);
    assert_int_equal(p->tp[0]->ops->post_recv_multi(p->tp[0], b, 8, NULL, b), FM_ERR_INVALID);
    unsigned char addr[64];
    size_t len = 4;
    assert_int_equal(p->tp[0]->ops->addr(p->tp[0], addr, &len), FM_ERR_INVALID);
    close_pair(p);
    /* A job spanning hosts, or a host count that does not match, is refused. */
    char err[256] = "";
    fm_tp_config cfg = {.provider = "sm", .all_local = 0, .host_ranks = 2};
    assert_int_equal(fm_tp_fits(&cfg, 4, err, sizeof err), FM_ERR_PROVIDER);
    assert_non_null(strstr(err, "one host"));
    cfg.host_ranks = 0;
    fm_tp *tp = NULL;
    assert_int_equal(fm_tp_open(&cfg, &tp, err, sizeof err), FM_ERR_PROVIDER);
}

/* Malformed records written into rank 0's ring at rank 1: each is dropped and counted, rank
 * 1 reads that ring no more, and nothing crashes. */
static void malformed(uint64_t word, const void *body, size_t blen)
{
    pair *p = open_pair(0);
    fm_sm_tp *r = fm_sm_of(p->tp[1]);
    unsigned char *ring = fm_sm_ring(&r->lay, r->seg, 0);
    memcpy(ring + 8, body, blen);
    atomic_store((_Atomic uint64_t *)(void *)ring, word);
    fm_tp_event ev[8];
    for (int i = 0; i < 100; i++) {
        int n = p->tp[1]->ops->poll(p->tp[1], ev, 8);
        assert_int_equal(n, 0);
    }
    assert_int_equal(r->dropped, 1);
    assert_true(r->peers[0].broken);
    /* A good packet from rank 0 after it is not read either (the ring is closed to us). */
    unsigned char *b = packet(16, 3);
    send_one(p, b, 20);
    for (int i = 0; i < 100; i++)
        assert_int_equal(p->tp[1]->ops->poll(p->tp[1], ev, 8), 0);
    free(b);
    close_pair(p);
}

static void test_malformed(void **state)
{
    (void)state;
    fm_sm_chunk_ref bad_chunk = {.chunk = 1000, .len = 10, .total = 10, .off = 0};
    fm_sm_chunk_ref bad_off = {.chunk = 0, .len = 10, .total = 30, .off = 10};
    fm_sm_chunk_ref too_long = {.chunk = 0, .len = FM_SM_CHUNK_BYTES + 1, .total = 1u << 20};
    char zeros[64] = {0};
    malformed(fm_sm_word(2, FM_SM_REC_INLINE, 8), zeros, 8);       /* wrong sequence */
    malformed(fm_sm_word(1, 9, 8), zeros, 8);                      /* unknown kind */
    malformed(fm_sm_word(1, FM_SM_REC_INLINE, 0xfffff), zeros, 8); /* longer than a record */
    malformed(fm_sm_word(1, FM_SM_REC_CHUNK, 4), &bad_chunk, 16);  /* wrong body length */
    malformed(fm_sm_word(1, FM_SM_REC_CHUNK, 16), &bad_chunk, 16); /* chunk out of the pool */
    malformed(fm_sm_word(1, FM_SM_REC_CHUNK, 16), &bad_off, 16);   /* a piece without start */
    malformed(fm_sm_word(1, FM_SM_REC_CHUNK, 16), &too_long, 16);  /* longer than a chunk */
    malformed(fm_sm_word(1, FM_SM_REC_FIN, 16), zeros, 16);        /* answers no send */
    fm_sm_chunk_ref idle = {.chunk = 0, .len = 10, .total = 10, .off = 0};
    malformed(fm_sm_word(1, FM_SM_REC_CHUNK, 16), &idle, 16); /* a chunk nobody holds */
    fm_sm_piece past = {.total = 10, .off = 8};
    unsigned char piece[24] = {0};
    memcpy(piece, &past, sizeof past);
    malformed(fm_sm_word(1, FM_SM_REC_PIECE, 8), piece, 8);   /* no bytes */
    malformed(fm_sm_word(1, FM_SM_REC_PIECE, 24), piece, 24); /* past the packet's end */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),    cmocka_unit_test(test_many_queued),
        cmocka_unit_test(test_sendv),    cmocka_unit_test(test_regions),
        cmocka_unit_test(test_tagged),   cmocka_unit_test(test_bell),
        cmocka_unit_test(test_bad_args), cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_shared),   cmocka_unit_test(test_shared_pool_full),
        cmocka_unit_test(test_lend),     cmocka_unit_test(test_full_ring),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
