/* SPDX-License-Identifier: BSD-3-Clause */
/* Stage 1 at the root: its stream (fm_mcast_begin and the rest, as for any tree) is a
 * multi-destination stream with no destination whose tap keeps every byte written (the ring
 * may ask for any of them until the successor has it all), and progress sends each chunk once
 * as a datagram to the job's group as soon as it is written: after FM_MCAST_ROOT_DELAY, once
 * the FM_MCAST_SYNC member has answered, at FM_MCAST_RATE. */
#include <stdlib.h>
#include <string.h>

#include "ack.h"
#include "ipmc.h"
#include "ipmc_internal.h"
#include "log.h"
#include "multi.h"
#include "prefix/prefix_route.h"
#include "progress.h"
#include "request.h"

#define MIN_CHUNK 256 /* payload bytes a datagram carries at least beside the member set */

/* Every chunk the stream has written whole is here; the last with the last packet. */
static void root_tap(fm_stream *s, fm_pkt *p, int last)
{
    fm_ipmc_msg *m = s->tap_arg;
    uint64_t n = p->len <= m->h.len - m->filled ? p->len : m->h.len - m->filled;
    memcpy(m->data + m->filled, fm_pkt_payload(p), n);
    m->filled += n;
    uint32_t whole = (uint32_t)(m->filled / m->h.chunk);
    for (; m->run < whole && m->run < m->npk; m->run++) {
        m->have[m->run / 64] |= (uint64_t)1 << (m->run % 64);
        m->nhave++;
    }
    if (m->want)
        fm_ipmc_serve(s->ctx, m);
    if (last) {
        if (m->filled < m->h.len) { /* its datagrams told the declared length already */
            fm_log(0,
                   "two-stage multicast %u ended %llu bytes short of its declared length: "
                   "its members get zeros in their place",
                   m->h.mid, (unsigned long long)(m->h.len - m->filled));
            memset(m->data + m->filled, 0, m->h.len - m->filled);
            m->filled = m->h.len;
        }
        for (; m->run < m->npk; m->run++)
            m->have[m->run / 64] |= (uint64_t)1 << (m->run % 64);
        m->nhave = m->npk;
        m->complete = 1;
        fm_ipmc_completed(s->ctx, m);
    }
}

/* The ring's order: the group's, or the members' ascending ranks; the root's successor. */
static int successor(fm_context *ctx, const int *members, int n, int pos, uint64_t group)
{
    if (group)
        return members[(pos + 1) % n];
    int next = -1, lowest = ctx->rank;
    for (int i = 0; i < n; i++) {
        if (members[i] > ctx->rank && (next < 0 || members[i] < next))
            next = members[i];
        if (members[i] < lowest)
            lowest = members[i];
    }
    return next >= 0 ? next : lowest;
}

static int room_free(fm_context *ctx, void *arg)
{
    fm_ipmc *ip = fm_ipmc_of(ctx);
    return ip->held + *(uint64_t *)arg <= ip->budget;
}

/* Room in FM_MCAST_BUFFER for bytes more: waits outside handlers, FM_EAGAIN inside. */
static int make_room(fm_context *ctx, uint64_t bytes)
{
    fm_ipmc *ip = fm_ipmc_of(ctx);
    if (bytes > ip->budget)
        return FM_ERR_TOO_LONG;
    if (room_free(ctx, &bytes))
        return FM_OK;
    if (ctx->in_handler)
        return FM_EAGAIN;
    return fm_progress_until(ctx, room_free, &bytes, "FM_MCAST_BUFFER (two-stage multicasts)");
}

/* The header every datagram of the multicast carries, and its extra into extra (*h's
 * extra_len bytes). */
static int root_header(fm_context *ctx, const int *members, int n, uint64_t group, size_t len,
                       int handler, fm_ipmc_hdr *h, unsigned char *extra)
{
    size_t room = FM_TP_DGRAM_MAX - FM_IPMC_HDR_LEN - MIN_CHUNK;
    int el = 8;
    if (group)
        fm_put64(extra, group);
    else if ((el = fm_prefix_dests_encode(members, n, ctx->size, extra, room)) < 0)
        return el; /* (FM_ERR_TOO_LONG: the set does not fit a datagram) */
    *h = (fm_ipmc_hdr){.flags = group ? FM_IPMC_GROUP : FM_IPMC_SET,
                       .handler = (uint16_t)handler,
                       .extra_len = (uint16_t)el,
                       .job_key = ctx->job_key,
                       .root = (uint32_t)ctx->rank,
                       .mid = fm_ipmc_of(ctx)->next_mid++,
                       .chunk = (uint32_t)(FM_TP_DGRAM_MAX - FM_IPMC_HDR_LEN - (size_t)el),
                       .len = len,
                       .n = (uint32_t)n};
    return FM_OK;
}

static void root_sync(fm_context *ctx, fm_ipmc_msg *m, const int *members, int n)
{
    if (!ctx->cfg.mcast_sync)
        return;
    fm_ipmc *ip = fm_ipmc_of(ctx);
    int pick = (int)(ip->rng % (uint64_t)(n - 1)), k = 0;
    ip->rng = ip->rng * 6364136223846793005ull + 1442695040888963407ull;
    for (int i = 0; i < n; i++)
        if (members[i] != ctx->rank && k++ == pick)
            m->sync_with = members[i];
    fm_ipmc_send_ctl(ctx, m->sync_with, FM_IPMC_SYNC, m->h.root, m->h.mid);
}

int fm_ipmc_open(fm_context *ctx, const int *members, int n, int pos, uint64_t group, size_t len,
                 int handler, struct fm_request *ack, fm_stream **stream)
{
    fm_ipmc_hdr h;
    unsigned char extra[FM_TP_DGRAM_MAX];
    int rc = root_header(ctx, members, n, group, len, handler, &h, extra);
    if (rc || (rc = make_room(ctx, fm_ipmc_msg_bytes(len, h.chunk, h.extra_len))))
        return rc;
    struct fm_ack *a = NULL;
    if (ack)
        h.ack_id = fm_ack_root_open(ctx, 1, &a);
    fm_ipmc_msg *m = fm_ipmc_msg_alloc(ctx, &h, extra);
    rc = m ? fm_multi_open(ctx, NULL, 0, len, ctx->packet_size, handler, NULL, 0, stream)
           : FM_ERR_NOMEM;
    if (rc) {
        if (a)
            fm_ack_root_cancel(a);
        if (m) {
            m->abandoned = 1;
            fm_ipmc_maybe_free(ctx, m);
        }
        return rc;
    }
    if (a)
        fm_ack_root_commit(ctx, a, ack);
    m->is_root = 1;
    m->pred = -1;
    m->succ = successor(ctx, members, n, pos, group);
    m->start_at = fm_ipmc_now() + 1e-6 * (double)ctx->cfg.mcast_root_delay;
    (*stream)->tap = root_tap;
    (*stream)->tap_arg = m;
    root_sync(ctx, m, members, n);
    return FM_OK;
}

/* Tokens for len bytes at FM_MCAST_RATE (a bucket of 64 KiB or 2 ms, whichever is more). */
static int paced(fm_ipmc *ip, double now, size_t len)
{
    if (ip->rate <= 0)
        return 1;
    double cap = ip->rate * 0.002 > 65536 ? ip->rate * 0.002 : 65536;
    ip->tokens += (now - ip->tokens_at) * ip->rate;
    ip->tokens_at = now;
    if (ip->tokens > cap)
        ip->tokens = cap;
    if (ip->tokens < (double)len)
        return 0;
    ip->tokens -= (double)len;
    return 1;
}

/* The datagram of m's chunk index: FM_OK (sent, or refused and left to the ring), FM_EAGAIN
 * (the socket is full: later). */
static int send_chunk(fm_context *ctx, fm_ipmc_msg *m, uint32_t index)
{
    fm_ipmc *ip = fm_ipmc_of(ctx);
    uint32_t plen = fm_ipmc_chunk_len(m->h.len, m->h.chunk, index);
    size_t len = FM_IPMC_HDR_LEN + m->h.extra_len + plen;
    fm_ipmc_hdr h = m->h;
    h.index = index;
    fm_ipmc_hdr_encode(&h, ip->buf);
    memcpy(ip->buf + FM_IPMC_HDR_LEN, m->extra, m->h.extra_len);
    memcpy(ip->buf + FM_IPMC_HDR_LEN + m->h.extra_len, m->data + (uint64_t)index * m->h.chunk,
           plen);
    int rc = ip->dgram->ops->send(ip->dgram, ip->group, ip->buf, len);
    if (rc == FM_EAGAIN)
        return rc;
    if (rc)
        fm_log(0, "two-stage multicast: a datagram was refused (%s); the ring repairs it",
               fm_strerror(rc));
    ctx->stats.dgram_sent += rc == FM_OK;
    return FM_OK;
}

static size_t chunk_bytes(const fm_ipmc_msg *m, uint32_t index)
{
    return FM_IPMC_HDR_LEN + m->h.extra_len + fm_ipmc_chunk_len(m->h.len, m->h.chunk, index);
}

/* Datagrams of m's written chunks not sent yet; returns those sent, or -1 to stop here (the
 * socket or the rate is full). */
static int send_chunks(fm_context *ctx, fm_ipmc_msg *m, double now)
{
    fm_ipmc *ip = fm_ipmc_of(ctx);
    int n = 0;
    while (m->sent < m->run) {
        size_t len = chunk_bytes(m, m->sent);
        if (!paced(ip, now, len))
            return -1;
        if (send_chunk(ctx, m, m->sent) == FM_EAGAIN) {
            ip->tokens += ip->rate > 0 ? (double)len : 0;
            return -1;
        }
        m->sent++;
        n++;
    }
    if (m->complete && m->sent == m->npk && !m->offer_at)
        fm_ipmc_offer_later(ctx, m, now);
    return n;
}

int fm_ipmc_root_send(fm_context *ctx, double now)
{
    fm_ipmc *ip = fm_ipmc_of(ctx);
    int work = 0;
    for (fm_ipmc_msg *m = ip->msgs; m; m = m->next) {
        if (!m->is_root || m->sent == m->npk || m->sync_with >= 0 || now < m->start_at)
            continue;
        int n = send_chunks(ctx, m, now);
        if (n < 0)
            return work + 1;
        work += n;
    }
    return work;
}
