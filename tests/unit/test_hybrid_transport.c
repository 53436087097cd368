/* SPDX-License-Identifier: BSD-3-Clause */
/* The hybrid provider (sm+tcp) in one process: four endpoints, ranks 0 and 1 said to share a
 * host, ranks 2 and 3 another (fm_tp_config.host_of), so 0-1 and 2-3 talk through sm and every
 * other pair through tcp on lo. Every packet reaches the rank it was sent to with its bytes;
 * receive buffers and regions are shared out between the paths as worked out by hand below;
 * tagged messages are posted on their sender's path; the wait fd wakes for either path; bad
 * arguments are refused. Every loop is bounded; nothing asserts timing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fastmsg.h"
#include "hybrid/hybrid_internal.h"
#include "transport.h"

#include <poll.h>
#include <stdlib.h>
#include <string.h>

#define N         4
#define NBUF      12 /* per endpoint: what a runtime with 2 credits posts (4 ranks x 3) */
#define RBUF      (16 * 1024)
#define REGION    (64 * 1024)
#define MAX_POLLS 20000000L
#define STRIDE    256

static const int two_hosts[N] = {0, 0, 1, 1};

typedef struct job {
    fm_tp *tp[N];
    unsigned char *rbuf[N];
    /* got[d][s]: packets rank d received from rank s with the right bytes; bad: wrong ones */
    int got[N][N], bad, sends, errs;
    void *back[64]; /* rank 0's receive buffers that came back, in order */
    int nback;
} job;

/* A packet: its sender, its destination, then bytes that depend on both. */
static void fill(unsigned char *b, size_t len, int src, int dst)
{
    b[0] = (unsigned char)src;
    b[1] = (unsigned char)dst;
    for (size_t k = 2; k < len; k++)
        b[k] = (unsigned char)(k * 13u + (unsigned)src * 7u + (unsigned)dst);
}

static void note(job *j, int at, const unsigned char *b, size_t len)
{
    int src = b[0], dst = b[1];
    unsigned char want[RBUF];
    if (len < 2 || len > RBUF || src >= N || dst != at) {
        j->bad++;
        return;
    }
    fill(want, len, src, dst);
    if (memcmp(want, b, len))
        j->bad++;
    else
        j->got[at][src]++;
}

static fm_tp_config config(int rank, const int *host_of, size_t multi_min)
{
    return (fm_tp_config){.provider = "sm+tcp",
                          .iface = "lo",
                          .host_ranks = 2,
                          .name = "unit-hybrid",
                          .multi_recv_min = multi_min,
                          .host_of = host_of,
                          .rank = rank,
                          .nranks = N};
}

static job *open_job(size_t multi_min)
{
    job *j = calloc(1, sizeof *j);
    unsigned char table[N * STRIDE];
    char err[256] = "";
    assert_non_null(j);
    memset(table, 0, sizeof table);
    for (int r = 0; r < N; r++) {
        fm_tp_config cfg = config(r, two_hosts, multi_min);
        if (fm_tp_open(&cfg, &j->tp[r], err, sizeof err) != FM_OK)
            fail_msg("open sm+tcp: %s", err);
        size_t len = STRIDE;
        assert_int_equal(j->tp[r]->ops->addr(j->tp[r], table + r * STRIDE, &len), FM_OK);
        assert_true(len > 1 && len <= STRIDE);
    }
    for (int r = 0; r < N; r++) {
        assert_int_equal(j->tp[r]->ops->connect(j->tp[r], table, STRIDE, N), FM_OK);
        j->rbuf[r] = malloc(NBUF * (size_t)(multi_min ? REGION : RBUF));
        assert_non_null(j->rbuf[r]);
    }
    return j;
}

static void close_job(job *j)
{
    for (int r = 0; r < N; r++) {
        j->tp[r]->ops->close(j->tp[r]);
        free(j->rbuf[r]);
    }
    free(j);
}

static void post_buffers(job *j, int r)
{
    for (int b = 0; b < NBUF; b++) {
        unsigned char *buf = j->rbuf[r] + (size_t)b * RBUF;
        assert_int_equal(j->tp[r]->ops->post_recv(j->tp[r], buf, RBUF, NULL, buf), FM_OK);
    }
}

static void pump(job *j)
{
    fm_tp_event ev[16];
    for (int r = 0; r < N; r++) {
        int n = j->tp[r]->ops->poll(j->tp[r], ev, 16);
        assert_true(n >= 0);
        for (int e = 0; e < n; e++) {
            if (ev[e].status != FM_OK)
                j->errs++;
            if (ev[e].kind == FM_TP_SEND_DONE || ev[e].kind == FM_TP_TSEND_DONE)
                j->sends++;
            else if (ev[e].kind == FM_TP_RECV_DONE || ev[e].kind == FM_TP_RECV_MULTI ||
                     ev[e].kind == FM_TP_TRECV_DONE)
                note(j, r, ev[e].buf, ev[e].len);
            if (ev[e].kind == FM_TP_RECV_DONE && r == 0 && j->nback < 64)
                j->back[j->nback++] = ev[e].ctx;
        }
    }
}

static int total_got(const job *j)
{
    int t = 0;
    for (int d = 0; d < N; d++)
        for (int s = 0; s < N; s++)
            t += j->got[d][s];
    return t;
}

static void pump_until(job *j, int want_got, int want_sends)
{
    for (long it = 0; it < MAX_POLLS && (total_got(j) < want_got || j->sends < want_sends); it++)
        pump(j);
    assert_int_equal(j->bad, 0);
    assert_int_equal(j->errs, 0);
    assert_int_equal(total_got(j), want_got);
}

/* Sends len bytes from src to dst; returns 1 when a SEND_DONE is to come. */
static int send_one(job *j, int src, int dst, unsigned char *buf, size_t len)
{
    fill(buf, len, src, dst);
    int rc = j->tp[src]->ops->send(j->tp[src], dst, buf, len, NULL, buf);
    assert_true(rc == FM_OK || rc == FM_TP_SENT);
    return rc == FM_OK;
}

/* Every rank to every rank (itself included), small and large packets: each arrives once,
 * at its destination, intact; the receive buffers each path used come back counted on it. */
static void test_every_pair(void **state)
{
    (void)state;
    job *j = open_job(0);
    static unsigned char bufs[N][N][2][RBUF];
    size_t sizes[2] = {40, RBUF - 100};
    int pending = 0;
    for (int r = 0; r < N; r++)
        post_buffers(j, r);
    /* 12 buffers, 2 of 4 ranks through sm: sm's share is half, 6 each. */
    for (int r = 0; r < N; r++) {
        fm_hy_tp *t = fm_hy_of(j->tp[r]);
        assert_int_equal(t->posted[FM_HY_SM], 6);
        assert_int_equal(t->posted[FM_HY_NET], 6);
    }
    for (int s = 0; s < N; s++)
        for (int d = 0; d < N; d++)
            for (int k = 0; k < 2; k++)
                pending += send_one(j, s, d, bufs[s][d][k], sizes[k]);
    pump_until(j, N * N * 2, pending);
    for (int d = 0; d < N; d++) {
        for (int s = 0; s < N; s++)
            assert_int_equal(j->got[d][s], 2);
        /* Each rank got 4 packets from its host (itself and its neighbour) and 4 from the
         * other host: 4 of each path's 6 buffers used. */
        fm_hy_tp *t = fm_hy_of(j->tp[d]);
        assert_int_equal(t->posted[FM_HY_SM], 2);
        assert_int_equal(t->posted[FM_HY_NET], 2);
    }
    /* Each buffer that came back goes back to its path, whatever the runtime still holds:
     * the 4 from the other host (their first byte, the sender, is 2 or 3) posted again first
     * restore the network's 6 and leave sm at 2; then sm's restore its 6. */
    fm_tp *tp = j->tp[0];
    fm_hy_tp *t = fm_hy_of(tp);
    assert_int_equal(j->nback, 8);
    for (int remote = 1; remote >= 0; remote--)
        for (int b = 0; b < j->nback; b++) {
            unsigned char *buf = j->back[b];
            if ((buf[0] >= 2) == remote)
                assert_int_equal(tp->ops->post_recv(tp, buf, RBUF, NULL, buf), FM_OK);
            if (remote && b == j->nback - 1) {
                assert_int_equal(t->posted[FM_HY_SM], 2);
                assert_int_equal(t->posted[FM_HY_NET], 6);
            }
        }
    assert_int_equal(t->posted[FM_HY_SM], 6);
    assert_int_equal(t->posted[FM_HY_NET], 6);
    close_job(j);
}

/* sendv routed the same way: header and payload joined at the receiver. */
static void test_sendv(void **state)
{
    (void)state;
    job *j = open_job(0);
    static unsigned char hdr[N][2], pay[N][3000], joined[3002];
    int pending = 0;
    post_buffers(j, 1);
    for (int s = 0; s < N; s++) {
        fill(joined, sizeof joined, s, 1);
        memcpy(hdr[s], joined, 2);
        memcpy(pay[s], joined + 2, sizeof pay[s]);
        int rc =
            j->tp[s]->ops->sendv(j->tp[s], 1, hdr[s], 2, NULL, pay[s], sizeof pay[s], NULL, hdr[s]);
        assert_true(rc == FM_OK || rc == FM_TP_SENT);
        pending += rc == FM_OK;
    }
    pump_until(j, N, pending);
    for (int s = 0; s < N; s++)
        assert_int_equal(j->got[1][s], 1);
    close_job(j);
}

/* The shares by hand for three ranks on one host and one on another (rank 1's view): sm
 * serves 3 of 4 ranks, so of 12 buffers posted one after another it holds 9; regions: each
 * path gets one before either gets a second. */
static void test_shares(void **state)
{
    (void)state;
    static const int hosts[N] = {0, 1, 1, 1};
    fm_tp *tp[N];
    unsigned char table[N * STRIDE];
    char err[256] = "";
    memset(table, 0, sizeof table);
    for (int r = 0; r < N; r++) {
        fm_tp_config cfg = config(r, hosts, 4096);
        cfg.host_ranks = hosts[r] ? 3 : 1;
        if (fm_tp_open(&cfg, &tp[r], err, sizeof err) != FM_OK)
            fail_msg("open sm+tcp: %s", err);
        size_t len = STRIDE;
        assert_int_equal(tp[r]->ops->addr(tp[r], table + r * STRIDE, &len), FM_OK);
    }
    for (int r = 0; r < N; r++)
        assert_int_equal(tp[r]->ops->connect(tp[r], table, STRIDE, N), FM_OK);
    fm_hy_tp *t = fm_hy_of(tp[1]);
    assert_int_equal(t->nlocal, 3);
    assert_true(tp[1]->info.multi_recv);
    unsigned char *mem = malloc(NBUF * (size_t)REGION);
    assert_non_null(mem);
    assert_int_equal(tp[1]->ops->needs_region(tp[1]), 1);
    for (int b = 0; b < 2; b++) {
        unsigned char *r = mem + (size_t)b * REGION;
        assert_int_equal(tp[1]->ops->post_recv_multi(tp[1], r, REGION, NULL, r), FM_OK);
    }
    assert_int_equal(t->regions[FM_HY_SM], 1);
    assert_int_equal(t->regions[FM_HY_NET], 1);
    assert_int_equal(tp[1]->ops->needs_region(tp[1]), 0);
    for (int b = 2; b < 6; b++) {
        unsigned char *r = mem + (size_t)b * REGION;
        assert_int_equal(tp[1]->ops->post_recv_multi(tp[1], r, REGION, NULL, r), FM_OK);
    }
    /* 6 regions: sm's share is ceil(6 x 3/4) = 5 once each path had one. */
    assert_int_equal(t->regions[FM_HY_SM], 5);
    assert_int_equal(t->regions[FM_HY_NET], 1);
    for (int b = 0; b < NBUF; b++) {
        unsigned char *r = mem + (size_t)b * 64;
        assert_int_equal(tp[1]->ops->post_recv(tp[1], r, 64, NULL, r), FM_OK);
    }
    assert_int_equal(t->posted[FM_HY_SM], 9);
    assert_int_equal(t->posted[FM_HY_NET], 3);
    for (int r = 0; r < N; r++)
        tp[r]->ops->close(tp[r]);
    free(mem);
}

/* Multi-receive regions on both paths: packets from both hosts land packed in them. */
static void test_regions(void **state)
{
    (void)state;
    job *j = open_job(4096);
    static unsigned char bufs[N][3][3000];
    int pending = 0;
    assert_true(j->tp[2]->info.multi_recv);
    for (int b = 0; b < 4; b++) {
        unsigned char *r = j->rbuf[2] + (size_t)b * REGION;
        assert_int_equal(j->tp[2]->ops->post_recv_multi(j->tp[2], r, REGION, NULL, r), FM_OK);
    }
    for (int s = 0; s < N; s++)
        for (int k = 0; k < 3; k++)
            pending += send_one(j, s, 2, bufs[s][k], 1000 + 900 * (size_t)k);
    pump_until(j, N * 3, pending);
    for (int s = 0; s < N; s++)
        assert_int_equal(j->got[2][s], 3);
    close_job(j);
}

/* Tagged messages: the receive is posted on the path of the rank named as its sender. */
static void test_tagged(void **state)
{
    (void)state;
    job *j = open_job(0);
    static unsigned char src[N][RBUF], dst[N][RBUF];
    int pending = 0;
    /* (sm's tagged path reads with process_vm_readv, always allowed on oneself) */
    assert_true(j->tp[0]->info.tagged);
    for (int s = 1; s < N; s++) {
        assert_int_equal(j->tp[0]->ops->trecv(j->tp[0], s, dst[s], RBUF, NULL, 0x100 + s, dst[s]),
                         FM_OK);
        fill(src[s], RBUF, s, 0);
        assert_int_equal(j->tp[s]->ops->tsend(j->tp[s], 0, src[s], RBUF, NULL, 0x100 + s, src[s]),
                         FM_OK);
        pending++;
    }
    pump_until(j, N - 1, pending);
    for (int s = 1; s < N; s++)
        assert_int_equal(j->got[0][s], 1);
    assert_int_equal(j->tp[0]->ops->trecv(j->tp[0], N, dst[0], RBUF, NULL, 1, dst[0]),
                     FM_ERR_INVALID);
    close_job(j);
}

/* The wait fd: readable once a packet waits on either path, after trywait said sleep. */
static void test_wait_fd(void **state)
{
    (void)state;
    job *j = open_job(0);
    static unsigned char bufs[2][64];
    fm_tp *tp = j->tp[0];
    int fd = tp->ops->wait_fd(tp);
    assert_true(tp->info.wait_fd && fd >= 0);
    post_buffers(j, 0);
    int from[2] = {1, 3}; /* sm, then tcp */
    for (int k = 0; k < 2; k++) {
        long it;
        for (it = 0; it < MAX_POLLS && tp->ops->trywait(tp) != FM_OK; it++)
            pump(j);
        assert_true(it < MAX_POLLS);
        send_one(j, from[k], 0, bufs[k], sizeof bufs[k]);
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int ready = 0;
        /* (the tcp sender needs its own progress to move the bytes) */
        for (it = 0; it < 200000 && !ready; it++) {
            for (int r = 1; r < N; r++) {
                fm_tp_event ev[4];
                j->tp[r]->ops->poll(j->tp[r], ev, 4);
            }
            ready = poll(&p, 1, 0) == 1;
        }
        assert_true(ready);
        pump_until(j, k + 1, 0);
        assert_int_equal(j->got[0][from[k]], 1);
    }
    close_job(j);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    char err[256] = "";
    fm_tp *tp = NULL;
    fm_tp_config cfg = config(0, NULL, 0);
    assert_int_equal(fm_tp_open(&cfg, &tp, err, sizeof err), FM_ERR_PROVIDER);
    assert_non_null(strstr(err, "where the job's ranks run"));
    cfg = config(N, two_hosts, 0); /* rank out of range */
    assert_int_equal(fm_tp_open(&cfg, &tp, err, sizeof err), FM_ERR_PROVIDER);
    cfg = config(0, two_hosts, 0);
    cfg.provider = "sm+sm";
    assert_int_not_equal(fm_tp_open(&cfg, &tp, err, sizeof err), FM_OK);
    assert_null(tp);
    job *j = open_job(0);
    unsigned char b[8] = {0};
    for (int bad = -1; bad <= N; bad += N + 1) {
        assert_int_equal(j->tp[0]->ops->send(j->tp[0], bad, b, 8, NULL, b), FM_ERR_INVALID);
        assert_int_equal(j->tp[0]->ops->sendv(j->tp[0], bad, b, 4, NULL, b + 4, 4, NULL, b),
                         FM_ERR_INVALID);
        assert_int_equal(j->tp[0]->ops->tsend(j->tp[0], bad, b, 8, NULL, 1, b), FM_ERR_INVALID);
    }
    /* Without regions asked for, none are taken; nor is one needed. */
    assert_int_equal(j->tp[0]->ops->needs_region(j->tp[0]), 0);
    assert_int_equal(j->tp[0]->ops->post_recv_multi(j->tp[0], j->rbuf[0], REGION, NULL, b),
                     FM_ERR_INVALID);
    /* An address that is not a hybrid one (sm's length byte 0). */
    unsigned char table[N * STRIDE];
    memset(table, 0, sizeof table);
    fm_tp *fresh = NULL;
    cfg = config(0, two_hosts, 0);
    assert_int_equal(fm_tp_open(&cfg, &fresh, err, sizeof err), FM_OK);
    assert_int_equal(fresh->ops->connect(fresh, table, STRIDE, N), FM_ERR_PROVIDER);
    assert_int_equal(fresh->ops->connect(fresh, table, STRIDE, N + 1), FM_ERR_INVALID);
    fresh->ops->close(fresh);
    close_job(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_pair),    cmocka_unit_test(test_sendv),
        cmocka_unit_test(test_shares),        cmocka_unit_test(test_regions),
        cmocka_unit_test(test_tagged),        cmocka_unit_test(test_wait_fd),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
