/* SPDX-License-Identifier: BSD-3-Clause */
/* Tagged messages, the runtime's zero-copy path for large pieces: a single copy across
 * processes. tsend announces the buffer (an RTS record: tag, address, length); the receiver
 * matches it with the receive posted under that tag and reads the bytes straight from the
 * sender's memory with process_vm_readv (cross-memory attach), then answers with a FIN record,
 * which completes the send. The runtime posts its receive before the sender starts (zcopy.c),
 * so an RTS nearly always finds it; one that does not waits in the unexpected list.
 * process_vm_readv needs the right to ptrace the sender, as pidfd_getfd does: connect tries it
 * on every peer and reports tagged only where it works everywhere. */
#include "sm_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "fastmsg.h"
#include "log.h"

typedef struct fm_sm_tsend_op {
    struct fm_sm_tsend_op *next;
    uint64_t id;
    int dest;
    const void *buf;
    size_t len;
    void *ctx;
} fm_sm_tsend_op;

typedef struct fm_sm_trecv_op {
    struct fm_sm_trecv_op *next;
    uint64_t tag;
    void *buf;
    size_t len;
    void *ctx;
} fm_sm_trecv_op;

typedef struct fm_sm_unexp {
    struct fm_sm_unexp *next;
    int src;
    fm_sm_rts rts;
} fm_sm_unexp;

int fm_sm_tsend(fm_tp *tp, int dest, const void *buf, size_t len, fm_tp_mr *mr, uint64_t tag,
                void *ctx)
{
    fm_sm_tp *t = fm_sm_of(tp);
    (void)mr;
    if (!t->base.info.tagged || !t->peers || dest < 0 || dest >= t->n || (len && !buf))
        return FM_ERR_INVALID;
    fm_sm_tsend_op *s = malloc(sizeof *s);
    if (!s)
        return FM_ERR_NOMEM;
    *s = (fm_sm_tsend_op){
        .next = t->tsends, .id = ++t->next_id, .dest = dest, .buf = buf, .len = len, .ctx = ctx};
    fm_sm_rts rts = {.tag = tag, .addr = (uint64_t)(uintptr_t)buf, .len = len, .id = s->id};
    int rc = fm_sm_send_ctl(t, dest, FM_SM_REC_RTS, &rts, sizeof rts);
    if (rc) {
        free(s);
        return rc;
    }
    t->tsends = s;
    return FM_OK;
}

/* len bytes from pid's addr into buf, in as many calls as the kernel wants. */
static int cma_read(int pid, void *buf, uint64_t addr, size_t len)
{
    size_t done = 0;
    while (done < len) {
        struct iovec l = {(char *)buf + done, len - done};
        struct iovec r = {(void *)(uintptr_t)(addr + done), len - done};
        ssize_t n = process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            return n < 0 && errno == ESRCH ? FM_ERR_PEER : FM_ERR_PROVIDER;
        }
        done += (size_t)n;
    }
    return FM_OK;
}

/* An announced send meets its receive: read, complete the receive, answer the sender. */
static void complete(fm_sm_tp *t, int src, const fm_sm_rts *rts, fm_sm_trecv_op *r, fm_tp_event *e)
{
    int status = rts->len > r->len
                     ? FM_ERR_TOO_LONG
                     : cma_read(t->peers[src].hdr->pid, r->buf, rts->addr, (size_t)rts->len);
    if (status == FM_ERR_PROVIDER)
        fm_log(0, "sm: reading %llu bytes from rank %d: %s", (unsigned long long)rts->len, src,
               strerror(errno));
    *e = (fm_tp_event){.kind = FM_TP_TRECV_DONE,
                       .status = status,
                       .ctx = r->ctx,
                       .buf = r->buf,
                       .len = status == FM_OK ? (size_t)rts->len : 0};
    fm_sm_fin fin = {.id = rts->id, .status = status};
    if (fm_sm_send_ctl(t, src, FM_SM_REC_FIN, &fin, sizeof fin) != FM_OK)
        fm_log(0, "sm: no memory to answer rank %d's tagged send: it will wait", src);
    free(r);
}

/* The posted receive for tag, taken off the list, or NULL. */
static fm_sm_trecv_op *take_trecv(fm_sm_tp *t, uint64_t tag)
{
    for (fm_sm_trecv_op **pp = &t->trecvs; *pp; pp = &(*pp)->next)
        if ((*pp)->tag == tag) {
            fm_sm_trecv_op *r = *pp;
            *pp = r->next;
            return r;
        }
    return NULL;
}

int fm_sm_trecv(fm_tp *tp, int src, void *buf, size_t len, fm_tp_mr *mr, uint64_t tag, void *ctx)
{
    fm_sm_tp *t = fm_sm_of(tp);
    (void)mr;
    (void)src; /* the tag alone matches: the receiver chose it */
    if (!t->base.info.tagged || (len && !buf))
        return FM_ERR_INVALID;
    fm_sm_trecv_op *r = malloc(sizeof *r);
    if (!r)
        return FM_ERR_NOMEM;
    *r = (fm_sm_trecv_op){.next = t->trecvs, .tag = tag, .buf = buf, .len = len, .ctx = ctx};
    t->trecvs = r;
    return FM_OK;
}

/* An RTS record from src: 1 with the receive's event, 0 when it waits for its receive. */
int fm_sm_on_rts(fm_sm_tp *t, int src, const unsigned char *body, fm_tp_event *e)
{
    fm_sm_rts rts;
    memcpy(&rts, body, sizeof rts);
    fm_sm_trecv_op *r = take_trecv(t, rts.tag);
    if (r) {
        complete(t, src, &rts, r, e);
        return 1;
    }
    fm_sm_unexp *u = malloc(sizeof *u);
    if (!u)
        return -1; /* left in the ring: tried again later */
    *u = (fm_sm_unexp){.next = t->unexp, .src = src, .rts = rts};
    t->unexp = u;
    return 0;
}

/* Announcements that came before their receive, now matched. */
int fm_sm_unexpected(fm_sm_tp *t, fm_tp_event *ev, int max)
{
    int n = 0;
    for (fm_sm_unexp **pp = &t->unexp; *pp && n < max;) {
        fm_sm_unexp *u = *pp;
        fm_sm_trecv_op *r = take_trecv(t, u->rts.tag);
        if (!r) {
            pp = &u->next;
            continue;
        }
        complete(t, u->src, &u->rts, r, &ev[n++]);
        *pp = u->next;
        free(u);
    }
    return n;
}

/* A FIN from src: its send's event; -2 when it names no send of ours to src (malformed). */
int fm_sm_on_fin(fm_sm_tp *t, int src, const unsigned char *body, fm_tp_event *e)
{
    fm_sm_fin fin;
    memcpy(&fin, body, sizeof fin);
    for (fm_sm_tsend_op **pp = &t->tsends; *pp; pp = &(*pp)->next) {
        fm_sm_tsend_op *s = *pp;
        if (s->id != fin.id || s->dest != src)
            continue;
        *e = (fm_tp_event){.kind = FM_TP_TSEND_DONE,
                           .status = fin.status == FM_OK ? FM_OK : FM_ERR_PROVIDER,
                           .ctx = s->ctx,
                           .buf = (void *)s->buf,
                           .len = s->len};
        *pp = s->next;
        free(s);
        return 1;
    }
    return -2;
}

/* Whether every peer's memory can be read (its segment's header, where it mapped it). */
int fm_sm_cma_probe(fm_sm_tp *t)
{
    for (int r = 0; r < t->n; r++) {
        fm_sm_peer *p = &t->peers[r];
        uint64_t magic = 0;
        if (p->base == t->seg)
            continue;
        if (cma_read(p->hdr->pid, &magic, p->hdr->self_addr, sizeof magic) != FM_OK ||
            magic != FM_SM_MAGIC) {
            fm_log(1,
                   "sm: cannot read rank %d's memory (%s): no single-copy path for large "
                   "pieces",
                   r, strerror(errno));
            return 0;
        }
    }
    return 1;
}

void fm_sm_tagged_free(fm_sm_tp *t)
{
    while (t->tsends) {
        fm_sm_tsend_op *s = t->tsends->next;
        free(t->tsends);
        t->tsends = s;
    }
    while (t->trecvs) {
        fm_sm_trecv_op *r = t->trecvs->next;
        free(t->trecvs);
        t->trecvs = r;
    }
    while (t->unexp) {
        fm_sm_unexp *u = t->unexp->next;
        free(t->unexp);
        t->unexp = u;
    }
}
