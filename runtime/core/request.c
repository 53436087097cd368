/* SPDX-License-Identifier: BSD-3-Clause */
/* Requests: fm_isend, fm_isend_multi (fm_imcast and fm_imcast_list open their stream in
 * mcast.c), and test, wait, wait-any, wait-some, free.
 *
 * A request is an ordinary sending stream (send.c, multi.c) that progress writes instead of
 * the caller: each round, fm_req_pump copies what it can of every waiting request's buffer
 * into packets (fm_send_fill: a packet leaves when full, or queues for its credit), in start
 * order, and stops at the first one that finds no send buffer free, so a later request never
 * starts ahead of an earlier one. The last packet out (fm_send_finish) completes it: the
 * caller's buffer has been copied. The starting call pumps too, so a message that fits the
 * free buffers is on its way, and complete, before the call returns; but it never runs a
 * callback: they run from progress outside handlers (fm_req_notify), as handlers do. */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "progress.h"
#include "request.h"
#include "send.h"
#include "submit.h"

#define REQ_MAGIC 0x66726571u /* "freq": a live request; cleared when freed */

enum { REQ_ACTIVE, REQ_DONE };

struct fm_request {
    uint32_t magic;
    uint8_t state;
    uint8_t detached; /* nobody tests it: freed once its callback has run */
    uint8_t notified; /* its callback has run (or it has none): a test may report it */
    int status;
    fm_context *ctx;
    struct fm_request *next; /* the waiting, callback or free list */
    fm_stream *s;
    const unsigned char *buf;
    size_t len, off;
    fm_request_fn done;
    void *arg;
    int holds;   /* completion also waits for these (fm_req_hold: acknowledgements) */
    int written; /* its stream is released (status so far in status): complete once holds are 0 */
    unsigned char own[FM_REQ_INLINE]; /* internal messages keep their bytes here */
};

/* Requests come in slabs, kept until fm_finalize (which frees them all, reported or not). */
#define REQ_SLAB 64
typedef struct req_slab {
    struct req_slab *next;
    struct fm_request reqs[REQ_SLAB];
} req_slab;

static int grow(fm_context *ctx)
{
    req_slab *sl = malloc(sizeof *sl);
    if (!sl)
        return FM_ERR_NOMEM;
    sl->next = ctx->req.slabs;
    ctx->req.slabs = sl;
    for (int i = REQ_SLAB - 1; i >= 0; i--) {
        sl->reqs[i] = (struct fm_request){.next = ctx->req.free};
        ctx->req.free = &sl->reqs[i];
    }
    return FM_OK;
}

/* internal: not bounded by FM_REQUESTS (its callers bound themselves). */
static int req_new(fm_context *ctx, fm_request **out, int internal)
{
    if (ctx->req.live >= ctx->cfg.requests && !internal)
        return FM_EAGAIN;
    if (!ctx->req.free && grow(ctx))
        return FM_ERR_NOMEM;
    fm_request *r = ctx->req.free;
    ctx->req.free = r->next;
    *r = (fm_request){.ctx = ctx};
    ctx->req.live++;
    ctx->req_opening = 1;
    *out = r;
    return FM_OK;
}

int fm_req_new(fm_context *ctx, const void *buf, size_t len, fm_request **out)
{
    if (!buf && len)
        return FM_ERR_INVALID;
    return req_new(ctx, out, 0);
}

/* Back to the free list (its memory stays until fm_finalize: a stale pointer reads a cleared
 * magic, not freed memory). */
static void req_put(fm_request *r)
{
    fm_context *ctx = r->ctx;
    r->magic = 0;
    r->next = ctx->req.free;
    ctx->req.free = r;
    ctx->req.live--;
}

/* r is over, with r->status. */
static void complete(fm_context *ctx, fm_request *r)
{
    r->state = REQ_DONE;
    if (!r->done) {
        r->notified = 1;
        if (r->detached) {
            if (r->status)
                fm_log(0, "a request nobody waits for ended with %s", fm_strerror(r->status));
            req_put(r);
        }
        return;
    }
    r->next = NULL;
    if (ctx->req.notify_tail)
        ctx->req.notify_tail->next = r;
    else
        ctx->req.notify = r;
    ctx->req.notify_tail = r;
}

/* Write the head request as far as buffers allow: 1 when it is written (its stream
 * released; complete unless holds remain), 0 when it waits. */
static int pump_one(fm_context *ctx, fm_request *r)
{
    if (r->off < r->len)
        r->off += fm_send_fill(r->s, r->buf + r->off, r->len - r->off);
    if (r->off < r->len)
        return 0;
    int rc = fm_send_finish(r->s);
    if (rc == FM_EAGAIN)
        return 0;
    ctx->req.head = r->next;
    if (!ctx->req.head)
        ctx->req.tail = NULL;
    r->s = NULL;
    r->written = 1;
    r->status = rc;
    if (!r->holds)
        complete(ctx, r);
    return 1;
}

void fm_req_hold(fm_request *r)
{
    r->holds++;
}

void fm_req_release(fm_request *r, int status)
{
    if (status && !r->status)
        r->status = status;
    if (--r->holds == 0 && r->written)
        complete(r->ctx, r);
}

int fm_req_pump(fm_context *ctx)
{
    int moved = 0;
    while (ctx->req.head) {
        fm_request *r = ctx->req.head;
        size_t before = r->off;
        if (!pump_one(ctx, r)) {
            moved += r->off != before;
            break;
        }
        moved++;
    }
    return moved;
}

int fm_req_notify(fm_context *ctx)
{
    int ran = 0;
    while (ctx->req.notify && !ctx->in_handler) {
        fm_request *r = ctx->req.notify;
        ctx->req.notify = r->next;
        if (!ctx->req.notify)
            ctx->req.notify_tail = NULL;
        r->notified = 1;
        ctx->in_handler++; /* a callback runs as a handler does: it may send, not wait */
        r->done(r->status, r->arg);
        ctx->in_handler--;
        if (r->detached)
            req_put(r);
        ran++;
    }
    return ran;
}

int fm_req_start(fm_request *r, int open_rc, fm_stream *s, const void *buf, size_t len,
                 fm_request_fn done, void *arg, fm_request **req)
{
    fm_context *ctx = r->ctx;
    ctx->req_opening = 0;
    if (open_rc) {
        req_put(r);
        return open_rc;
    }
    r->magic = REQ_MAGIC;
    r->state = REQ_ACTIVE;
    r->s = s;
    r->buf = buf;
    r->len = len;
    r->done = done;
    r->arg = arg;
    r->detached = req == NULL;
    if (ctx->req.tail)
        ctx->req.tail->next = r;
    else
        ctx->req.head = r;
    ctx->req.tail = r;
    if (req)
        *req = r;
    if (ctx->req.head == r) /* (behind others, it waits its turn: they wait for buffers) */
        fm_req_pump(ctx);
    return FM_OK;
}

int fm_req_cut(fm_context *ctx)
{
    int n = 0;
    while (ctx->req.head) {
        fm_request *r = ctx->req.head;
        ctx->req.head = r->next;
        fm_send_abandon(r->s);
        r->s = NULL;
        r->written = 1;
        r->status = FM_ERR_TRUNCATED;
        n++;
        if (r->holds)
            continue; /* (completes when its holds are released) */
        if (!r->done && r->detached)
            req_put(r);
        else
            complete(ctx, r);
    }
    ctx->req.tail = NULL;
    return n;
}

void fm_req_fini(fm_context *ctx)
{
    long unfinished = 0;
    for (fm_request *r = ctx->req.head; r; r = r->next, unfinished++)
        fm_send_abandon(r->s);
    if (unfinished)
        fm_log(0, "fm_finalize: %ld requests never completed (their messages are cut short)",
               unfinished);
    while (ctx->req.slabs) {
        req_slab *sl = ctx->req.slabs;
        ctx->req.slabs = sl->next;
        free(sl);
    }
    ctx->req = (fm_req_state){0};
}

int fm_req_send_internal(fm_context *ctx, int dest, const void *buf, size_t len, int handler)
{
    if (len > FM_REQ_INLINE)
        return FM_ERR_TOO_LONG;
    fm_request *r;
    int rc = req_new(ctx, &r, 1);
    if (rc)
        return rc;
    memcpy(r->own, buf, len);
    fm_stream *s = NULL;
    rc = fm_send_open(ctx, dest, len, handler, &s);
    return fm_req_start(r, rc, s, r->own, len, NULL, NULL, NULL);
}

/* Worker threads (submit.c): the record for a request started off the progress thread; its
 * start runs on the progress thread. */
int fm_req_submit(fm_context *ctx, fm_request **req, const void *buf, size_t len, int handler,
                  fm_request_fn done, void *arg, int n, fm_submit **out)
{
    *out = NULL;
    if (req || (!buf && len))
        return FM_ERR_INVALID; /* (a handle would be the progress thread's to test) */
    if (handler < 0 || handler >= FM_MAX_HANDLERS)
        return FM_ERR_HANDLER;
    if (n < 0 || !(*out = fm_submit_new(n)))
        return n < 0 ? FM_ERR_INVALID : FM_ERR_NOMEM;
    **out =
        (fm_submit){.buf = buf, .len = len, .handler = handler, .done = done, .arg = arg, .n = n};
    (void)ctx;
    return FM_OK;
}

static int start_isend(fm_context *ctx, fm_submit *s)
{
    return fm_isend(ctx, s->dest, s->buf, s->len, s->handler, s->done, s->arg, NULL);
}

static int start_isend_multi(fm_context *ctx, fm_submit *s)
{
    return fm_isend_multi(ctx, s->ranks, s->n, s->buf, s->len, s->handler, s->done, s->arg, NULL);
}

/* The public calls. */

int fm_isend(fm_context *ctx, int dest, const void *buf, size_t len, int handler,
             fm_request_fn done, void *arg, fm_request **req)
{
    if (req)
        *req = NULL;
    if (!fm_ctx_live(ctx))
        return FM_ERR_NOT_INIT;
    if (fm_submit_foreign(ctx)) {
        if (dest < 0 || dest >= ctx->size)
            return FM_ERR_RANK;
        fm_submit *s;
        int rc = fm_req_submit(ctx, req, buf, len, handler, done, arg, 0, &s);
        if (rc)
            return rc;
        s->dest = dest;
        s->start = start_isend;
        return fm_submit_push(ctx, s);
    }
    fm_request *r;
    int rc = fm_req_new(ctx, buf, len, &r);
    if (rc)
        return rc;
    fm_stream *s = NULL;
    rc = fm_begin_message(ctx, dest, len, handler, &s);
    return fm_req_start(r, rc, s, buf, len, done, arg, req);
}

int fm_isend_multi(fm_context *ctx, const int *dests, int n, const void *buf, size_t len,
                   int handler, fm_request_fn done, void *arg, fm_request **req)
{
    if (req)
        *req = NULL;
    if (!fm_ctx_live(ctx))
        return FM_ERR_NOT_INIT;
    if (fm_submit_foreign(ctx)) {
        if (!dests || n < 0)
            return FM_ERR_INVALID;
        for (int i = 0; i < n; i++)
            if (dests[i] < 0 || dests[i] >= ctx->size)
                return FM_ERR_RANK;
        fm_submit *sub;
        int rc = fm_req_submit(ctx, req, buf, len, handler, done, arg, n, &sub);
        if (rc)
            return rc;
        memcpy(sub->ranks, dests, (size_t)n * sizeof *dests);
        sub->start = start_isend_multi;
        return fm_submit_push(ctx, sub);
    }
    fm_request *r;
    int rc = fm_req_new(ctx, buf, len, &r);
    if (rc)
        return rc;
    fm_stream *s = NULL;
    rc = fm_begin_message_multi(ctx, dests, n, len, handler, &s);
    return fm_req_start(r, rc, s, buf, len, done, arg, req);
}

/* A request pointer from the caller: FM_OK when it names a live request of the live context. */
static int check(const fm_request *r)
{
    if (!fm_live_ctx)
        return FM_ERR_NOT_INIT;
    return r && r->magic == REQ_MAGIC && r->ctx == fm_live_ctx ? FM_OK : FM_ERR_INVALID;
}

/* Reported: over and its callback run. */
static int over(const fm_request *r)
{
    return r->state == REQ_DONE && r->notified;
}

/* Report *req: its status, the request freed, *req NULL. */
static int reap(fm_request **req)
{
    fm_request *r = *req;
    int status = r->status;
    req_put(r);
    *req = NULL;
    return status;
}

int fm_request_test(fm_request **req)
{
    int rc = req ? check(*req) : FM_ERR_INVALID;
    if (rc)
        return rc;
    fm_context *ctx = (*req)->ctx;
    if (!over(*req) && !ctx->in_handler && (rc = fm_progress_once(ctx)) < 0)
        return rc;
    return over(*req) ? reap(req) : FM_EAGAIN;
}

/* Requests a wait looks at: n entries of reqs, NULL ones skipped. */
typedef struct req_set {
    fm_request **reqs;
    int n;
} req_set;

static int any_over(fm_context *ctx, void *arg)
{
    (void)ctx;
    const req_set *set = arg;
    for (int i = 0; i < set->n; i++)
        if (set->reqs[i] && over(set->reqs[i]))
            return 1;
    return 0;
}

/* Check a set and wait until one of its requests is over. *live: whether it has any. */
static int wait_set(fm_request **reqs, int n, int *live)
{
    *live = 0;
    if (!fm_live_ctx)
        return FM_ERR_NOT_INIT;
    if (!reqs || n < 0)
        return FM_ERR_INVALID;
    for (int i = 0; i < n; i++) {
        if (!reqs[i])
            continue;
        int rc = check(reqs[i]);
        if (rc)
            return rc;
        *live = 1;
    }
    if (!*live)
        return FM_OK;
    if (fm_live_ctx->in_handler)
        return FM_ERR_IN_HANDLER;
    req_set set = {reqs, n};
    return fm_progress_until(fm_live_ctx, any_over, &set, "a request to complete");
}

int fm_request_wait(fm_request **req)
{
    if (!req)
        return FM_ERR_INVALID;
    int live, rc = *req ? wait_set(req, 1, &live) : FM_ERR_INVALID;
    return rc ? rc : reap(req);
}

int fm_request_waitany(fm_request **reqs, int n, int *index)
{
    if (index)
        *index = -1;
    int live, rc = index ? wait_set(reqs, n, &live) : FM_ERR_INVALID;
    if (rc || !live)
        return rc;
    for (int i = 0; i < n; i++)
        if (reqs[i] && over(reqs[i])) {
            *index = i;
            return reap(&reqs[i]);
        }
    return FM_ERR_INTERNAL; /* (any_over held) */
}

int fm_request_waitsome(fm_request **reqs, int n, int *indices, int *statuses, int *count)
{
    if (count)
        *count = 0;
    int live, rc = indices && count ? wait_set(reqs, n, &live) : FM_ERR_INVALID;
    if (rc || !live)
        return rc;
    for (int i = 0; i < n; i++)
        if (reqs[i] && over(reqs[i])) {
            int status = reap(&reqs[i]);
            if (statuses)
                statuses[*count] = status;
            indices[(*count)++] = i;
        }
    return FM_OK;
}

int fm_request_free(fm_request **req)
{
    int rc = req ? check(*req) : FM_ERR_INVALID;
    if (rc)
        return rc;
    fm_request *r = *req;
    *req = NULL;
    if (over(r))
        req_put(r);
    else
        r->detached = 1; /* freed after its callback (complete, fm_req_notify) */
    return FM_OK;
}
