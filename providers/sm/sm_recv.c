/* SPDX-License-Identifier: BSD-3-Clause */
/* Receiving: the rings in this rank's segment, one per sender, read in turn into the posted
 * receives. An inline record is one packet; chunk records are the pieces of one, copied out
 * of the sender's chunk as they come and the chunk given back at once. Every record is
 * checked (sequence, kind, lengths, chunk index) before its bytes are used: a malformed one
 * stops that sender's ring, and is counted and logged, never followed. */
#include "sm_internal.h"

#include <stdlib.h>
#include <string.h>

#include "fastmsg.h"
#include "log.h"

int fm_sm_post_recv(fm_tp *tp, void *buf, size_t len, fm_tp_mr *mr, void *ctx)
{
    fm_sm_tp *t = fm_sm_of(tp);
    (void)mr;
    if (!buf && len)
        return FM_ERR_INVALID;
    /* (rx_cap is a power of two: a mask, not a division, on every packet's path) */
    if (t->rx_count == t->rx_cap) { /* grow, keeping the order */
        size_t cap = t->rx_cap ? 2 * t->rx_cap : 64;
        fm_sm_rx *rx = malloc(cap * sizeof *rx);
        if (!rx)
            return FM_ERR_NOMEM;
        for (size_t i = 0; i < t->rx_count; i++)
            rx[i] = t->rx[(t->rx_first + i) & (t->rx_cap - 1)];
        free(t->rx);
        t->rx = rx;
        t->rx_cap = cap;
        t->rx_first = 0;
    }
    t->rx[(t->rx_first + t->rx_count) & (t->rx_cap - 1)] = (fm_sm_rx){buf, len, ctx, NULL};
    t->rx_count++;
    return FM_OK;
}

int fm_sm_post_recv_multi(fm_tp *tp, void *buf, size_t len, fm_tp_mr *mr, void *ctx)
{
    fm_sm_tp *t = fm_sm_of(tp);
    (void)mr;
    if (!t->multi_min || !buf || len < t->multi_min)
        return FM_ERR_INVALID;
    fm_sm_region *r = calloc(1, sizeof *r);
    if (!r)
        return FM_ERR_NOMEM;
    *r = (fm_sm_region){.buf = buf, .len = len, .ctx = ctx, .all_next = t->all};
    if (t->all)
        t->all->all_prev = r;
    t->all = r;
    if (t->regions_tail)
        t->regions_tail->next = r;
    else
        t->regions = r;
    t->regions_tail = r;
    return FM_OK;
}

/* Somewhere for a packet to go: a posted receive, else room in the first region. */
static int rx_available(const fm_sm_tp *t)
{
    return t->rx_count || t->regions;
}

/* A region let go of: its REGION_DONE goes out after its last packet's event. */
static void region_release(fm_sm_tp *t, fm_sm_region *r)
{
    r->late_next = NULL;
    if (t->late_tail)
        t->late_tail->late_next = r;
    else
        t->late = r;
    t->late_tail = r;
}

static void region_free(fm_sm_tp *t, fm_sm_region *r)
{
    if (r->all_prev)
        r->all_prev->all_next = r->all_next;
    else
        t->all = r->all_next;
    if (r->all_next)
        r->all_next->all_prev = r->all_prev;
    free(r);
}

static fm_sm_rx rx_take(fm_sm_tp *t, size_t total)
{
    if (t->rx_count) {
        fm_sm_rx r = t->rx[t->rx_first];
        t->rx_first = (t->rx_first + 1) & (t->rx_cap - 1);
        t->rx_count--;
        return r;
    }
    fm_sm_region *g = t->regions;
    size_t left = g->len - g->used;
    /* A packet longer than the space left (not one of the job's: FM_PACKET_SIZE bounds
     * them, and a region is let go of with less than that left) is dropped as too long. */
    fm_sm_rx r = {
        .buf = g->buf + g->used, .len = total <= left ? total : 0, .ctx = g->ctx, .region = g};
    if (total <= left)
        g->used += (total + 7) & ~(size_t)7;
    g->landing++;
    if (g->used > g->len || g->len - g->used < t->multi_min) {
        g->full = 1;
        t->regions = g->next;
        if (!t->regions)
            t->regions_tail = NULL;
    }
    return r;
}

/* The record at the head is used up: move on. Its lines are cleared when the head is
 * published (clear_read), not here: a store into a line the sender holds waits for the line,
 * and every store after it (the reply to this very packet) would wait behind it. */
static void consume(fm_sm_peer *p, size_t bytes)
{
    p->head += bytes;
    p->seq_expected++;
}

/* A packet is in (or dropped): its event; a region it filled last is let go of. */
static void event(fm_sm_tp *t, fm_tp_event *e, const fm_sm_rx *rx, int status, size_t len)
{
    *e = (fm_tp_event){.kind = rx->region ? FM_TP_RECV_MULTI : FM_TP_RECV_DONE,
                       .status = status,
                       .ctx = rx->ctx,
                       .buf = rx->buf,
                       .len = len};
    fm_sm_region *g = rx->region;
    if (g && --g->landing == 0 && g->full)
        region_release(t, g);
}

/* ---- loans: a packet's bytes left in the sender's chunks (fm_tp_config.lend) ---- */

/* Chunks first..first+n of rank s's pool lose this reader's count; a sender that waits for
 * chunks is woken (as publish_head does for ring room: the fence orders the counts before
 * the look at its flag, against its store of the flag before its last look at the chunks). */
static void chunks_read(fm_sm_tp *t, int s, uint32_t first, uint32_t n)
{
    fm_sm_peer *p = &t->peers[s];
    for (uint32_t i = 0; i < n; i++)
        atomic_fetch_sub_explicit(&fm_sm_flag(&t->lay, p->base, first + i)->busy, 1,
                                  memory_order_release);
    atomic_thread_fence(memory_order_seq_cst);
    fm_sm_ring_bell(p, &p->hdr->starved);
}

_Static_assert(FM_SM_NCHUNKS <= 0xffff, "a loan names chunks in 16 bits");

/* What a loan's handle says: the sender (+1, so that no handle is 0), the first chunk, how many. */
static uint64_t lend_handle(int s, uint32_t first, uint32_t n)
{
    return (uint64_t)(s + 1) << 32 | (uint64_t)first << 16 | n;
}

void fm_sm_lend_release(fm_tp *tp, uint64_t lend)
{
    fm_sm_tp *t = fm_sm_of(tp);
    int s = (int)(lend >> 32) - 1;
    uint32_t first = (uint32_t)(lend >> 16) & 0xffff, n = (uint32_t)lend & 0xffff;
    if (s >= 0 && s < t->n && n && first + n <= t->lay.nchunks)
        chunks_read(t, s, first, n);
}

/* The loan of rank s's packet so far cannot go on (its next piece is elsewhere): its bytes are
 * copied into the receive after all. */
static void lend_end(fm_sm_tp *t, int s)
{
    fm_sm_peer *p = &t->peers[s];
    p->asm_lendable = 0;
    memcpy((unsigned char *)p->asm_rx->buf + p->lent_at, p->lent, p->asm_got - p->lent_at);
    chunks_read(t, s, p->lent_first, p->lent_n);
    p->lent = NULL;
}

/* Piece [off, off + n) of rank s's packet, at the start of chunk c: 1 when it joins the
 * packet's loan (begun by the packet's first piece in a chunk, then as long as the chunks
 * follow each other and each piece fills its chunk), 0 when it is to be copied.
 *
 * Only a shared payload is lent: its chunks were all written before its first record went
 * out, so a reader that holds some while it reads the rest waits for nothing its sender has
 * still to do. An ordinary packet's later chunks are written as readers free earlier ones;
 * readers holding theirs could leave the sender without a chunk to finish any of them. */
static int lend_piece(fm_sm_tp *t, int s, uint32_t c, uint32_t off, const unsigned char *src)
{
    fm_sm_peer *p = &t->peers[s];
    if (!p->lent) {
        if (!p->asm_lendable)
            return 0;
        p->lent = src;
        p->lent_at = off;
        p->lent_first = c;
        p->lent_n = 1;
        return 1;
    }
    if (c == p->lent_first + p->lent_n &&
        off - p->lent_at == (uint64_t)p->lent_n * t->lay.chunk_bytes) {
        p->lent_n++;
        return 1;
    }
    lend_end(t, s);
    return 0;
}

/* A malformed record from rank s: its ring is read no more. A packet it was assembling goes
 * back as too long (the layer above drops and counts it, and reposts the buffer). */
static int corrupt(fm_sm_tp *t, int s, fm_tp_event *e, const char *what)
{
    fm_sm_peer *p = &t->peers[s];
    t->dropped++;
    p->broken = 1;
    fm_log(0, "sm: a malformed record from rank %d (%s): its ring is no longer read", s, what);
    if (p->lent) { /* (its chunks go back unread) */
        chunks_read(t, s, p->lent_first, p->lent_n);
        p->lent = NULL;
    }
    if (!p->asm_rx)
        return 0;
    event(t, e, p->asm_rx, FM_ERR_TOO_LONG, p->asm_total);
    p->asm_rx = NULL;
    return 1;
}

/* Piece [off, off + n) of a total-byte packet from rank s, its bytes at src, taken into the
 * packet being assembled (a piece at 0 starts one); its record (rec_bytes) is then consumed. c: the
 * chunk the bytes are in (this reader's count on it goes after the copy, or with the loan), or -1
 * for an inline piece. 1 with an event for the packet's last piece, 0 without, -1 when no receive
 * is posted yet (nothing consumed). */
static int read_piece(fm_sm_tp *t, int s, size_t rec_bytes, uint32_t total, uint32_t off,
                      uint32_t n, const unsigned char *src, int64_t c, fm_tp_event *e)
{
    fm_sm_peer *p = &t->peers[s];
    fm_sm_chunk_flag *f = c >= 0 ? fm_sm_flag(&t->lay, p->base, (uint32_t)c) : NULL;
    if (!n || total > FM_SM_MAX_MSG || off > total || n > total - off)
        return corrupt(t, s, e, "piece bounds");
    if (f && !atomic_load_explicit(&f->busy, memory_order_relaxed))
        return corrupt(t, s, e, "a chunk nobody holds");
    if (off == 0) {
        if (p->asm_rx)
            return corrupt(t, s, e, "a packet started inside another");
        if (!rx_available(t))
            return -1;
        t->asm_slots[s] = rx_take(t, total);
        p->asm_rx = &t->asm_slots[s];
        p->asm_total = total;
        p->asm_got = 0;
        p->asm_status = total > p->asm_rx->len ? FM_ERR_TOO_LONG : FM_OK;
        p->asm_lendable = c < 0;
    } else if (!p->asm_rx || total != p->asm_total || off != p->asm_got) {
        return corrupt(t, s, e, "a piece out of order");
    }
    if (!(f && t->lend && p->asm_status == FM_OK && lend_piece(t, s, (uint32_t)c, off, src))) {
        if (p->lent) /* an inline piece after lent ones: the loan ends here */
            lend_end(t, s);
        if (p->asm_status == FM_OK)
            memcpy((unsigned char *)p->asm_rx->buf + off, src, n);
        if (f) { /* the copy is over before the sender may write the chunk again */
            atomic_fetch_sub_explicit(&f->busy, 1, memory_order_release);
            p->asm_lendable = 0;
        }
    }
    p->asm_got += n;
    consume(p, rec_bytes);
    if (p->asm_got < p->asm_total)
        return 0;
    event(t, e, p->asm_rx, p->asm_status, p->asm_total);
    if (p->lent) {
        e->lent = p->lent;
        e->lent_at = p->lent_at;
        e->lend = lend_handle(s, p->lent_first, p->lent_n);
        p->lent = NULL;
    }
    p->asm_rx = NULL;
    return 1;
}

/* One piece of a packet in a chunk of the sender's pool. */
static int read_chunk(fm_sm_tp *t, int s, unsigned char *rec, fm_tp_event *e)
{
    fm_sm_peer *p = &t->peers[s];
    fm_sm_chunk_ref ref;
    memcpy(&ref, rec + 8, sizeof ref);
    if (ref.chunk >= t->lay.nchunks || !ref.len || ref.len > t->lay.chunk_bytes)
        return corrupt(t, s, e, "chunk bounds");
    return read_piece(t, s, fm_sm_rec_bytes(sizeof ref), ref.total, ref.off, ref.len,
                      fm_sm_chunk(&t->lay, p->base, ref.chunk), ref.chunk, e);
}

/* One piece of a packet inline in the ring (len bytes of body: fm_sm_piece, then the bytes). */
static int read_inline_piece(fm_sm_tp *t, int s, unsigned char *rec, uint32_t len, fm_tp_event *e)
{
    fm_sm_piece pc;
    memcpy(&pc, rec + 8, sizeof pc);
    return read_piece(t, s, fm_sm_rec_bytes(len), pc.total, pc.off, len - (uint32_t)sizeof pc,
                      rec + 8 + sizeof pc, -1, e);
}

/* An inline record's len bytes into rx. One that fits its line goes as the line's constant 56
 * bytes, inline (a library memcpy call cost 25-60 cycles of an 8-byte ping-pong's ~330 at the
 * receiver), where the buffer has room for them. */
static inline void copy_record(const fm_sm_rx *rx, const unsigned char *rec, size_t len)
{
    if (len <= FM_SM_LINE - 8 && rx->len >= FM_SM_LINE - 8)
        memcpy(rx->buf, rec + 8, FM_SM_LINE - 8);
    else
        memcpy(rx->buf, rec + 8, len);
}

/* The record at rank s's head: 1 with an event in *e, 0 consumed without one, -1 nothing to
 * do now (empty ring, or no receive posted). */
static int read_one(fm_sm_tp *t, int s, fm_tp_event *e)
{
    fm_sm_peer *p = &t->peers[s];
    const uint64_t ring = t->lay.ring_bytes;
    /* A whole ring read since the head went out (a sender may fill it exactly): the line at
     * the head is this lap's first record, not cleared until the head is published. */
    if (p->head - p->head_published >= ring)
        return -1;
    uint64_t off = p->head & (ring - 1);
    unsigned char *rec = p->rx_ring + off;
    uint64_t w = atomic_load_explicit(fm_sm_word_at(rec), memory_order_acquire);
    if (!w)
        return -1;
    uint32_t seq = (uint32_t)(w >> 32), len = (uint32_t)w & 0xffffff;
    unsigned kind = (unsigned)(w >> 24) & 0xff;
    if (seq != p->seq_expected)
        return corrupt(t, s, e, "sequence");
    switch (kind) {
    case FM_SM_REC_WRAP:
        consume(p, FM_SM_LINE);
        p->head += ring - off - FM_SM_LINE;
        return 0;
    case FM_SM_REC_CHUNK:
        if (len != sizeof(fm_sm_chunk_ref) || off + fm_sm_rec_bytes(len) > ring)
            return corrupt(t, s, e, "chunk record length");
        return read_chunk(t, s, rec, e);
    case FM_SM_REC_PIECE:
        if (len <= sizeof(fm_sm_piece) || len > t->inline_max || off + fm_sm_rec_bytes(len) > ring)
            return corrupt(t, s, e, "piece record length");
        return read_inline_piece(t, s, rec, len, e);
    case FM_SM_REC_INLINE:
        if (len > t->inline_max || off + fm_sm_rec_bytes(len) > ring)
            return corrupt(t, s, e, "record length");
        if (p->asm_rx)
            return corrupt(t, s, e, "a packet inside another");
        if (!rx_available(t))
            return -1;
        fm_sm_rx rx = rx_take(t, len);
        int status = len > rx.len ? FM_ERR_TOO_LONG : FM_OK;
        if (status == FM_OK)
            copy_record(&rx, rec, len);
        consume(p, fm_sm_rec_bytes(len));
        event(t, e, &rx, status, len);
        return 1;
    case FM_SM_REC_RTS:
    case FM_SM_REC_FIN: {
        size_t want = kind == FM_SM_REC_RTS ? sizeof(fm_sm_rts) : sizeof(fm_sm_fin);
        if (len != want || !t->base.info.tagged || off + fm_sm_rec_bytes(len) > ring)
            return corrupt(t, s, e, "tagged record");
        int r =
            kind == FM_SM_REC_RTS ? fm_sm_on_rts(t, s, rec + 8, e) : fm_sm_on_fin(t, s, rec + 8, e);
        if (r == -2)
            return corrupt(t, s, e, "an answer to no tagged send");
        if (r >= 0)
            consume(p, fm_sm_rec_bytes(len));
        return r;
    }
    default:
        return corrupt(t, s, e, "kind");
    }
}

/* Zero the first word of each line read since the head was last published, so that no stale
 * byte there looks like a record next lap. The sender writes there only after it sees the
 * head that follows (released after these stores), and this rank reads there only next lap. */
static void clear_read(fm_sm_tp *t, fm_sm_peer *p)
{
    const uint64_t mask = t->lay.ring_bytes - 1;
    for (uint64_t o = p->head_published; o != p->head; o += FM_SM_LINE)
        atomic_store_explicit(fm_sm_word_at(p->rx_ring + (o & mask)), 0, memory_order_relaxed);
}

/* Tell rank s how far its ring was read. */
static void store_head(fm_sm_tp *t, int s)
{
    fm_sm_peer *p = &t->peers[s];
    clear_read(t, p);
    atomic_store_explicit(&fm_sm_ctl(&t->lay, t->seg, s)->head, p->head, memory_order_release);
    p->head_published = p->head;
}

/* The same, and wake it if it waits for room or chunks. */
static void publish_head(fm_sm_tp *t, int s)
{
    fm_sm_peer *p = &t->peers[s];
    store_head(t, s);
    atomic_thread_fence(memory_order_seq_cst);
    fm_sm_ring_bell(p, &p->hdr->starved);
}

/* Heads are published lazily: once a quarter of the ring was read, or when the sender says it
 * waits (starved, read without a fence here: a rank that keeps polling sees it at the latest
 * on its next round, and one about to sleep publishes everything first, fm_sm_flush). A
 * sender's view of the free space is thus at most a quarter of the ring behind, and the
 * common path has no fence. */
static void maybe_publish(fm_sm_tp *t, int s)
{
    fm_sm_peer *p = &t->peers[s];
    if (p->head != p->head_published &&
        (p->head - p->head_published >= t->lay.ring_bytes / 4 ||
         atomic_load_explicit(&p->hdr->starved, memory_order_relaxed)))
        publish_head(t, s);
}

void fm_sm_flush(fm_sm_tp *t)
{
    for (int s = 0; s < t->n; s++)
        if (t->peers[s].head != t->peers[s].head_published)
            store_head(t, s);
    /* Against each sender's store of starved before its last look at head and chunks. */
    atomic_thread_fence(memory_order_seq_cst);
    for (int s = 0; s < t->n; s++)
        fm_sm_ring_bell(&t->peers[s], &t->peers[s].hdr->starved);
}

/* Late events first: they belong before any packet read after them. */
static int late_events(fm_sm_tp *t, fm_tp_event *ev, int max)
{
    int n = 0;
    while (n < max && t->late) {
        fm_sm_region *r = t->late;
        ev[n++] = (fm_tp_event){
            .kind = FM_TP_RECV_REGION_DONE, .status = FM_OK, .ctx = r->ctx, .buf = r->buf};
        t->late = r->late_next;
        if (!t->late)
            t->late_tail = NULL;
        region_free(t, r);
    }
    return n;
}

/* Up to max packets from the rings, each sender in turn, starting after the last one read. */
int fm_sm_receive(fm_sm_tp *t, fm_tp_event *ev, int max)
{
    int n = 0, start = t->next_slot;
    if (t->late && (n = late_events(t, ev, max), t->late))
        return n;
    if (t->unexp)
        n += fm_sm_unexpected(t, ev + n, max - n);
    for (int i = 0; i < t->n && n < max; i++) {
        int s = start + i < t->n ? start + i : start + i - t->n;
        fm_sm_peer *p = &t->peers[s];
        /* The common case first: an empty ring with nothing to publish costs one load. */
        if (!atomic_load_explicit(fm_sm_word_at(p->rx_ring + (p->head & (t->lay.ring_bytes - 1))),
                                  memory_order_relaxed) &&
            p->head == p->head_published)
            continue;
        int r;
        while (n < max && !p->broken && (r = read_one(t, s, &ev[n])) >= 0)
            n += r;
        maybe_publish(t, s);
        if (n >= max)
            t->next_slot = s + 1 < t->n ? s + 1 : 0;
    }
    return t->late ? n + late_events(t, ev + n, max - n) : n;
}

void fm_sm_recv_free(fm_sm_tp *t)
{
    while (t->all)
        region_free(t, t->all);
    free(t->rx);
}

/* Whether any ring has a record waiting (for trywait). */
int fm_sm_pending(fm_sm_tp *t)
{
    for (int s = 0; s < t->n; s++) {
        fm_sm_peer *p = &t->peers[s];
        unsigned char *rec = p->rx_ring + (p->head & (t->lay.ring_bytes - 1));
        if (!p->broken && atomic_load_explicit(fm_sm_word_at(rec), memory_order_acquire))
            return 1;
    }
    return 0;
}
