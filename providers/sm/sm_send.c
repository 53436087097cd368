/* SPDX-License-Identifier: BSD-3-Clause */
/* Sending: a packet goes into this rank's ring in the receiver's segment, inline when it is
 * small, else piece by piece through chunks of this rank's own pool (the receiver copies each
 * piece out while the next is written: large packets are pipelined). A send that finds the
 * ring or the pool full waits in its destination's queue, in order, and poll goes on with it
 * where it stopped. */
#include "sm_internal.h"

#include <stdlib.h>
#include <string.h>

#include "fastmsg.h"

/* Room for a record of need bytes at the tail; a record never wraps, so at the ring's end a
 * wrap record fills the rest of the lap first. */
static int ring_room(fm_sm_tp *t, fm_sm_peer *p, size_t need)
{
    const uint64_t ring = t->lay.ring_bytes;
    uint64_t off = p->tail & (ring - 1);
    uint64_t total = need + (off + need > ring ? ring - off : 0);
    if (p->tail + total - p->head_seen > ring) {
        p->head_seen =
            atomic_load_explicit(&fm_sm_ctl(&t->lay, p->base, t->rank)->head, memory_order_acquire);
        if (p->tail + total - p->head_seen > ring)
            return 0;
    }
    if (off + need > ring) {
        atomic_store_explicit(fm_sm_word_at(p->tx_ring + off),
                              fm_sm_word(p->seq++, FM_SM_REC_WRAP, 0), memory_order_release);
        p->tail += ring - off;
    }
    return 1;
}

static unsigned char *ring_tail(fm_sm_tp *t, fm_sm_peer *p)
{
    return p->tx_ring + (p->tail & (t->lay.ring_bytes - 1));
}

/* The record's payload is written: publish its first word (the reader acquires it). */
static void publish(fm_sm_peer *p, unsigned char *rec, unsigned kind, size_t len)
{
    atomic_store_explicit(fm_sm_word_at(rec), fm_sm_word(p->seq++, kind, (uint32_t)len),
                          memory_order_release);
    p->tail += fm_sm_rec_bytes(len);
}

/* A free chunk of this rank's pool, or -1. The acquire pairs with the receiver's release:
 * its copy out is over before the chunk is written again. */
static int chunk_alloc(fm_sm_tp *t)
{
    for (uint32_t i = 0; i < t->lay.nchunks; i++) {
        uint32_t c = (t->chunk_next + i) % t->lay.nchunks;
        fm_sm_chunk_flag *f = fm_sm_flag(&t->lay, t->seg, c);
        if (!atomic_load_explicit(&f->busy, memory_order_acquire)) {
            atomic_store_explicit(&f->busy, 1, memory_order_relaxed);
            t->chunk_next = c + 1;
            return (int)c;
        }
    }
    return -1;
}

/* Bytes [off, off + n) of hdr followed by pay, into dst. */
static void gather(unsigned char *dst, const unsigned char *hdr, size_t hlen,
                   const unsigned char *pay, size_t off, size_t n)
{
    if (off < hlen) {
        size_t h = hlen - off < n ? hlen - off : n;
        memcpy(dst, hdr + off, h);
        dst += h;
        off += h;
        n -= h;
    }
    if (n)
        memcpy(dst, pay + (off - hlen), n);
}

/* Moves as much of the packet as fits now; *done counts bytes already moved (chunks).
 * Returns 1 when the whole packet is in, 0 when it must wait. */
static int push(fm_sm_tp *t, fm_sm_peer *p, unsigned kind, const unsigned char *hdr, size_t hlen,
                const unsigned char *pay, size_t plen, size_t *done)
{
    size_t total = hlen + plen;
    if ((total <= t->inline_max || kind != FM_SM_REC_INLINE) && *done == 0) {
        if (!ring_room(t, p, fm_sm_rec_bytes(total)))
            return 0;
        unsigned char *rec = ring_tail(t, p);
        gather(rec + 8, hdr, hlen, pay, 0, total);
        publish(p, rec, kind, total);
        *done = total;
        return 1;
    }
    while (*done < total) {
        if (!ring_room(t, p, fm_sm_rec_bytes(sizeof(fm_sm_chunk_ref))))
            return 0;
        int c = chunk_alloc(t);
        if (c < 0)
            return 0;
        size_t n = total - *done < t->lay.chunk_bytes ? total - *done : t->lay.chunk_bytes;
        gather(fm_sm_chunk(&t->lay, t->seg, (uint32_t)c), hdr, hlen, pay, *done, n);
        fm_sm_chunk_ref ref = {(uint32_t)c, (uint32_t)n, (uint32_t)total, (uint32_t)*done};
        unsigned char *rec = ring_tail(t, p);
        memcpy(rec + 8, &ref, sizeof ref);
        publish(p, rec, FM_SM_REC_CHUNK, sizeof ref);
        *done += n;
    }
    return 1;
}

/* After publishing: the receiver may be asleep (the fence orders the record before the look
 * at its flag, against its store of the flag before its last look at the rings). */
static void wake(fm_sm_peer *p)
{
    atomic_thread_fence(memory_order_seq_cst);
    fm_sm_ring_bell(p, &p->hdr->sleeping);
}

static int start(fm_sm_tp *t, int dest, unsigned kind, const void *hdr, size_t hlen,
                 const void *pay, size_t plen, void *ctx)
{
    if (!t->peers || dest < 0 || dest >= t->n || (hlen && !hdr) || (plen && !pay))
        return FM_ERR_INVALID;
    if (hlen + plen > FM_SM_MAX_MSG)
        return FM_ERR_TOO_LONG;
    fm_sm_peer *p = &t->peers[dest];
    /* A descriptor ready before anything moves: a send that half went out must be queued. */
    if (!t->free_ops && !(t->free_ops = calloc(1, sizeof *t->free_ops)))
        return FM_ERR_NOMEM;
    size_t done = 0;
    if (!p->q_head) {
        int whole = push(t, p, kind, hdr, hlen, pay, plen, &done);
        if (whole || done)
            wake(p);
        if (whole)
            return FM_TP_SENT;
    }
    fm_sm_op *op = t->free_ops;
    t->free_ops = op->next;
    *op = (fm_sm_op){.dest = dest,
                     .kind = kind,
                     .hdr = hdr,
                     .hlen = hlen,
                     .pay = pay,
                     .plen = plen,
                     .done = done,
                     .ctx = ctx};
    if (kind != FM_SM_REC_INLINE) { /* a control record: its bytes are kept here */
        memcpy(op->own, pay, plen);
        op->pay = op->own;
    }
    if (!p->q_head)
        t->queued++;
    if (p->q_tail)
        p->q_tail->next = op;
    else
        p->q_head = op;
    p->q_tail = op;
    t->base.refused++;
    return FM_OK;
}

int fm_sm_send(fm_tp *tp, int dest, const void *buf, size_t len, fm_tp_mr *mr, void *ctx)
{
    (void)mr;
    return start(fm_sm_of(tp), dest, FM_SM_REC_INLINE, NULL, 0, buf, len, ctx);
}

/* A control record (RTS, FIN: at most sizeof op->own bytes) to dest, now or from poll. */
int fm_sm_send_ctl(fm_sm_tp *t, int dest, unsigned kind, const void *body, size_t len)
{
    int rc = start(t, dest, kind, NULL, 0, body, len, NULL);
    return rc == FM_TP_SENT ? FM_OK : rc;
}

int fm_sm_sendv(fm_tp *tp, int dest, const void *hdr, size_t hlen, fm_tp_mr *hmr,
                const void *payload, size_t plen, fm_tp_mr *pmr, void *ctx)
{
    (void)hmr;
    (void)pmr;
    return start(fm_sm_of(tp), dest, FM_SM_REC_INLINE, hdr, hlen, payload, plen, ctx);
}

/* Go on with the waiting sends; finished ones become SEND_DONE events. Returns 0 when
 * nothing moved. */
int fm_sm_retry(fm_sm_tp *t)
{
    int moved = 0;
    for (int d = 0; t->queued && d < t->n; d++) {
        fm_sm_peer *p = &t->peers[d];
        int touched = 0;
        if (!p->q_head)
            continue;
        while (p->q_head) {
            fm_sm_op *op = p->q_head;
            size_t before = op->done;
            int whole = push(t, p, op->kind, op->hdr, op->hlen, op->pay, op->plen, &op->done);
            touched |= op->done != before;
            if (!whole)
                break;
            p->q_head = op->next;
            op->next = NULL;
            moved++;
            if (op->kind != FM_SM_REC_INLINE) { /* no event for control records */
                op->next = t->free_ops;
                t->free_ops = op;
                continue;
            }
            if (t->done_tail)
                t->done_tail->next = op;
            else
                t->done_head = op;
            t->done_tail = op;
        }
        if (!p->q_head) {
            p->q_tail = NULL;
            t->queued--;
        }
        if (touched) {
            wake(p);
            moved++;
        }
    }
    return moved;
}

void fm_sm_ops_free(fm_sm_tp *t)
{
    fm_sm_op *lists[2] = {t->free_ops, t->done_head};
    for (int i = 0; i < 2; i++)
        while (lists[i]) {
            fm_sm_op *next = lists[i]->next;
            free(lists[i]);
            lists[i] = next;
        }
    for (int d = 0; t->peers && d < t->n; d++)
        while (t->peers[d].q_head) {
            fm_sm_op *next = t->peers[d].q_head->next;
            free(t->peers[d].q_head);
            t->peers[d].q_head = next;
        }
}
