/* SPDX-License-Identifier: BSD-3-Clause */
/* Stage 1 at a member: datagrams from the job's group, checked (another job's, a malformed or
 * a foreign one is dropped and counted), dropped on purpose at FM_MCAST_DROP, and placed into
 * their multicast's state, which the first one a member gets creates. A datagram that ends
 * the message and finds chunks missing before it asks the predecessor for them at once
 * (datagrams on one network segment do not overtake each other: a gap is a loss). */
#include "ipmc_internal.h"
#include "log.h"

/* xorshift64*: FM_MCAST_DROP's draws, in [0, 1). */
static double draw(fm_ipmc *ip)
{
    ip->rng ^= ip->rng >> 12;
    ip->rng ^= ip->rng << 25;
    ip->rng ^= ip->rng >> 27;
    return (double)((ip->rng * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

static void dropped(fm_context *ctx, fm_ipmc_status st, size_t len)
{
    static const char *const why[] = {"", "too short", "not fastmsg's", "another job's",
                                      "malformed"};
    ctx->stats.dgram_dropped++; /* (not in fm_stats.dropped: datagrams are no packets) */
    fm_log(2, "dropped a %zu-byte datagram: %s", len, why[st]);
}

static void datagram(fm_context *ctx, const unsigned char *b, size_t len)
{
    fm_ipmc *ip = fm_ipmc_of(ctx);
    fm_ipmc_hdr h;
    fm_ipmc_status st = fm_ipmc_hdr_decode(b, len, ctx->job_key, ctx->size, FM_MAX_HANDLERS, 1, &h);
    if (st != FM_IPMC_OK) {
        dropped(ctx, st, len);
        return;
    }
    if (h.root == (uint32_t)ctx->rank)
        return; /* its own, looped back for this host's other ranks */
    if (ip->drop > 0 && draw(ip) < ip->drop) {
        ctx->stats.dgram_drop_injected++;
        return;
    }
    fm_ipmc_msg *m = fm_ipmc_find(ip, h.root, h.mid);
    const unsigned char *extra = b + FM_IPMC_HDR_LEN;
    int why = 0;
    if (!m && !(m = fm_ipmc_member_new(ctx, &h, extra, &why))) {
        if (why != 2) /* (another group's or set's; or not now: the ring brings it later) */
            ctx->stats.dgram_dropped++;
        if (why == 1)
            fm_log(2, "a datagram from rank %u waits for the ring (no group or room here yet)",
                   h.root);
        return;
    }
    if (m->is_root || m->h.len != h.len || m->h.chunk != h.chunk || m->h.handler != h.handler) {
        dropped(ctx, FM_IPMC_BAD, len);
        return;
    }
    ctx->stats.dgram_received++;
    int last = h.index == m->npk - 1;
    if (h.index >= m->hi)
        m->hi = h.index + 1;
    fm_ipmc_arrived(ctx, m, h.index, 1, extra + h.extra_len); /* (may free m) */
    if (last && (m = fm_ipmc_find(ip, h.root, h.mid)) && !m->complete)
        fm_ipmc_send_nack(ctx, m, 0); /* the last came: the gaps before it are losses */
}

int fm_ipmc_poll(fm_context *ctx)
{
    fm_ipmc *ip = fm_ipmc_of(ctx);
    int n = 0;
    for (; n < FM_IPMC_POLL_MAX; n++) {
        size_t len;
        int rc = ip->dgram->ops->recv(ip->dgram, ip->buf, sizeof ip->buf, &len);
        if (rc == FM_EAGAIN)
            break;
        if (rc)
            return rc;
        if (len > sizeof ip->buf) {
            dropped(ctx, FM_IPMC_BAD, len);
            continue;
        }
        datagram(ctx, ip->buf, len);
    }
    return n;
}
