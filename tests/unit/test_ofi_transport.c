/* SPDX-License-Identifier: BSD-3-Clause */
/* The libfabric transport in one process: two endpoints (rank 0 and rank 1) on the same
 * provider, over shm and over tcp;ofi_rxm. Every loop is bounded by an iteration cap and a
 * deadline; nothing asserts timing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fastmsg.h"
#include "ofi/ofi_internal.h"
#include "transport.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NRECV     32          /* receive buffers posted per side */
#define RBUF      (64 * 1024) /* the largest packet the tests send */
#define MAX_ITERS 50000000L
#define DEADLINE  30.0 /* seconds any one wait may take before the test fails */

typedef struct side {
    fm_tp *tp;
    unsigned char *rbuf;
    fm_tp_mr *rmr;
} side;

/* A provider and how to open it; the prestate of every pair test. */
typedef struct variant {
    const char *provider;
    int no_wait_fd;
    size_t rlen;      /* receive buffer size; 0: RBUF */
    size_t multi_min; /* > 0: open with multi-receive regions (this threshold), post no receives */
} variant;

typedef struct pair {
    const char *provider;
    const variant *v;
    size_t rlen;
    side s[2];
} pair;

/* What one pump round saw; the tests read it between rounds. */
typedef struct tally {
    int sends[2];     /* SEND_DONE per side */
    int send_errs[2]; /* SEND_DONE with an error status */
    int recvs[2];     /* RECV_DONE per side */
    void (*on_recv)(struct tally *t, int side, const unsigned char *buf, size_t len);
    void *arg;
} tally;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static unsigned char pattern(int sender, uint32_t seq, size_t k)
{
    return (unsigned char)(seq * 131u + k * 7u + (unsigned)sender * 29u + 1u);
}

static void fill(unsigned char *buf, size_t len, int sender, uint32_t seq)
{
    for (size_t k = 0; k < len; k++)
        buf[k] = pattern(sender, seq, k);
}

static int check(const unsigned char *buf, size_t len, int sender, uint32_t seq)
{
    for (size_t k = 0; k < len; k++)
        if (buf[k] != pattern(sender, seq, k))
            return 0;
    return 1;
}

static fm_tp_mr *reg(fm_tp *tp, void *buf, size_t len)
{
    fm_tp_mr *mr = NULL;
    assert_int_equal(tp->ops->mem_reg(tp, buf, len, &mr), FM_OK);
    assert_true(mr != NULL || !tp->info.needs_mr);
    return mr;
}

static int open_pair(void **state)
{
    pair *p = calloc(1, sizeof *p);
    char err[256] = "";
    unsigned char addrs[2][256];
    size_t len[2];

    assert_non_null(p);
    p->v = *state;
    p->provider = p->v->provider;
    p->rlen = p->v->rlen ? p->v->rlen : RBUF;
    fm_tp_config cfg = {.provider = p->provider,
                        .iface = "",
                        .all_local = 1,
                        .no_wait_fd = p->v->no_wait_fd,
                        .multi_recv_min = p->v->multi_min};
    for (int i = 0; i < 2; i++) {
        int rc = fm_ofi_open(&cfg, &p->s[i].tp, err, sizeof err);
        if (rc != FM_OK)
            fail_msg("open %s: %s", p->provider, err);
        len[i] = sizeof addrs[i];
        assert_int_equal(p->s[i].tp->ops->addr(p->s[i].tp, addrs[i], &len[i]), FM_OK);
    }
    assert_int_equal(len[0], len[1]);
    /* Rank order, one stride per address: what the bootstrap exchange hands over. */
    unsigned char table[2 * 256];
    memcpy(table, addrs[0], len[0]);
    memcpy(table + len[0], addrs[1], len[1]);
    for (int i = 0; i < 2; i++) {
        side *s = &p->s[i];
        assert_int_equal(s->tp->ops->connect(s->tp, table, len[0], 2), FM_OK);
        s->rbuf = malloc((size_t)NRECV * p->rlen);
        assert_non_null(s->rbuf);
        s->rmr = reg(s->tp, s->rbuf, (size_t)NRECV * p->rlen);
        for (int j = 0; j < NRECV && !p->v->multi_min; j++) {
            unsigned char *b = s->rbuf + (size_t)j * p->rlen;
            assert_int_equal(s->tp->ops->post_recv(s->tp, b, p->rlen, s->rmr, b), FM_OK);
        }
    }
    *state = p;
    return 0;
}

/* Closes with the receives still posted: close must cope and leak nothing. */
static int close_pair(void **state)
{
    pair *p = *state;
    for (int i = 0; i < 2; i++) {
        side *s = &p->s[i];
        s->tp->ops->mem_dereg(s->tp, s->rmr);
        s->tp->ops->close(s->tp);
        free(s->rbuf);
    }
    free(p);
    return 0;
}

/* Poll both sides once; hand received packets to t->on_recv and post their buffers again. */
static void pump(pair *p, tally *t)
{
    fm_tp_event ev[16];
    for (int i = 0; i < 2; i++) {
        side *s = &p->s[i];
        int n = s->tp->ops->poll(s->tp, ev, 16);
        assert_true(n >= 0);
        for (int e = 0; e < n; e++) {
            if (ev[e].kind == FM_TP_SEND_DONE) {
                t->sends[i]++;
                if (ev[e].status != FM_OK)
                    t->send_errs[i]++;
                continue;
            }
            assert_int_equal(ev[e].kind, FM_TP_RECV_DONE);
            assert_int_equal(ev[e].status, FM_OK);
            unsigned char *b = ev[e].ctx;
            assert_true(b >= s->rbuf && b < s->rbuf + (size_t)NRECV * p->rlen);
            t->recvs[i]++;
            if (t->on_recv)
                t->on_recv(t, i, b, ev[e].len);
            assert_int_equal(s->tp->ops->post_recv(s->tp, b, p->rlen, s->rmr, b), FM_OK);
        }
    }
}

/* Pump until each side has seen `sends` SEND_DONEs and `recvs` RECV_DONEs. */
static void pump_until(pair *p, tally *t, int sends, int recvs)
{
    double end = now() + DEADLINE;
    for (long it = 0; it < MAX_ITERS; it++) {
        if (t->sends[0] >= sends && t->sends[1] >= sends && t->recvs[0] >= recvs &&
            t->recvs[1] >= recvs)
            return;
        if ((it & 1023) == 0 && now() > end)
            break;
        pump(p, t);
    }
    fail_msg("%s: gave up: sends %d/%d, recvs %d/%d, wanted %d and %d", p->provider, t->sends[0],
             t->sends[1], t->recvs[0], t->recvs[1], sends, recvs);
}

/* Send, counting an immediate completion (FM_TP_SENT: injected, no event follows) in *sends
 * as if its SEND_DONE had come. */
static int send_counted(fm_tp *tp, int dest, const void *buf, size_t len, fm_tp_mr *mr, int *sends)
{
    int rc = tp->ops->send(tp, dest, buf, len, mr, (void *)buf);
    if (rc == FM_TP_SENT) {
        (*sends)++;
        return FM_OK;
    }
    return rc;
}

/* One packet of `len` bytes each way, every byte checked. */
typedef struct expect {
    size_t len;
    int ok[2];
} expect;

static void on_exact(tally *t, int side, const unsigned char *buf, size_t len)
{
    expect *x = t->arg;
    int sender = 1 - side;
    x->ok[side] = len == x->len && check(buf, len, sender, (uint32_t)len);
}

static void exchange(pair *p, size_t len)
{
    unsigned char *sbuf[2];
    fm_tp_mr *smr[2];
    expect x = {.len = len};
    tally t = {.on_recv = on_exact, .arg = &x};

    for (int i = 0; i < 2; i++) {
        sbuf[i] = malloc(len ? len : 1);
        assert_non_null(sbuf[i]);
        fill(sbuf[i], len, i, (uint32_t)len);
        smr[i] = reg(p->s[i].tp, sbuf[i], len ? len : 1);
    }
    for (int i = 0; i < 2; i++) {
        fm_tp *tp = p->s[i].tp;
        assert_int_equal(send_counted(tp, 1 - i, sbuf[i], len, smr[i], &t.sends[i]), FM_OK);
    }
    pump_until(p, &t, 1, 1);
    assert_int_equal(t.send_errs[0] + t.send_errs[1], 0);
    if (!x.ok[0] || !x.ok[1])
        fail_msg("%s: %zu-byte packet corrupted (rank 0 ok %d, rank 1 ok %d)", p->provider, len,
                 x.ok[0], x.ok[1]);
    for (int i = 0; i < 2; i++) {
        p->s[i].tp->ops->mem_dereg(p->s[i].tp, smr[i]);
        free(sbuf[i]);
    }
}

static void test_info(void **state)
{
    pair *p = *state;
    for (int i = 0; i < 2; i++) {
        const fm_tp_info *in = &p->s[i].tp->info;
        assert_true(in->provider[0] != '\0');
        assert_true(in->max_msg_size >= RBUF);
        if (strcmp(p->provider, "shm") == 0)
            assert_string_equal(in->provider, "shm");
        else
            assert_string_equal(in->provider, "tcp;ofi_rxm");
    }
    const fm_tp_info *in = &p->s[0].tp->info;
    if (p->v->no_wait_fd)
        assert_int_equal(p->s[0].tp->ops->wait_fd(p->s[0].tp), -1);
    print_message("%s: fabric %s, inject %zu, max_msg %zu, needs_mr %d, ordered %d, wait fd %d\n",
                  in->provider, in->fabric, in->inject_size, in->max_msg_size, in->needs_mr,
                  in->ordered, p->s[0].tp->ops->wait_fd(p->s[0].tp));
}

static void test_one_each_way(void **state)
{
    exchange(*state, 1000);
}

static void test_sizes(void **state)
{
    pair *p = *state;
    size_t inj = p->s[0].tp->info.inject_size;
    size_t sizes[] = {0, 1, inj, inj + 1, 8 * 1024, 64 * 1024};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (sizes[i] <= RBUF)
            exchange(p, sizes[i]);
}

/* Many packets both ways, far more than the tx queue holds, all handed over before any
 * progress. Lengths cycle across the inject boundary, so order holds across both paths. */
#define STREAM_HDR 8
#define NLENS      5

typedef struct stream {
    int ordered;
    uint32_t n;
    size_t lens[NLENS];
    uint32_t next[2];    /* next sequence number each side expects */
    unsigned char *seen; /* [side][n] when unordered */
    int bad;
} stream;

static void on_stream(tally *t, int side, const unsigned char *buf, size_t len)
{
    stream *st = t->arg;
    uint32_t seq, sender;

    if (len < STREAM_HDR) {
        st->bad++;
        return;
    }
    memcpy(&seq, buf, 4);
    memcpy(&sender, buf + 4, 4);
    if (sender != (uint32_t)(1 - side) || seq >= st->n || len != st->lens[seq % NLENS] ||
        !check(buf + STREAM_HDR, len - STREAM_HDR, (int)sender, seq)) {
        st->bad++;
        return;
    }
    if (st->ordered) {
        if (seq != st->next[side])
            st->bad++;
        st->next[side] = seq + 1;
    } else {
        unsigned char *mark = &st->seen[(size_t)side * st->n + seq];
        if (*mark)
            st->bad++;
        *mark = 1;
    }
}

static void blast(pair *p, const char *when)
{
    size_t inj = p->s[0].tp->info.inject_size;
    fm_ofi_tp *t0 = fm_ofi_tp_of(p->s[0].tp);
    uint32_t n = (uint32_t)(4 * t0->info->tx_attr->size + 100);
    stream st = {.ordered = p->s[0].tp->info.ordered && p->s[1].tp->info.ordered,
                 .n = n,
                 .lens = {STREAM_HDR, 64, inj < STREAM_HDR ? STREAM_HDR : inj, inj + 1, 300}};
    size_t slot = 300 > inj + 1 ? 300 : inj + 1;
    tally t = {.on_recv = on_stream, .arg = &st};
    uint64_t queued0 = fm_ofi_stats_of(p->s[0].tp)->send_queued;
    unsigned char *sbuf[2];
    fm_tp_mr *smr[2];

    st.seen = calloc(2, n);
    assert_non_null(st.seen);
    for (int i = 0; i < 2; i++) {
        sbuf[i] = malloc((size_t)n * slot);
        assert_non_null(sbuf[i]);
        smr[i] = reg(p->s[i].tp, sbuf[i], (size_t)n * slot);
    }
    for (uint32_t q = 0; q < n; q++) {
        for (int i = 0; i < 2; i++) {
            unsigned char *b = sbuf[i] + (size_t)q * slot;
            uint32_t sender = (uint32_t)i;
            size_t len = st.lens[q % NLENS];
            memcpy(b, &q, 4);
            memcpy(b + 4, &sender, 4);
            fill(b + STREAM_HDR, len - STREAM_HDR, i, q);
            fm_tp *tp = p->s[i].tp;
            assert_int_equal(send_counted(tp, 1 - i, b, len, smr[i], &t.sends[i]), FM_OK);
        }
    }
    pump_until(p, &t, (int)n, (int)n);
    assert_int_equal(st.bad, 0);
    assert_int_equal(t.send_errs[0] + t.send_errs[1], 0);
    assert_int_equal(t.recvs[0], (int)n);
    assert_int_equal(t.recvs[1], (int)n);
    if (!st.ordered)
        for (size_t k = 0; k < 2 * (size_t)n; k++)
            assert_int_equal(st.seen[k], 1);
    print_message("%s %s: %u packets each way arrived %s; rank 0 queued %llu on -FI_EAGAIN\n",
                  p->provider, when, n, st.ordered ? "in order" : "as a set",
                  (unsigned long long)(fm_ofi_stats_of(p->s[0].tp)->send_queued - queued0));
    for (int i = 0; i < 2; i++) {
        p->s[i].tp->ops->mem_dereg(p->s[i].tp, smr[i]);
        free(sbuf[i]);
    }
    free(st.seen);
}

/* First while the peers have never talked (first contact refuses), then again once they
 * have (full queues refuse). */
static void test_many(void **state)
{
    blast(*state, "cold");
    blast(*state, "warm");
}

/* Rank 1 sleeps the way the runtime does: on the fd after trywait, or backing off without
 * one; the packet from rank 0 must still arrive. */
static void test_wait(void **state)
{
    pair *p = *state;
    fm_tp *a = p->s[0].tp, *b = p->s[1].tp;
    unsigned char msg[100];
    fm_tp_event ev[4];
    int got = 0, sent = 0;
    double end = now() + DEADLINE;

    fill(msg, sizeof msg, 0, 7);
    fm_tp_mr *mr = reg(a, msg, sizeof msg);
    assert_int_equal(send_counted(a, 1, msg, sizeof msg, mr, &sent), FM_OK);
    int fd = b->ops->wait_fd(b);
    for (long it = 0; it < MAX_ITERS && !(got && sent) && now() < end; it++) {
        int n = a->ops->poll(a, ev, 4);
        assert_true(n >= 0);
        sent += n;
        int rc = b->ops->trywait(b);
        assert_true(rc == FM_OK || rc == FM_EAGAIN);
        if (rc == FM_OK && fd >= 0) {
            struct pollfd pfd = {.fd = fd, .events = POLLIN};
            assert_true(poll(&pfd, 1, 10) >= 0);
        } else if (rc == FM_OK) {
            struct timespec ts = {0, 1000};
            nanosleep(&ts, NULL);
        }
        n = b->ops->poll(b, ev, 4);
        assert_true(n >= 0);
        for (int e = 0; e < n; e++) {
            assert_int_equal(ev[e].kind, FM_TP_RECV_DONE);
            assert_int_equal(ev[e].len, sizeof msg);
            assert_true(check(ev[e].ctx, sizeof msg, 0, 7));
            unsigned char *buf = ev[e].ctx;
            assert_int_equal(b->ops->post_recv(b, buf, p->rlen, p->s[1].rmr, buf), FM_OK);
            got++;
        }
    }
    assert_int_equal(got, 1);
    assert_int_equal(sent, 1);
    a->ops->mem_dereg(a, mr);
}

/* A packet larger than the receive buffer: the receiver gets an error event (not a crash,
 * not silence) and the sender its SEND_DONE. Runs on small receive buffers and a packet
 * within the inject size: over shm 1.17 a truncated packet above the inject size makes the
 * receiver's fi_cq_read spin forever (see README). */
static void test_truncated(void **state)
{
    pair *p = *state;
    fm_tp *a = p->s[0].tp, *b = p->s[1].tp;
    size_t len = p->rlen + 10;
    unsigned char *msg = calloc(1, len);
    fm_tp_event ev[4];
    int recv_status = 1, sent = 0;
    double end = now() + DEADLINE;

    assert_non_null(msg);
    fm_tp_mr *mr = reg(a, msg, len);
    assert_int_equal(send_counted(a, 1, msg, len, mr, &sent), FM_OK);
    for (long it = 0; it < MAX_ITERS && !(sent && recv_status != 1) && now() < end; it++) {
        int n = a->ops->poll(a, ev, 4);
        assert_true(n >= 0);
        sent += n;
        n = b->ops->poll(b, ev, 4);
        assert_true(n >= 0);
        if (n > 0) {
            assert_int_equal(ev[0].kind, FM_TP_RECV_DONE);
            recv_status = ev[0].status;
        }
    }
    print_message("%s: truncated receive status %d, sender %s\n", p->provider, recv_status,
                  sent ? "completed" : "never completed");
    assert_int_equal(recv_status, FM_ERR_TOO_LONG);
    assert_int_equal(sent, 1);
    a->ops->mem_dereg(a, mr);
    free(msg);
}

/* Tagged messages (the zero-copy path): a large message each way, once with the receive
 * posted after the send has started (the provider must hold it as unexpected) and once
 * before; a second message with another tag posted first must not catch the first. */
#define TAGGED_LEN ((size_t)1 << 20 | 3)

static void tagged_round(pair *p, int recv_first, uint64_t tag)
{
    unsigned char *sbuf[2], *rbuf[2];
    fm_tp_mr *smr[2], *rmr[2];
    int sent[2] = {0, 0}, got[2] = {0, 0};
    double end = now() + DEADLINE;

    for (int i = 0; i < 2; i++) {
        sbuf[i] = malloc(TAGGED_LEN);
        rbuf[i] = calloc(1, TAGGED_LEN);
        assert_true(sbuf[i] && rbuf[i]);
        fill(sbuf[i], TAGGED_LEN, i, (uint32_t)tag);
        smr[i] = reg(p->s[i].tp, sbuf[i], TAGGED_LEN);
        rmr[i] = reg(p->s[i].tp, rbuf[i], TAGGED_LEN);
    }
    for (int step = 0; step < 2; step++)
        for (int i = 0; i < 2; i++) {
            fm_tp *tp = p->s[i].tp;
            if (step == (recv_first ? 0 : 1))
                assert_int_equal(
                    tp->ops->trecv(tp, 1 - i, rbuf[i], TAGGED_LEN, rmr[i], tag, rbuf[i]), FM_OK);
            else
                assert_int_equal(
                    tp->ops->tsend(tp, 1 - i, sbuf[i], TAGGED_LEN, smr[i], tag, sbuf[i]), FM_OK);
        }
    while (!(sent[0] && sent[1] && got[0] && got[1]) && now() < end) {
        fm_tp_event ev[8];
        for (int i = 0; i < 2; i++) {
            int n = p->s[i].tp->ops->poll(p->s[i].tp, ev, 8);
            assert_true(n >= 0);
            for (int e = 0; e < n; e++) {
                assert_int_equal(ev[e].status, FM_OK);
                if (ev[e].kind == FM_TP_TSEND_DONE) {
                    assert_ptr_equal(ev[e].ctx, sbuf[i]);
                    sent[i]++;
                } else {
                    assert_int_equal(ev[e].kind, FM_TP_TRECV_DONE);
                    assert_ptr_equal(ev[e].ctx, rbuf[i]);
                    assert_int_equal(ev[e].len, TAGGED_LEN);
                    got[i]++;
                }
            }
        }
    }
    for (int i = 0; i < 2; i++) {
        assert_int_equal(sent[i], 1);
        assert_int_equal(got[i], 1);
        assert_true(check(rbuf[i], TAGGED_LEN, 1 - i, (uint32_t)tag));
        p->s[i].tp->ops->mem_dereg(p->s[i].tp, smr[i]);
        p->s[i].tp->ops->mem_dereg(p->s[i].tp, rmr[i]);
        free(sbuf[i]);
        free(rbuf[i]);
    }
}

static void test_tagged(void **state)
{
    pair *p = *state;
    assert_true(p->s[0].tp->info.tagged);
    tagged_round(p, 0, 7);
    tagged_round(p, 1, (uint64_t)1 << 40 | 8);
}

static void test_bad_rank(void **state)
{
    pair *p = *state;
    fm_tp *a = p->s[0].tp;
    char c = 0;
    assert_int_equal(a->ops->send(a, 2, &c, 1, NULL, NULL), FM_ERR_RANK);
    assert_int_equal(a->ops->send(a, -1, &c, 1, NULL, NULL), FM_ERR_RANK);
    /* A second connect is refused rather than shifting ranks. */
    unsigned char addr[256];
    size_t len = sizeof addr;
    assert_int_equal(a->ops->addr(a, addr, &len), FM_OK);
    assert_int_equal(a->ops->connect(a, addr, len, 1), FM_ERR_INVALID);
    /* Too small an address buffer says how much is needed. */
    size_t small = 1;
    assert_int_equal(a->ops->addr(a, addr, &small), FM_ERR_TOO_LONG);
    assert_int_equal(small, len);
}

static void test_bad_provider(void **state)
{
    (void)state;
    const char *names[] = {"verbs", "no_such_provider"};
    for (size_t i = 0; i < 2; i++) {
        fm_tp_config cfg = {.provider = names[i], .iface = "", .all_local = 1};
        fm_tp *tp = (fm_tp *)&cfg; /* must come back NULL */
        char err[256] = "";
        int rc = fm_ofi_open(&cfg, &tp, err, sizeof err);
        assert_int_equal(rc, FM_ERR_PROVIDER);
        assert_null(tp);
        assert_non_null(strstr(err, names[i]));
        assert_non_null(strstr(err, "fi_getinfo"));
        print_message("%s -> %s\n", names[i], err);
    }
}

/* A process using the transport still dies by SIGTERM (libinfinipath's load-time handler
 * would make it exit with status 1; shm's cleanup handler chains to the default). */
static void test_dies_by_signal(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        fm_tp_config cfg = {.provider = "shm", .iface = "", .all_local = 1};
        fm_tp *tp = NULL;
        char err[256];
        alarm(30); /* bound the child whatever happens */
        if (fm_ofi_open(&cfg, &tp, err, sizeof err) != FM_OK)
            _exit(3);
        tp->ops->close(tp);
        raise(SIGTERM);
        _exit(4);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGTERM)
        fail_msg("child: %s %d, wanted death by SIGTERM", WIFSIGNALED(status) ? "signal" : "exit",
                 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

/* A region left in /dev/shm by a dead process that had our pid must not stop shm opening
 * (fi_enable would fail with -FI_EBUSY): the open removes it. In a child, with a fresh pid. */
static void test_stale_shm_region(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char path[64];
        alarm(30);
        snprintf(path, sizeof path, "/dev/shm/%ld:0:0", (long)getpid());
        FILE *f = fopen(path, "w"); /* what a killed process leaves: a region by that name */
        if (!f || fputs("stale", f) < 0 || fclose(f))
            _exit(5);
        fm_tp_config cfg = {.provider = "shm", .iface = "", .all_local = 1};
        fm_tp *tp = NULL;
        char err[256];
        if (fm_ofi_open(&cfg, &tp, err, sizeof err) != FM_OK) {
            fprintf(stderr, "open with a stale region: %s\n", err);
            unlink(path);
            _exit(3);
        }
        tp->ops->close(tp);
        _exit(access(path, F_OK) == 0 ? 4 : 0); /* close unlinks the region it made */
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* A receive beyond shm's queue (rx_attr.size, FI_SHM_RX_SIZE: 1024 by default) fails
 * for real, with -FI_ENOMEM; the error must name the libfabric call and its reason, and say how
 * many receives the queue holds. In a child, whose stderr goes to a file to be read back. */
static void test_recv_queue_full(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        enum { LEN = 64, MAX = 8192 };
        char path[] = "/tmp/fm_test_ofi_XXXXXX", log[1024] = "", err[256];
        int fd = mkstemp(path), saved = dup(2);
        alarm(30);
        if (fd < 0 || saved < 0 || dup2(fd, 2) < 0)
            _exit(5);
        unlink(path);
        fm_tp_config cfg = {.provider = "shm", .iface = "", .all_local = 1};
        fm_tp *tp = NULL;
        unsigned char addr[256], *bufs = malloc((size_t)MAX * LEN);
        size_t alen = sizeof addr;
        if (!bufs || fm_ofi_open(&cfg, &tp, err, sizeof err) != FM_OK ||
            tp->ops->addr(tp, addr, &alen) || tp->ops->connect(tp, addr, alen, 1))
            _exit(3);
        int rc = FM_OK, posted = 0;
        while (rc == FM_OK && posted < MAX) {
            rc = tp->ops->post_recv(tp, bufs + (size_t)posted * LEN, LEN, NULL, NULL);
            posted += rc == FM_OK;
        }
        ssize_t got = pread(fd, log, sizeof log - 1, 0);
        size_t depth = fm_ofi_tp_of(tp)->info->rx_attr->size;
        char holds[64];
        snprintf(holds, sizeof holds, "its receive queue holds %zu (rx_attr.size)", depth);
        dup2(saved, 2);
        fprintf(stderr, "after %d receives: %s\n", posted, got > 0 ? log : "(nothing logged)");
        tp->ops->close(tp);
        free(bufs); /* (valgrind's leak check covers this child too) */
        if (rc != FM_ERR_PROVIDER || (size_t)posted != depth)
            _exit(4);
        _exit(strstr(log, "fi_recv of a 64-byte buffer: Cannot allocate memory (-12)") &&
                      strstr(log, holds)
                  ? 0
                  : 6);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* Multi-receive regions (post_recv_multi): rank 0 sends, rank 1 receives into regions of
 * MR_LEN bytes. Message k has length mr_sizes[k % 4] and pattern (0, k); the order of
 * arrival is checked against k (both providers are ordered). */
#define MR_LEN  (64 * 1024)
#define MR_MIN  (10 * 1024) /* the largest message: none is ever truncated */
#define MR_NMAX 64

static const size_t mr_sizes[] = {1, 100, 4096, 10240};

typedef struct mr_region {
    unsigned char *buf;
    unsigned char *end;  /* where the next message may start (after the last one) */
    int msgs;            /* RECV_MULTIs that landed in it */
    int done;            /* REGION_DONEs */
    int msgs_after_done; /* RECV_MULTIs that came after its REGION_DONE */
} mr_region;

typedef struct mr_state {
    pair *p;
    mr_region reg[2];
    unsigned char *rbuf; /* both regions, registered once */
    fm_tp_mr *rmr;
    unsigned char *sbuf; /* one slot of MR_MIN per message */
    fm_tp_mr *smr;
    int n;      /* messages to send */
    int sent;   /* SEND_DONEs (or injected at once) */
    int landed; /* RECV_MULTIs, all regions */
} mr_state;

static size_t mr_size(int k)
{
    return mr_sizes[k % 4];
}

static void mr_setup(mr_state *m, pair *p, int n)
{
    memset(m, 0, sizeof *m);
    m->p = p;
    m->n = n;
    assert_true(n <= MR_NMAX);
    m->rbuf = calloc(2, MR_LEN);
    m->sbuf = malloc((size_t)n * MR_MIN);
    assert_true(m->rbuf && m->sbuf);
    m->rmr = reg(p->s[1].tp, m->rbuf, 2 * MR_LEN);
    m->smr = reg(p->s[0].tp, m->sbuf, (size_t)n * MR_MIN);
    for (int r = 0; r < 2; r++)
        m->reg[r].buf = m->reg[r].end = m->rbuf + (size_t)r * MR_LEN;
}

static void mr_teardown(mr_state *m)
{
    m->p->s[1].tp->ops->mem_dereg(m->p->s[1].tp, m->rmr);
    m->p->s[0].tp->ops->mem_dereg(m->p->s[0].tp, m->smr);
    free(m->rbuf);
    free(m->sbuf);
}

static void mr_post(mr_state *m, int r)
{
    fm_tp *tp = m->p->s[1].tp;
    assert_int_equal(tp->ops->post_recv_multi(tp, m->reg[r].buf, MR_LEN, m->rmr, &m->reg[r]),
                     FM_OK);
}

static void mr_send_all(mr_state *m)
{
    fm_tp *tp = m->p->s[0].tp;
    for (int k = 0; k < m->n; k++) {
        unsigned char *b = m->sbuf + (size_t)k * MR_MIN;
        fill(b, mr_size(k), 0, (uint32_t)k);
        assert_int_equal(send_counted(tp, 1, b, mr_size(k), m->smr, &m->sent), FM_OK);
    }
}

/* One poll of each side; every RECV_MULTI is checked where it lands, at once. */
static void mr_pump(mr_state *m)
{
    fm_tp_event ev[16];
    fm_tp *a = m->p->s[0].tp, *b = m->p->s[1].tp;
    int n = a->ops->poll(a, ev, 16);

    assert_true(n >= 0);
    for (int e = 0; e < n; e++) {
        assert_int_equal(ev[e].kind, FM_TP_SEND_DONE);
        assert_int_equal(ev[e].status, FM_OK);
        m->sent++;
    }
    n = b->ops->poll(b, ev, 16);
    assert_true(n >= 0);
    for (int e = 0; e < n; e++) {
        mr_region *r = ev[e].ctx;
        assert_true(r == &m->reg[0] || r == &m->reg[1]);
        assert_int_equal(ev[e].status, FM_OK);
        if (ev[e].kind == FM_TP_RECV_REGION_DONE) {
            assert_ptr_equal(ev[e].buf, r->buf);
            r->done++;
            continue;
        }
        assert_int_equal(ev[e].kind, FM_TP_RECV_MULTI);
        int k = m->landed++;
        unsigned char *at = ev[e].buf;
        if (k >= m->n || ev[e].len != mr_size(k))
            fail_msg("%s: message %d: %zu bytes, wanted %zu", m->p->provider, k, ev[e].len,
                     k < m->n ? mr_size(k) : 0);
        /* Inside its region, right after the one before it: in order, packed (no padding
         * between messages, whatever their length). */
        if (at != r->end || at + ev[e].len > r->buf + MR_LEN)
            fail_msg("%s: message %d landed at offset %td of region %td (next free %td)",
                     m->p->provider, k, at - r->buf, r - m->reg, r->end - r->buf);
        if (!check(at, ev[e].len, 0, (uint32_t)k))
            fail_msg("%s: message %d corrupted", m->p->provider, k);
        r->end = at + ev[e].len;
        r->msgs++;
        r->msgs_after_done += r->done > 0;
    }
}

/* Pump until `landed` messages landed and region r0 was released (r0 < 0: no release). */
static void mr_pump_until(mr_state *m, int landed, int r0)
{
    double end = now() + DEADLINE;
    for (long it = 0; it < MAX_ITERS; it++) {
        if (m->landed >= landed && (r0 < 0 || m->reg[r0].done))
            return;
        if ((it & 1023) == 0 && now() > end)
            break;
        mr_pump(m);
    }
    fail_msg("%s: gave up: %d of %d messages landed, region %d released %d times", m->p->provider,
             m->landed, landed, r0, r0 < 0 ? 0 : m->reg[r0].done);
}

static void test_multi_info(void **state)
{
    pair *p = *state;
    for (int i = 0; i < 2; i++)
        assert_int_equal(p->s[i].tp->info.multi_recv, 1);
}

/* Regions asked for by nobody: the capability says so and the op refuses. */
static void test_no_multi(void **state)
{
    pair *p = *state;
    fm_tp *tp = p->s[1].tp;
    assert_int_equal(tp->info.multi_recv, 0);
    assert_int_equal(tp->ops->post_recv_multi(tp, p->s[1].rbuf, p->rlen, p->s[1].rmr, NULL),
                     FM_ERR_INVALID);
}

/* Two regions posted; messages fill the first, which is released exactly once, after the
 * last message that landed in it; the second takes the rest. */
static void test_multi_two_regions(void **state)
{
    mr_state m;
    int n = 20; /* 5 x 14437 B: more than one region holds */
    mr_setup(&m, *state, n);
    mr_post(&m, 0);
    mr_post(&m, 1);
    mr_send_all(&m);
    mr_pump_until(&m, n, 0);
    for (long it = 0; it < 20000 && m.sent < n; it++)
        mr_pump(&m);
    assert_int_equal(m.sent, n);
    assert_int_equal(m.landed, n);
    assert_int_equal(m.reg[0].done, 1);
    assert_int_equal(m.reg[0].msgs_after_done, 0);
    assert_true(m.reg[0].msgs > 0 && m.reg[1].msgs > 0);
    assert_int_equal(m.reg[0].msgs + m.reg[1].msgs, n);
    /* Released once less than the threshold was left, not before. */
    assert_true(m.reg[0].buf + MR_LEN - m.reg[0].end < MR_MIN);
    assert_int_equal(m.reg[1].done, 0);
    print_message("%s: region 0 took %d messages (%td bytes), region 1 %d\n", m.p->provider,
                  m.reg[0].msgs, m.reg[0].end - m.reg[0].buf, m.reg[1].msgs);
    mr_teardown(&m);
}

/* One region posted: once it is full and released, the remaining messages wait in the
 * provider (none is lost, none lands anywhere) until a second region is posted. */
static void test_multi_wait_for_region(void **state)
{
    mr_state m;
    int n = 20;
    mr_setup(&m, *state, n);
    mr_post(&m, 0);
    mr_send_all(&m);
    mr_pump_until(&m, 1, 0);
    int first = m.landed;
    for (int it = 0; it < 20000; it++)
        mr_pump(&m);
    assert_int_equal(m.landed, first); /* nothing landed without a region */
    assert_true(first < n);
    assert_int_equal(m.reg[0].done, 1);
    mr_post(&m, 1);
    mr_pump_until(&m, n, -1);
    for (long it = 0; it < 20000 && m.sent < n; it++)
        mr_pump(&m);
    assert_int_equal(m.sent, n);
    assert_int_equal(m.reg[0].msgs, first);
    assert_int_equal(m.reg[1].msgs, n - first);
    assert_int_equal(m.reg[0].done, 1);
    assert_int_equal(m.reg[0].msgs_after_done, 0);
    print_message("%s: %d messages in region 0, %d waited for region 1\n", m.p->provider, first,
                  n - first);
    mr_teardown(&m);
}

/* Named "<variant>_<test>" so the providers' runs tell apart. */
#define PAIR_TEST(f, v)                                                                            \
    {                                                                                              \
#v "_" #f, f, open_pair, close_pair, (void *)&v                                            \
    }

static const variant shm = {"shm", 0, 0, 0}, tcp = {"tcp", 0, 0, 0}, tcp_nofd = {"tcp", 1, 0, 0};
static const variant shm_small = {"shm", 0, 50, 0}, tcp_small = {"tcp", 0, 50, 0};
static const variant shm_multi = {"shm", 0, 0, MR_MIN}, tcp_multi = {"tcp", 0, 0, MR_MIN};

int main(void)
{
    /* libfabric reads FI_PROVIDER once per process: both providers must be allowed. */
    setenv("FI_PROVIDER", "shm,tcp,ofi_rxm", 0);
    setenv("FI_TCP_IFACE", "lo", 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_provider),
        cmocka_unit_test(test_dies_by_signal),
        cmocka_unit_test(test_stale_shm_region),
        cmocka_unit_test(test_recv_queue_full),
        PAIR_TEST(test_info, shm),
        PAIR_TEST(test_one_each_way, shm),
        PAIR_TEST(test_sizes, shm),
        PAIR_TEST(test_many, shm),
        PAIR_TEST(test_wait, shm),
        PAIR_TEST(test_tagged, shm),
        PAIR_TEST(test_bad_rank, shm),
        PAIR_TEST(test_truncated, shm_small),
        PAIR_TEST(test_no_multi, shm),
        PAIR_TEST(test_multi_info, shm_multi),
        PAIR_TEST(test_multi_two_regions, shm_multi),
        PAIR_TEST(test_multi_wait_for_region, shm_multi),
        PAIR_TEST(test_info, tcp),
        PAIR_TEST(test_one_each_way, tcp),
        PAIR_TEST(test_sizes, tcp),
        PAIR_TEST(test_many, tcp),
        PAIR_TEST(test_wait, tcp),
        PAIR_TEST(test_tagged, tcp),
        PAIR_TEST(test_bad_rank, tcp),
        PAIR_TEST(test_truncated, tcp_small),
        PAIR_TEST(test_no_multi, tcp),
        PAIR_TEST(test_multi_info, tcp_multi),
        PAIR_TEST(test_multi_two_regions, tcp_multi),
        PAIR_TEST(test_multi_wait_for_region, tcp_multi),
        PAIR_TEST(test_info, tcp_nofd),
        PAIR_TEST(test_one_each_way, tcp_nofd),
        PAIR_TEST(test_wait, tcp_nofd),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
