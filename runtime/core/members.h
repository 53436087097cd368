/* SPDX-License-Identifier: BSD-3-Clause */
/* Member and destination lists (members.c): the one check that fm_begin_message_multi, groups
 * and multicasts share. */
#ifndef FM_CORE_MEMBERS_H
#define FM_CORE_MEMBERS_H

#include "context.h"

/* FM_OK, or FM_ERR_EMPTY / INVALID / RANK / DUPLICATE / NOMEM; *pos = the caller's position
 * in the list, or -1. */
int fm_members_check(fm_context *ctx, const int *members, int n, int *pos);
/* ctx->size bytes of zeroed scratch for duplicate checks of member lists (allocated on first
 * use, freed at fm_finalize; callers leave it zeroed), or NULL when out of memory. */
unsigned char *fm_members_seen(fm_context *ctx);

#endif
