/* SPDX-License-Identifier: BSD-3-Clause */
/* One two-stage multicast at one member: its chunks as they come (from datagrams or repairs,
 * in any order), lent to the handler in order as runs of whole chunks, given on to the
 * successor where it asked for them, and freed once the handler has read it all and the
 * successor has it all. */
#include <stdlib.h>
#include <string.h>

#include "ack.h"
#include "group.h"
#include "ipmc_internal.h"
#include "log.h"
#include "prefix/prefix_route.h"
#include "recv.h"

/* A run of a message lent to the core (recv.h): the packet and the message it is from. */
typedef struct ipmc_run {
    fm_pkt p;
    fm_ipmc_msg *m;
} ipmc_run;

fm_ipmc_msg *fm_ipmc_find(fm_ipmc *ip, uint32_t root, uint32_t mid)
{
    for (fm_ipmc_msg *m = ip->msgs; m; m = m->next)
        if (m->h.root == root && m->h.mid == mid)
            return m;
    return NULL;
}

int fm_ipmc_has(const fm_ipmc_msg *m, uint32_t i)
{
    return (m->have[i / 64] >> (i % 64)) & 1;
}

/* ---- finished multicasts, per root ---- */

static fm_ipmc_done *done_of(fm_context *ctx, uint32_t root)
{
    fm_ipmc *ip = fm_ipmc_of(ctx);
    if (!ip->done && !(ip->done = calloc((size_t)ctx->size, sizeof *ip->done)))
        return NULL;
    return &ip->done[root];
}

int fm_ipmc_done_has(fm_context *ctx, uint32_t root, uint32_t mid)
{
    const fm_ipmc_done *d = done_of(ctx, root);
    if (!d)
        return 0;
    int32_t at = (int32_t)(mid - d->base);
    if (at < 0)
        return 1;
    return at < (int32_t)FM_IPMC_DONE_SPAN && (d->bits[at / 64] >> (at % 64)) & 1;
}

static void done_mark(fm_context *ctx, uint32_t root, uint32_t mid)
{
    fm_ipmc_done *d = done_of(ctx, root);
    if (!d)
        return;
    int32_t at = (int32_t)(mid - d->base);
    if (at < 0)
        return;
    if (at >= (int32_t)FM_IPMC_DONE_SPAN) { /* slide by whole words: older ones count as done */
        const int32_t words = FM_IPMC_DONE_SPAN / 64;
        int32_t by = (at - (int32_t)FM_IPMC_DONE_SPAN) / 64 + 1, keep = by < words ? words - by : 0;
        memmove(d->bits, d->bits + (words - keep), (size_t)keep * sizeof d->bits[0]);
        memset(d->bits + keep, 0, (size_t)(words - keep) * sizeof d->bits[0]);
        d->base += (uint32_t)by * 64;
        at -= by * 64;
    }
    d->bits[at / 64] |= (uint64_t)1 << (at % 64);
}

/* ---- membership ---- */

/* This rank's ring neighbours in h's multicast: the members in order (the group's, or the
 * set's ascending ranks), starting from the root. 0, or -1 when this rank is no member. */
static int ring_place(fm_context *ctx, const fm_ipmc_hdr *h, const unsigned char *extra, int *pred,
                      int *succ, int *why)
{
    const int *ring;
    int n;
    *why = 0;
    if (h->flags == FM_IPMC_GROUP) {
        struct fm_group *g = fm_group_find(ctx, fm_get64(extra));
        if (!g) {
            *why = 1; /* maybe not created here yet: its offer comes again */
            return -1;
        }
        ring = g->members;
        n = g->n;
    } else {
        int *scratch = ctx->mcast->set_scratch;
        n = fm_prefix_dests_decode(extra, h->extra_len, ctx->size, scratch, ctx->size);
        ring = scratch;
    }
    if (n != (int)h->n)
        return -1; /* (a group of another size with this id: not this multicast's) */
    int me = -1, root = -1;
    for (int i = 0; i < n; i++) {
        if (ring[i] == ctx->rank)
            me = i;
        if (ring[i] == (int)h->root)
            root = i;
    }
    if (me < 0 || root < 0 || me == root)
        return -1;
    *pred = ring[(me + n - 1) % n];
    *succ = (me + 1) % n == root ? -1 : ring[(me + 1) % n];
    return 0;
}

/* ---- a message's state ---- */

uint64_t fm_ipmc_msg_bytes(uint64_t len, uint32_t chunk, size_t extra_len)
{
    /* (its bits, and a successor's wants, a word per 64 chunks) */
    return len + ((uint64_t)fm_ipmc_chunks(len, chunk) / 64 + 1) * 16 + extra_len +
           sizeof(fm_ipmc_msg);
}

static void msg_free(fm_context *ctx, fm_ipmc_msg *m, int mark);

fm_ipmc_msg *fm_ipmc_msg_alloc(fm_context *ctx, const fm_ipmc_hdr *h, const unsigned char *extra)
{
    fm_ipmc *ip = fm_ipmc_of(ctx);
    uint32_t npk = fm_ipmc_chunks(h->len, h->chunk);
    uint64_t bytes = fm_ipmc_msg_bytes(h->len, h->chunk, h->extra_len);
    if (ip->held + bytes > ip->budget)
        return NULL;
    fm_ipmc_msg *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->h = *h;
    m->npk = npk;
    m->extra = malloc(h->extra_len);
    m->data = malloc(h->len ? h->len : 1);
    m->have = calloc(npk / 64 + 1, sizeof *m->have);
    if (!m->extra || !m->data || !m->have) {
        free(m->extra);
        free(m->data);
        free(m->have);
        free(m);
        return NULL;
    }
    memcpy(m->extra, extra, h->extra_len);
    m->bytes = bytes;
    m->sync_with = -1;
    ip->held += bytes;
    ctx->layer_poll = 1; /* (its timers) */
    m->next = ip->msgs;
    ip->msgs = m;
    return m;
}

static uint64_t *other_slot(fm_ipmc *ip, uint32_t root, uint32_t mid)
{
    uint64_t key = ((uint64_t)root << 32 | mid) + 1;
    return &ip->others[(key * 0x9e3779b97f4a7c15ull) >> 56 & (FM_IPMC_OTHERS - 1)];
}

fm_ipmc_msg *fm_ipmc_member_new(fm_context *ctx, const fm_ipmc_hdr *h, const unsigned char *extra,
                                int *why)
{
    int pred, succ;
    fm_ipmc *ip = fm_ipmc_of(ctx);
    uint64_t *other = other_slot(ip, h->root, h->mid);
    *why = 0;
    if (*other == (((uint64_t)h->root << 32 | h->mid) + 1))
        return NULL;
    if (fm_ipmc_done_has(ctx, h->root, h->mid)) {
        *why = 2;
        return NULL;
    }
    if (ring_place(ctx, h, extra, &pred, &succ, why)) {
        if (!*why) /* not ours: its other datagrams go unread */
            *other = ((uint64_t)h->root << 32 | h->mid) + 1;
        return NULL;
    }
    fm_ipmc_msg *m = fm_ipmc_msg_alloc(ctx, h, extra);
    if (!m) {
        *why = 1;
        return NULL;
    }
    m->pred = pred;
    m->succ = succ;
    m->succ_has = succ < 0;
    m->s = fm_recv_ext_begin(ctx, (int)h->root, h->handler, h->len);
    if (!m->s) {
        msg_free(ctx, m, 0); /* (its offer comes again) */
        *why = 1;
        return NULL;
    }
    m->nack_wait = ip->wait0;
    m->nack_at = fm_ipmc_now() + m->nack_wait;
    if (h->ack_id)
        m->ack = fm_ack_member(ctx, h->root, h->ack_id, pred, succ < 0 ? 0 : 1);
    return m;
}

/* Lend the handler the chunks that now follow what it has, as one run. */
static void lend(fm_context *ctx, fm_ipmc_msg *m)
{
    while (m->run < m->npk && fm_ipmc_has(m, m->run))
        m->run++;
    uint64_t upto = (uint64_t)m->run * m->h.chunk;
    if (upto > m->h.len)
        upto = m->h.len;
    int last = m->run == m->npk;
    if (!m->s || (upto == m->lent_to && !last))
        return;
    ipmc_run *r = calloc(1, sizeof *r);
    if (!r) {
        fm_log(0, "out of memory for a two-stage multicast from rank %u", m->h.root);
        return; /* (lent with a later chunk, or at the next one) */
    }
    r->m = m;
    r->p.data = m->data + m->lent_to;
    r->p.len = (uint32_t)(upto - m->lent_to);
    m->lent_to = upto;
    m->lent++;
    fm_stream *s = m->s;
    if (last)
        m->s = NULL; /* the core may release it once it has the last run */
    fm_recv_ext_more(ctx, s, &r->p, last);
}

int fm_ipmc_place(fm_context *ctx, fm_ipmc_msg *m, uint32_t first, uint32_t count,
                  const unsigned char *bytes)
{
    int news = 0;
    for (uint32_t i = first; i < first + count && i < m->npk; i++) {
        uint32_t n = fm_ipmc_chunk_len(m->h.len, m->h.chunk, i);
        if (!fm_ipmc_has(m, i)) {
            memcpy(m->data + (uint64_t)i * m->h.chunk, bytes, n);
            m->have[i / 64] |= (uint64_t)1 << (i % 64);
            m->nhave++;
            news = 1;
        }
        bytes += n;
    }
    if (!news)
        return 0;
    fm_ipmc *ip = fm_ipmc_of(ctx);
    m->nack_wait = ip->wait0; /* news: the predecessor is not stuck */
    m->news_at = fm_ipmc_now();
    /* Only the last chunk still to come (or lost): an eighth of the wait. */
    m->nack_at = m->news_at + (m->hi + 1 >= m->npk ? m->nack_wait / 8 : m->nack_wait);
    if (!m->is_root)
        lend(ctx, m);
    if (m->nhave < m->npk || m->complete)
        return 0;
    m->complete = 1;
    return 1;
}

int fm_ipmc_missing(const fm_ipmc_msg *m, uint32_t upto, uint32_t *ranges, int max)
{
    int k = 0;
    for (uint32_t i = m->run; i < upto && k < max; i++) {
        if (fm_ipmc_has(m, i))
            continue;
        uint32_t j = i;
        while (j < upto && !fm_ipmc_has(m, j))
            j++;
        ranges[2 * k] = i;
        ranges[2 * k + 1] = j - i;
        k++;
        i = j;
    }
    return k;
}

/* mark: this member is finished with it (its later datagrams and offers start nothing). */
static void msg_free(fm_context *ctx, fm_ipmc_msg *m, int mark)
{
    fm_ipmc *ip = fm_ipmc_of(ctx);
    for (fm_ipmc_msg **pp = &ip->msgs; *pp; pp = &(*pp)->next)
        if (*pp == m) {
            *pp = m->next;
            break;
        }
    ip->held -= m->bytes;
    if (mark && !m->is_root)
        done_mark(ctx, m->h.root, m->h.mid);
    free(m->extra);
    free(m->data);
    free(m->have);
    free(m->want);
    free(m);
}

void fm_ipmc_maybe_free(fm_context *ctx, fm_ipmc_msg *m)
{
    int root_done = !m->is_root || m->abandoned || (m->filled == m->h.len && m->sent == m->npk);
    if ((m->complete && m->succ_has && !m->lent && !m->s && root_done) ||
        (m->abandoned && !m->lent))
        msg_free(ctx, m, 1);
}

void fm_ipmc_ext_release(fm_context *ctx, fm_pkt *p)
{
    ipmc_run *r = (ipmc_run *)(void *)((char *)p - offsetof(ipmc_run, p));
    fm_ipmc_msg *m = r->m;
    free(r);
    m->lent--;
    fm_ipmc_maybe_free(ctx, m);
}

void fm_ipmc_free_all(fm_context *ctx)
{
    fm_ipmc *ip = fm_ipmc_of(ctx);
    int left = 0;
    while (ip->msgs) {
        fm_ipmc_msg *m = ip->msgs;
        left += !(m->complete && m->succ_has);
        m->lent = 0; /* (the core gave every run back first: fm_core_close) */
        m->s = NULL;
        msg_free(ctx, m, 0);
    }
    if (left)
        fm_log(1, "fm_finalize: %d two-stage multicasts not finished around the ring", left);
}
