/* SPDX-License-Identifier: BSD-3-Clause */
/* Posting sends and receives. Small sends go by fi_inject (no CQ entry; we queue the
 * SEND_DONE ourselves so every send still gets exactly one); larger ones by fi_send; tagged
 * ones (the zero-copy path for large pieces) by fi_tsend / fi_trecv. What the provider
 * refuses with -FI_EAGAIN waits in a FIFO and is retried from poll, so a post never spins and
 * sends keep their order. */
#include "ofi_internal.h"

#include <string.h>

#include "fastmsg.h"
#include "log.h"

static inline void *fm_ofi_desc(fm_tp_mr *mr)
{
    return mr ? fi_mr_desc((struct fid_mr *)mr) : NULL;
}

/* A two-part send: joined and injected when small, else gathered by fi_sendv. */
static ssize_t fm_ofi_post_sendv(fm_ofi_tp *t, fm_ofi_op *op)
{
    size_t total = op->len + op->len2;
    if (total < t->inject_end && total <= FM_OFI_JOIN_MAX) {
        unsigned char joined[FM_OFI_JOIN_MAX];
        memcpy(joined, op->buf, op->len);
        memcpy(joined + op->len, op->buf2, op->len2);
        ssize_t ret = fi_inject(t->ep, joined, total, (fi_addr_t)op->dest);
        if (ret == 0) {
            op->status = FM_OK;
            fm_ofi_q_push(&t->doneq, op);
        }
        return ret;
    }
    struct iovec iov[2] = {{op->buf, op->len}, {op->buf2, op->len2}};
    void *desc[2] = {op->desc, op->desc2};
    return fi_sendv(t->ep, iov, desc, 2, (fi_addr_t)op->dest, op);
}

/* 0, -FI_EAGAIN, or another libfabric error. */
static inline ssize_t fm_ofi_post_send(fm_ofi_tp *t, fm_ofi_op *op)
{
    if (fm_ofi_unlikely(op->buf2 != NULL))
        return fm_ofi_post_sendv(t, op);
    if (op->kind == FM_TP_TSEND_DONE)
        return fi_tsend(t->ep, op->buf, op->len, op->desc, (fi_addr_t)op->dest, op->tag, op);
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

/* A multi-receive region: one fi_recvmsg with FI_MULTI_RECV; it completes once per message
 * and once more (or with the last message) when the provider releases it. */
static ssize_t fm_ofi_post_region(fm_ofi_tp *t, fm_ofi_op *op)
{
    struct iovec iov = {op->buf, op->len};
    struct fi_msg msg = {
        .msg_iov = &iov, .desc = &op->desc, .iov_count = 1, .addr = FI_ADDR_UNSPEC, .context = op};
    return fi_recvmsg(t->ep, &msg, FI_MULTI_RECV | FI_COMPLETION);
}

static inline ssize_t fm_ofi_post_recv_op(fm_ofi_tp *t, fm_ofi_op *op)
{
    if (op->kind == FM_TP_TRECV_DONE)
        return fi_trecv(t->ep, op->buf, op->len, op->desc, FI_ADDR_UNSPEC, op->tag, 0, op);
    if (fm_ofi_unlikely(op->kind == FM_TP_RECV_REGION_DONE))
        return fm_ofi_post_region(t, op);
    return fi_recv(t->ep, op->buf, op->len, op->desc, FI_ADDR_UNSPEC, op);
}

/* Checks shared by every send; FM_OK or an error code (logged). */
static int fm_ofi_send_check(fm_ofi_tp *t, int dest, size_t len, fm_tp_mr *mr, size_t no_mr_below)
{
    const char *prov = t->base.info.provider;
    int rc = FM_OK;

    FM_CHECK((unsigned)dest < (unsigned)t->nranks, FM_ERR_RANK,
             "ofi %s: send to rank %d of %d connected", prov, dest, t->nranks);
    FM_CHECK(len <= t->base.info.max_msg_size, FM_ERR_TOO_LONG,
             "ofi %s: send of %zu bytes, max_msg_size %zu", prov, len, t->base.info.max_msg_size);
    FM_CHECK(mr || !t->needs_mr || len < no_mr_below, FM_ERR_INVALID,
             "ofi %s: send of %zu bytes without a registration (provider needs FI_MR_LOCAL)", prov,
             len);
error:
    return rc;
}

/* A fresh op for one send or receive, or NULL (logged). */
static fm_ofi_op *fm_ofi_op_new(fm_ofi_tp *t, int kind, void *buf, size_t len, fm_tp_mr *mr,
                                int dest, uint64_t tag, void *ctx)
{
    fm_ofi_op *op = fm_ofi_op_get(t);
    if (!op) {
        fm_log(0, "ofi %s: no memory for an operation descriptor", t->base.info.provider);
        return NULL;
    }
    op->kind = kind;
    op->ctx = ctx;
    op->buf = buf;
    op->len = len;
    op->desc = fm_ofi_desc(mr);
    op->buf2 = NULL;
    op->dest = dest;
    op->tag = tag;
    return op;
}

/* Post op behind earlier refused sends (to keep the order), or queue it. */
static int fm_ofi_start_send(fm_ofi_tp *t, fm_ofi_op *op)
{
    ssize_t ret = t->sendq.head ? -FI_EAGAIN : fm_ofi_post_send(t, op);
    int rc = FM_OK;

    if (fm_ofi_unlikely(ret == -FI_EAGAIN)) {
        fm_ofi_q_push(&t->sendq, op);
        t->stats.send_queued++;
        t->base.refused++;
        return FM_OK;
    }
    FM_CHECK(ret == 0, FM_ERR_PROVIDER, "ofi %s: %s of %zu bytes to rank %d: %s (%zd)",
             t->base.info.provider, fm_ofi_call(t, op), op->len + (op->buf2 ? op->len2 : 0),
             op->dest, fi_strerror((int)-ret), ret);
    return FM_OK;
error:
    fm_ofi_op_put(t, op);
    return rc;
}

/* shm refuses a receive beyond its queue (rx_attr.size) with -FI_ENOMEM: say so. */
static const char *fm_ofi_rx_full(const fm_ofi_tp *t, ssize_t ret)
{
    static char why[96];
    if (ret != -FI_ENOMEM)
        return "";
    snprintf(why, sizeof why, "; its receive queue holds %zu (rx_attr.size)",
             t->info->rx_attr->size);
    return why;
}

static int fm_ofi_start_recv(fm_ofi_tp *t, fm_ofi_op *op)
{
    ssize_t ret = t->recvq.head ? -FI_EAGAIN : fm_ofi_post_recv_op(t, op);
    int rc = FM_OK;

    if (fm_ofi_unlikely(ret == -FI_EAGAIN)) {
        fm_ofi_q_push(&t->recvq, op);
        t->stats.recv_queued++;
        t->base.refused++;
        return FM_OK;
    }
    FM_CHECK(ret == 0, FM_ERR_PROVIDER, "ofi %s: %s of a %zu-byte buffer: %s (%zd)%s",
             t->base.info.provider, fm_ofi_call(t, op), op->len, fi_strerror((int)-ret), ret,
             fm_ofi_rx_full(t, ret));
    return FM_OK;
error:
    fm_ofi_op_put(t, op);
    return rc;
}

int fm_ofi_send(fm_tp *tp, int dest, const void *buf, size_t len, fm_tp_mr *mr, void *ctx)
{
    fm_ofi_tp *t = fm_ofi_tp_of(tp);
    /* The common small packet: injected at once, no op and no completion to hand back (an
     * inject needs no registration and is within max_msg_size). */
    if (len < t->inject_end && (unsigned)dest < (unsigned)t->nranks && !t->sendq.head &&
        fi_inject(t->ep, buf, len, (fi_addr_t)dest) == 0)
        return FM_TP_SENT;
    int rc = fm_ofi_send_check(t, dest, len, mr, t->inject_end);
    if (rc)
        return rc;
    fm_ofi_op *op = fm_ofi_op_new(t, FM_TP_SEND_DONE, (void *)buf, len, mr, dest, 0, ctx);
    return op ? fm_ofi_start_send(t, op) : FM_ERR_NOMEM;
}

int fm_ofi_sendv(fm_tp *tp, int dest, const void *hdr, size_t hlen, fm_tp_mr *hmr,
                 const void *payload, size_t plen, fm_tp_mr *pmr, void *ctx)
{
    fm_ofi_tp *t = fm_ofi_tp_of(tp);
    int rc = fm_ofi_send_check(t, dest, hlen + plen, hmr && pmr ? hmr : NULL, t->inject_end);
    if (rc)
        return rc;
    if (plen == 0) /* nothing to gather */
        return fm_ofi_send(tp, dest, hdr, hlen, hmr, ctx);
    /* Small: joined on the stack and injected at once, as fm_ofi_send does. */
    size_t total = hlen + plen;
    if (total < t->inject_end && total <= FM_OFI_JOIN_MAX && !t->sendq.head) {
        unsigned char joined[FM_OFI_JOIN_MAX];
        memcpy(joined, hdr, hlen);
        memcpy(joined + hlen, payload, plen);
        if (fi_inject(t->ep, joined, total, (fi_addr_t)dest) == 0)
            return FM_TP_SENT;
    }
    fm_ofi_op *op = fm_ofi_op_new(t, FM_TP_SEND_DONE, (void *)hdr, hlen, hmr, dest, 0, ctx);
    if (!op)
        return FM_ERR_NOMEM;
    op->buf2 = (void *)payload;
    op->len2 = plen;
    op->desc2 = fm_ofi_desc(pmr);
    return fm_ofi_start_send(t, op);
}

int fm_ofi_tsend(fm_tp *tp, int dest, const void *buf, size_t len, fm_tp_mr *mr, uint64_t tag,
                 void *ctx)
{
    fm_ofi_tp *t = fm_ofi_tp_of(tp);
    int rc = fm_ofi_send_check(t, dest, len, mr, 0);
    if (rc)
        return rc;
    fm_ofi_op *op = fm_ofi_op_new(t, FM_TP_TSEND_DONE, (void *)buf, len, mr, dest, tag, ctx);
    return op ? fm_ofi_start_send(t, op) : FM_ERR_NOMEM;
}

int fm_ofi_post_recv(fm_tp *tp, void *buf, size_t len, fm_tp_mr *mr, void *ctx)
{
    fm_ofi_tp *t = fm_ofi_tp_of(tp);
    if (!mr && t->needs_mr) {
        fm_log(0, "ofi %s: receive buffer without a registration (provider needs FI_MR_LOCAL)",
               tp->info.provider);
        return FM_ERR_INVALID;
    }
    fm_ofi_op *op = fm_ofi_op_new(t, FM_TP_RECV_DONE, buf, len, mr, -1, 0, ctx);
    return op ? fm_ofi_start_recv(t, op) : FM_ERR_NOMEM;
}

int fm_ofi_post_recv_multi(fm_tp *tp, void *buf, size_t len, fm_tp_mr *mr, void *ctx)
{
    fm_ofi_tp *t = fm_ofi_tp_of(tp);
    const char *prov = tp->info.provider;
    int rc = FM_OK;

    FM_CHECK(t->multi_recv, FM_ERR_INVALID,
             "ofi %s: post_recv_multi without multi-receive regions (info.multi_recv is 0)", prov);
    FM_CHECK(mr || !t->needs_mr, FM_ERR_INVALID,
             "ofi %s: receive region without a registration (provider needs FI_MR_LOCAL)", prov);
    FM_CHECK(len >= t->multi_recv_min, FM_ERR_INVALID,
             "ofi %s: a %zu-byte receive region, smaller than its release threshold %zu", prov, len,
             t->multi_recv_min);
    fm_ofi_op *op = fm_ofi_op_new(t, FM_TP_RECV_REGION_DONE, buf, len, mr, -1, 0, ctx);
    return op ? fm_ofi_start_recv(t, op) : FM_ERR_NOMEM;
error:
    return rc;
}

int fm_ofi_trecv(fm_tp *tp, int src, void *buf, size_t len, fm_tp_mr *mr, uint64_t tag, void *ctx)
{
    fm_ofi_tp *t = fm_ofi_tp_of(tp);
    (void)src; /* the tag alone matches: the receiver chose it */
    if (!mr && t->needs_mr) {
        fm_log(0, "ofi %s: receive buffer without a registration (provider needs FI_MR_LOCAL)",
               tp->info.provider);
        return FM_ERR_INVALID;
    }
    fm_ofi_op *op = fm_ofi_op_new(t, FM_TP_TRECV_DONE, buf, len, mr, -1, tag, ctx);
    return op ? fm_ofi_start_recv(t, op) : FM_ERR_NOMEM;
}

/* A queued op the provider rejected for good: complete it with an error so the caller gets
 * its buffer back. */
static void fm_ofi_fail(fm_ofi_tp *t, fm_ofi_op *op, ssize_t ret)
{
    if (fm_ofi_is_send(op))
        fm_log(0, "ofi %s: %s of %zu bytes to rank %d (retried): %s (%zd)", t->base.info.provider,
               fm_ofi_call(t, op), op->len + (op->buf2 ? op->len2 : 0), op->dest,
               fi_strerror((int)-ret), ret);
    else
        fm_log(0, "ofi %s: %s of a %zu-byte buffer (retried): %s (%zd)%s", t->base.info.provider,
               fm_ofi_call(t, op), op->len, fi_strerror((int)-ret), ret, fm_ofi_rx_full(t, ret));
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
