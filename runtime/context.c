/* fm_init / fm_finalize: bring one process's fastmsg up and down.
 *
 * fm_init: settings -> bootstrap (rank, size, job key) -> agree on settings and see whether
 * every rank shares this host -> open the transport -> exchange endpoint addresses through
 * the bootstrap -> post receive buffers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sys/stat.h>
#include <unistd.h>

#include "context.h"
#include "fm_build_config.h"
#include "liveness.h"
#include "log.h"
#include "mcast.h"
#include "memory.h"

fm_context *fm_live_ctx;

/* What every rank publishes before the network is up: where it runs and the settings that
 * must agree across the job. A host is a hostname plus a network namespace, so ranks in
 * different namespaces of one machine count as different hosts. */
typedef struct fm_host_card {
    char hostname[64];
    uint64_t netns;
    uint32_t packet_size, credits;
    char provider[64];
    fm_liveness_id live; /* this process, for peers that can see it (liveness.c) */
} fm_host_card;

static void host_card(const fm_context *ctx, fm_host_card *c)
{
    struct stat st;
    memset(c, 0, sizeof *c);
    gethostname(c->hostname, sizeof c->hostname - 1);
    c->netns = stat("/proc/self/ns/net", &st) == 0 ? (uint64_t)st.st_ino : 0;
    c->packet_size = (uint32_t)ctx->packet_size;
    c->credits = (uint32_t)ctx->credits;
    snprintf(c->provider, sizeof c->provider, "%s", ctx->cfg.provider);
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

/* Agree on settings; set *all_local. */
static int exchange_cards(fm_context *ctx, int *all_local)
{
    fm_host_card mine, theirs;
    host_card(ctx, &mine);
    int rc = fm_boot_put(&ctx->boot, "fm.card", &mine, sizeof mine);
    FM_CHECK(rc == FM_OK, rc, "bootstrap put failed: %s", ctx->boot.err);
    rc = fm_boot_fence(&ctx->boot);
    FM_CHECK(rc == FM_OK, rc, "bootstrap fence failed: %s", ctx->boot.err);
    *all_local = 1;
    for (int r = 0; r < ctx->size; r++) {
        size_t len = sizeof theirs;
        rc = fm_boot_get(&ctx->boot, r, "fm.card", &theirs, &len);
        FM_CHECK(rc == FM_OK && len == sizeof theirs, rc ? rc : FM_ERR_BOOTSTRAP,
                 "bootstrap get of rank %d failed: %s", r, ctx->boot.err);
        if (strcmp(theirs.hostname, mine.hostname) || theirs.netns != mine.netns)
            *all_local = 0;
        fm_liveness_watch(ctx, r, &theirs.live, &mine.live);
        char t[64], m[64];
        const char *name = card_differs(&theirs, &mine, t, m, sizeof t);
        FM_CHECK(!name, FM_ERR_CONFIG,
                 "rank %d runs with %s=\"%s\", this rank with %s=\"%s\": every rank must use "
                 "the same FM_PROVIDER, FM_PACKET_SIZE and FM_CREDITS",
                 r, name, t, name, m);
    }
    fm_liveness_start();
    return FM_OK;
error:
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
    all = calloc((size_t)ctx->size, len);
    FM_CHECK(all, FM_ERR_NOMEM, "out of memory for %d addresses", ctx->size);
    for (int r = 0; r < ctx->size; r++) {
        size_t got = len;
        rc = fm_boot_get(&ctx->boot, r, "fm.addr", all + (size_t)r * len, &got);
        FM_CHECK(rc == FM_OK && got == len, rc ? rc : FM_ERR_BOOTSTRAP, "address of rank %d: %s", r,
                 rc ? ctx->boot.err : "length differs");
    }
    rc = ctx->tp->ops->connect(ctx->tp, all, len, ctx->size);
    FM_CHECK(rc == FM_OK, rc, "cannot insert the peers' addresses");
error:
    free(all);
    return rc;
}

static int open_transport(fm_context *ctx)
{
    int all_local, rc = exchange_cards(ctx, &all_local);
    if (rc)
        return rc;
    fm_tp_config tc = {.provider = ctx->cfg.provider,
                       .no_wait_fd = !ctx->cfg.wait_fd,
                       .iface = ctx->cfg.iface,
                       .all_local = all_local,
                       .verbose = (int)ctx->cfg.verbose};
    char err[256] = "";
    rc = fm_tp_open(&tc, &ctx->tp, err, sizeof err);
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

/* The values the table cannot check by type alone. */
static int check_values(const fm_config *cfg, char *err, int errlen)
{
    int builder, param;
    double o, k, l;
    char why[150];
    if (!cfg->provider[0]) {
        snprintf(err, (size_t)errlen, "FM_PROVIDER=\"\": name a provider (shm, tcp, ...)");
        return FM_ERR_CONFIG;
    }
    /* (Only tcp reads FM_IFACE: providers/ofi pins FI_TCP_IFACE to it.) */
    if (cfg->iface[0] && strstr(cfg->provider, "tcp") && !if_nametoindex(cfg->iface)) {
        snprintf(err, (size_t)errlen, "FM_IFACE=\"%.60s\": no such network interface here",
                 cfg->iface);
        return FM_ERR_CONFIG;
    }
    if (strcmp(cfg->tree, "auto") && fm_tree_parse(cfg->tree, &builder, &param, why, sizeof why)) {
        snprintf(err, (size_t)errlen, "FM_TREE=\"%.60s\": %.150s", cfg->tree, why);
        return FM_ERR_CONFIG;
    }
    if (cfg->mcast_costs[0] && fm_mcast_costs_parse(cfg->mcast_costs, &o, &k, &l)) {
        snprintf(
            err, (size_t)errlen,
            "FM_MCAST_COSTS=\"%.60s\": want OVERHEAD_NS:NS_PER_KIB:LATENCY_NS, e.g. 1000:200:500",
            cfg->mcast_costs);
        return FM_ERR_CONFIG;
    }
    return FM_OK;
}

static int setup(fm_context *ctx)
{
    char err[256];
    int rc = fm_config_load(&ctx->cfg, NULL, err, sizeof err);
    FM_CHECK(rc == FM_OK, rc, "%s", err);
    fm_log_level = (int)ctx->cfg.verbose;
    rc = check_values(&ctx->cfg, err, (int)sizeof err);
    FM_CHECK(rc == FM_OK, rc, "%s", err);
    ctx->packet_size = (size_t)ctx->cfg.packet_size;
    ctx->credits = (int)ctx->cfg.credits;
    ctx->zcopy_min = ctx->cfg.zcopy ? (size_t)ctx->cfg.zcopy : SIZE_MAX;

    rc = fm_boot_init(&ctx->boot, ctx->cfg.bootstrap, (int)ctx->cfg.timeout);
    FM_CHECK(rc == FM_OK, rc, "bootstrap: %s (FM_BOOTSTRAP=\"%.40s\")", ctx->boot.err,
             ctx->cfg.bootstrap);
    ctx->rank = ctx->boot.rank;
    ctx->size = ctx->boot.size;
    ctx->job_key = ctx->boot.job_key;
    fm_log_rank = ctx->rank;
    fm_log(1, "rank %d of %d (pid %d), bootstrap %s", ctx->rank, ctx->size, (int)getpid(),
           ctx->boot.ops->name);

    ctx->peers = calloc((size_t)ctx->size, sizeof *ctx->peers);
    ctx->dirty = calloc((size_t)ctx->size, sizeof *ctx->dirty);
    FM_CHECK(ctx->peers && ctx->dirty, FM_ERR_NOMEM, "out of memory for %d peers", ctx->size);
    if ((rc = open_transport(ctx)))
        goto error;
    small_packets(ctx);
    fm_credits_init(ctx);
    if ((rc = fm_pool_init(ctx)))
        goto error;
    ctx->handlers[FM_HANDLER_BARRIER] = (fm_handler_slot){fm_barrier_handler, ctx};
    fm_calibrate_init(ctx);
    fm_wireup_init(ctx);
    return fm_wireup(ctx);
error:
    return rc;
}

static void teardown(fm_context *ctx)
{
    if (ctx->tp)
        fm_recv_fini(ctx);
    fm_mcast_fini(ctx);
    fm_mcast_costs_free(ctx);
    while (ctx->stream_free) {
        fm_stream *s = ctx->stream_free;
        ctx->stream_free = s->next;
        free(s);
    }
    if (ctx->tp) {
        /* Registrations go before the endpoint closes; the memory after it. */
        fm_pool_fini(ctx);
        ctx->tp->ops->close(ctx->tp);
    }
    fm_boot_fini(&ctx->boot);
    fm_liveness_fini();
    for (int r = 0; ctx->peers && r < ctx->size; r++)
        free(ctx->peers[r].cts);
    free(ctx->peers);
    free(ctx->dirty);
    free(ctx);
}

int fm_init(fm_context **out)
{
    if (!out)
        return FM_ERR_INVALID;
    *out = NULL;
    if (fm_live_ctx)
        return FM_ERR_ALREADY_INIT;
    fm_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return FM_ERR_NOMEM;
    int rc = setup(ctx);
    if (rc) {
        teardown(ctx);
        fm_log_rank = -1;
        return rc;
    }
    fm_live_ctx = ctx;
    *out = ctx;
    return FM_OK;
}

static int sends_drained(fm_context *ctx, void *arg)
{
    (void)arg;
    for (int r = 0; r < ctx->size; r++)
        if (ctx->peers[r].pending.head || ctx->peers[r].credit_busy)
            return 0;
    return ctx->sends_inflight == 0;
}

static void print_stats(const fm_context *ctx)
{
    const fm_stats *s = &ctx->stats;
    fprintf(stderr,
            "fastmsg[%d] stats: sent %llu pkts %llu B %llu msgs | received %llu pkts %llu B "
            "%llu msgs | zero-copy %llu out %llu in | credit pkts %llu out %llu in | credit stalls "
            "%llu | dropped %llu (foreign %llu) | refused %llu\n",
            ctx->rank, (unsigned long long)s->packets_sent, (unsigned long long)s->bytes_sent,
            (unsigned long long)s->messages_sent, (unsigned long long)s->packets_received,
            (unsigned long long)s->bytes_received, (unsigned long long)s->messages_received,
            (unsigned long long)s->zcopy_sent, (unsigned long long)s->zcopy_received,
            (unsigned long long)s->credit_packets_sent,
            (unsigned long long)s->credit_packets_received, (unsigned long long)s->credit_stalls,
            (unsigned long long)s->dropped, (unsigned long long)ctx->drops[FM_WIRE_KEY_BAD],
            (unsigned long long)ctx->tp->refused);
}

/* Messages that never ran because no handler was registered for their id here: fm_finalize
 * frees them unread, so say so once. */
static void report_held(const fm_context *ctx)
{
    int n = 0, from = -1;
    unsigned id = 0;
    for (int r = 0; r < ctx->size; r++)
        for (const fm_stream *s = ctx->peers[r].inbound; s; s = s->next)
            if (!ctx->handlers[s->handler].fn && !s->finished && !n++) {
                from = s->origin;
                id = s->handler;
            }
    if (n)
        fm_log(0,
               "fm_finalize: %d message%s never ran: no handler registered for %s (handler id "
               "%u from rank %d%s)",
               n, n > 1 ? "s" : "", n > 1 ? "their ids" : "its id", id, from, n > 1 ? ", ..." : "");
}

int fm_finalize(fm_context *ctx)
{
    if (!fm_ctx_live(ctx))
        return FM_ERR_NOT_INIT;
    if (ctx->in_handler)
        return FM_ERR_IN_HANDLER;
    /* Everything we sent leaves, everyone gets here, then no one sends again; unless the job
     * is already broken: waiting again would only time out again. */
    int rc = ctx->failed;
    if (rc)
        fm_log(1, "fm_finalize: an earlier wait failed (%s); not waiting for anything",
               fm_strerror(rc));
    else
        rc = fm_progress_until(ctx, sends_drained, NULL, "outgoing packets at finalize");
    if (rc == FM_OK)
        rc = fm_barrier_internal(ctx);
    ctx->finalizing = 1;
    if (rc == FM_OK)
        rc = fm_progress_until(ctx, sends_drained, NULL, "the last completions");
    fm_liveness_fini(); /* from here on peers exit, and that is no death */
    /* The bootstrap fence keeps every endpoint open until all ranks are past the barrier. */
    if (rc == FM_OK && fm_boot_fence(&ctx->boot))
        rc = FM_ERR_BOOTSTRAP;
    if (ctx->cfg.stats)
        print_stats(ctx);
    report_held(ctx);
    fm_live_ctx = NULL;
    teardown(ctx);
    fm_log_rank = -1;
    return rc;
}

int fm_rank(const fm_context *ctx)
{
    return fm_ctx_live(ctx) ? ctx->rank : FM_ERR_NOT_INIT;
}

int fm_size(const fm_context *ctx)
{
    return fm_ctx_live(ctx) ? ctx->size : FM_ERR_NOT_INIT;
}

uint64_t fm_job_key(const fm_context *ctx)
{
    return fm_ctx_live(ctx) ? ctx->job_key : 0;
}

int fm_get_stats(const fm_context *ctx, fm_stats *stats)
{
    if (!fm_ctx_live(ctx))
        return FM_ERR_NOT_INIT;
    if (!stats)
        return FM_ERR_INVALID;
    *stats = ctx->stats;
    stats->dropped_foreign = ctx->drops[FM_WIRE_KEY_BAD];
    stats->eagain_retries = ctx->tp->refused;
    return FM_OK;
}

void fm_abort(fm_context *ctx, int code, const char *msg)
{
    char line[512];
    if (!fm_ctx_live(ctx))
        ctx = NULL; /* (finalized or never initialised: nothing to read through it) */
    snprintf(line, sizeof line, "rank %d: %s", ctx ? ctx->rank : -1, msg ? msg : "fm_abort");
    if (ctx && ctx->boot.ops)
        fm_boot_abort(&ctx->boot, code, line);
    fprintf(stderr, "fastmsg: abort(%d): %s\n", code, line);
    _Exit(code ? code : 1);
}

const char *fm_version(void)
{
    return FM_VERSION_STRING;
}
