/* SPDX-License-Identifier: BSD-3-Clause */
/* The core's part of fm_init and fm_finalize (runtime/init.c calls these in order).
 *
 * fm_core_open: agree on settings and learn where every rank runs (host cards through the
 * bootstrap, the topology from them) -> open the transport -> exchange endpoint addresses ->
 * credits and packet buffers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "credits.h"
#include "fm_build_config.h"
#include "hooks.h"
#include "job_names.h"
#include "liveness.h"
#include "log.h"
#include "pool.h"
#include "progress.h"
#include "recv.h"
#include "recv_pool.h"
#include "request.h"
#include "send.h"
#include "setup.h"
#include "streams.h"
#include "submit.h"
#include "topo.h"
#include "whole.h"
#include "window.h"
#include "zcopy.h"

/* What every rank publishes before the network is up: where it runs and the settings that
 * must agree across the job. A host is a host name plus a network namespace (topo.h), so
 * ranks in different namespaces of one machine count as different hosts. */
typedef struct fm_host_card {
    char host[128]; /* fm_topo_host_key */
    uint32_t packet_size, credits;
    char provider[64];
    uint32_t provider_set; /* FM_PROVIDER came from the environment, not the default */
    fm_liveness_id live;   /* this process, for peers that can see it (liveness.c) */
} fm_host_card;

static int config_from_env(const fm_config *cfg, const char *name)
{
    for (int i = 0; i < fm_config_nvars; i++)
        if (!strcmp(fm_config_vars[i].name, name))
            return cfg->source[i] == FM_CFG_FROM_ENV;
    return 0;
}

static int provider_set(const fm_config *cfg)
{
    return config_from_env(cfg, "FM_PROVIDER");
}

static void host_card(const fm_context *ctx, fm_host_card *c)
{
    memset(c, 0, sizeof *c);
    if (!fm_boot_host((fm_boot *)&ctx->boot, c->host, sizeof c->host))
        fm_topo_host_key(c->host, sizeof c->host);
    c->packet_size = (uint32_t)ctx->packet_size;
    c->credits = (uint32_t)ctx->credits;
    snprintf(c->provider, sizeof c->provider, "%.63s", ctx->cfg.provider);
    c->provider_set = (uint32_t)provider_set(&ctx->cfg);
    fm_liveness_self(&c->live);
}

/* The first setting two cards disagree on (its variable's name; their value in t, ours in m),
 * or NULL. */
static const char *card_differs(const fm_host_card *theirs, const fm_host_card *mine, char *t,
                                char *m, size_t len)
{
    if (strcmp(theirs->provider, mine->provider)) {
        snprintf(t, len, "%s", theirs->provider);
        snprintf(m, len, "%s", mine->provider);
        return "FM_PROVIDER";
    }
    int credits = theirs->credits != mine->credits;
    if (!credits && theirs->packet_size == mine->packet_size)
        return NULL;
    snprintf(t, len, "%u", credits ? theirs->credits : theirs->packet_size);
    snprintf(m, len, "%u", credits ? mine->credits : mine->packet_size);
    return credits ? "FM_CREDITS" : "FM_PACKET_SIZE";
}

/* Every rank's host key into keys[r] (cards: size of them). */
static int read_cards(fm_context *ctx, fm_host_card *cards, const fm_host_card *mine)
{
    int rc = FM_OK;
    for (int r = 0; r < ctx->size; r++) {
        fm_host_card *theirs = &cards[r];
        size_t len = sizeof *theirs;
        rc = fm_boot_get(&ctx->boot, r, "fm.card", theirs, &len);
        FM_CHECK(rc == FM_OK && len == sizeof *theirs, rc ? rc : FM_ERR_BOOTSTRAP,
                 "bootstrap get of rank %d failed: %s", r, ctx->boot.err);
        theirs->host[sizeof theirs->host - 1] = '\0';
        fm_liveness_watch(ctx->rank, ctx->size, r, &theirs->live, &mine->live);
        char t[64], m[64];
        const char *name = card_differs(theirs, mine, t, m, sizeof t);
        FM_CHECK(!name, FM_ERR_CONFIG,
                 "rank %d runs with %s=\"%s\", this rank with %s=\"%s\": every rank must use "
                 "the same FM_PROVIDER, FM_PACKET_SIZE and FM_CREDITS",
                 r, name, t, name, m);
    }
error:
    return rc;
}

/* Agree on settings and build the topology (ctx->topo) from every rank's host. *chosen: some
 * rank set FM_PROVIDER itself. */
static int exchange_cards(fm_context *ctx, int *chosen)
{
    fm_host_card mine, *cards = calloc((size_t)ctx->size, sizeof *cards);
    const char **keys = calloc((size_t)ctx->size, sizeof *keys);
    int rc = FM_ERR_NOMEM;
    FM_CHECK(cards && keys, rc, "out of memory for %d host cards", ctx->size);
    host_card(ctx, &mine);
    rc = fm_boot_put(&ctx->boot, "fm.card", &mine, sizeof mine);
    FM_CHECK(rc == FM_OK, rc, "bootstrap put failed: %s", ctx->boot.err);
    rc = fm_boot_fence(&ctx->boot);
    FM_CHECK(rc == FM_OK, rc, "bootstrap fence failed: %s", ctx->boot.err);
    if ((rc = read_cards(ctx, cards, &mine)))
        goto error;
    *chosen = 0;
    for (int r = 0; r < ctx->size; r++) {
        keys[r] = cards[r].host;
        *chosen |= cards[r].provider_set != 0;
    }
    char err[256] = "";
    rc = fm_topo_build(ctx->size, keys, ctx->cfg.topology, &ctx->topo, err, sizeof err);
    FM_CHECK(rc == FM_OK, rc, "FM_TOPOLOGY=\"%.60s\": %s", ctx->cfg.topology, err);
error:
    free(cards);
    free(keys);
    return rc;
}

/* Publish our endpoint address, read everyone's, connect. */
static int exchange_addresses(fm_context *ctx)
{
    unsigned char addr[256];
    size_t len = sizeof addr;
    unsigned char *all = NULL;
    int rc = ctx->tp->ops->addr(ctx->tp, addr, &len);
    FM_CHECK(rc == FM_OK, rc, "cannot read this endpoint's address");
    rc = fm_boot_put(&ctx->boot, "fm.addr", addr, len);
    FM_CHECK(rc == FM_OK, rc, "bootstrap put failed: %s", ctx->boot.err);
    rc = fm_boot_fence(&ctx->boot);
    FM_CHECK(rc == FM_OK, rc, "bootstrap fence failed: %s", ctx->boot.err);
    /* Lengths may differ (shm's addresses are names with a rank and a pid in them): each
     * address gets the same stride, zero-padded. */
    all = calloc((size_t)ctx->size, sizeof addr);
    FM_CHECK(all, FM_ERR_NOMEM, "out of memory for %d addresses", ctx->size);
    for (int r = 0; r < ctx->size; r++) {
        size_t got = sizeof addr;
        rc = fm_boot_get(&ctx->boot, r, "fm.addr", all + (size_t)r * sizeof addr, &got);
        FM_CHECK(rc == FM_OK && got > 0, rc ? rc : FM_ERR_BOOTSTRAP, "address of rank %d: %s", r,
                 rc ? ctx->boot.err : "empty");
    }
    rc = ctx->tp->ops->connect(ctx->tp, all, sizeof addr, ctx->size);
    FM_CHECK(rc == FM_OK, rc, "cannot insert the peers' addresses");
error:
    free(all);
    return rc;
}

/* A provider that cannot carry this job (sm on more than one host, libfabric's shm beyond its
 * peers): left at its default, FM_PROVIDER falls back to tcp (on lo for a job on one host;
 * across hosts with sm beside it, choose_hybrid);
 * set by any rank, it is an error that names the limit. Every rank decides alike, from what
 * the host cards tell all: the job's size, its hosts, and whether any rank set FM_PROVIDER. */
static int choose_provider(fm_context *ctx, fm_tp_config *tc, int chosen)
{
    char why[256] = "";
    int rc;
#if FM_HAVE_SMPI
    /* Under SimGrid every packet must be a simulated MPI message. */
    FM_CHECK(!chosen || !strcmp(ctx->cfg.provider, "mpi"), FM_ERR_CONFIG,
             "FM_PROVIDER=\"%.60s\": under SimGrid every packet is a simulated MPI message: "
             "FM_PROVIDER=mpi",
             ctx->cfg.provider);
    snprintf(ctx->cfg.provider, sizeof ctx->cfg.provider, "mpi");
    tc->provider = ctx->cfg.provider;
    return FM_OK;
#endif
    rc = fm_tp_fits(tc, ctx->size, why, sizeof why);
    if (rc == FM_OK)
        return FM_OK;
    FM_CHECK(!chosen, rc,
             "FM_PROVIDER=\"%.60s\": %s; use FM_PROVIDER=tcp, or leave FM_PROVIDER unset (tcp "
             "then, with sm between the ranks of a host: FM_SM)",
             tc->provider, why);
    if (ctx->rank == 0)
        fm_log(tc->all_local ? 0 : 1, "%s; FM_PROVIDER is not set: using tcp%s instead of %s", why,
               tc->all_local ? " on lo" : "", tc->provider);
    snprintf(ctx->cfg.provider, sizeof ctx->cfg.provider, "tcp");
    tc->provider = ctx->cfg.provider;
    return FM_OK;
error:
    return rc;
}

/* 1 when some host runs more than one of the job's ranks. */
static int host_shared(const fm_topo *t)
{
    for (int h = 0; h < fm_topo_nhosts(t); h++) {
        const int *ranks;
        if (fm_topo_host_ranks(t, h, &ranks) > 1)
            return 1;
    }
    return 0;
}

/* A job over a network provider that spans hosts, some running several ranks: those ranks
 * exchange packets through sm, the others through the network (the hybrid provider, sm+NET),
 * unless FM_SM=0. Every rank decides alike, from the topology. */
static void choose_hybrid(fm_context *ctx, fm_tp_config *tc)
{
    const char *net = ctx->cfg.provider;
    if (!ctx->cfg.sm || tc->all_local || !host_shared(ctx->topo) || !strncmp(net, "sm", 2) ||
        strlen(net) + 4 > sizeof ctx->cfg.provider)
        return;
    char name[sizeof ctx->cfg.provider];
    snprintf(name, sizeof name, "sm+%s", net);
    if (ctx->rank == 0)
        fm_log(1, "FM_SM: ranks of the same host through sm, the others through %s (%s)", net,
               name);
    memcpy(ctx->cfg.provider, name, sizeof name);
    tc->provider = ctx->cfg.provider;
}

/* Every rank's host index, for the hybrid provider (fm_tp_config.host_of); NULL without
 * memory (the hybrid then fails to open, saying so). */
static int *hosts_of(const fm_context *ctx)
{
    int *h = malloc((size_t)ctx->size * sizeof *h);
    for (int r = 0; h && r < ctx->size; r++)
        h[r] = fm_topo_host(ctx->topo, r);
    return h;
}

static int open_transport(fm_context *ctx)
{
    int chosen = 0;
    int rc = exchange_cards(ctx, &chosen);
    if (rc)
        return rc;
    int all_local = fm_topo_nhosts(ctx->topo) == 1;
    fm_progress_setup(ctx, fm_topo_nlocal(ctx->topo, ctx->rank));
    /* Receives posted at once: the pool's, and one zero-copy receive per sending peer (a
     * sender has one zero-copy piece in flight at a time). */
    fm_tp_config tc = {.provider = ctx->cfg.provider,
                       .no_wait_fd = !ctx->cfg.wait_fd,
                       .iface = ctx->cfg.iface,
                       .all_local = all_local,
                       .host_ranks = fm_topo_nlocal(ctx->topo, ctx->rank),
                       .verbose = (int)ctx->cfg.verbose,
                       .rx_depth = fm_recv_pool_depth(ctx) + (size_t)ctx->size,
                       .multi_recv_min = fm_recv_pool_multi_min(ctx),
                       .costs = ctx->cfg.mpi_costs,
                       .lend = ctx->cfg.sm_lend};
    if ((rc = choose_provider(ctx, &tc, chosen)))
        return rc;
    choose_hybrid(ctx, &tc);
    /* Watching peers starts after the last decision every rank makes alike: ranks that all
     * refuse the job end without reporting each other's deaths. */
    fm_liveness_start();
    char name[64];
    fm_job_name(name, sizeof name, ctx->job_key, ctx->rank, getpid());
    tc.name = name;
    tc.host_of = hosts_of(ctx);
    tc.rank = ctx->rank;
    tc.nranks = ctx->size;
    char err[256] = "";
    rc = fm_tp_open(&tc, &ctx->tp, err, sizeof err);
    free((void *)tc.host_of);
    FM_CHECK(rc == FM_OK, rc, "FM_PROVIDER=\"%.60s\": %s", ctx->cfg.provider, err);
    fm_log(1, "provider %s (fabric %s), inject %zu B, %d ranks%s", ctx->tp->info.provider,
           ctx->tp->info.fabric, ctx->tp->info.inject_size, ctx->size,
           all_local ? " on one host" : "");
    return exchange_addresses(ctx);
error:
    return rc;
}

/* Where the provider injects packets of a useful size (shm: 4 KiB), messages up to four such
 * packets go as injects: on shm a 4 KiB + header send would otherwise take the slower
 * large-message protocol (2.6 us against 0.45 us, bench/README.md). */
static void small_packets(fm_context *ctx)
{
    size_t inject = ctx->tp->info.inject_size;
    ctx->small_payload = ctx->packet_size;
    ctx->small_max = 0;
    if (inject >= FM_WIRE_HDR_LEN + 256 && inject - FM_WIRE_HDR_LEN < ctx->packet_size) {
        ctx->small_payload = inject - FM_WIRE_HDR_LEN;
        ctx->small_max = 4 * ctx->small_payload;
    }
}

/* FM_ZCOPY left at its default: not below where the provider's tagged path pays off (for the
 * peers on this host, where they go another way: zcopy_local). */
static void zcopy_default(fm_context *ctx)
{
    size_t from = ctx->tp->info.zcopy_from, local = ctx->tp->info.zcopy_from_local;
    int set = config_from_env(&ctx->cfg, "FM_ZCOPY");
    ctx->zcopy_local = !set && local > ctx->zcopy_min ? local : ctx->zcopy_min;
    if (set || !from || ctx->zcopy_min >= from)
        return;
    ctx->zcopy_min = from;
    if (ctx->zcopy_local < from)
        ctx->zcopy_local = from;
    if (from == SIZE_MAX)
        fm_log(1,
               "FM_ZCOPY not set: over %s packets beat tagged messages at every size; set "
               "FM_ZCOPY to use them",
               ctx->tp->info.provider);
    else
        fm_log(1, "FM_ZCOPY not set: over %s pieces of %zu bytes or more go zero-copy",
               ctx->tp->info.provider, from);
}

int fm_core_open(fm_context *ctx)
{
    ctx->extra_fd = ctx->wait_epoll = -1;
    ctx->packet_size = (size_t)ctx->cfg.packet_size;
    ctx->credits = (int)ctx->cfg.credits;
    ctx->zcopy_min = ctx->cfg.zcopy ? (size_t)ctx->cfg.zcopy : SIZE_MAX;
    ctx->whole.budget = (size_t)ctx->cfg.message_buffer;
    ctx->rank = ctx->boot.rank;
    ctx->size = ctx->boot.size;
    ctx->job_key = ctx->boot.job_key;
    ctx->peers = calloc((size_t)ctx->size, sizeof *ctx->peers);
    ctx->dirty = calloc((size_t)ctx->size, sizeof *ctx->dirty);
    if (fm_submit_init(ctx) || !ctx->peers || !ctx->dirty) {
        fm_log(0, "out of memory for %d peers", ctx->size);
        return FM_ERR_NOMEM;
    }
    int rc = open_transport(ctx);
    if (rc)
        return rc;
    zcopy_default(ctx);
    small_packets(ctx);
    ctx->share_copies = ctx->cfg.sm_share && ctx->tp->ops->sendv_shared;
    /* (only shared payloads are lent: providers/sm/README.md) */
    ctx->lend_packets = ctx->share_copies && ctx->cfg.sm_lend && ctx->tp->ops->lend_release;
    fm_credits_init(ctx);
    fm_zcopy_init(ctx);
    rc = fm_pool_init(ctx);
    if (!rc)
        rc = fm_recv_pool_init(ctx);
    return rc ? rc : fm_window_init(ctx);
}

/* Past fm_finalize's barrier. Every rank had drained its own sends and requests and settled
 * its multicasts before it entered the barrier, so what waits now was started while the
 * barrier or the last drain ran, answering something nobody needs any more (an ipmc repair or
 * offer for a late duplicate, a handler's reply to a rank that is finalizing). Its peer may be
 * past its own last drain, in the bootstrap's fence, and would never return the credit it
 * waits for: cut, not waited on until FM_TIMEOUT (which the two-stage multicast's cluster
 * test hit now and then). */
static void cut_waiting(fm_context *ctx)
{
    int reqs = fm_req_cut(ctx);
    long pkts = 0;
    for (int r = 0; r < ctx->size; r++) {
        fm_peer *p = &ctx->peers[r];
        while (p->pending.head) {
            fm_pkt *q = p->pending.head;
            p->pending.head = q->next;
            q->next = NULL;
            fm_send_done(ctx, q); /* (its buffer back as if sent: copies release payloads) */
            pkts++;
        }
        p->pending.tail = NULL;
    }
    if (reqs || pkts)
        fm_log(1,
               "fm_finalize: past the barrier, dropped %d unwritten requests and %ld packets "
               "waiting for credits",
               reqs, pkts);
}

static int sends_drained(fm_context *ctx, void *arg)
{
    (void)arg;
    if (ctx->finalizing) /* (before each round: handlers and callbacks run in it too) */
        cut_waiting(ctx);
    if (fm_req_pending(ctx) || ctx->req.notify || fm_submit_waiting(ctx))
        return 0; /* requests not written yet, callbacks to run, or not started yet */
    for (int r = 0; r < ctx->size; r++)
        if (ctx->peers[r].pending.head || ctx->peers[r].credit_busy)
            return 0;
    /* (a repair owed, or a successor's confirmation: mcast/ipmc). Past fm_finalize's barrier
     * every rank had settled its multicasts and none sends again, so what looks busy then is
     * a late duplicate that nothing could settle: waiting on it only times out. */
    if (!ctx->finalizing && ctx->mcast_hooks && ctx->mcast_hooks->busy &&
        ctx->mcast_hooks->busy(ctx))
        return 0;
    return ctx->sends_inflight == 0;
}

int fm_core_drain(fm_context *ctx, const char *what)
{
    return fm_progress_until(ctx, sends_drained, NULL, what);
}

void fm_core_close(fm_context *ctx)
{
    fm_req_fini(ctx); /* (their streams go back before the streams are freed) */
    if (ctx->tp)
        fm_recv_fini(ctx);
    fm_streams_free(ctx); /* (open ones too: a message begun and never ended) */
    if (ctx->tp) {
        /* Registrations go before the endpoint closes; the memory after it. */
        fm_recv_pool_fini(ctx);
        fm_pool_fini(ctx);
        if (ctx->wait_epoll >= 0)
            close(ctx->wait_epoll);
        ctx->wait_epoll = -1;
        ctx->tp->ops->close(ctx->tp);
        ctx->tp = NULL;
        fm_recv_pool_free(ctx);
        fm_pool_free(ctx);
    }
    fm_whole_fini(ctx); /* (after the streams and the transport: buffers zero-copy may fill) */
    fm_submit_fini(ctx);
    fm_topo_free(ctx->topo);
    ctx->topo = NULL;
    for (int r = 0; ctx->peers && r < ctx->size; r++)
        free(ctx->peers[r].cts);
    fm_window_fini(ctx);
    free(ctx->peers);
    free(ctx->dirty);
    free(ctx->seen);
    ctx->peers = NULL;
    ctx->dirty = NULL;
    ctx->seen = NULL;
}
