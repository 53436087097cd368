/* Posting sends and receives. Small sends go by fi_inject (no CQ entry; we queue the
 * SEND_DONE ourselves so every send still gets exactly one); larger ones by fi_send. What the
 * provider refuses with -FI_EAGAIN waits in a FIFO and is retried from poll, so send never
 * spins and sends keep their order. */
#include "ofi_internal.h"

#include "fastmsg.h"
#include "log.h"

static inline void *fm_ofi_desc(fm_tp_mr *mr)
{
    return mr ? fi_mr_desc((struct fid_mr *)mr) : NULL;
}

/* 0, -FI_EAGAIN, or another libfabric error. */
static inline ssize_t fm_ofi_post_send(fm_ofi_tp *t, fm_ofi_op *op)
{
    if (op->len < t->inject_end) {
        ssize_t ret = fi_inject(t->ep, op->buf, op->len, (fi_addr_t)op->dest);
        if (ret == 0) {
            op->status = FM_OK;
            fm_ofi_q_push(&t->doneq, op);
        }
        return ret;
    }
    return fi_send(t->ep, op->buf, op->len, op->desc, (fi_addr_t)op->dest, op);
}

static inline ssize_t fm_ofi_post_recv_op(fm_ofi_tp *t, fm_ofi_op *op)
{
    return fi_recv(t->ep, op->buf, op->len, op->desc, FI_ADDR_UNSPEC, op);
}

int fm_ofi_send(fm_tp *tp, int dest, const void *buf, size_t len, fm_tp_mr *mr, void *ctx)
{
    fm_ofi_tp *t = fm_ofi_tp_of(tp);
    fm_ofi_op *op = NULL;
    int rc = FM_OK;
    ssize_t ret;

    FM_CHECK((unsigned)dest < (unsigned)t->nranks, FM_ERR_RANK,
             "ofi %s: send to rank %d of %d connected", tp->info.provider, dest, t->nranks);
    FM_CHECK(len <= tp->info.max_msg_size, FM_ERR_TOO_LONG,
             "ofi %s: send of %zu bytes, max_msg_size %zu", tp->info.provider, len,
             tp->info.max_msg_size);
    FM_CHECK(mr || !t->needs_mr || len < t->inject_end, FM_ERR_INVALID,
             "ofi %s: send of %zu bytes without a registration (provider needs FI_MR_LOCAL)",
             tp->info.provider, len);
    op = fm_ofi_op_get(t);
    FM_CHECK(op, FM_ERR_NOMEM, "ofi %s: no memory for a send descriptor", tp->info.provider);
    op->kind = FM_TP_SEND_DONE;
    op->ctx = ctx;
    op->buf = (void *)buf;
    op->len = len;
    op->desc = fm_ofi_desc(mr);
    op->dest = dest;
    /* Behind earlier refused sends, to keep the order. */
    ret = t->sendq.head ? -FI_EAGAIN : fm_ofi_post_send(t, op);
    if (fm_ofi_unlikely(ret == -FI_EAGAIN)) {
        fm_ofi_q_push(&t->sendq, op);
        t->stats.send_queued++;
        return FM_OK;
    }
    FM_CHECK(ret == 0, FM_ERR_PROVIDER, "ofi %s: send of %zu bytes to rank %d: %s (%zd)",
             tp->info.provider, len, dest, fi_strerror((int)-ret), ret);
    return FM_OK;
error:
    if (op)
        fm_ofi_op_put(t, op);
    return rc;
}

int fm_ofi_post_recv(fm_tp *tp, void *buf, size_t len, fm_tp_mr *mr, void *ctx)
{
    fm_ofi_tp *t = fm_ofi_tp_of(tp);
    fm_ofi_op *op = NULL;
    int rc = FM_OK;
    ssize_t ret;

    FM_CHECK(mr || !t->needs_mr, FM_ERR_INVALID,
             "ofi %s: receive buffer without a registration (provider needs FI_MR_LOCAL)",
             tp->info.provider);
    op = fm_ofi_op_get(t);
    FM_CHECK(op, FM_ERR_NOMEM, "ofi %s: no memory for a receive descriptor", tp->info.provider);
    op->kind = FM_TP_RECV_DONE;
    op->ctx = ctx;
    op->buf = buf;
    op->len = len;
    op->desc = fm_ofi_desc(mr);
    op->dest = -1;
    ret = t->recvq.head ? -FI_EAGAIN : fm_ofi_post_recv_op(t, op);
    if (fm_ofi_unlikely(ret == -FI_EAGAIN)) {
        fm_ofi_q_push(&t->recvq, op);
        t->stats.recv_queued++;
        return FM_OK;
    }
    FM_CHECK(ret == 0, FM_ERR_PROVIDER, "ofi %s: posting a %zu-byte receive: %s (%zd)",
             tp->info.provider, len, fi_strerror((int)-ret), ret);
    return FM_OK;
error:
    if (op)
        fm_ofi_op_put(t, op);
    return rc;
}

/* A queued op the provider rejected for good: complete it with an error so the caller gets
 * its buffer back. */
static void fm_ofi_fail(fm_ofi_tp *t, fm_ofi_op *op, ssize_t ret)
{
    if (op->kind == FM_TP_SEND_DONE)
        fm_log(0, "ofi %s: retried send of %zu bytes to rank %d: %s (%zd)", t->base.info.provider,
               op->len, op->dest, fi_strerror((int)-ret), ret);
    else
        fm_log(0, "ofi %s: retried %zu-byte receive: %s (%zd)", t->base.info.provider, op->len,
               fi_strerror((int)-ret), ret);
    op->status = FM_ERR_PROVIDER;
    fm_ofi_q_push(&t->doneq, op);
}

static void fm_ofi_retry_sends(fm_ofi_tp *t)
{
    fm_ofi_op *op;

    /* Popped before posting: a successful inject reuses op->next for doneq. */
    while ((op = fm_ofi_q_pop(&t->sendq)) != NULL) {
        ssize_t ret = fm_ofi_post_send(t, op);
        if (ret == -FI_EAGAIN) {
            fm_ofi_q_push_front(&t->sendq, op); /* order matters */
            return;
        }
        if (ret != 0)
            fm_ofi_fail(t, op, ret);
    }
}

static void fm_ofi_retry_recvs(fm_ofi_tp *t)
{
    fm_ofi_op *op;

    while ((op = t->recvq.head) != NULL) {
        ssize_t ret = fm_ofi_post_recv_op(t, op);
        if (ret == -FI_EAGAIN)
            return;
        fm_ofi_q_pop(&t->recvq);
        if (ret != 0)
            fm_ofi_fail(t, op, ret);
    }
}

void fm_ofi_retry(fm_ofi_tp *t)
{
    if (t->sendq.head)
        fm_ofi_retry_sends(t);
    if (t->recvq.head)
        fm_ofi_retry_recvs(t);
}
