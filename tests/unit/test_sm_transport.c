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
 * multi-receive regions (multi_min > 0). */
static void open_n(int n, size_t multi_min, fm_tp **tp, unsigned char **rbuf)
{
    char err[256] = "";
    unsigned char table[4 * 64];
    fm_tp_config cfg = {.provider = "sm",
                        .all_local = 1,
                        .host_ranks = n,
                        .name = "unit",
                        .multi_recv_min = multi_min};
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
    enum { P = 20 };
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
