/* SPDX-License-Identifier: BSD-3-Clause */
/* A small local key/value store keyed by (rank, key), for a back end that owns every value
 * (singleton). Keys and values are NUL-ended strings, copied. */
#ifndef FM_BOOT_KVSTORE_H
#define FM_BOOT_KVSTORE_H

#include <stddef.h>

#include "boot_backend.h"

typedef struct fm_boot_kvstore fm_boot_kvstore;

/* An empty store, or NULL when out of memory. */
fm_boot_kvstore *fm_boot_kvstore_new(void);
/* Set (rank, key) to value, replacing an earlier value. FM_OK or FM_ERR_NOMEM. */
int fm_boot_kvstore_put(fm_boot_kvstore *s, int rank, const char *key, const char *value);
/* The value of (rank, key), or NULL; valid until the next put of that pair or free. */
const char *fm_boot_kvstore_get(const fm_boot_kvstore *s, int rank, const char *key);
void fm_boot_kvstore_free(fm_boot_kvstore *s);

/* A back end's get: copy (rank, key) into value (len bytes, NUL-ended). FM_ERR_BOOTSTRAP if
 * missing, FM_ERR_TOO_LONG if it does not fit; both with b->err naming the back end. */
int fm_boot_kvstore_fetch(fm_boot *b, const fm_boot_kvstore *s, int rank, const char *key,
                          char *value, size_t len);

#endif
