/* SPDX-License-Identifier: BSD-3-Clause */
/* What the ranks put, and the replies to their gets.
 *
 * Puts wait in a list until the fence that follows them is done (commit), then go into a
 * hash table of (rank, key) that gets read. A reply is its header and, per rank, a record
 * header and the value's bytes. Every reply of a generation is kept (up to
 * FM_RUN_STORE_REPLIES_MAX bytes) and shared by reference: ranks reading the same ranges (every
 * rank reading every rank's value, in rank order) cost one reply built, not one per rank. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "run_wire.h"

#define FM_RUN_STORE_MIN_BUCKETS 256
#define FM_RUN_STORE_REPLIES_MAX (64u * 1024 * 1024) /* bytes of replies kept per generation */

/* How a table chains its entries: the first member of each. */
struct fm_run_link {
    struct fm_run_link *next; /* in its bucket, or in the pending list */
    uint64_t hash;
};

struct fm_run_kv {
    struct fm_run_link link;
    int rank;
    size_t vlen;
    char *value; /* inside the same allocation, after the key */
    char key[];  /* NUL-ended */
};

/* A reply kept for gets of the same key and ranks. */
struct fm_run_reply {
    struct fm_run_link link;
    int rank, count;
    int nvals;                /* values in the reply: count or fewer */
    struct fm_run_blob *blob; /* one reference held here */
    char key[];
};

struct fm_run_table {
    struct fm_run_link **bucket;
    size_t nbuckets, count;
};

struct fm_run_store {
    int nranks;
    struct fm_run_table kv;      /* struct fm_run_kv: what gets see */
    struct fm_run_table replies; /* struct fm_run_reply: this generation's */
    size_t reply_bytes;
    struct fm_run_link *pending, **pending_tail; /* put since the last commit, in order */
    size_t *put_bytes;                           /* per rank, for FM_RUN_PUT_BYTES_MAX */
    struct fm_run_buf scratch;                   /* a reply's values while it is built */
    struct fm_run_store_stats stats;
};

/* FNV-1a over the rank and count's bytes and the key. */
static uint64_t fm_run_store_hash(int rank, int count, const char *key)
{
    uint64_t h = 14695981039346656037ULL;
    unsigned v[2] = {(unsigned)rank, (unsigned)count};
    for (int j = 0; j < 2; j++)
        for (int i = 0; i < 4; i++, v[j] >>= 8)
            h = (h ^ (v[j] & 0xff)) * 1099511628211ULL;
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        h = (h ^ *p) * 1099511628211ULL;
    return h;
}

static int fm_run_table_init(struct fm_run_table *t)
{
    t->count = 0;
    t->nbuckets = FM_RUN_STORE_MIN_BUCKETS;
    t->bucket = calloc(t->nbuckets, sizeof *t->bucket);
    return t->bucket ? 0 : -1;
}

static void fm_run_table_insert(struct fm_run_table *t, struct fm_run_link *l)
{
    if (t->count >= t->nbuckets) { /* double; on failure keep the longer chains */
        size_t n = t->nbuckets * 2;
        struct fm_run_link **nb = calloc(n, sizeof *nb);
        for (size_t i = 0; nb && i < t->nbuckets; i++)
            for (struct fm_run_link *x = t->bucket[i], *next; x; x = next) {
                next = x->next;
                x->next = nb[x->hash & (n - 1)];
                nb[x->hash & (n - 1)] = x;
            }
        if (nb) {
            free(t->bucket);
            t->bucket = nb;
            t->nbuckets = n;
        }
    }
    l->next = t->bucket[l->hash & (t->nbuckets - 1)];
    t->bucket[l->hash & (t->nbuckets - 1)] = l;
    t->count++;
}

/* The entry for (rank, key) or NULL; *where (if asked) is the link that points to it. */
static struct fm_run_kv *fm_run_store_find(const struct fm_run_store *s, int rank, const char *key,
                                           struct fm_run_link ***where)
{
    uint64_t h = fm_run_store_hash(rank, 0, key);
    struct fm_run_link **p = &s->kv.bucket[h & (s->kv.nbuckets - 1)];
    for (; *p; p = &(*p)->next) {
        const struct fm_run_kv *e = (const struct fm_run_kv *)*p;
        if ((*p)->hash == h && e->rank == rank && !strcmp(e->key, key))
            break;
    }
    if (where)
        *where = p;
    return (struct fm_run_kv *)*p;
}

static void fm_run_store_drop_replies(struct fm_run_store *s)
{
    for (size_t i = 0; i < s->replies.nbuckets; i++) {
        for (struct fm_run_link *l = s->replies.bucket[i], *next; l; l = next) {
            next = l->next;
            fm_run_blob_unref(((struct fm_run_reply *)l)->blob);
            free(l);
        }
        s->replies.bucket[i] = NULL;
    }
    s->replies.count = 0;
    s->reply_bytes = 0;
}

struct fm_run_store *fm_run_store_new(int nranks)
{
    struct fm_run_store *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->nranks = nranks;
    s->pending_tail = &s->pending;
    s->put_bytes = calloc((size_t)nranks, sizeof *s->put_bytes);
    if (!s->put_bytes || fm_run_table_init(&s->kv) || fm_run_table_init(&s->replies)) {
        fm_run_store_free(s);
        return NULL;
    }
    return s;
}

void fm_run_store_free(struct fm_run_store *s)
{
    if (!s)
        return;
    if (s->replies.bucket)
        fm_run_store_drop_replies(s);
    for (size_t i = 0; s->kv.bucket && i < s->kv.nbuckets; i++)
        for (struct fm_run_link *l = s->kv.bucket[i], *next; l; l = next) {
            next = l->next;
            free(l);
        }
    for (struct fm_run_link *l = s->pending, *next; l; l = next) {
        next = l->next;
        free(l);
    }
    free(s->kv.bucket);
    free(s->replies.bucket);
    free(s->put_bytes);
    free(s->scratch.data);
    free(s);
}

int fm_run_store_put(struct fm_run_store *s, int rank, const char *key, const char *val, size_t len)
{
    size_t klen = strlen(key);
    if (klen + len > FM_RUN_PUT_BYTES_MAX - s->put_bytes[rank])
        return -2;
    struct fm_run_kv *e = malloc(sizeof *e + klen + 1 + len);
    if (!e)
        return -1;
    s->put_bytes[rank] += klen + len;
    memcpy(e->key, key, klen + 1);
    e->value = e->key + klen + 1;
    memcpy(e->value, val, len);
    e->vlen = len;
    e->rank = rank;
    e->link.hash = fm_run_store_hash(rank, 0, key);
    e->link.next = NULL;
    *s->pending_tail = &e->link;
    s->pending_tail = &e->link.next;
    s->stats.puts++;
    return 0;
}

void fm_run_store_commit(struct fm_run_store *s)
{
    for (struct fm_run_link *l = s->pending, *next; l; l = next) {
        struct fm_run_kv *e = (struct fm_run_kv *)l;
        struct fm_run_link **where;
        struct fm_run_kv *old = fm_run_store_find(s, e->rank, e->key, &where);
        next = l->next;
        if (old) { /* a later put replaces the value in place */
            l->next = old->link.next;
            *where = l;
            free(old);
        } else {
            fm_run_table_insert(&s->kv, l);
        }
    }
    s->pending = NULL;
    s->pending_tail = &s->pending;
    fm_run_store_drop_replies(s);
    s->stats.fences++;
}

/* Build the reply to g: as many ranks' lines as fit in FM_RUN_VALS_MAX, at least one. */
static struct fm_run_blob *fm_run_store_build(struct fm_run_store *s, const struct fm_run_get *g,
                                              int *nvals)
{
    struct fm_run_buf *b = &s->scratch;
    char head[FM_RUN_LINE_MAX];
    int n = 0;
    b->len = 0;
    for (; n < g->count; n++) {
        const struct fm_run_kv *e = fm_run_store_find(s, g->rank + n, g->key, NULL);
        struct fm_run_val v = {e ? e->value : NULL, e ? e->vlen : 0};
        char rec[FM_RUN_RECORD_MAX];
        int r = fm_run_fmt_record(rec, &v);
        if (n > 0 && b->len + (size_t)r + v.len > FM_RUN_VALS_MAX)
            break;
        if (fm_run_buf_append(b, rec, (size_t)r) || fm_run_buf_append(b, v.data, v.len))
            return NULL;
    }
    int h = fm_run_fmt_vals(head, sizeof head, g, n, b->len);
    if (h < 0)
        return NULL;
    struct fm_run_blob *blob = fm_run_blob_new(NULL, (size_t)h + b->len);
    if (blob) {
        memcpy(blob->data, head, (size_t)h);
        memcpy(blob->data + h, b->data, b->len);
    }
    *nvals = n;
    return blob;
}

struct fm_run_blob *fm_run_store_reply(struct fm_run_store *s, const struct fm_run_get *g)
{
    uint64_t h = fm_run_store_hash(g->rank, g->count, g->key);
    struct fm_run_reply *r = NULL;
    for (struct fm_run_link *l = s->replies.bucket[h & (s->replies.nbuckets - 1)]; l && !r;
         l = l->next) {
        struct fm_run_reply *x = (struct fm_run_reply *)l;
        if (l->hash == h && x->rank == g->rank && x->count == g->count && !strcmp(x->key, g->key))
            r = x;
    }
    int nvals = r ? r->nvals : 0;
    struct fm_run_blob *blob = r ? r->blob : fm_run_store_build(s, g, &nvals);
    if (!blob)
        return NULL;
    s->stats.gets++;
    s->stats.values += (unsigned long long)nvals;
    s->stats.bytes += blob->len;
    if (r || s->reply_bytes + blob->len > FM_RUN_STORE_REPLIES_MAX) {
        if (r)
            blob->refs++;
        return blob;
    }
    size_t klen = strlen(g->key);
    r = malloc(sizeof *r + klen + 1);
    if (r) { /* not kept when out of memory: only slower */
        r->link.hash = h;
        r->rank = g->rank;
        r->count = g->count;
        r->nvals = nvals;
        r->blob = blob;
        memcpy(r->key, g->key, klen + 1);
        blob->refs++;
        s->reply_bytes += blob->len;
        fm_run_table_insert(&s->replies, &r->link);
    }
    return blob;
}

const struct fm_run_store_stats *fm_run_store_stats(const struct fm_run_store *s)
{
    return &s->stats;
}
