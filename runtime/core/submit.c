/* SPDX-License-Identifier: BSD-3-Clause */
/* Worker threads. One thread drives a context (its progress thread: the one that called
 * fm_init, or fm_set_progress_thread's caller); task runtimes also run workers that finish
 * tasks and want to send their outputs. A request started on a worker does not touch the
 * context: its arguments are copied into a record (fm_submit) that joins a queue under a
 * mutex, and the progress thread is woken (fm_wake); each progress round then starts the
 * queued requests, in queue order, as if the progress thread had started them (with no
 * request handle: completion is told by the callback, which runs on the progress thread).
 * fm_wake writes an eventfd that fm_wait sleeps on beside the provider's fd (or instead of its
 * naps where the provider has none), and sets a flag that makes fm_wait return. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "log.h"
#include "submit.h"

int fm_submit_init(fm_context *ctx)
{
    ctx->thr.owner = pthread_self();
    ctx->thr.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (ctx->thr.wake_fd < 0) {
        fm_log(0, "eventfd: %s", strerror(errno));
        return FM_ERR_NOMEM;
    }
    if (pthread_mutex_init(&ctx->thr.lock, NULL)) {
        close(ctx->thr.wake_fd);
        ctx->thr.wake_fd = -1;
        return FM_ERR_NOMEM;
    }
    ctx->thr.ready = 1;
    return FM_OK;
}

void fm_submit_fini(fm_context *ctx)
{
    if (!ctx->thr.ready)
        return;
    int left = 0;
    while (ctx->thr.head) {
        fm_submit *s = ctx->thr.head;
        ctx->thr.head = s->next;
        free(s);
        left++;
    }
    if (left)
        fm_log(0, "fm_finalize: %d requests from worker threads never started", left);
    pthread_mutex_destroy(&ctx->thr.lock);
    close(ctx->thr.wake_fd);
    ctx->thr.ready = 0;
}

fm_submit *fm_submit_new(int n)
{
    return calloc(1, sizeof(fm_submit) + (size_t)(n > 0 ? n : 0) * sizeof(int));
}

int fm_submit_push(fm_context *ctx, fm_submit *sub)
{
    if (atomic_fetch_add(&ctx->thr.queued, 1) >= ctx->cfg.requests) {
        atomic_fetch_sub(&ctx->thr.queued, 1);
        free(sub);
        return FM_EAGAIN;
    }
    sub->next = NULL;
    pthread_mutex_lock(&ctx->thr.lock);
    if (ctx->thr.tail)
        ctx->thr.tail->next = sub;
    else
        ctx->thr.head = sub;
    ctx->thr.tail = sub;
    pthread_mutex_unlock(&ctx->thr.lock);
    fm_wake(ctx);
    return FM_OK;
}

/* A queued request that could not start: its callback says why (or the log). */
static void refused(fm_context *ctx, fm_submit *s, int rc)
{
    if (!s->done) {
        fm_log(0, "a request from a worker thread could not start: %s", fm_strerror(rc));
        return;
    }
    ctx->in_handler++; /* as every callback: it may send, not wait */
    s->done(rc, s->arg);
    ctx->in_handler--;
}

int fm_submit_drain(fm_context *ctx)
{
    pthread_mutex_lock(&ctx->thr.lock);
    fm_submit *s = ctx->thr.head;
    ctx->thr.head = ctx->thr.tail = NULL;
    pthread_mutex_unlock(&ctx->thr.lock);
    int started = 0;
    while (s) {
        int rc = s->start(ctx, s);
        if (rc == FM_EAGAIN) { /* FM_REQUESTS: the rest waits, in order, ahead of newer ones */
            fm_submit *last = s;
            while (last->next)
                last = last->next;
            pthread_mutex_lock(&ctx->thr.lock);
            last->next = ctx->thr.head;
            if (!ctx->thr.head)
                ctx->thr.tail = last;
            ctx->thr.head = s;
            pthread_mutex_unlock(&ctx->thr.lock);
            break;
        }
        if (rc)
            refused(ctx, s, rc);
        fm_submit *next = s->next;
        free(s);
        s = next;
        atomic_fetch_sub(&ctx->thr.queued, 1);
        started++;
    }
    return started;
}

int fm_submit_woken(fm_context *ctx)
{
    /* (a plain load first: idle waits look every round, a wake-up is rare) */
    if (!atomic_load_explicit(&ctx->thr.woken, memory_order_relaxed) ||
        !atomic_exchange(&ctx->thr.woken, 0))
        return 0;
    uint64_t v;
    if (read(ctx->thr.wake_fd, &v, sizeof v) < 0 && errno != EAGAIN)
        fm_log(1, "reading the wake eventfd: %s", strerror(errno));
    return 1;
}

/* The public calls (any thread). */

int fm_wake(fm_context *ctx)
{
    if (!fm_ctx_live(ctx))
        return FM_ERR_NOT_INIT;
    if (!atomic_exchange(&ctx->thr.woken, 1)) {
        uint64_t one = 1;
        if (write(ctx->thr.wake_fd, &one, sizeof one) < 0 && errno != EAGAIN)
            return FM_ERR_INTERNAL;
    }
    return FM_OK;
}

int fm_wake_fd(const fm_context *ctx)
{
    return fm_ctx_live(ctx) ? ctx->thr.wake_fd : FM_ERR_NOT_INIT;
}

int fm_set_progress_thread(fm_context *ctx)
{
    if (!fm_ctx_live(ctx))
        return FM_ERR_NOT_INIT;
    if (ctx->in_handler)
        return FM_ERR_IN_HANDLER;
    ctx->thr.owner = pthread_self();
    return FM_OK;
}
