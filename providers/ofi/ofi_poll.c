/* SPDX-License-Identifier: BSD-3-Clause */
/* Completions and waiting: poll retries refused ops, hands out the completions we made
 * ourselves (injects), then reads the CQ, which also drives the provider's progress. */
#include "ofi_internal.h"

#include "fastmsg.h"
#include "log.h"

/* CQ entries read per fi_cq_read; a bigger max is served over several polls. */
#define FM_OFI_CQ_BATCH 16

static inline void fm_ofi_event(fm_tp_event *ev, const fm_ofi_op *op, int status, size_t len)
{
    ev->kind = (fm_tp_event_kind)op->kind;
    ev->status = status;
    ev->ctx = op->ctx;
    ev->buf = op->buf;
    ev->len = len;
    ev->lent = NULL; /* (nothing is lent here) */
}

/* One message that landed in region op at buf. */
static inline void fm_ofi_multi_event(fm_tp_event *ev, const fm_ofi_op *op, int status, void *buf,
                                      size_t len)
{
    ev->kind = FM_TP_RECV_MULTI;
    ev->status = status;
    ev->ctx = op->ctx;
    ev->buf = buf;
    ev->len = len;
    ev->lent = NULL;
}

/* How a failed operation looks to the caller: the peer went away, the packet did not fit
 * the receive buffer, or something else in the provider. */
static int fm_ofi_status_of(int err)
{
    switch (err) {
    case FI_ECONNREFUSED:
    case FI_ECONNRESET:
    case FI_ECONNABORTED:
    case FI_ENOTCONN:
    case FI_ESHUTDOWN:
    case FI_EHOSTUNREACH:
    case FI_EHOSTDOWN:
    case FI_ENETUNREACH:
    case FI_ETIMEDOUT:
    case FI_EADDRNOTAVAIL:
    case FI_EREMOTEIO:
        return FM_ERR_PEER;
    case FI_ETRUNC:
    case FI_EMSGSIZE:
        return FM_ERR_TOO_LONG;
    default:
        return FM_ERR_PROVIDER;
    }
}

/* After -FI_EAVAIL: one error completion into ev. 1, 0 if none after all, or < 0. */
static int fm_ofi_cq_error(fm_ofi_tp *t, fm_tp_event *ev)
{
    const char *prov = t->base.info.provider;
    struct fi_cq_err_entry e = {0};
    char detail[256] = "";
    const char *sep;
    fm_ofi_op *op;
    int rc = FM_OK;
    int err;
    ssize_t ret = fi_cq_readerr(t->cq, &e, 0);

    if (ret == -FI_EAGAIN)
        return 0;
    FM_CHECK(ret == 1, FM_ERR_PROVIDER, "ofi %s: fi_cq_readerr: %s (%zd)", prov,
             fi_strerror((int)-ret), ret);
    t->stats.cq_errors++;
    /* The spec says positive; shm 1.17 reports some errors negated (-FI_ETRUNC). */
    err = e.err < 0 ? -e.err : e.err;
    fi_cq_strerror(t->cq, e.prov_errno, e.err_data, detail, sizeof detail);
    sep = detail[0] ? "; provider says: " : "";
    op = e.op_context;
    FM_CHECK(op, FM_ERR_PROVIDER,
             "ofi %s: fi_cq_readerr: an error completion without a context: %s (%d)%s%s", prov,
             fi_strerror(err), err, sep, detail);
    /* The call that failed is the one that posted op; the CQ only reports it. */
    if (fm_ofi_is_send(op))
        fm_log(0, "ofi %s: %s of %zu bytes to rank %d completed with an error: %s (%d)%s%s", prov,
               fm_ofi_call(t, op), op->len + (op->buf2 ? op->len2 : 0), op->dest, fi_strerror(err),
               err, sep, detail);
    else
        fm_log(0, "ofi %s: %s of a %zu-byte buffer completed with an error: %s (%d)%s%s", prov,
               fm_ofi_call(t, op), op->len, fi_strerror(err), err, sep, detail);
    if (fm_ofi_unlikely(op->kind == FM_TP_RECV_REGION_DONE)) {
        /* One message of a region failed; the region stays posted unless the entry says the
         * provider let it go (then its REGION_DONE comes from doneq, after this event). */
        fm_ofi_multi_event(ev, op, fm_ofi_status_of(err), e.buf, e.len);
        if (e.flags & FI_MULTI_RECV) {
            op->status = FM_OK;
            op->len = 0;
            fm_ofi_q_push(&t->doneq, op);
        }
        return 1;
    }
    fm_ofi_event(ev, op, fm_ofi_status_of(err), fm_ofi_is_send(op) ? op->len : e.len);
    fm_ofi_op_put(t, op);
    return 1;
error:
    return rc;
}

/* After fi_cq_read failed with ret (not -FI_EAGAIN): one error event in ev (1), none (0),
 * or < 0. */
static int fm_ofi_cq_failed(fm_ofi_tp *t, fm_tp_event *ev, ssize_t ret)
{
    int rc = FM_OK;

    if (ret == -FI_EAVAIL)
        return fm_ofi_cq_error(t, ev);
    FM_CHECK(0, FM_ERR_PROVIDER, "ofi %s: fi_cq_read: %s (%zd)", t->base.info.provider,
             fi_strerror((int)-ret), ret);
error:
    return rc;
}

/* The less common work before reading the CQ: retrying refused ops, and handing out the
 * completions we made ourselves. Events written, at most max. */
static int fm_ofi_poll_own(fm_ofi_tp *t, fm_tp_event *ev, int max)
{
    fm_ofi_op *op;
    int n = 0;

    if (t->sendq.head || t->recvq.head)
        fm_ofi_retry(t);
    while (n < max && (op = fm_ofi_q_pop(&t->doneq)) != NULL) {
        fm_ofi_event(&ev[n++], op, op->status, op->len);
        fm_ofi_op_put(t, op);
    }
    return n;
}

/* A CQ entry of region op: its message (FI_RECV: shm reports the release on its own, with
 * flags FI_MULTI_RECV only; rxm sets FI_MULTI_RECV on the last message's entry) and/or its
 * release, which goes after the message (into doneq if ev has no room left). Events written. */
static int fm_ofi_region_entry(fm_ofi_tp *t, fm_tp_event *ev, int room, fm_ofi_op *op,
                               const struct fi_cq_data_entry *e)
{
    int n = 0;
    if (e->flags & FI_RECV)
        fm_ofi_multi_event(&ev[n++], op, FM_OK, e->buf, e->len);
    if (!(e->flags & FI_MULTI_RECV))
        return n;
    op->status = FM_OK;
    op->len = 0;
    if (n < room) {
        fm_ofi_event(&ev[n++], op, FM_OK, 0);
        fm_ofi_op_put(t, op);
    } else {
        fm_ofi_q_push(&t->doneq, op);
    }
    return n;
}

/* Reads the CQ in its format (data: FI_CQ_FORMAT_DATA, with multi-receive regions; else
 * FI_CQ_FORMAT_MSG); inlined into both polls, so the ordinary one pays nothing for regions. */
static inline __attribute__((always_inline)) int fm_ofi_poll_cq(fm_tp *tp, fm_tp_event *ev, int max,
                                                                const int data)
{
    fm_ofi_tp *t = fm_ofi_tp_of(tp);
    union {
        struct fi_cq_msg_entry msg[FM_OFI_CQ_BATCH];
        struct fi_cq_data_entry data[FM_OFI_CQ_BATCH];
    } ent;
    int n = 0;

    if (fm_ofi_unlikely(t->sendq.head || t->recvq.head || t->doneq.head) &&
        (n = fm_ofi_poll_own(t, ev, max)) >= max)
        return n;
    /* Until max or a short read: fewer than max events then means the CQ was empty. */
    while (n < max) {
        size_t want = max - n < FM_OFI_CQ_BATCH ? (size_t)(max - n) : FM_OFI_CQ_BATCH;
        ssize_t got = fi_cq_read(t->cq, data ? (void *)ent.data : (void *)ent.msg, want);
        if (got == -FI_EAGAIN)
            break;
        if (fm_ofi_unlikely(got < 0)) {
            int e = fm_ofi_cq_failed(t, ev + n, got);
            /* Hand out what we have; a failure repeats next poll. */
            return e < 0 ? (n > 0 ? n : e) : n + e;
        }
        for (ssize_t i = 0; i < got; i++) {
            fm_ofi_op *op = data ? ent.data[i].op_context : ent.msg[i].op_context;
            size_t len = data ? ent.data[i].len : ent.msg[i].len;
            if (data && op->kind == FM_TP_RECV_REGION_DONE) {
                /* Room for this entry's events, one slot kept for each later entry. */
                int room = max - n - (int)(got - i - 1);
                n += fm_ofi_region_entry(t, ev + n, room, op, &ent.data[i]);
                continue;
            }
            fm_ofi_event(&ev[n++], op, FM_OK, fm_ofi_is_send(op) ? op->len : len);
            fm_ofi_op_put(t, op);
        }
        if ((size_t)got < want)
            break;
    }
    return n;
}

int fm_ofi_poll(fm_tp *tp, fm_tp_event *ev, int max)
{
    return fm_ofi_poll_cq(tp, ev, max, 0);
}

int fm_ofi_poll_data(fm_tp *tp, fm_tp_event *ev, int max)
{
    return fm_ofi_poll_cq(tp, ev, max, 1);
}

int fm_ofi_wait_fd(fm_tp *tp)
{
    return fm_ofi_tp_of(tp)->wait_fd;
}

/* FM_EAGAIN while we know of work (our own completions, refused sends: retrying them needs a
 * poll, and nothing may signal the fd for them). Without a wait fd, FM_OK only says nothing
 * is known to be pending: the caller backs off briefly and polls again. */
int fm_ofi_trywait(fm_tp *tp)
{
    fm_ofi_tp *t = fm_ofi_tp_of(tp);
    struct fid *fids[1] = {&t->cq->fid};
    int rc = FM_OK;
    int ret;

    if (t->doneq.head || t->sendq.head)
        return FM_EAGAIN;
    if (t->wait_fd < 0)
        return FM_OK;
    ret = fi_trywait(t->fabric, fids, 1);
    if (ret == -FI_EAGAIN)
        return FM_EAGAIN;
    FM_CHECK(ret == 0, FM_ERR_PROVIDER, "ofi %s: fi_trywait: %s (%d)", tp->info.provider,
             fi_strerror(-ret), ret);
error:
    return rc;
}
