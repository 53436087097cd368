/* SPDX-License-Identifier: BSD-3-Clause */
/* Member and destination lists: every rank in range, none twice, and where the caller is. */
#include <stdlib.h>

#include "members.h"

unsigned char *fm_members_seen(fm_context *ctx)
{
    if (!ctx->seen)
        ctx->seen = calloc((size_t)ctx->size, 1);
    return ctx->seen;
}

int fm_members_check(fm_context *ctx, const int *members, int n, int *pos)
{
    if (n == 0)
        return FM_ERR_EMPTY;
    if (!members || n < 0)
        return FM_ERR_INVALID;
    if (!fm_members_seen(ctx))
        return FM_ERR_NOMEM;
    int rc = FM_OK, i;
    *pos = -1;
    for (i = 0; i < n && rc == FM_OK; i++) {
        int r = members[i];
        if (r < 0 || r >= ctx->size)
            rc = FM_ERR_RANK;
        else if (ctx->seen[r]++)
            rc = FM_ERR_DUPLICATE;
        else if (r == ctx->rank)
            *pos = i;
    }
    for (int j = 0; j < i; j++) /* clean for the next call */
        if (members[j] >= 0 && members[j] < ctx->size)
            ctx->seen[members[j]] = 0;
    return rc;
}
