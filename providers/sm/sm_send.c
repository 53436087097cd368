/* SPDX-License-Identifier: BSD-3-Clause */
/* Sending: a packet goes into this rank's ring in the receiver's segment, inline when it is
 * small, else piece by piece through chunks of this rank's own pool (the receiver copies each
 * piece out while the next is written: large packets are pipelined). A send that finds the
 * ring or the pool full waits in its destination's queue, in order, and poll goes on with it
 * where it stopped. */
#include "sm_internal.h"

#include <stdlib.h>
#include <string.h>

#include "copy.h"
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

/* k free chunks of this rank's pool next to each other (the first one's index, -1: no such
 * run), taken: a payload in them can be lent whole (sm_recv.c). Looks from where the last
 * allocation ended, and does not wrap. The acquire pairs with the readers' release: their
 * reads are over before a chunk is written again. */
static int chunk_run(fm_sm_tp *t, uint32_t k)
{
    uint32_t n = t->lay.nchunks;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t first = (t->chunk_next + i) % n, len = 0;
        while (len < k && first + len < n &&
               !atomic_load_explicit(&fm_sm_flag(&t->lay, t->seg, first + len)->busy,
                                     memory_order_acquire))
            len++;
        if (len < k)
            continue;
        for (uint32_t c = first; c < first + k; c++)
            atomic_store_explicit(&fm_sm_flag(&t->lay, t->seg, c)->busy, 1, memory_order_relaxed);
        t->chunk_next = first + k;
        return (int)first;
    }
    return -1;
}

/* One free chunk, or -1. */
static int chunk_alloc(fm_sm_tp *t)
{
    return chunk_run(t, 1);
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
        fm_copy(dst, pay + (off - hlen), n);
}

/* A packet whose payload is shared (sh): its header as an inline piece, then a record per
 * chunk of the payload, each adding this reader's count to the chunk. *done as push's. */
static int push_shared(fm_sm_tp *t, fm_sm_peer *p, const fm_sm_share *sh, const unsigned char *hdr,
                       size_t hlen, size_t *done)
{
    size_t total = hlen + sh->len;
    if (*done == 0) {
        fm_sm_piece pc = {(uint32_t)total, 0};
        if (!ring_room(t, p, fm_sm_rec_bytes(sizeof pc + hlen)))
            return 0;
        unsigned char *rec = ring_tail(t, p);
        memcpy(rec + 8, &pc, sizeof pc);
        memcpy(rec + 8 + sizeof pc, hdr, hlen);
        publish(p, rec, FM_SM_REC_PIECE, sizeof pc + hlen);
        *done = hlen;
    }
    while (*done < total) {
        if (!ring_room(t, p, fm_sm_rec_bytes(sizeof(fm_sm_chunk_ref))))
            return 0;
        size_t at = *done - hlen, n = sh->len - at;
        if (n > t->lay.chunk_bytes)
            n = t->lay.chunk_bytes;
        uint32_t c = sh->chunk[at / t->lay.chunk_bytes];
        /* (The owner's count keeps the chunk busy; the release below publishes this one.) */
        atomic_fetch_add_explicit(&fm_sm_flag(&t->lay, t->seg, c)->busy, 1, memory_order_relaxed);
        fm_sm_chunk_ref ref = {c, (uint32_t)n, (uint32_t)total, (uint32_t)*done};
        unsigned char *rec = ring_tail(t, p);
        memcpy(rec + 8, &ref, sizeof ref);
        publish(p, rec, FM_SM_REC_CHUNK, sizeof ref);
        *done += n;
    }
    return 1;
}

/* Moves as much of the packet as fits now; *done counts bytes already moved (chunks).
 * Returns 1 when the whole packet is in, 0 when it must wait. */
static int push(fm_sm_tp *t, fm_sm_peer *p, unsigned kind, const unsigned char *hdr, size_t hlen,
                const unsigned char *pay, size_t plen, const fm_sm_share *sh, size_t *done)
{
    if (sh)
        return push_shared(t, p, sh, hdr, hlen, done);
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
                 const void *pay, size_t plen, fm_sm_share *sh, void *ctx)
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
        int whole = push(t, p, kind, hdr, hlen, pay, plen, sh, &done);
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
                     .share = sh,
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
    return start(fm_sm_of(tp), dest, FM_SM_REC_INLINE, NULL, 0, buf, len, NULL, ctx);
}

/* A control record (RTS, FIN: at most sizeof op->own bytes) to dest, now or from poll. */
int fm_sm_send_ctl(fm_sm_tp *t, int dest, unsigned kind, const void *body, size_t len)
{
    int rc = start(t, dest, kind, NULL, 0, body, len, NULL, NULL);
    return rc == FM_TP_SENT ? FM_OK : rc;
}

int fm_sm_sendv(fm_tp *tp, int dest, const void *hdr, size_t hlen, fm_tp_mr *hmr,
                const void *payload, size_t plen, fm_tp_mr *pmr, void *ctx)
{
    (void)hmr;
    (void)pmr;
    return start(fm_sm_of(tp), dest, FM_SM_REC_INLINE, hdr, hlen, payload, plen, NULL, ctx);
}

void fm_sm_shares_init(fm_sm_tp *t)
{
    for (uint32_t i = 0; i < FM_SM_NCHUNKS; i++)
        t->shares[i].next = i + 1 < FM_SM_NCHUNKS ? &t->shares[i + 1] : NULL;
    t->free_shares = t->shares;
}

/* The payload, written into chunks of this rank's pool that it holds a count on, or NULL when
 * the pool has too few free now (the copy then goes the ordinary way). Shared payloads hold
 * their chunks until the runtime lets them go, which waits for credits, which wait for the
 * receivers, which may wait for their own sends: so all of them together take at most half
 * the pool, and the ordinary path, whose chunks come back as soon as they are read, always
 * has the other half. */
static fm_sm_share *share_create(fm_sm_tp *t, const unsigned char *pay, size_t plen)
{
    size_t k = (plen + t->lay.chunk_bytes - 1) / t->lay.chunk_bytes;
    fm_sm_share *sh = t->free_shares;
    if (!sh || t->share_chunks + k > t->lay.nchunks / 2)
        return NULL;
    sh->nchunks = 0;
    int run = chunk_run(t, (uint32_t)k);
    for (; run >= 0 && sh->nchunks < k; sh->nchunks++)
        sh->chunk[sh->nchunks] = (uint32_t)run + sh->nchunks;
    for (; sh->nchunks < k; sh->nchunks++) { /* (no run free: any chunks, copied when read) */
        int c = chunk_alloc(t);
        if (c < 0) { /* give back what was taken: nobody else saw them */
            while (sh->nchunks > 0)
                atomic_store_explicit(&fm_sm_flag(&t->lay, t->seg, sh->chunk[--sh->nchunks])->busy,
                                      0, memory_order_relaxed);
            return NULL;
        }
        sh->chunk[sh->nchunks] = (uint32_t)c;
    }
    for (size_t i = 0; i < k; i++) {
        size_t at = i * t->lay.chunk_bytes;
        size_t n = plen - at < t->lay.chunk_bytes ? plen - at : t->lay.chunk_bytes;
        memcpy(fm_sm_chunk(&t->lay, t->seg, sh->chunk[i]), pay + at, n);
    }
    sh->len = (uint32_t)plen;
    t->share_chunks += (uint32_t)k;
    t->free_shares = sh->next;
    sh->next = NULL;
    return sh;
}

/* A copy of a payload that other destinations get too: the payload goes into chunks once, on
 * its first copy large enough to need them, and every copy after that is its header and the
 * chunks' names. Small packets, and payloads the pool has no room for now, go as sendv. */
int fm_sm_sendv_shared(fm_tp *tp, int dest, const void *hdr, size_t hlen, fm_tp_mr *hmr,
                       const void *payload, size_t plen, fm_tp_mr *pmr, void **share, void *ctx)
{
    fm_sm_tp *t = fm_sm_of(tp);
    fm_sm_share *sh = share ? *share : NULL;
    if (!sh && share && hlen + plen > t->inline_max && plen <= FM_SM_MAX_MSG &&
        sizeof(fm_sm_piece) + hlen <= t->inline_max && payload && (!hlen || hdr))
        *share = sh = share_create(t, payload, plen);
    if (!sh)
        return fm_sm_sendv(tp, dest, hdr, hlen, hmr, payload, plen, pmr, ctx);
    if (plen != sh->len)
        return FM_ERR_INVALID;
    int rc = start(t, dest, FM_SM_REC_INLINE, hdr, hlen, payload, plen, sh, ctx);
    if (rc >= 0)
        t->base.shared++;
    return rc;
}

/* The caller lets the payload go (every copy of it is sent): its chunks lose the owner's
 * count, and are free once their readers have read them. */
void fm_sm_share_release(fm_tp *tp, void *share)
{
    fm_sm_tp *t = fm_sm_of(tp);
    fm_sm_share *sh = share;
    if (!sh)
        return;
    for (uint32_t i = 0; i < sh->nchunks; i++)
        atomic_fetch_sub_explicit(&fm_sm_flag(&t->lay, t->seg, sh->chunk[i])->busy, 1,
                                  memory_order_release);
    t->share_chunks -= sh->nchunks;
    sh->nchunks = 0;
    sh->next = t->free_shares;
    t->free_shares = sh;
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
            int whole =
                push(t, p, op->kind, op->hdr, op->hlen, op->pay, op->plen, op->share, &op->done);
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
