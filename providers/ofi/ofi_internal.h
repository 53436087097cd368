/* SPDX-License-Identifier: BSD-3-Clause */
/* State of the libfabric transport, shared by the providers/ofi files, and the op pool and
 * queues its packet path uses (inline: they run once per packet). */
#ifndef FM_OFI_INTERNAL_H
#define FM_OFI_INTERNAL_H

#include "transport.h"

#include <stdint.h>
#include <stdio.h>

/* SimGrid's SMPI builds (bench/sim) make getopt a three-argument macro; libfabric has an op
 * of that name with five. */
#undef getopt
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

/* The oldest API meson accepts; pinned so newer libraries keep the semantics we tested. */
#define FM_OFI_API FI_VERSION(1, 14)

#define fm_ofi_unlikely(x) __builtin_expect(!!(x), 0)

#define FM_OFI_XSTR(x) #x
#define FM_OFI_STR(x)  FM_OFI_XSTR(x)

/* libfabric 1.17's shm, from its source (prov/shm/src/smr.h, include/ofi_mem.h): */
/* An address vector holds at most SMR_MAX_PEERS addresses, this endpoint's own included; a
 * region has that many peer slots. A compile-time constant: no setting raises it. */
#define FM_OFI_SHM_MAX_PEERS 256
/* Receives an endpoint can have posted, FI_SHM_RX_SIZE (rx_attr.size): 1024 by default; one
 * more fails with -FI_ENOMEM. Raised when the caller needs more (fm_ofi_select). */
#define FM_OFI_SHM_RX_DEFAULT 1024
/* Its region's free stacks index entries with int16_t: FI_SHM_RX_SIZE=65536 crashes the
 * endpoint (seen), 32768 works. */
#define FM_OFI_SHM_RX_MAX 32768
/* tcp;ofi_rxm's receive queue, FI_OFI_RXM_RX_SIZE (each of its untagged and tagged queues);
 * beyond it fi_recv returns -FI_EAGAIN (queued and retried, not fatal). */
#define FM_OFI_RXM_RX_DEFAULT 2048
/* rxm's shared receive queue, FI_OFI_RXM_MSG_RX_SIZE, is 4096 buffers of 16 KiB by default:
 * each tcp;ofi_rxm process here has a peak RSS of 93 MB with it, 43 MB at 1024 or fewer, and
 * 256 ranks on this 24 GB host ran out of memory. More ranks than FM_OFI_RXM_CROWD on one
 * host get FM_OFI_RXM_CROWD_SRX buffers (unless FI_OFI_RXM_MSG_RX_SIZE is set). */
#define FM_OFI_RXM_CROWD     64
#define FM_OFI_RXM_CROWD_SRX "1024"

/* The reason goes into fm_ofi_open's err buffer (transport.h). */
#define FM_OFI_CHECK FM_TP_CHECK

/* One outstanding send or receive. The fi_context2 comes first so that the op itself is the
 * context libfabric owns in FI_CONTEXT/FI_CONTEXT2 mode and hands back in the CQ entry. */
typedef struct fm_ofi_op {
    struct fi_context2 fctx;
    struct fm_ofi_op *next;
    void *ctx; /* the caller's */
    void *buf;
    size_t len;
    void *desc;
    void *buf2; /* sendv: the second part (payload), NULL otherwise */
    size_t len2;
    void *desc2;
    uint64_t tag; /* tagged ops */
    int dest;
    int kind; /* an fm_tp_event_kind: which call posted it (REGION_DONE: post_recv_multi) */
    int status;
} fm_ofi_op;

/* Intrusive FIFO through fm_ofi_op.next. */
typedef struct fm_ofi_queue {
    fm_ofi_op *head;
    fm_ofi_op *tail;
} fm_ofi_queue;

/* Ops come from chunks that live until close, so steady state allocates nothing. */
typedef struct fm_ofi_chunk {
    struct fm_ofi_chunk *next;
    fm_ofi_op ops[];
} fm_ofi_chunk;

/* Counters of the rare paths, for tests and diagnostics. */
typedef struct fm_ofi_stats {
    uint64_t send_queued; /* sends the provider refused with -FI_EAGAIN */
    uint64_t recv_queued; /* receives refused with -FI_EAGAIN */
    uint64_t cq_errors;   /* error completions */
    uint64_t chunks;      /* op chunks allocated */
} fm_ofi_stats;

typedef struct fm_ofi_tp {
    fm_tp base; /* first: fm_tp * and fm_ofi_tp * convert both ways */
    /* Hot fields together. */
    struct fid_ep *ep;
    struct fid_cq *cq;
    size_t inject_end; /* sends shorter than this go by fi_inject; 0: never */
    int nranks;        /* 0 until connect */
    int needs_mr;
    int multi_recv; /* FI_MULTI_RECV asked and granted: the CQ has FI_CQ_FORMAT_DATA entries */
    fm_ofi_op *free;
    fm_ofi_queue sendq; /* refused sends, retried in order from poll */
    fm_ofi_queue recvq; /* refused receives, retried from poll */
    fm_ofi_queue doneq; /* completions made by us (fi_inject, failed retries) */
    /* Setup and teardown. */
    int wait_fd; /* -1: the provider has none */
    uint64_t mr_key;
    size_t multi_recv_min; /* FI_OPT_MIN_MULTI_RECV set on the endpoint (when multi_recv) */
    size_t chunk_ops;
    fm_ofi_chunk *chunks;
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    fm_ofi_stats stats;
} fm_ofi_tp;

/* Sends (untagged or tagged) as opposed to receives, for retries and error reports. */
static inline int fm_ofi_is_send(const fm_ofi_op *op)
{
    return op->kind == FM_TP_SEND_DONE || op->kind == FM_TP_TSEND_DONE;
}

/* Largest two-part message joined on the stack for fi_inject. */
#define FM_OFI_JOIN_MAX 4160

/* The libfabric call that posts op (ofi_send.c's choice), so that every error names it. */
static inline const char *fm_ofi_call(const fm_ofi_tp *t, const fm_ofi_op *op)
{
    size_t total = op->len + (op->buf2 ? op->len2 : 0);
    switch (op->kind) {
    case FM_TP_TSEND_DONE:
        return "fi_tsend";
    case FM_TP_TRECV_DONE:
        return "fi_trecv";
    case FM_TP_RECV_DONE:
        return "fi_recv";
    case FM_TP_RECV_REGION_DONE:
        return "fi_recvmsg(FI_MULTI_RECV)";
    }
    if (total < t->inject_end && (!op->buf2 || total <= FM_OFI_JOIN_MAX))
        return "fi_inject";
    return op->buf2 ? "fi_sendv" : "fi_send";
}

static inline fm_ofi_tp *fm_ofi_tp_of(fm_tp *tp)
{
    return (fm_ofi_tp *)tp;
}

static inline void fm_ofi_q_push(fm_ofi_queue *q, fm_ofi_op *op)
{
    op->next = NULL;
    if (q->tail)
        q->tail->next = op;
    else
        q->head = op;
    q->tail = op;
}

static inline void fm_ofi_q_push_front(fm_ofi_queue *q, fm_ofi_op *op)
{
    op->next = q->head;
    q->head = op;
    if (!q->tail)
        q->tail = op;
}

static inline fm_ofi_op *fm_ofi_q_pop(fm_ofi_queue *q)
{
    fm_ofi_op *op = q->head;
    if (op) {
        q->head = op->next;
        if (!q->head)
            q->tail = NULL;
    }
    return op;
}

/* Add one chunk of ops to the free list; FM_OK or FM_ERR_NOMEM. */
int fm_ofi_pool_grow(fm_ofi_tp *t);
void fm_ofi_pool_fini(fm_ofi_tp *t);

static inline fm_ofi_op *fm_ofi_op_get(fm_ofi_tp *t)
{
    if (fm_ofi_unlikely(!t->free) && fm_ofi_pool_grow(t) != 0)
        return NULL;
    fm_ofi_op *op = t->free;
    t->free = op->next;
    return op;
}

static inline void fm_ofi_op_put(fm_ofi_tp *t, fm_ofi_op *op)
{
    op->next = t->free;
    t->free = op;
}

/* ofi_transport.c */
int fm_ofi_open(const fm_tp_config *cfg, fm_tp **tp, char *err, size_t errlen);

/* ofi_select.c: map cfg->provider, pin the environment, fi_getinfo. */
/* Whether multi-receive regions carry messages of up to len bytes on provider prov. */
int fm_ofi_multi_recv_fits(const char *prov, size_t len);
int fm_ofi_select(const fm_tp_config *cfg, struct fi_info **info, char *err, size_t errlen);
/* 1 when FM_PROVIDER value provider means libfabric's shm (the default). */
int fm_ofi_is_shm(const char *provider);

/* ofi_resources.c: open fabric, domain, CQ (with a wait fd if want_fd and the provider has
 * one), AV and endpoint for t->info; close them all. */
int fm_ofi_resources_open(fm_ofi_tp *t, int want_fd, char *err, size_t errlen);
void fm_ofi_resources_close(fm_ofi_tp *t);

/* ofi_addr.c */
int fm_ofi_addr(fm_tp *tp, void *buf, size_t *len);
int fm_ofi_connect(fm_tp *tp, const void *addrs, size_t addrlen, int n);
int fm_ofi_mem_reg(fm_tp *tp, void *buf, size_t len, fm_tp_mr **mr);
void fm_ofi_mem_dereg(fm_tp *tp, fm_tp_mr *mr);

/* ofi_send.c */
int fm_ofi_send(fm_tp *tp, int dest, const void *buf, size_t len, fm_tp_mr *mr, void *ctx);
int fm_ofi_post_recv(fm_tp *tp, void *buf, size_t len, fm_tp_mr *mr, void *ctx);
int fm_ofi_post_recv_multi(fm_tp *tp, void *buf, size_t len, fm_tp_mr *mr, void *ctx);
int fm_ofi_sendv(fm_tp *tp, int dest, const void *hdr, size_t hlen, fm_tp_mr *hmr,
                 const void *payload, size_t plen, fm_tp_mr *pmr, void *ctx);
int fm_ofi_tsend(fm_tp *tp, int dest, const void *buf, size_t len, fm_tp_mr *mr, uint64_t tag,
                 void *ctx);
int fm_ofi_trecv(fm_tp *tp, int src, void *buf, size_t len, fm_tp_mr *mr, uint64_t tag, void *ctx);
/* Re-post refused sends and receives in order; a send that fails for good becomes an error
 * completion in doneq. */
void fm_ofi_retry(fm_ofi_tp *t);

/* ofi_poll.c */
int fm_ofi_poll(fm_tp *tp, fm_tp_event *ev, int max);
/* The same for a CQ of FI_CQ_FORMAT_DATA entries (multi_recv): they say where a message
 * landed in a region and when the region was released. */
int fm_ofi_poll_data(fm_tp *tp, fm_tp_event *ev, int max);
int fm_ofi_wait_fd(fm_tp *tp);
int fm_ofi_trywait(fm_tp *tp);

/* ofi_signals.c: reset signals still handled by libinfinipath (see there) to SIG_DFL. */
void fm_ofi_restore_signals(void);

/* The transport's counters (tests, diagnostics). */
const fm_ofi_stats *fm_ofi_stats_of(const fm_tp *tp);

#endif
