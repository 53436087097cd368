/* SPDX-License-Identifier: BSD-3-Clause */
/* Progress: read the transport's completions and act on them. Single-threaded and explicit:
 * nothing happens unless the application calls fm_extract or fm_wait, or a blocking call
 * waits here. Idle waits sleep on the provider's fd where it has one and otherwise back off
 * politely (spin briefly, then yield the core, then short sleeps), so that 16 processes on 2
 * cores all make progress. */
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "credits.h"
#include "hooks.h"
#include "liveness.h"
#include "log.h"
#include "pool.h"
#include "progress.h"
#include "recv.h"
#include "recv_lend.h"
#include "recv_pool.h"
#include "request.h"
#include "send.h"
#include "submit.h"
#include "whole.h"
#include "zcopy.h"

#define FM_POLL_BATCH 32

static void on_send_done(fm_context *ctx, fm_pkt *p)
{
    if (p->kind == FM_PKT_CREDIT_BUF) {
        fm_credits_packet_done(ctx, p->peer);
        return;
    }
    ctx->sends_inflight--;
    fm_send_done(ctx, p);
}

/* A failed operation: the peer is gone or the network broke. After finalize's barrier the
 * peers may already be gone, which is no error. */
static int on_failure(fm_context *ctx, const fm_tp_event *e)
{
    static const char *what[] = {
        "?", "send", "receive", "zero-copy send", "zero-copy receive", "receive", "receive region"};
    const char *op = what[e->kind <= 6 ? e->kind : 0];
    if (e->status == FM_ERR_PROVIDER) {
        /* Logged by the transport already: its libfabric call, the peer and the reason. */
    } else if (e->kind == FM_TP_SEND_DONE || e->kind == FM_TP_TRECV_DONE) {
        /* (A posted receive's buffer names its previous packet's sender, not this one's.) */
        fm_log(0, "%s to/from rank %d failed: %s", op, ((fm_pkt *)e->ctx)->peer,
               fm_strerror(e->status));
    } else {
        fm_log(0, "%s failed: %s", op, fm_strerror(e->status));
    }
    return ctx->finalizing ? FM_OK : fm_liveness_blame(e->status);
}

/* A packet larger than a receive buffer: the job's ranks agree on FM_PACKET_SIZE, so it came
 * from outside (another job); dropped and counted like any malformed packet. (In a region
 * it was cut at the region's end: nothing of it is kept.) */
static int drop_oversize(fm_context *ctx, const fm_tp_event *e)
{
    ctx->drops[FM_WIRE_LEN_BAD]++;
    ctx->stats.dropped++;
    fm_log(1, "dropped a packet: larger than a receive buffer");
    return e->kind == FM_TP_RECV_DONE ? fm_recv_pool_put(ctx, e->ctx) : FM_OK;
}

/* Received packet p of event e, its payload lent or not. */
static inline int recv_one(fm_context *ctx, fm_pkt *p, const fm_tp_event *e)
{
    return e->lent ? fm_recv_lent(ctx, p, e) : fm_recv_packet(ctx, p, e->len);
}

/* A message landed in a receive region: its packet. */
static inline int recv_landed(fm_context *ctx, const fm_tp_event *e)
{
    fm_pkt *p = fm_recv_pool_landed(ctx, e->ctx, e->buf);
    if (p)
        return recv_one(ctx, p, e);
    if (e->lent) /* (the packet is lost: its loan goes back) */
        ctx->tp->ops->lend_release(ctx->tp, e->lend);
    return FM_ERR_NOMEM;
}

static int on_event(fm_context *ctx, const fm_tp_event *e)
{
    if ((e->kind == FM_TP_RECV_DONE || e->kind == FM_TP_RECV_MULTI) && e->status == FM_ERR_TOO_LONG)
        return drop_oversize(ctx, e);
    int rc = e->status == FM_OK ? FM_OK : on_failure(ctx, e);
    switch (e->kind) {
    case FM_TP_SEND_DONE:
        on_send_done(ctx, e->ctx);
        break;
    case FM_TP_RECV_DONE:
        /* A failed receive's buffer is not reposted: its transport is broken. */
        if (e->status == FM_OK)
            rc = recv_one(ctx, e->ctx, e);
        break;
    case FM_TP_TSEND_DONE:
        fm_zcopy_sent(ctx, e->ctx, e->status);
        break;
    case FM_TP_TRECV_DONE:
        fm_zcopy_arrived(ctx, e->ctx, e->len, e->status);
        break;
    case FM_TP_RECV_MULTI:
        if (e->status == FM_OK)
            rc = recv_landed(ctx, e);
        break;
    case FM_TP_RECV_REGION_DONE:
        rc = fm_recv_pool_region_done(ctx, e->ctx);
        break;
    }
    return rc;
}

/* One round: returns the number of completions handled (>= 0) or an error. */
int fm_progress_once(fm_context *ctx)
{
    fm_tp_event ev[FM_POLL_BATCH];
    if ((ctx->run_held | ctx->run_groups | ctx->whole.run) && !ctx->in_handler) {
        fm_recv_run_late(ctx);
        if (ctx->whole.run)
            fm_whole_run(ctx);
    }
    int rc = ctx->repost ? fm_recv_repost(ctx) : FM_OK;
    /* Every region pinned: held packets move out, or a region more (tested here, so that
     * the common round makes no call). */
    if (fm_recv_pool_starved(ctx)) {
        int e = fm_recv_pool_tend(ctx);
        if (e && !rc)
            rc = e;
    }
    fm_pool_idle(ctx);
    int n = ctx->tp->ops->poll(ctx->tp, ev, FM_POLL_BATCH);
    if (n < 0)
        return n;
    for (int i = 0; i < n; i++) {
        int e = on_event(ctx, &ev[i]);
        if (e && !rc)
            rc = e;
    }
    /* Requests take the send buffers that came back (those worker threads queued first);
     * their callbacks run as handlers do. */
    if (fm_submit_waiting(ctx) && !ctx->in_handler)
        n += fm_submit_drain(ctx);
    if (ctx->req.head)
        n += fm_req_pump(ctx);
    if (ctx->req.notify && !ctx->in_handler)
        n += fm_req_notify(ctx);
    if (ctx->ndirty) {
        int e = fm_credits_settle(ctx);
        if (e && !rc)
            rc = e;
    }
    if (ctx->layer_poll && !ctx->in_handler) { /* datagrams and their timers */
        int e = ctx->mcast_hooks->progress(ctx);
        if (e < 0 && !rc)
            rc = e;
        else if (e > 0)
            n += e;
    }
    return rc ? rc : n;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void fm_progress_setup(fm_context *ctx, int local_ranks)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    /* 16 ranks on 2 cores, spinning first, an 8-byte flat multicast took 1.6-2.8x as long
     * (bench/README.md, "Shared payloads and yielding on one host"). */
    ctx->idle_spins = cores > 0 && local_ranks > cores ? 1 : FM_PROGRESS_SPINS;
    if (ctx->idle_spins == 1)
        fm_log(1, "%d ranks on this host's %ld cores: idle waits yield the core at once",
               local_ranks, cores);
}

/* One idle step; *idle counts consecutive idle steps. */
static void idle_step(fm_context *ctx, unsigned *idle, double deadline)
{
    unsigned i = (*idle)++;
    int fd = ctx->tp->ops->wait_fd(ctx->tp);
    /* fm_wake's eventfd wakes every sleep below, until fm_wait has seen it (a blocking call
     * in between must not spin on it). */
    int w = !atomic_load_explicit(&ctx->thr.woken, memory_order_relaxed);
    /* The transport's fd, then a layer's (datagrams); poll skips either when it is -1. */
    struct pollfd pfd[3] = {{.fd = ctx->thr.wake_fd, .events = POLLIN},
                            {.fd = fd, .events = POLLIN},
                            {.fd = ctx->extra_fd, .events = POLLIN}};
    /* From a peer on this host (sm) a message is a few microseconds away while its sender has
     * a core, and waking from a sleep costs more than that: yield first, sleep on the fd
     * after. */
    if (ctx->tp->ops->block) { /* the transport waits (mpi): a short bound, as below */
        double left = deadline - now_s();
        ctx->tp->ops->block(ctx->tp, left < 0.002 ? (left > 0 ? left : 0) : 0.002);
        return;
    }
    unsigned spins = (unsigned)ctx->idle_spins;
    unsigned sleep_after =
        ctx->tp->info.local_peers ? spins + FM_PROGRESS_YIELDS : FM_PROGRESS_FD_SPINS;
    if (fd >= 0 && i >= sleep_after) {
        if (ctx->tp->ops->trywait(ctx->tp) == FM_OK) {
            double left_ms = (deadline - now_s()) * 1e3;
            /* Short naps: tcp;ofi_rxm's connection set-up does not signal the CQ fd (1.17),
             * so a long sleep stalls first contact. */
            poll(pfd + !w, 2 + w, left_ms < 1 ? 1 : left_ms > 2 ? 2 : (int)left_ms);
        }
        return;
    }
    if (i < spins)
        return; /* spin: a reply is usually microseconds away */
    if (i < spins + FM_PROGRESS_YIELDS) {
        sched_yield();
        return;
    }
    /* A nap: on the eventfd, which only fm_wake writes (ppoll for its sub-millisecond time). */
    struct timespec ts = {0, i < 4096 ? FM_PROGRESS_NAP_NS : 10 * FM_PROGRESS_NAP_NS};
    ppoll(pfd + !w, (nfds_t)(2 + w), &ts, NULL);
}

/* A wait's error; one that says the job may be broken is remembered for fm_finalize until a
 * later wait succeeds (a slow peer may come back). */
static int wait_failed(fm_context *ctx, int rc)
{
    if (rc == FM_ERR_TIMEOUT || rc == FM_ERR_PEER)
        ctx->failed = rc;
    return rc;
}

/* What a wait that timed out was stuck behind, for the log. */
static void log_stall(const fm_context *ctx)
{
    for (int r = 0; r < ctx->size; r++) {
        const fm_peer *p = &ctx->peers[r];
        int queued = 0;
        for (const fm_pkt *q = p->pending.head; q; q = q->next)
            queued++;
        if (queued || p->owed || p->inbound)
            fm_log(1, "  rank %d: %d packets wait for credit (%d credits), %d credits owed to it%s",
                   r, queued, p->send_credits, p->owed,
                   p->inbound ? ", a message from it in progress" : "");
    }
    fm_log(1, "  %zu sends in flight, %llu packets sent, %llu received",
           (size_t)ctx->sends_inflight, (unsigned long long)ctx->stats.packets_sent,
           (unsigned long long)ctx->stats.packets_received);
}

int fm_progress_until(fm_context *ctx, fm_progress_cond done, void *arg, const char *what)
{
    double deadline = now_s() + (double)ctx->cfg.timeout;
    unsigned idle = 0, rounds = 0;
    while (!done(ctx, arg)) {
        int n = fm_progress_once(ctx);
        if (n < 0)
            return wait_failed(ctx, n);
        /* Busy rounds count too: other peers may keep this rank busy while the one awaited
         * is silent. */
        if ((++rounds & 15) == 0 && now_s() > deadline) {
            fm_log(0, "waited %ld s (FM_TIMEOUT) for %s; giving up", ctx->cfg.timeout, what);
            log_stall(ctx);
            return wait_failed(ctx, FM_ERR_TIMEOUT);
        }
        if (n > 0) {
            idle = 0;
            continue;
        }
        if ((n = fm_liveness_idle()) < 0)
            return wait_failed(ctx, n);
        idle_step(ctx, &idle, deadline);
    }
    ctx->failed = 0;
    return FM_OK;
}

/* Whether a round that handled n completions drained the transport. A short round did,
 * except on a simulated transport, whose poll takes one completion at a time (so that each
 * packet's simulated receive cost falls between the forwards around it). */
static int drained(const fm_context *ctx, int n)
{
    return n == 0 || (n < FM_POLL_BATCH && !ctx->tp->info.simulated);
}

/* Progress without blocking until the transport is drained or maxbytes were handled. */
static long extract(fm_context *ctx, size_t maxbytes, uint64_t start)
{
    for (;;) {
        int n = fm_progress_once(ctx);
        if (n == 0)
            n = fm_liveness_idle(); /* an empty poll: now and then, see that peers live */
        if (n < 0)
            return wait_failed(ctx, n);
        /* A short round drained the transport: polling again at once would find it empty
         * (and cost a ping-pong that empty poll on every message). */
        if (drained(ctx, n) || (maxbytes && ctx->handled - start >= maxbytes))
            break;
    }
    return (long)(ctx->handled - start);
}

/* What fm_extract and fm_wait do first: refuse a dead context or a call from a handler, and
 * call deferred messages again. */
static int progress_enter(fm_context *ctx)
{
    if (!fm_ctx_live(ctx))
        return FM_ERR_NOT_INIT;
    if (ctx->in_handler)
        return FM_ERR_IN_HANDLER;
    if (ctx->ndeferred)
        fm_recv_run_deferred(ctx);
    return FM_OK;
}

long fm_extract(fm_context *ctx, size_t maxbytes)
{
    uint64_t start = fm_ctx_live(ctx) ? ctx->handled : 0;
    int rc = progress_enter(ctx);
    if (rc == FM_OK)
        fm_submit_woken(ctx); /* (an event loop woke us on fm_wake_fd: it is read now) */
    return rc ? rc : extract(ctx, maxbytes, start);
}

/* fm_wait's watch on peers that owe this rank something. A peer owes credits while packets of
 * ours wait for them, and the rest of a message while one of its messages is incomplete here
 * and it has a credit to send more with (or the first packet of a message it sent before one
 * that came). Such a peer that sends nothing at all for FM_TIMEOUT seconds of waiting makes
 * the wait fail. Waiting time is counted across fm_wait calls (a wait that returns because
 * another peer sent something does not restart the count), except gaps of more than a second
 * between looks: then the program was busy elsewhere and this rank may have held up the peer
 * (no credits went back). A peer that owes nothing is never timed: idle waits have no limit. */
#define FM_WATCH_EVERY 0.05 /* seconds between looks */
#define FM_WATCH_GAP   1.0

static int watch(fm_context *ctx, double now)
{
    double gap = now - ctx->wlast;
    if (ctx->wlast > 0 && gap < FM_WATCH_GAP)
        ctx->wclock += gap;
    ctx->wlast = now;
    for (int r = 0; r < ctx->size; r++) {
        fm_peer *p = &ctx->peers[r];
        const char *owes = p->pending.head           ? "credits for packets waiting to go to it"
                           : fm_recv_awaited(ctx, r) ? "the rest of a message it began"
                                                     : NULL;
        if (!owes) {
            p->watching = 0;
            continue;
        }
        if (!p->watching || p->rx != p->watch_rx) {
            p->watching = 1;
            p->watch_rx = p->rx;
            p->watch_at = ctx->wclock;
            continue;
        }
        if (ctx->wclock - p->watch_at < (double)ctx->cfg.timeout)
            continue;
        fm_log(0,
               "waited %ld s (FM_TIMEOUT) for rank %d, which owes this rank %s and has sent "
               "nothing; giving up",
               ctx->cfg.timeout, r, owes);
        log_stall(ctx);
        p->watch_at = ctx->wclock; /* a later wait gives it FM_TIMEOUT again */
        return FM_ERR_TIMEOUT;
    }
    return FM_OK;
}

long fm_wait(fm_context *ctx, int timeout_ms)
{
    uint64_t start = fm_ctx_live(ctx) ? ctx->handled : 0;
    int rc = progress_enter(ctx);
    if (rc)
        return rc;
    double now = now_s();
    double deadline = timeout_ms < 0 ? INFINITY : now + timeout_ms / 1e3;
    unsigned idle = 0;
    for (;;) {
        /* Looked at on busy calls too: other peers may keep this rank busy while one that
         * owes something is silent. */
        int n = now - ctx->wlast >= FM_WATCH_EVERY ? watch(ctx, now) : FM_OK;
        if (n < 0)
            return wait_failed(ctx, n);
        if ((n = fm_progress_once(ctx)) < 0)
            return wait_failed(ctx, n);
        if (n > 0 || ctx->handled != start || fm_submit_woken(ctx)) {
            ctx->failed = 0;
            /* Take everything else that is ready too (a short round already did). */
            long more = drained(ctx, n) ? 0 : extract(ctx, 0, start);
            return more < 0 ? more : (long)(ctx->handled - start);
        }
        if ((n = fm_liveness_idle()) < 0)
            return wait_failed(ctx, n);
        now = now_s();
        if (now >= deadline)
            return 0; /* the caller's own limit: nothing came, which is no error */
        idle_step(ctx, &idle, deadline);
    }
}

int fm_progress_watch_fd(fm_context *ctx, int fd)
{
    ctx->extra_fd = fd;
    int tfd = ctx->tp->ops->wait_fd(ctx->tp);
    if (tfd < 0)
        return FM_OK; /* (no fd to give an event loop at all: it polls) */
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event a = {.events = EPOLLIN, .data.fd = tfd},
                       b = {.events = EPOLLIN, .data.fd = fd};
    if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &a) || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &b)) {
        fm_log(0, "epoll for fm_wait_fd: %s", strerror(errno));
        if (ep >= 0)
            close(ep);
        return errno == ENOMEM ? FM_ERR_NOMEM : FM_ERR_INTERNAL;
    }
    ctx->wait_epoll = ep;
    return FM_OK;
}

int fm_wait_fd(const fm_context *ctx)
{
    if (!fm_ctx_live(ctx))
        return FM_ERR_NOT_INIT;
    return ctx->wait_epoll >= 0 ? ctx->wait_epoll : ctx->tp->ops->wait_fd(ctx->tp);
}

int fm_trywait(fm_context *ctx)
{
    if (!fm_ctx_live(ctx))
        return FM_ERR_NOT_INIT;
    if (ctx->sends_inflight > 0 && ctx->tp->ops->wait_fd(ctx->tp) < 0)
        return FM_EAGAIN;
    if (ctx->req.notify || fm_submit_waiting(ctx) || atomic_load(&ctx->thr.woken))
        return FM_EAGAIN; /* callbacks to run, requests from workers to start, or woken */
    if (ctx->run_held || ctx->run_groups || ctx->whole.run)
        return FM_EAGAIN; /* held messages to start (a registration or group inside a handler,
                           * budget given back for whole messages waiting for it) */
    if (ctx->layer_poll && ctx->mcast_hooks->pending(ctx))
        return FM_EAGAIN; /* a layer's sends waiting for the next round (datagrams) */
    return ctx->tp->ops->trywait(ctx->tp) == FM_OK ? FM_OK : FM_EAGAIN;
}
