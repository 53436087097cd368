/* SPDX-License-Identifier: BSD-3-Clause */
/* Bootstrap for a process started on its own: rank 0 of 1. Puts land in a local store so
 * code written for N ranks runs unchanged with N = 1. */
#include <stdio.h>
#include <unistd.h>

#include "boot_kvstore.h"
#include "boot_backend.h"
#include "fastmsg.h"

static int fm_boot_singleton_init(fm_boot *b)
{
    b->rank = 0;
    b->size = 1;
    b->priv = fm_boot_kvstore_new();
    if (!b->priv)
        return fm_boot_fail(b, FM_ERR_NOMEM, "singleton bootstrap: out of memory");
    return FM_OK;
}

static int fm_boot_singleton_put(fm_boot *b, const char *key, const char *value)
{
    if (fm_boot_kvstore_put(b->priv, 0, key, value))
        return fm_boot_fail(b, FM_ERR_NOMEM, "singleton bootstrap: out of memory storing '%s'",
                            key);
    return FM_OK;
}

/* One process: every put is already visible. */
static int fm_boot_singleton_fence(fm_boot *b)
{
    (void)b;
    return FM_OK;
}

static int fm_boot_singleton_get(fm_boot *b, int rank, const char *key, char *value, size_t len)
{
    return fm_boot_kvstore_fetch(b, b->priv, rank, key, value, len);
}

static void fm_boot_singleton_abort(fm_boot *b, int code, const char *msg)
{
    (void)b;
    fprintf(stderr, "fastmsg[0]: abort(%d): %s\n", code, msg ? msg : "");
    fflush(stderr);
    _exit(code ? code : 1);
}

static void fm_boot_singleton_fini(fm_boot *b)
{
    fm_boot_kvstore_free(b->priv);
    b->priv = NULL;
}

const struct fm_boot_ops fm_boot_singleton_ops = {
    .name = "singleton",
    .init = fm_boot_singleton_init,
    .put = fm_boot_singleton_put,
    .fence = fm_boot_singleton_fence,
    .get = fm_boot_singleton_get,
    .abort = fm_boot_singleton_abort,
    .fini = fm_boot_singleton_fini,
};
