/* SPDX-License-Identifier: BSD-3-Clause */
/* Multicast groups (group.c). */
#ifndef FM_MCAST_GROUP_H
#define FM_MCAST_GROUP_H

#include <stdint.h>

#include "context.h"

/* A group: an ordered member list every member created alike. Its id is a hash of the list,
 * so members agree on it without talking; multicasts name it instead of listing members. */
struct fm_group {
    fm_context *ctx;
    struct fm_group *next; /* the context's list */
    uint64_t id;
    int n, pos; /* members; the caller's position (-1: not a member) */
    int *members;
};

/* The group created here with this id, or NULL. */
struct fm_group *fm_group_find(fm_context *ctx, uint64_t id);
/* FM_OK if g is a live group of the live context; FM_ERR_NOT_INIT or FM_ERR_INVALID. Reads
 * nothing through g before it is found in the list. */
int fm_group_check(const fm_group *g);
void fm_group_free_all(fm_context *ctx);

#endif
