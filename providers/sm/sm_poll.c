/* SPDX-License-Identifier: BSD-3-Clause */
/* poll, and sleeping without spinning: before it sleeps, a rank raises its sleeping flag and
 * looks at its rings once more; a sender looks at the flag after publishing a record (both
 * behind a full fence), so at least one of them sees the other, and the one that clears the
 * flag writes the sleeper's bell pipe. Senders thus pay a system call only when the receiver
 * really is asleep. */
#include "sm_internal.h"

#include <unistd.h>

#include "fastmsg.h"

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
