/* SPDX-License-Identifier: BSD-3-Clause */
/* Multicast groups: an ordered member list every member created alike, named on the wire by a
 * hash of the list (no exchange needed); fm_group_create and its queries, and the lookup
 * forwarding members use. */
#include <stdlib.h>
#include <string.h>

#include "group.h"
#include "members.h"
#include "mcast_state.h"
#include "recv.h"

/* FNV-1a over the member list: equal lists, equal ids, without any exchange. Never 0. */
static uint64_t group_id(const int *members, int n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (int i = 0; i < n; i++)
        for (int b = 0; b < 4; b++) {
            h ^= (unsigned char)((unsigned)members[i] >> (8 * b));
            h *= 0x100000001b3ULL;
        }
    return h ? h : 1;
}

int fm_group_create(fm_context *ctx, const int *members, int n, fm_group **group)
{
    if (group)
        *group = NULL;
    if (!fm_ctx_live(ctx))
        return FM_ERR_NOT_INIT;
    if (!group)
        return FM_ERR_INVALID;
    int pos, rc = fm_members_check(ctx, members, n, &pos);
    if (rc)
        return rc;
    fm_group *g = calloc(1, sizeof *g + (size_t)n * sizeof(int));
    if (!g)
        return FM_ERR_NOMEM;
    g->ctx = ctx;
    g->members = (int *)(g + 1);
    memcpy(g->members, members, (size_t)n * sizeof(int));
    g->n = n;
    g->pos = pos;
    g->id = group_id(members, n);
    g->next = ctx->mcast->groups;
    ctx->mcast->groups = g;
    *group = g;
    fm_recv_groups_changed(ctx); /* multicasts that came before the group start now */
    return FM_OK;
}

/* Where g is in the live context's list, found without reading *g (a destroyed group's
 * memory is freed): NULL when it is not there. */
static fm_group **group_slot(const fm_group *g)
{
    fm_group **pp = &fm_live_ctx->mcast->groups;
    while (*pp && *pp != g)
        pp = &(*pp)->next;
    return *pp ? pp : NULL;
}

int fm_group_check(const fm_group *g)
{
    if (!fm_live_ctx)
        return FM_ERR_NOT_INIT;
    return g && group_slot(g) ? FM_OK : FM_ERR_INVALID;
}

int fm_group_destroy(fm_group *g)
{
    int rc = fm_group_check(g);
    if (rc)
        return rc;
    fm_group **pp = group_slot(g);
    *pp = g->next;
    free(g);
    return FM_OK;
}

int fm_group_size(const fm_group *g)
{
    int rc = fm_group_check(g);
    return rc ? rc : g->n;
}

int fm_group_position(const fm_group *g)
{
    int rc = fm_group_check(g);
    return rc ? rc : g->pos;
}

struct fm_group *fm_group_find(fm_context *ctx, uint64_t id)
{
    for (fm_group *g = ctx->mcast->groups; g; g = g->next)
        if (g->id == id)
            return g;
    return NULL;
}

void fm_group_free_all(fm_context *ctx)
{
    struct fm_mcast *mc = ctx->mcast;
    while (mc->groups) {
        fm_group *g = mc->groups;
        mc->groups = g->next;
        free(g);
    }
}
