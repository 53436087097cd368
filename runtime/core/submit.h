/* SPDX-License-Identifier: BSD-3-Clause */
/* Worker threads (submit.c): requests started on threads other than the progress thread wait
 * in a locked queue that the progress thread drains each round; fm_wake and the eventfd it
 * writes. */
#ifndef FM_CORE_SUBMIT_H
#define FM_CORE_SUBMIT_H

#include <pthread.h>

#include "context.h"

/* One request started on a worker thread, with its arguments (ranks copied). */
typedef struct fm_submit {
    struct fm_submit *next;
    /* Starts it on the progress thread (req NULL): FM_OK, FM_EAGAIN (again next round), or an
     * error for its callback. */
    int (*start)(fm_context *ctx, struct fm_submit *sub);
    fm_request_fn done;
    void *arg;
    const void *buf;
    size_t len;
    int handler, dest, n;
    unsigned flags;
    fm_group *group;
    char tree[64];
    int ranks[]; /* n */
} fm_submit;

int fm_submit_init(fm_context *ctx);
void fm_submit_fini(fm_context *ctx);

/* Whether the calling thread is not ctx's progress thread. */
static inline int fm_submit_foreign(const fm_context *ctx)
{
    return !pthread_equal(pthread_self(), ctx->thr.owner);
}

/* A record for n ranks (zeroed), NULL when out of memory; tree copied (NULL: none), FM_ERR_TREE
 * when too long. */
fm_submit *fm_submit_new(int n);
/* From a worker thread: queue sub (taken in any case) and wake the progress thread. FM_OK,
 * FM_EAGAIN (FM_REQUESTS submissions wait already). */
int fm_submit_push(fm_context *ctx, fm_submit *sub);
/* From progress outside handlers: start what workers queued, in their order. Returns how many. */
int fm_submit_drain(fm_context *ctx);
static inline int fm_submit_waiting(fm_context *ctx)
{
    return atomic_load_explicit(&ctx->thr.queued, memory_order_relaxed) > 0;
}
/* Whether fm_wake was called since the last look (and clear it). */
int fm_submit_woken(fm_context *ctx);

#endif
