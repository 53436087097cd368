/* SPDX-License-Identifier: BSD-3-Clause */
/* The two-stage multicast's set-up and its place in progress: the settings, the job's group
 * (drawn from the job's key unless FM_MCAST_GROUP names one), the datagram endpoint
 * (providers/udp) when FM_MCAST_DGRAM has one, and the round each progress call makes:
 * datagrams in, the root's datagrams out, the ring's timers. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ipmc.h"
#include "ipmc_internal.h"
#include "log.h"
#include "progress.h"
#include "topo.h"

#define TICK 100e-6 /* seconds between looks at the timers */

/* ---- settings ---- */

enum { DGRAM_OFF, DGRAM_ON, DGRAM_AUTO };

static int dgram_mode(const char *v)
{
    return !strcmp(v, "off")    ? DGRAM_OFF
           : !strcmp(v, "on")   ? DGRAM_ON
           : !strcmp(v, "auto") ? DGRAM_AUTO
                                : -1;
}

static int parse_drop(const char *v, double *out)
{
    char *end;
    double d = strtod(v, &end);
    if (end == v || *end || !(d >= 0 && d <= 1))
        return -1;
    *out = d;
    return 0;
}

/* "A.B.C.D:PORT", a multicast address and a port > 0. */
static int parse_group(const char *v, uint32_t *group, uint16_t *port)
{
    char addr[32];
    const char *colon = strrchr(v, ':');
    if (!colon || colon - v >= (long)sizeof addr)
        return -1;
    memcpy(addr, v, (size_t)(colon - v));
    addr[colon - v] = '\0';
    struct in_addr a;
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (inet_pton(AF_INET, addr, &a) != 1 || end == colon + 1 || *end || p < 1 || p > 65535)
        return -1;
    *group = ntohl(a.s_addr);
    *port = (uint16_t)p;
    return (*group >> 28) == 0xe ? 0 : -1;
}

int fm_ipmc_check_config(const fm_config *cfg, char *err, size_t errlen)
{
    double d;
    uint32_t g;
    uint16_t p;
    if (dgram_mode(cfg->mcast_dgram) < 0)
        snprintf(err, errlen, "FM_MCAST_DGRAM=\"%.60s\": want on, off or auto", cfg->mcast_dgram);
    else if (parse_drop(cfg->mcast_drop, &d))
        snprintf(err, errlen, "FM_MCAST_DROP=\"%.60s\": want a fraction from 0 to 1",
                 cfg->mcast_drop);
    else if (strcmp(cfg->mcast_repair, "nack") && strcmp(cfg->mcast_repair, "forward"))
        snprintf(err, errlen, "FM_MCAST_REPAIR=\"%.60s\": want nack or forward", cfg->mcast_repair);
    else if (cfg->mcast_group[0] && parse_group(cfg->mcast_group, &g, &p))
        snprintf(err, errlen,
                 "FM_MCAST_GROUP=\"%.60s\": want a multicast address and a port, as "
                 "239.1.2.3:5000",
                 cfg->mcast_group);
    else
        return FM_OK;
    return FM_ERR_CONFIG;
}

/* The job's group: 239.X.Y.Z and a port from 20000 to 59999, from the key every rank has. */
static void group_of(fm_context *ctx, uint32_t *group, uint16_t *port)
{
    if (ctx->cfg.mcast_group[0] && !parse_group(ctx->cfg.mcast_group, group, port))
        return;
    uint64_t k = ctx->job_key * 0x9e3779b97f4a7c15ull;
    uint32_t z = (uint32_t)(k >> 8) & 0xffffffu;
    if ((z & 0xff) == 0 || (z & 0xff) == 0xff)
        z ^= 0x7f; /* (no network or broadcast-looking last byte) */
    *group = 0xef000000u | z;
    *port = (uint16_t)(20000 + (k >> 40) % 40000);
}

/* ---- the endpoint ---- */

static int open_dgram(fm_context *ctx, fm_ipmc *ip, char *err, size_t errlen)
{
    /* A job on one host stays on lo, as tcp does (whose multicast is off unless a namespace
     * of the job's own turned it on): nothing leaves the host. */
    const char *iface = ctx->cfg.iface[0]                ? ctx->cfg.iface
                        : fm_topo_nhosts(ctx->topo) == 1 ? "lo"
                                                         : "";
    fm_tp_dgram_config c = {.port = ip->port, .iface = iface, .rcvbuf = 8u << 20};
    int rc = fm_tp_dgram_open(&c, &ip->dgram, err, errlen);
    if (rc)
        return rc;
    if ((rc = ip->dgram->ops->join(ip->dgram, ip->group))) {
        struct in_addr a = {htonl(ip->group)};
        snprintf(err, errlen, "cannot join %s (%s)", inet_ntoa(a), fm_strerror(rc));
        ip->dgram->ops->close(ip->dgram);
        ip->dgram = NULL;
    }
    return rc;
}

static int want_dgram(fm_context *ctx)
{
    int mode = dgram_mode(ctx->cfg.mcast_dgram);
    if (mode == DGRAM_AUTO)
        return fm_topo_nhosts(ctx->topo) > 1 && !ctx->tp->info.local_only;
    return mode == DGRAM_ON;
}

int fm_ipmc_init(fm_context *ctx)
{
    fm_ipmc *ip = calloc(1, sizeof *ip);
    if (!(ctx->mcast->ipmc = ip))
        return FM_ERR_NOMEM;
    int rc = fm_ipmc_ring_init(ctx); /* (on every rank: internal ids agree across ranks) */
    if (rc)
        return rc;
    ip->budget = (uint64_t)ctx->cfg.mcast_buffer;
    ip->rate = (double)ctx->cfg.mcast_rate;
    ip->wait0 = 1e-6 * (double)ctx->cfg.mcast_repair_wait;
    ip->forward = !strcmp(ctx->cfg.mcast_repair, "forward");
    (void)parse_drop(ctx->cfg.mcast_drop, &ip->drop);
    ip->rng = (ctx->job_key ^ (0x9e3779b97f4a7c15ull * (uint64_t)(ctx->rank + 1))) | 1;
    group_of(ctx, &ip->group, &ip->port);
    if (ctx->tp->info.simulated && dgram_mode(ctx->cfg.mcast_dgram) == DGRAM_ON) {
        fm_log(0, "FM_MCAST_DGRAM=\"on\": a simulated network (%s) has no datagram multicast",
               ctx->tp->info.fabric);
        return FM_ERR_PROVIDER;
    }
    if (!want_dgram(ctx) || ctx->tp->info.simulated)
        return FM_OK;
    char err[256] = "";
    struct in_addr a = {htonl(ip->group)};
    if ((rc = open_dgram(ctx, ip, err, sizeof err))) {
        if (dgram_mode(ctx->cfg.mcast_dgram) == DGRAM_ON) {
            fm_log(0, "FM_MCAST_DGRAM=\"on\": no datagram multicast here: %s", err);
            return rc == FM_ERR_NOMEM ? rc : FM_ERR_PROVIDER;
        }
        fm_log(1, "no datagram multicast (tree ipmc left out): %s", err);
        return FM_OK;
    }
    ctx->tp->dgram = ip->dgram;
    ctx->tp->info.dgram_mcast = 1;
    if ((rc = fm_progress_watch_fd(ctx, ip->dgram->ops->fd(ip->dgram))))
        return rc;
    ctx->layer_poll = 1;
    fm_log(1, "datagram multicast: group %s, %s", inet_ntoa(a), ip->dgram->where);
    return FM_OK;
}

void fm_ipmc_fini(fm_context *ctx)
{
    fm_ipmc *ip = ctx->mcast->ipmc;
    if (!ip)
        return;
    fm_ipmc_free_all(ctx);
    if (ip->dgram) {
        (void)ip->dgram->ops->leave(ip->dgram, ip->group);
        ip->dgram->ops->close(ip->dgram);
    }
    ctx->extra_fd = -1;
    ctx->layer_poll = 0;
    free(ip->done);
    free(ip);
    ctx->mcast->ipmc = NULL;
}

int fm_ipmc_available(const fm_context *ctx)
{
    return ctx->mcast && ctx->mcast->ipmc && ctx->mcast->ipmc->dgram;
}

double fm_ipmc_loss(const fm_context *ctx)
{
    return ctx->mcast && ctx->mcast->ipmc ? ctx->mcast->ipmc->drop : 0;
}

/* ---- progress ---- */

int fm_ipmc_progress(fm_context *ctx)
{
    fm_ipmc *ip = fm_ipmc_of(ctx);
    int work = ip->dgram ? fm_ipmc_poll(ctx) : 0;
    if (!ip->dgram && !ip->msgs)
        ctx->layer_poll = 0; /* (until a multicast starts here again: ipmc_msg.c) */
    if (work < 0 || !ip->msgs)
        return work;
    double now = fm_ipmc_now();
    work += fm_ipmc_root_send(ctx, now);
    /* (Offers wait until the socket is drained: what it holds is not missing.) */
    if (now >= ip->next_tick || (ip->offers && work < FM_IPMC_POLL_MAX)) {
        ip->offers = 0;
        ip->next_tick = now + TICK;
        work += fm_ipmc_timers(ctx, now);
    }
    return work;
}

/* Written chunks a root has not sent yet (its socket was full, or a delay, a sync or the rate
 * holds them): an event loop must not sleep on the fd for them. */
int fm_ipmc_pending(fm_context *ctx)
{
    for (fm_ipmc_msg *m = ctx->mcast->ipmc->msgs; m; m = m->next)
        if (m->is_root && m->sent < m->run)
            return 1;
    return 0;
}

int fm_ipmc_busy(fm_context *ctx)
{
    fm_ipmc *ip = ctx->mcast ? ctx->mcast->ipmc : NULL;
    for (fm_ipmc_msg *m = ip ? ip->msgs : NULL; m; m = m->next)
        if (m->is_root ? m->complete && (!m->succ_has || m->sent < m->npk)
                       : !m->complete || !m->succ_has)
            return 1;
    return 0;
}
