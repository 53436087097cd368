/* SPDX-License-Identifier: BSD-3-Clause */
/* threads: requests started on worker threads while the main thread drives progress.
 *
 *   fastmsg-run -n N threads [--workers K] [--count M]
 *
 * On every rank K worker threads each start M requests (in turn: to one rank, to every other
 * rank, a multicast on a list) with req NULL and a completion callback, from their own
 * buffers, and wait (without fastmsg) until their callbacks said the buffers are free; the
 * main thread only calls fm_wait(ctx, -1). Every byte is checked at the receivers. Then the
 * wrong calls from a worker (a request handle, a bad rank, a bad tree found on the progress
 * thread) and fm_wake: a worker wakes a main thread that waits with nothing to do. Callbacks
 * must run on the main thread. */
#include "common.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { H_DATA };

static fm_context *ctx;
static int me, nranks, workers = 4, count = 12;
static pthread_t main_thread;
static atomic_long callbacks, got, tree_errors;
static atomic_int wake_sent;

typedef struct job {
    int worker, i;
    size_t len;
    unsigned char *buf;
    atomic_int done;
} job;

static size_t job_len(int i)
{
    size_t p = st_packet_size(), lens[] = {1, 100, p + 3, 5 * p + 1, 70000};
    return lens[i % 5];
}

/* Message index: worker w's i-th request. Its bytes are written for every receiver (-1). */
static int msg_index(int w, int i)
{
    return w * 1000 + i;
}

static void on_done(int status, void *arg)
{
    job *j = arg;
    if (!pthread_equal(pthread_self(), main_thread))
        st_fail("a callback ran on a worker thread");
    if (status)
        st_fail("worker %d request %d: %s", j->worker, j->i, fm_strerror(status));
    atomic_fetch_add(&callbacks, 1);
    atomic_store(&j->done, 1);
}

static void on_bad_tree(int status, void *arg)
{
    (void)arg;
    if (status == FM_ERR_TREE)
        atomic_fetch_add(&tree_errors, 1);
    else
        st_fail("a bad tree from a worker: %s, expected FM_ERR_TREE", fm_strerror(status));
}

static void *worker(void *arg)
{
    int w = (int)(intptr_t)arg;
    int *others = malloc(sizeof(int) * (size_t)nranks), *all = malloc(sizeof(int) * (size_t)nranks);
    int no = 0;
    for (int r = 0; r < nranks; r++) {
        all[r] = r;
        if (r != me)
            others[no++] = r;
    }
    job *jobs = calloc((size_t)count, sizeof *jobs);
    for (int i = 0; i < count; i++) {
        job *j = &jobs[i];
        j->worker = w;
        j->i = i;
        j->len = job_len(i);
        j->buf = malloc(j->len);
        st_fill(j->buf, j->len, me, -1, msg_index(w, i), 0);
        int rc;
        do {
            switch (i % 3) {
            case 0:
                rc = fm_isend(ctx, (me + 1 + i) % nranks, j->buf, j->len, H_DATA, on_done, j, NULL);
                break;
            case 1:
                rc = fm_isend_multi(ctx, others, no, j->buf, j->len, H_DATA, on_done, j, NULL);
                break;
            default:
                rc = fm_imcast_list(ctx, all, nranks, "binomial", 0, j->buf, j->len, H_DATA,
                                    on_done, j, NULL);
                break;
            }
            if (rc == FM_EAGAIN)
                sched_yield();
        } while (rc == FM_EAGAIN);
        if (rc)
            st_fail("worker %d request %d: %s", w, i, fm_strerror(rc));
    }
    /* Wrong calls: refused at once, or (a bad tree) told by the callback. */
    fm_request *r;
    if (fm_isend(ctx, others[0], jobs[0].buf, 1, H_DATA, NULL, NULL, &r) != FM_ERR_INVALID)
        st_fail("a worker's request with a handle was not refused");
    if (fm_isend(ctx, nranks, jobs[0].buf, 1, H_DATA, NULL, NULL, NULL) != FM_ERR_RANK)
        st_fail("a worker's request to a bad rank was not refused");
    if (fm_imcast_list(ctx, all, nranks, "nosuchtree", 0, jobs[0].buf, 1, H_DATA, on_bad_tree, NULL,
                       NULL) != FM_OK)
        st_fail("a worker's multicast with a bad tree was refused before it started");
    for (int i = 0; i < count; i++) {
        while (!atomic_load(&jobs[i].done)) {
            struct timespec ts = {0, 200000};
            nanosleep(&ts, NULL);
        }
        free(jobs[i].buf);
    }
    free(jobs);
    free(others);
    free(all);
    return NULL;
}

static void on_data(const void *buf, size_t len, int status, int sender, void *arg)
{
    (void)arg;
    if (!pthread_equal(pthread_self(), main_thread))
        st_fail("a handler ran on a worker thread");
    if (status)
        st_fail("a message from %d: %s", sender, fm_strerror(status));
    /* The index is not in the message: find the request by length and pattern. */
    int found = 0;
    for (int w = 0; w < workers && !found; w++)
        for (int i = 0; i < count && !found; i++)
            found = job_len(i) == len &&
                    st_mismatch(buf, len, sender, -1, msg_index(w, i), 0) == (size_t)-1;
    if (!found)
        st_fail("a %zu-byte message from %d matches no request", len, sender);
    atomic_fetch_add(&got, 1);
}

static void *waker(void *arg)
{
    (void)arg;
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
    atomic_store(&wake_sent, 1);
    if (fm_wake(ctx) != FM_OK)
        st_fail("fm_wake");
    return NULL;
}

int main(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--workers"))
            workers = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--count"))
            count = atoi(argv[i + 1]);
    }
    main_thread = pthread_self();
    ctx = st_init();
    me = fm_rank(ctx);
    nranks = fm_size(ctx);
    fm_register_message_handler(ctx, H_DATA, on_data, NULL);
    fm_barrier(ctx);
    pthread_t *t = malloc(sizeof(pthread_t) * (size_t)workers);
    for (int w = 0; w < workers; w++)
        pthread_create(&t[w], NULL, worker, (void *)(intptr_t)w);
    /* What comes here: from each rank's workers, per request i: i % 3 == 0 to one rank
     * ((sender + 1 + i) % n, this one included), 1 to every other rank, 2 a multicast to all. */
    long want = 0;
    for (int s = 0; s < nranks; s++)
        for (int i = 0; i < count; i++)
            want += i % 3 ? s != me : (s + 1 + i) % nranks == me;
    want *= workers;
    long want_cb = (long)workers * count;
    while (atomic_load(&got) < want || atomic_load(&callbacks) < want_cb ||
           atomic_load(&tree_errors) < workers) {
        long rc = fm_wait(ctx, -1);
        if (rc < 0) {
            st_fail("fm_wait: %s", fm_strerror((int)rc));
            break;
        }
    }
    for (int w = 0; w < workers; w++)
        pthread_join(t[w], NULL);
    if (atomic_load(&got) != want)
        st_fail("%ld messages, expected %ld", atomic_load(&got), want);
    fm_barrier(ctx);
    /* fm_wake: nothing else can end this wait. */
    pthread_t wt;
    pthread_create(&wt, NULL, waker, NULL);
    /* (fm_wait also returns for the job's own packets, e.g. the barrier's last credits; with
     * a broken fm_wake this loop never ends and the test times out) */
    long rc;
    do
        rc = fm_wait(ctx, -1);
    while (rc >= 0 && !atomic_load(&wake_sent));
    if (rc < 0)
        st_fail("fm_wait: %s", fm_strerror((int)rc));
    pthread_join(wt, NULL);
    free(t);
    return st_finish(ctx, "threads");
}
