/* SPDX-License-Identifier: BSD-3-Clause */
/* fm_init / fm_finalize: the one file that sees every layer, and brings them up in order.
 *
 * fm_init: settings (util) -> bootstrap: rank, size, job key (boot) -> host cards, topology,
 * transport, addresses, buffers (core, topo, providers) -> multicast registers its hooks and
 * handlers (mcast) -> barrier and wire-up register theirs, then wire-up runs (services).
 * Internal handler ids are taken in this order on every rank, so they agree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "barrier.h"
#include "context.h"
#include "liveness.h"
#include "log.h"
#include "mcast.h"
#include "tree_choice.h"
#include "services.h"
#include "setup.h"
#include "topo.h"
#include "transport.h"
#include "wireup.h"

static int check_topology(const char *text, char *err, int errlen)
{
    struct fm_topo_spec spec;
    char why[160];
    int rc = fm_topo_spec_parse(text, &spec, why, sizeof why);
    if (rc == FM_OK)
        fm_topo_spec_clear(&spec);
    else
        snprintf(err, (size_t)errlen, "FM_TOPOLOGY=\"%.60s\": %.160s", text, why);
    return rc;
}

/* The values the table cannot check by type alone. */
static int check_values(const fm_config *cfg, char *err, int errlen)
{
    if (!cfg->provider[0]) {
        snprintf(err, (size_t)errlen, "FM_PROVIDER=\"\": name a provider (shm, tcp, ...)");
        return FM_ERR_CONFIG;
    }
    fm_tp_config tc = {.provider = cfg->provider, .iface = cfg->iface};
    int rc = fm_tp_check_config(&tc, err, (size_t)errlen);
    if (rc == FM_OK)
        rc = check_topology(cfg->topology, err, errlen);
    if (rc == FM_OK)
        rc = fm_mcast_check_config(cfg, err, (size_t)errlen);
    return rc;
}

static int setup(fm_context *ctx)
{
    char err[256];
    int rc = fm_config_load(&ctx->cfg, NULL, err, sizeof err);
    FM_CHECK(rc == FM_OK, rc, "%s", err);
    fm_log_level = (int)ctx->cfg.verbose;
    rc = check_values(&ctx->cfg, err, (int)sizeof err);
    FM_CHECK(rc == FM_OK, rc, "%s", err);

    rc = fm_boot_init(&ctx->boot, ctx->cfg.bootstrap, (int)ctx->cfg.timeout);
    FM_CHECK(rc == FM_OK, rc, "bootstrap: %s (FM_BOOTSTRAP=\"%.40s\")", ctx->boot.err,
             ctx->cfg.bootstrap);
    fm_log_rank = ctx->boot.rank;
    fm_log(1, "rank %d of %d (pid %d), bootstrap %s", ctx->boot.rank, ctx->boot.size, (int)getpid(),
           ctx->boot.ops->name);

    if ((rc = fm_core_open(ctx)) || (rc = fm_mcast_init(ctx)) || (rc = fm_services_init(ctx)))
        goto error;
    return fm_wireup(ctx);
error:
    return rc;
}

static void teardown(fm_context *ctx)
{
    fm_core_close(ctx); /* first: streams still forwarding give their state back to mcast */
    fm_mcast_fini(ctx);
    fm_services_fini(ctx);
    fm_boot_fini(&ctx->boot);
    fm_liveness_fini();
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
        rc = fm_core_drain(ctx, "outgoing packets at finalize");
    if (rc == FM_OK)
        rc = fm_barrier_internal(ctx);
    ctx->finalizing = 1;
    if (rc == FM_OK)
        rc = fm_core_drain(ctx, "the last completions");
    fm_liveness_fini(); /* from here on peers exit, and that is no death */
    /* The bootstrap fence keeps every endpoint open until all ranks are past the barrier. */
    if (rc == FM_OK && fm_boot_fence(&ctx->boot))
        rc = FM_ERR_BOOTSTRAP;
    fm_core_report(ctx);
    fm_live_ctx = NULL;
    teardown(ctx);
    fm_log_rank = -1;
    return rc;
}
