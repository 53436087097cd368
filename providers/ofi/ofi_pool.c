/* SPDX-License-Identifier: BSD-3-Clause */
/* The op pool: chunks of fm_ofi_op kept on a free list until close. */
#include "ofi_internal.h"

#include "fastmsg.h"
#include "log.h"

#include <stdlib.h>

int fm_ofi_pool_grow(fm_ofi_tp *t)
{
    int rc = FM_OK;
    size_t n = t->chunk_ops;
    fm_ofi_chunk *c = calloc(1, sizeof *c + n * sizeof c->ops[0]);

    FM_CHECK(c, FM_ERR_NOMEM, "ofi %s: out of memory for %zu operation descriptors",
             t->base.info.provider, n);
    c->next = t->chunks;
    t->chunks = c;
    for (size_t i = n; i-- > 0;)
        fm_ofi_op_put(t, &c->ops[i]);
    t->stats.chunks++;
error:
    return rc;
}

void fm_ofi_pool_fini(fm_ofi_tp *t)
{
    while (t->chunks) {
        fm_ofi_chunk *c = t->chunks;
        t->chunks = c->next;
        free(c);
    }
    t->free = NULL;
}
