/* SPDX-License-Identifier: BSD-3-Clause */
/* poll, and sleeping without spinning: before it sleeps, a rank raises its sleeping flag and
 * looks at its rings once more; a sender looks at the flag after publishing a record (both
 * behind a full fence), so at least one of them sees the other, and the one that clears the
 * flag writes the sleeper's bell pipe. Senders thus pay a system call only when the receiver
 * really is asleep. */
#include "sm_internal.h"

#include <unistd.h>

#include "fastmsg.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static void sm_debug(fm_sm_tp *t)
{
    static double last;
    static int on = -1;
    if (on < 0)
        on = getenv("FM_SM_DEBUG") != NULL;
    if (!on)
        return;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double now = ts.tv_sec + 1e-9 * ts.tv_nsec;
    if (now - last < 2)
        return;
    last = now;
    fprintf(stderr, "sm[%d]: rx_count %zu queued %d done %p armed %d\n", t->rank, t->rx_count,
            t->queued, (void *)t->done_head, t->armed);
    for (int s = 0; s < t->n; s++) {
        fm_sm_peer *p = &t->peers[s];
        unsigned char *rec = fm_sm_ring(&t->lay, t->seg, s) + p->head % t->lay.ring_bytes;
        uint64_t w = atomic_load((_Atomic uint64_t *)(void *)rec);
        int q = 0;
        for (fm_sm_op *o = p->q_head; o; o = o->next)
            q++;
        fprintf(stderr,
                "sm[%d]:  from %d: head %lu word %lx asm %p got %u/%u broken %d | to: tail %lu "
                "headseen %lu q %d\n",
                t->rank, s, (unsigned long)p->head, (unsigned long)w, (void *)p->asm_rx, p->asm_got,
                p->asm_total, p->broken, (unsigned long)p->tail, (unsigned long)p->head_seen, q);
    }
}

int fm_sm_poll(fm_tp *tp, fm_tp_event *ev, int max)
{
    fm_sm_tp *t = fm_sm_of(tp);
    if (!t->peers || max <= 0)
        return 0;
    if (t->armed) { /* back from a sleep: empty the bell, lower the flag */
        char v[64];
        while (read(t->bell[0], v, sizeof v) == (ssize_t)sizeof v)
            ; /* EAGAIN: woken by a timeout, not the bell */
        t->armed = 0;
        atomic_store_explicit(&t->hdr->sleeping, 0, memory_order_relaxed);
    }
    sm_debug(t);
    int n = 0;
    if (t->queued)
        fm_sm_retry(t);
    while (n < max && t->done_head) {
        fm_sm_op *op = t->done_head;
        t->done_head = op->next;
        if (!t->done_head)
            t->done_tail = NULL;
        ev[n++] = (fm_tp_event){.kind = FM_TP_SEND_DONE,
                                .status = FM_OK,
                                .ctx = op->ctx,
                                .buf = (void *)(op->hlen ? op->hdr : op->pay),
                                .len = op->hlen + op->plen};
        op->next = t->free_ops;
        t->free_ops = op;
    }
    return n + fm_sm_receive(t, ev + n, max - n);
}

int fm_sm_wait_fd(fm_tp *tp)
{
    return fm_sm_of(tp)->bell[0];
}

int fm_sm_trywait(fm_tp *tp)
{
    fm_sm_tp *t = fm_sm_of(tp);
    if (!t->peers)
        return FM_OK;
    if (t->done_head)
        return FM_EAGAIN;
    fm_sm_flush(t);  /* peers waiting for room must not wait on this sleep */
    if (t->queued) { /* whoever frees room or a chunk will ring */
        atomic_store_explicit(&t->hdr->starved, 1, memory_order_relaxed);
        atomic_thread_fence(memory_order_seq_cst);
        if (fm_sm_retry(t))
            return FM_EAGAIN;
    }
    atomic_store_explicit(&t->hdr->sleeping, 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
    if (fm_sm_pending(t)) {
        atomic_store_explicit(&t->hdr->sleeping, 0, memory_order_relaxed);
        return FM_EAGAIN;
    }
    t->armed = 1;
    return FM_OK;
}
