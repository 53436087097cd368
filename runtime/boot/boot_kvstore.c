/* SPDX-License-Identifier: BSD-3-Clause */
/* Chained hash table of (rank, key) -> value; doubles when the load factor passes 1. */
#include "boot_kvstore.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fastmsg.h"
#include "log.h"

#define FM_BOOT_KVSTORE_MIN_BUCKETS 64

struct fm_boot_kv_entry {
    struct fm_boot_kv_entry *next;
    uint64_t hash;
    int rank;
    char *value;
    char key[]; /* NUL-ended */
};

struct fm_boot_kvstore {
    struct fm_boot_kv_entry **bucket;
    size_t nbuckets; /* a power of two */
    size_t count;
};

/* FNV-1a over the rank's bytes and the key. */
static uint64_t fm_boot_kvstore_hash(int rank, const char *key)
{
    uint64_t h = 14695981039346656037ULL;
    unsigned r = (unsigned)rank;
    for (int i = 0; i < 4; i++, r >>= 8)
        h = (h ^ (r & 0xff)) * 1099511628211ULL;
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        h = (h ^ *p) * 1099511628211ULL;
    return h;
}

fm_boot_kvstore *fm_boot_kvstore_new(void)
{
    fm_boot_kvstore *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->nbuckets = FM_BOOT_KVSTORE_MIN_BUCKETS;
    s->bucket = calloc(s->nbuckets, sizeof *s->bucket);
    if (!s->bucket) {
        free(s);
        return NULL;
    }
    return s;
}

static struct fm_boot_kv_entry *fm_boot_kvstore_find(const fm_boot_kvstore *s, uint64_t h, int rank,
                                                     const char *key)
{
    struct fm_boot_kv_entry *e = s->bucket[h & (s->nbuckets - 1)];
    for (; e; e = e->next)
        if (e->hash == h && e->rank == rank && !strcmp(e->key, key))
            return e;
    return NULL;
}

/* Rehash into twice the buckets; on allocation failure keep the old (longer chains). */
static void fm_boot_kvstore_grow(fm_boot_kvstore *s)
{
    size_t n = s->nbuckets * 2;
    struct fm_boot_kv_entry **nb = calloc(n, sizeof *nb);
    if (!nb)
        return;
    for (size_t i = 0; i < s->nbuckets; i++) {
        struct fm_boot_kv_entry *e = s->bucket[i], *next;
        for (; e; e = next) {
            next = e->next;
            e->next = nb[e->hash & (n - 1)];
            nb[e->hash & (n - 1)] = e;
        }
    }
    free(s->bucket);
    s->bucket = nb;
    s->nbuckets = n;
}

int fm_boot_kvstore_put(fm_boot_kvstore *s, int rank, const char *key, const char *value)
{
    uint64_t h = fm_boot_kvstore_hash(rank, key);
    struct fm_boot_kv_entry *e = fm_boot_kvstore_find(s, h, rank, key);
    char *v = strdup(value);
    int rc;
    FM_CHECK_QUIET(v, FM_ERR_NOMEM);
    if (e) {
        free(e->value);
        e->value = v;
        return FM_OK;
    }
    size_t klen = strlen(key);
    e = malloc(sizeof *e + klen + 1);
    FM_CHECK_QUIET(e, FM_ERR_NOMEM);
    memcpy(e->key, key, klen + 1);
    e->hash = h;
    e->rank = rank;
    e->value = v;
    if (s->count >= s->nbuckets)
        fm_boot_kvstore_grow(s);
    e->next = s->bucket[h & (s->nbuckets - 1)];
    s->bucket[h & (s->nbuckets - 1)] = e;
    s->count++;
    return FM_OK;
error:
    free(v);
    return rc;
}

const char *fm_boot_kvstore_get(const fm_boot_kvstore *s, int rank, const char *key)
{
    struct fm_boot_kv_entry *e =
        fm_boot_kvstore_find(s, fm_boot_kvstore_hash(rank, key), rank, key);
    return e ? e->value : NULL;
}

void fm_boot_kvstore_free(fm_boot_kvstore *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nbuckets; i++) {
        struct fm_boot_kv_entry *e = s->bucket[i], *next;
        for (; e; e = next) {
            next = e->next;
            free(e->value);
            free(e);
        }
    }
    free(s->bucket);
    free(s);
}

int fm_boot_kvstore_fetch(fm_boot *b, const fm_boot_kvstore *s, int rank, const char *key,
                          char *value, size_t len)
{
    const char *v = s ? fm_boot_kvstore_get(s, rank, key) : NULL;
    if (!v)
        return fm_boot_fail(b, FM_ERR_BOOTSTRAP,
                            "%s bootstrap: rank %d published nothing under '%s' before the last "
                            "fence",
                            b->ops ? b->ops->name : "?", rank, key);
    size_t n = strlen(v);
    if (n >= len)
        return fm_boot_fail(
            b, FM_ERR_TOO_LONG,
            "%s bootstrap: value of '%s' from rank %d is %zu bytes, buffer holds %zu",
            b->ops ? b->ops->name : "?", key, rank, n, len);
    memcpy(value, v, n + 1);
    return FM_OK;
}
