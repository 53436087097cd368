/* SPDX-License-Identifier: BSD-3-Clause */
/* The prefix router (`prefix[:b]`): every rank's id from the topology and its own routing table,
 * built at fm_init for FM_PREFIX_BASE (and on first use for another base), and the next hops
 * of a prefix-routed multicast at this rank. prefix/README.md has the reasons. */
#ifndef FM_MCAST_PREFIX_ROUTER_H
#define FM_MCAST_PREFIX_ROUTER_H

#include <stdint.h>

#include "context.h"

/* FM_PREFIX_CHOICE's values: "random" (FM_PREFIX_RANDOM) or "nearest"; -1 for anything else. */
int fm_prefix_choice_parse(const char *text);

/* The table for FM_PREFIX_BASE, with FM_PREFIX_CHOICE. A job whose ids cannot be built (more
 * than 32 digits) only logs it: prefix multicasts then fail with FM_ERR_TREE. */
int fm_prefix_router_init(fm_context *ctx);
void fm_prefix_router_fini(fm_context *ctx);

/* This rank's children, as ranks in the order it sends to them, for a prefix-routed multicast
 * in base b to the ranks members[0..n) (this rank among them, none twice) that reached this
 * rank from rank src (-1: this rank is its root). kids: room for n ranks. Returns the count,
 * or FM_ERR_TREE (no ids in base b), FM_ERR_NOMEM, FM_ERR_INVALID (a member out of range or
 * src not a member, as a foreign or malformed descriptor has). Allocates its scratch. */
int fm_mcast_prefix_route(fm_context *ctx, int b, const int *members, int n, int src, int *kids);

#endif
