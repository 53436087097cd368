/* SPDX-License-Identifier: BSD-3-Clause */
/* Stage 2: the ring of the members, in order from the root. Each member answers for its
 * successor: once it has the whole message it waits FM_MCAST_REPAIR_WAIT for the successor's
 * HAVE, then offers (OFFER: the datagram header, so that a successor that lost every datagram
 * learns of the multicast), doubling the wait each time. A member that misses chunks asks its
 * predecessor for them (NACK) when the last datagram came with gaps before it, or when no news
 * came for FM_MCAST_REPAIR_WAIT (doubling), and gets them as REPAIRs, served as soon as the
 * predecessor has them itself. Once complete it sends HAVE to its predecessor. So a multicast
 * that lost nothing costs one small message per member. With FM_MCAST_REPAIR=forward (the
 * paper's) a complete member sends the whole message on to its successor instead of
 * waiting to be asked. Every message here is a request that never waits (core/request.c). */
#include <stdlib.h>
#include <string.h>

#include "ack.h"
#include "handlers.h"
#include "ipmc_internal.h"
#include "log.h"
#include "request.h"
#include "send.h"

#define WAIT_MAX 64.0 /* the most a wait doubles to, in FM_MCAST_REPAIR_WAITs */

static void owned_done(int status, void *arg)
{
    (void)status;
    free(arg);
}

/* A message of len bytes at buf (malloc'd: freed here once sent, or now on an error). Once
 * fm_finalize is past its barrier nothing is sent: every multicast was settled before it
 * (fm_ipmc_busy), so what would go now answers a late duplicate, and a peer past its own
 * last drain would never return the credits it takes. */
static int send_owned(fm_context *ctx, int dest, unsigned char *buf, size_t len)
{
    if (ctx->finalizing) {
        free(buf);
        return FM_OK;
    }
    if (len <= FM_REQ_INLINE) {
        int rc = fm_req_send_internal(ctx, dest, buf, len, fm_ipmc_of(ctx)->handler);
        free(buf);
        return rc;
    }
    fm_request *r;
    int rc = fm_req_new(ctx, buf, len, &r);
    if (rc) {
        free(buf);
        return rc;
    }
    fm_stream *s = NULL;
    rc = fm_send_open(ctx, dest, len, fm_ipmc_of(ctx)->handler, &s);
    rc = fm_req_start(r, rc, s, buf, len, owned_done, buf, NULL);
    if (rc)
        free(buf);
    return rc;
}

static unsigned char *ctl_new(size_t len, int type, uint32_t root, uint32_t mid)
{
    unsigned char *b = malloc(len);
    if (b) {
        memset(b, 0, FM_IPMC_CTL_LEN);
        b[0] = (unsigned char)type;
        fm_put32(b + 4, root);
        fm_put32(b + 8, mid);
    }
    return b;
}

static void log_send(int rc, const char *what, int dest)
{
    if (rc)
        fm_log(1, "two-stage multicast: cannot send %s to rank %d now (%s): later", what, dest,
               fm_strerror(rc));
}

void fm_ipmc_send_ctl(fm_context *ctx, int dest, int type, uint32_t root, uint32_t mid)
{
    unsigned char *b = ctl_new(FM_IPMC_CTL_LEN, type, root, mid);
    log_send(b ? send_owned(ctx, dest, b, FM_IPMC_CTL_LEN) : FM_ERR_NOMEM, "a control message",
             dest);
}

static void send_offer(fm_context *ctx, fm_ipmc_msg *m)
{
    size_t len = 4 + FM_IPMC_HDR_LEN + m->h.extra_len;
    unsigned char *b = malloc(len);
    if (b) {
        memset(b, 0, 4);
        b[0] = FM_IPMC_OFFER;
        fm_ipmc_hdr_encode(&m->h, b + 4);
        memcpy(b + 4 + FM_IPMC_HDR_LEN, m->extra, m->h.extra_len);
    }
    int rc = b ? send_owned(ctx, m->succ, b, len) : FM_ERR_NOMEM;
    ctx->stats.ring_offers += rc == FM_OK;
    log_send(rc, "an offer", m->succ);
}

/* A NACK of the k (first, count) pairs in ranges to m's predecessor. */
static void nack(fm_context *ctx, fm_ipmc_msg *m, const uint32_t *ranges, int k, const char *what)
{
    size_t len = FM_IPMC_CTL_LEN + 4 + 8 * (size_t)k;
    unsigned char *b = k ? ctl_new(len, FM_IPMC_NACK, m->h.root, m->h.mid) : NULL;
    if (!k)
        return;
    if (b) {
        fm_put32(b + FM_IPMC_CTL_LEN, (uint32_t)k);
        for (int i = 0; i < 2 * k; i++)
            fm_put32(b + FM_IPMC_CTL_LEN + 4 + 4 * (size_t)i, ranges[i]);
    }
    int rc = b ? send_owned(ctx, m->pred, b, len) : FM_ERR_NOMEM;
    ctx->stats.ring_nacks += rc == FM_OK;
    fm_log(2, "asked rank %d for %d ranges of multicast %u/%u from chunk %u (%u of %u here, %s)",
           m->pred, k, m->h.root, m->h.mid, ranges[0], m->nhave, m->npk, what);
    log_send(rc, "a repair request", m->pred);
}

void fm_ipmc_send_nack(fm_context *ctx, fm_ipmc_msg *m, int tail)
{
    uint32_t ranges[2 * FM_IPMC_NACK_MAX];
    int k = fm_ipmc_missing(m, tail ? m->npk : m->hi, ranges, FM_IPMC_NACK_MAX);
    if (k)
        nack(ctx, m, ranges, k, tail ? "all" : "gaps");
}

void fm_ipmc_send_gap(fm_context *ctx, fm_ipmc_msg *m, uint32_t first, uint32_t count)
{
    uint32_t range[2] = {first, count};
    nack(ctx, m, range, 1, "a new gap");
}

int fm_ipmc_send_repair(fm_context *ctx, fm_ipmc_msg *m, uint32_t first, uint32_t count)
{
    uint64_t at = (uint64_t)first * m->h.chunk, end = (uint64_t)(first + count) * m->h.chunk;
    if (end > m->h.len)
        end = m->h.len;
    size_t len = FM_IPMC_REPAIR_LEN + (size_t)(end - at);
    unsigned char *b = ctl_new(len, FM_IPMC_REPAIR, m->h.root, m->h.mid);
    if (!b)
        return FM_ERR_NOMEM;
    fm_put32(b + 12, first);
    fm_put32(b + 16, count);
    memcpy(b + FM_IPMC_REPAIR_LEN, m->data + at, (size_t)(end - at));
    int rc = send_owned(ctx, m->succ, b, len);
    if (rc == FM_OK)
        ctx->stats.ring_repair_bytes_sent += end - at;
    log_send(rc, "a repair", m->succ);
    return rc;
}

/* The first offer waits OFFER_WAITS repair waits: a successor that lost something asks
 * for it itself, and its HAVE may sit a while in a busy or sleeping sender. */
#define OFFER_WAITS 4.0

void fm_ipmc_offer_later(fm_context *ctx, fm_ipmc_msg *m, double now)
{
    m->offer_wait = OFFER_WAITS * fm_ipmc_of(ctx)->wait0;
    m->offer_at = now + m->offer_wait;
}

void fm_ipmc_completed(fm_context *ctx, fm_ipmc_msg *m)
{
    double now = fm_ipmc_now();
    if (!m->is_root) {
        fm_ipmc_send_ctl(ctx, m->pred, FM_IPMC_HAVE, m->h.root, m->h.mid);
        if (m->ack) {
            fm_ack_own(ctx, m->ack, FM_OK);
            m->ack = NULL;
        }
    }
    if (m->succ_has)
        return;
    if (fm_ipmc_of(ctx)->forward && !m->forwarded) {
        m->forwarded = 1;
        fm_ipmc_wanted(ctx, m, 0, m->npk); /* the whole message on, now */
    }
    if (!m->is_root) /* (the root's waits from its last datagram: ipmc_root.c) */
        fm_ipmc_offer_later(ctx, m, now);
}

void fm_ipmc_wanted(fm_context *ctx, fm_ipmc_msg *m, uint32_t first, uint32_t count)
{
    if (!m->want && !(m->want = calloc(m->npk / 64 + 1, sizeof *m->want)))
        return; /* (it asks again) */
    for (uint32_t i = first; i < m->npk && i - first < count; i++)
        if (!((m->want[i / 64] >> (i % 64)) & 1)) {
            m->want[i / 64] |= (uint64_t)1 << (i % 64);
            m->nwant++;
        }
    fm_ipmc_serve(ctx, m);
}

/* Chunks in one repair: up to 64 KiB of payload. */
static uint32_t repair_chunks(const fm_ipmc_msg *m)
{
    uint32_t c = 65536 / m->h.chunk;
    return c ? c : 1;
}

void fm_ipmc_serve(fm_context *ctx, fm_ipmc_msg *m)
{
    uint32_t most = repair_chunks(m);
    for (uint32_t i = 0; i < m->npk && m->nwant;) {
        int w = (m->want[i / 64] >> (i % 64)) & 1;
        if (!w || !fm_ipmc_has(m, i)) {
            i++;
            continue;
        }
        uint32_t j = i;
        while (j < m->npk && j - i < most && (m->want[j / 64] >> (j % 64)) & 1 && fm_ipmc_has(m, j))
            j++;
        if (fm_ipmc_send_repair(ctx, m, i, j - i))
            return; /* (kept: served again at the next chunk, NACK or offer) */
        for (uint32_t k = i; k < j; k++)
            m->want[k / 64] &= ~((uint64_t)1 << (k % 64));
        m->nwant -= j - i;
        i = j;
    }
}

void fm_ipmc_arrived(fm_context *ctx, fm_ipmc_msg *m, uint32_t first, uint32_t count,
                     const unsigned char *bytes)
{
    int done = fm_ipmc_place(ctx, m, first, count, bytes);
    if (m->want)
        fm_ipmc_serve(ctx, m);
    if (done)
        fm_ipmc_completed(ctx, m);
    fm_ipmc_maybe_free(ctx, m);
}

/* ---- messages from the ring ---- */

/* An offer: the multicast's header, from the predecessor, which has it all. */
static void on_offer(fm_context *ctx, const unsigned char *b, size_t len, int sender)
{
    fm_ipmc_hdr h;
    fm_ipmc *ip = fm_ipmc_of(ctx);
    if (len < 4 || fm_ipmc_hdr_decode(b + 4, len - 4, ctx->job_key, ctx->size, FM_MAX_HANDLERS, 0,
                                      &h) != FM_IPMC_OK) {
        ctx->stats.dropped++;
        fm_log(1, "dropped a malformed two-stage multicast offer from rank %d", sender);
        return;
    }
    fm_ipmc_msg *m = fm_ipmc_find(ip, h.root, h.mid);
    if (!m && fm_ipmc_done_has(ctx, h.root, h.mid)) {
        fm_ipmc_send_ctl(ctx, sender, FM_IPMC_HAVE, h.root, h.mid);
        return;
    }
    int why = 0;
    if (!m && !(m = fm_ipmc_member_new(ctx, &h, b + 4 + FM_IPMC_HDR_LEN, &why))) {
        if (why != 1) /* no member, or over here: say so, or it offers forever */
            fm_ipmc_send_ctl(ctx, sender, FM_IPMC_HAVE, h.root, h.mid);
        return; /* (not now: it offers again) */
    }
    if (m->complete)
        fm_ipmc_send_ctl(ctx, sender, FM_IPMC_HAVE, h.root, h.mid);
    else {
        m->offered = 1; /* answered after the datagrams waiting here (fm_ipmc_timers) */
        fm_ipmc_of(ctx)->offers = 1;
    }
}

static void on_nack(fm_context *ctx, fm_ipmc_msg *m, const unsigned char *b, size_t len)
{
    uint32_t k = len >= FM_IPMC_CTL_LEN + 4 ? fm_get32(b + FM_IPMC_CTL_LEN) : 0;
    if (k > FM_IPMC_NACK_MAX || len != FM_IPMC_CTL_LEN + 4 + 8 * (size_t)k) {
        ctx->stats.dropped++;
        return;
    }
    for (uint32_t i = 0; i < k; i++) {
        uint32_t first = fm_get32(b + FM_IPMC_CTL_LEN + 4 + 8 * (size_t)i);
        uint32_t count = fm_get32(b + FM_IPMC_CTL_LEN + 8 + 8 * (size_t)i);
        if (first < m->npk && count)
            fm_ipmc_wanted(ctx, m, first, count);
    }
}

static void on_repair(fm_context *ctx, fm_ipmc_msg *m, const unsigned char *b, size_t len)
{
    if (len < FM_IPMC_REPAIR_LEN) {
        ctx->stats.dropped++;
        return;
    }
    uint32_t first = fm_get32(b + 12), count = fm_get32(b + 16);
    uint64_t at = (uint64_t)first * m->h.chunk, end = (uint64_t)first + count;
    end = end >= m->npk ? m->h.len : end * m->h.chunk;
    if (first >= m->npk || !count || at > end || len - FM_IPMC_REPAIR_LEN != end - at) {
        ctx->stats.dropped++;
        return;
    }
    ctx->stats.ring_repair_bytes_received += end - at;
    fm_ipmc_arrived(ctx, m, first, count, b + FM_IPMC_REPAIR_LEN);
}

static void on_ring(fm_context *ctx, const unsigned char *b, size_t len, int sender)
{
    int type = len ? b[0] : 0;
    if (type == FM_IPMC_OFFER) {
        on_offer(ctx, b, len, sender);
        return;
    }
    uint32_t root = len >= FM_IPMC_CTL_LEN ? fm_get32(b + 4) : 0;
    uint32_t mid = len >= FM_IPMC_CTL_LEN ? fm_get32(b + 8) : 0;
    fm_ipmc_msg *m = len >= FM_IPMC_CTL_LEN ? fm_ipmc_find(fm_ipmc_of(ctx), root, mid) : NULL;
    if (type == FM_IPMC_SYNC && len == FM_IPMC_CTL_LEN) {
        fm_ipmc_send_ctl(ctx, sender, FM_IPMC_READY, root, mid);
        return;
    }
    if (!m) /* (over here already: a late or repeated message) */
        return;
    if (type == FM_IPMC_NACK && sender == m->succ)
        on_nack(ctx, m, b, len);
    else if (type == FM_IPMC_REPAIR && sender == m->pred && !m->is_root) {
        on_repair(ctx, m, b, len); /* (may free m) */
        return;
    } else if (type == FM_IPMC_HAVE && sender == m->succ && len == FM_IPMC_CTL_LEN)
        m->succ_has = 1;
    else if (type == FM_IPMC_READY && sender == m->sync_with && len == FM_IPMC_CTL_LEN)
        m->sync_with = -1;
    else {
        ctx->stats.dropped++;
        fm_log(1, "dropped a two-stage multicast message (type %d) from rank %d", type, sender);
        return;
    }
    fm_ipmc_maybe_free(ctx, m);
}

/* Ring messages are read whole: they are small, or repairs of at most 64 KiB. */
static int ring_handler(fm_stream *s, int sender, void *arg)
{
    fm_context *ctx = arg;
    if (!fm_stream_complete(s))
        return FM_CONTINUE;
    size_t len = fm_stream_available(s);
    unsigned char *b = malloc(len ? len : 1);
    if (!b || fm_receive(s, b, len) != (ssize_t)len) {
        fm_log(0, "two-stage multicast: out of memory for a %zu-byte message from rank %d", len,
               sender);
        free(b);
        return FM_DONE; /* (a repair is asked for again, an offer made again) */
    }
    on_ring(ctx, b, len, sender);
    free(b);
    return FM_DONE;
}

int fm_ipmc_ring_init(fm_context *ctx)
{
    int id = fm_handlers_add_internal(ctx, ring_handler, ctx);
    if (id < 0)
        return id;
    fm_ipmc_of(ctx)->handler = id;
    return FM_OK;
}

/* ---- timers ---- */

static double doubled(double wait, double wait0)
{
    return wait * 2 > wait0 * WAIT_MAX ? wait0 * WAIT_MAX : wait * 2;
}

int fm_ipmc_timers(fm_context *ctx, double now)
{
    fm_ipmc *ip = fm_ipmc_of(ctx);
    int work = 0;
    for (fm_ipmc_msg *m = ip->msgs, *next; m; m = next) {
        next = m->next;
        if (m->offered && !m->complete) {
            /* Chunks still coming from the root (news within a wait) are not asked for. */
            fm_ipmc_send_nack(ctx, m, now - m->news_at >= ip->wait0);
            m->offered = 0;
            m->nack_at = now + m->nack_wait;
            work++;
        }
        if (!m->is_root && !m->complete && now >= m->nack_at) {
            /* The first time only the gaps: the rest may still be on its way; unless only
             * the last chunk is left (the root sends nothing after it). */
            fm_ipmc_send_nack(ctx, m, m->nack_wait > ip->wait0 || m->hi + 1 >= m->npk);
            m->nack_wait = doubled(m->nack_wait, ip->wait0);
            m->nack_at = now + m->nack_wait;
            work++;
        }
        int sent_all = !m->is_root || (m->filled == m->h.len && m->sent == m->npk);
        if (m->complete && sent_all && !m->succ_has && m->offer_at > 0 && now >= m->offer_at) {
            send_offer(ctx, m);
            m->offer_wait = doubled(m->offer_wait, ip->wait0);
            m->offer_at = now + m->offer_wait;
            work++;
        }
    }
    return work;
}
