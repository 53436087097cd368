/* SPDX-License-Identifier: BSD-3-Clause */
/* Delivery acknowledgement of multicasts (FM_MCAST_ACK, ack.c): combined up the tree, one
 * per member subtree. */
#ifndef FM_MCAST_ACK_H
#define FM_MCAST_ACK_H

#include <stdint.h>

#include "context.h"

struct fm_ack;

/* fm_init: the acknowledgement's internal handler. fm_finalize: entries still waiting. */
int fm_ack_init(fm_context *ctx);
void fm_ack_fini(fm_context *ctx);

/* The root of an acknowledged multicast with nkids children: an id for its descriptor, and
 * (with children) an entry that holds request r until every child has acknowledged. Call
 * fm_ack_root_open before opening the root's stream, fm_ack_root_commit once it is open
 * (fm_ack_root_cancel if it failed). NULL *a: out of memory. */
uint32_t fm_ack_root_open(fm_context *ctx, int nkids, struct fm_ack **a);
void fm_ack_root_commit(fm_context *ctx, struct fm_ack *a, fm_request *r);
void fm_ack_root_cancel(struct fm_ack *a);

/* A member (not the root) of multicast (root, id) that came from parent and has nkids
 * children: waits for its own copy and their acknowledgements, then acknowledges to parent.
 * NULL: out of memory. */
struct fm_ack *fm_ack_member(fm_context *ctx, uint32_t root, uint32_t id, int parent, int nkids);
/* This member's copy is complete (status FM_OK) or cut short (FM_ERR_TRUNCATED). */
void fm_ack_own(fm_context *ctx, struct fm_ack *a, int status);

#endif
