/* SPDX-License-Identifier: BSD-3-Clause */
/* The prefix router's state: every rank's id and this rank's routing table per base, built at
 * fm_init for FM_PREFIX_BASE (and on first use for a base a multicast names), and one hop of a
 * prefix-routed multicast with them (fm_prefix_route in prefix/prefix_route.c decides it).
 *
 * A multicast carries its whole destination set, unchanged, to every member: packet 0 is
 * written once for all children (mcast_desc.h). What part of the set a member covers follows
 * from who sent it to it (prefix/README.md, "The router"), so no hop rewrites it. */
#include <stdlib.h>
#include <string.h>

#include "fastmsg.h"
#include "log.h"
#include "mcast_state.h"
#include "prefix/prefix_route.h"
#include "prefix_router.h"
#include "topo.h"

/* The choice among a cell's candidates: fixed, so a route is the same in every run. */
#define ROUTER_SEED 0x70726566u

struct fm_prefix_router {
    struct fm_prefix_router *next;
    int b, m;
    int choice;   /* FM_PREFIX_CHOICE, parsed once */
    uint8_t *ids; /* every rank's, nranks * m digits */
    int *table;   /* this rank's, m * b */
};

int fm_prefix_choice_parse(const char *text)
{
    return !strcmp(text, "random")    ? FM_PREFIX_RANDOM
           : !strcmp(text, "nearest") ? FM_PREFIX_NEAREST
                                      : -1;
}

static void router_free(struct fm_prefix_router *r)
{
    if (r) {
        free(r->ids);
        free(r->table);
        free(r);
    }
}

/* Rank i's fields (rack, host, place on the host) into v[3i..3i+2]: the rack is its first
 * coordinate when the topology has coordinates (cluster.sh --racks writes the rack there), as
 * the prefix tree builder takes it (trees/prefix.c). */
static void router_fields(const fm_topo *t, int n, int *v)
{
    int xyz[3];
    for (int i = 0; i < n; i++, v += 3) {
        v[0] = fm_topo_ndims(t) > 0 && fm_topo_coord(t, i, xyz) == FM_OK && xyz[0] > 0 ? xyz[0] : 0;
        v[1] = fm_topo_host(t, i);
        v[2] = fm_topo_local(t, i);
    }
}

/* Every rank's id and this rank's table in base b. */
static int router_build(fm_context *ctx, int b, struct fm_prefix_router **out)
{
    int n = ctx->size, rc = FM_ERR_NOMEM;
    int *fields = malloc((size_t)n * 3 * sizeof *fields);
    struct fm_prefix_router *r = calloc(1, sizeof *r);
    size_t cap = (size_t)n * FM_PREFIX_MAX_DIGITS;
    if (!fields || !r || !(r->ids = malloc(cap)))
        goto out;
    router_fields(ctx->topo, n, fields);
    r->b = b;
    r->choice = fm_prefix_choice_parse(ctx->cfg.prefix_choice);
    rc = fm_prefix_ids_from_fields(n, 3, fields, b, r->ids, cap, &r->m, NULL);
    if (rc == FM_OK && !(r->table = malloc((size_t)r->m * (size_t)b * sizeof *r->table)))
        rc = FM_ERR_NOMEM;
    if (rc == FM_OK)
        rc = fm_prefix_table_build(r->ids, n, r->m, b, ctx->rank, r->choice, ROUTER_SEED, r->table);
out:
    if (rc != FM_OK) {
        fm_log(0, "prefix routing in base %d: no routing table (%s)", b, fm_strerror(rc));
        router_free(r);
        r = NULL;
    }
    free(fields);
    *out = r;
    return rc;
}

/* The router for base b, built on first use. */
static struct fm_prefix_router *router_for(fm_context *ctx, int b)
{
    struct fm_prefix_router *r;
    for (r = ctx->mcast->routers; r; r = r->next)
        if (r->b == b)
            return r;
    if (router_build(ctx, b, &r) != FM_OK)
        return NULL;
    r->next = ctx->mcast->routers;
    ctx->mcast->routers = r;
    return r;
}

int fm_prefix_router_init(fm_context *ctx)
{
    struct fm_prefix_router *r = router_for(ctx, (int)ctx->cfg.prefix_base);
    if (r)
        fm_log(2, "prefix routing: ids of %d digits in base %d", r->m, r->b);
    return FM_OK; /* (without a table only prefix multicasts fail, and they say so) */
}

void fm_prefix_router_fini(fm_context *ctx)
{
    while (ctx->mcast->routers) {
        struct fm_prefix_router *r = ctx->mcast->routers;
        ctx->mcast->routers = r->next;
        router_free(r);
    }
}

int fm_mcast_prefix_route(fm_context *ctx, int b, const int *members, int n, int src, int *kids)
{
    struct fm_prefix_router *r = router_for(ctx, b);
    if (!r)
        return FM_ERR_TREE;
    void *scratch = malloc(fm_prefix_route_scratch_size(n, r->m, b));
    int rc = scratch ? fm_prefix_route(r->ids, ctx->size, r->m, b, r->table, ctx->rank, r->choice,
                                       ROUTER_SEED, members, n, src, kids, scratch)
                     : FM_ERR_NOMEM;
    free(scratch);
    return rc == FM_ERR_RANK || rc == FM_ERR_INTERNAL ? FM_ERR_INVALID : rc;
}
