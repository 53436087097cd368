/* SPDX-License-Identifier: BSD-3-Clause */
/* The topology of a job from its host keys and FM_TOPOLOGY: host numbering, local positions,
 * coordinates, the queries on them, and this process's own host name and key. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dirent, stat and gethostname in a C11 build that does not define it */
#endif
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fail.h"
#include "fastmsg.h"
#include "topo.h"

struct fm_topo {
    int nranks, nhosts;
    int kind, ndims, dims[FM_TOPO_MAXDIMS];
    int unidirectional; /* a torus whose links carry traffic the + way only */
    int *host;          /* [nranks] host index */
    int *local;         /* [nranks] position on the host */
    int *first;         /* [nhosts + 1] host h's ranks are members[first[h] .. first[h+1]) */
    int *members;       /* [nranks] ranks grouped by host, in rank order */
    int *coord;         /* [nranks * FM_TOPO_MAXDIMS], NULL without coordinates */
    char **key, **name; /* [nhosts] each, into text */
    char *path;         /* the file of FM_TOPO_FILE, into text */
    char *text;
    int ints[]; /* host, local, first, members, coord */
};

/* A rank's host name: given, or its key up to the last '/'. Sets *len. */
static const char *rank_name(const char *key, const char *const *names, int r, size_t *len)
{
    if (names) {
        *len = strlen(names[r]);
        return names[r];
    }
    const char *slash = strrchr(key, '/');
    *len = slash ? (size_t)(slash - key) : strlen(key);
    return key;
}

static int check_args(int nranks, const char *const *keys, const char *const *names, char *err,
                      size_t errlen)
{
    if (nranks < 1 || !keys)
        return fm_fail(err, errlen, FM_ERR_INVALID,
                       "a topology needs at least one rank and its host key");
    for (int r = 0; r < nranks; r++) {
        size_t len;
        if (!keys[r] || !*keys[r])
            return fm_fail(err, errlen, FM_ERR_INVALID, "rank %d has no host key", r);
        if (names && !names[r])
            return fm_fail(err, errlen, FM_ERR_INVALID, "rank %d has no host name", r);
        rank_name(keys[r], names, r, &len);
        if (len == 0)
            return fm_fail(err, errlen, FM_ERR_INVALID, "rank %d's host name is empty (key '%s')",
                           r, keys[r]);
    }
    return FM_OK;
}

static uint64_t hash(const char *s)
{
    uint64_t h = 14695981039346656037ULL; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* Numbers hosts by first appearance into t->host and leaves each host's lowest rank in
 * t->first[h]. An open-addressing table keeps this linear in the number of ranks. */
static int number_hosts(fm_topo *t, const char *const *keys, char *err, size_t errlen)
{
    size_t cap = 2;
    while (cap < 2 * (size_t)t->nranks)
        cap *= 2;
    int *slot = malloc(cap * sizeof *slot);
    if (!slot)
        return fm_fail(err, errlen, FM_ERR_NOMEM, "topology: out of memory");
    for (size_t i = 0; i < cap; i++)
        slot[i] = -1;
    for (int r = 0; r < t->nranks; r++) {
        size_t i = hash(keys[r]) & (cap - 1);
        while (slot[i] >= 0 && strcmp(keys[t->first[slot[i]]], keys[r]))
            i = (i + 1) & (cap - 1);
        if (slot[i] < 0) {
            slot[i] = t->nhosts;
            t->first[t->nhosts++] = r;
        }
        t->host[r] = slot[i];
    }
    free(slot);
    return FM_OK;
}

/* Copies each host's key and name (and the file path) into one block. */
static int copy_names(fm_topo *t, const char *const *keys, const char *const *names,
                      const char *path, char *err, size_t errlen)
{
    size_t bytes = path ? strlen(path) + 1 : 0, len;
    for (int r = 0; r < t->nranks; r++) {
        int leader = t->first[t->host[r]];
        const char *mine = rank_name(keys[r], names, r, &len);
        if (r != leader) {
            size_t llen;
            const char *theirs = rank_name(keys[leader], names, leader, &llen);
            if (llen != len || memcmp(mine, theirs, len))
                return fm_fail(err, errlen, FM_ERR_INVALID,
                               "ranks %d and %d share host key '%s' but are named '%.*s' "
                               "and '%.*s'",
                               leader, r, keys[r], (int)llen, theirs, (int)len, mine);
            continue;
        }
        bytes += strlen(keys[r]) + 1 + len + 1;
    }
    t->key = malloc(2 * (size_t)t->nhosts * sizeof *t->key);
    t->text = malloc(bytes);
    if (!t->key || !t->text)
        return fm_fail(err, errlen, FM_ERR_NOMEM, "topology: out of memory");
    t->name = t->key + t->nhosts;
    char *p = t->text;
    for (int h = 0; h < t->nhosts; h++) {
        int leader = t->first[h];
        const char *name = rank_name(keys[leader], names, leader, &len);
        size_t klen = strlen(keys[leader]);
        t->key[h] = p;
        memcpy(p, keys[leader], klen + 1);
        p += klen + 1;
        t->name[h] = p;
        memcpy(p, name, len);
        p[len] = '\0';
        p += len + 1;
    }
    if (path) {
        t->path = p;
        strcpy(p, path);
    }
    return FM_OK;
}

/* Local positions, and each host's ranks in rank order (first[h] holds leaders until now). */
static void group_ranks(fm_topo *t)
{
    int *count = t->members; /* free until the last loop */
    memset(count, 0, (size_t)t->nhosts * sizeof *count);
    for (int r = 0; r < t->nranks; r++)
        t->local[r] = count[t->host[r]]++;
    t->first[0] = 0;
    for (int h = 0; h < t->nhosts; h++)
        t->first[h + 1] = t->first[h] + count[h];
    for (int r = 0; r < t->nranks; r++)
        t->members[t->first[t->host[r]] + t->local[r]] = r;
}

static void torus_coord(const int *dims, int i, int *coord)
{
    coord[0] = i % dims[0];
    coord[1] = (i / dims[0]) % dims[1];
    coord[2] = i / (dims[0] * dims[1]);
}

/* The number a host's name ends in (fmx12: 12), or -1 when it ends in none or it is at least
 * below. */
static int name_number(const char *name, int below)
{
    size_t len = strlen(name), i = len;
    while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9')
        i--;
    if (i == len || len - i > 7)
        return -1;
    int v = atoi(name + i);
    return v < below ? v : -1;
}

/* Fewer hosts than positions: each host's position is the number its name ends in (the
 * emulated torus's fmt0 .. fmt15), when every host has one and no two the same. *spot gets
 * them; FM_OK or FM_ERR_CONFIG. */
static int torus_by_names(fm_topo *t, int n, int *spot)
{
    char *taken = calloc((size_t)n, 1);
    int rc = taken ? FM_OK : FM_ERR_NOMEM;
    for (int h = 0; rc == FM_OK && h < t->nhosts; h++) {
        spot[h] = name_number(t->name[h], n);
        if (spot[h] < 0 || taken[spot[h]]++)
            rc = FM_ERR_CONFIG;
    }
    free(taken);
    return rc;
}

static int place_torus(fm_topo *t, const char *spec, const struct fm_topo_spec *s, char *err,
                       size_t errlen)
{
    int n = s->dims[0] * s->dims[1] * s->dims[2], *spot = NULL, rc = FM_OK;
    if (n == t->nhosts) {
        t->kind = FM_TOPO_TORUS_HOSTS; /* by name where names say, else in order */
        spot = malloc((size_t)t->nhosts * sizeof *spot);
        if (spot && torus_by_names(t, n, spot) != FM_OK) {
            free(spot);
            spot = NULL;
        }
    } else if (n == t->nranks) {
        t->kind = FM_TOPO_TORUS_RANKS;
    } else {
        spot = t->nhosts < n ? malloc((size_t)t->nhosts * sizeof *spot) : NULL;
        rc = spot ? torus_by_names(t, n, spot) : FM_ERR_CONFIG;
        if (rc != FM_OK) {
            free(spot);
            return rc == FM_ERR_NOMEM
                       ? fm_fail(err, errlen, rc, "topology: out of memory")
                       : fm_fail(err, errlen, FM_ERR_CONFIG,
                                 "FM_TOPOLOGY '%s' has %d positions, but the job has %d host%s "
                                 "and %d rank%s (and the host names do not end in distinct "
                                 "positions)",
                                 spec, n, t->nhosts, t->nhosts == 1 ? "" : "s", t->nranks,
                                 t->nranks == 1 ? "" : "s");
        }
        t->kind = FM_TOPO_TORUS_HOSTS;
    }
    t->unidirectional = s->unidirectional;
    for (int r = 0; r < t->nranks; r++) {
        int h = t->host[r], at = t->kind == FM_TOPO_TORUS_RANKS ? r : spot ? spot[h] : h;
        torus_coord(s->dims, at, t->coord + (size_t)r * FM_TOPO_MAXDIMS);
    }
    free(spot);
    return FM_OK;
}

static int place_file(fm_topo *t, const struct fm_topo_spec *s, char *err, size_t errlen)
{
    int *owner = malloc((size_t)s->nentries * sizeof *owner); /* job host of each line */
    if (!owner)
        return fm_fail(err, errlen, FM_ERR_NOMEM, "topology: out of memory");
    for (int i = 0; i < s->nentries; i++)
        owner[i] = -1;
    int rc = FM_OK;
    for (int h = 0; h < t->nhosts && rc == FM_OK; h++) {
        int e = fm_topo_spec_find(s, t->name[h]);
        if (e < 0) {
            rc = fm_fail(err, errlen, FM_ERR_CONFIG,
                         "host '%s' (rank %d) is not listed in FM_TOPOLOGY file '%s'", t->name[h],
                         t->members[t->first[h]], s->path);
        } else if (owner[e] >= 0) {
            /* Two hosts of the job, one line: they would share coordinates. */
            rc = fm_fail(err, errlen, FM_ERR_CONFIG,
                         "hosts '%s' and '%s' both have the name '%s' (line %d of "
                         "FM_TOPOLOGY file '%s')",
                         t->key[owner[e]], t->key[h], t->name[h], s->entries[e].line, s->path);
        } else {
            owner[e] = h;
            for (int i = t->first[h]; i < t->first[h + 1]; i++)
                memcpy(t->coord + (size_t)t->members[i] * FM_TOPO_MAXDIMS, s->entries[e].coord,
                       sizeof s->entries[e].coord);
        }
    }
    free(owner);
    t->kind = FM_TOPO_FILE;
    return rc;
}

static int build(fm_topo *t, const char *const *keys, const char *const *names, const char *spec,
                 const struct fm_topo_spec *s, char *err, size_t errlen)
{
    int rc = number_hosts(t, keys, err, errlen);
    if (rc == FM_OK)
        rc = copy_names(t, keys, names, s->kind == FM_TOPO_SPEC_FILE ? s->path : NULL, err, errlen);
    if (rc != FM_OK)
        return rc;
    group_ranks(t);
    t->ndims = s->ndims;
    memcpy(t->dims, s->dims, sizeof t->dims);
    if (s->kind == FM_TOPO_SPEC_TORUS)
        return place_torus(t, spec, s, err, errlen);
    if (s->kind == FM_TOPO_SPEC_FILE)
        return place_file(t, s, err, errlen);
    return FM_OK;
}

int fm_topo_build_named(int nranks, const char *const *keys, const char *const *names,
                        const char *spec, fm_topo **out, char *err, size_t errlen)
{
    if (!out)
        return fm_fail(err, errlen, FM_ERR_INVALID, "no place for the topology");
    *out = NULL;
    int rc = check_args(nranks, keys, names, err, errlen);
    if (rc != FM_OK)
        return rc;
    struct fm_topo_spec s;
    rc = fm_topo_spec_parse(spec, &s, err, errlen);
    if (rc != FM_OK)
        return rc;
    size_t n = (size_t)nranks, nints = 4 * n + 1 + (s.ndims ? FM_TOPO_MAXDIMS * n : 0);
    fm_topo *t = calloc(1, sizeof *t + nints * sizeof(int));
    if (!t) {
        fm_topo_spec_clear(&s);
        return fm_fail(err, errlen, FM_ERR_NOMEM, "topology: out of memory");
    }
    t->nranks = nranks;
    t->host = t->ints;
    t->local = t->host + n;
    t->members = t->local + n;
    t->first = t->members + n; /* n + 1: at most one host per rank */
    t->coord = s.ndims ? t->first + n + 1 : NULL;
    rc = build(t, keys, names, spec, &s, err, errlen);
    fm_topo_spec_clear(&s);
    if (rc != FM_OK) {
        fm_topo_free(t);
        return rc;
    }
    *out = t;
    return FM_OK;
}

int fm_topo_build(int nranks, const char *const *keys, const char *spec, fm_topo **out, char *err,
                  size_t errlen)
{
    return fm_topo_build_named(nranks, keys, NULL, spec, out, err, errlen);
}

void fm_topo_free(fm_topo *t)
{
    if (!t)
        return;
    free(t->key); /* name shares this block */
    free(t->text);
    free(t);
}

static int rank_ok(const fm_topo *t, int rank)
{
    return t && rank >= 0 && rank < t->nranks;
}

static int host_ok(const fm_topo *t, int host)
{
    return t && host >= 0 && host < t->nhosts;
}

int fm_topo_nranks(const fm_topo *t)
{
    return t ? t->nranks : FM_ERR_INVALID;
}

int fm_topo_nhosts(const fm_topo *t)
{
    return t ? t->nhosts : FM_ERR_INVALID;
}

int fm_topo_host(const fm_topo *t, int rank)
{
    return rank_ok(t, rank) ? t->host[rank] : FM_ERR_INVALID;
}

int fm_topo_local(const fm_topo *t, int rank)
{
    return rank_ok(t, rank) ? t->local[rank] : FM_ERR_INVALID;
}

int fm_topo_nlocal(const fm_topo *t, int rank)
{
    if (!rank_ok(t, rank))
        return FM_ERR_INVALID;
    int h = t->host[rank];
    return t->first[h + 1] - t->first[h];
}

int fm_topo_leader(const fm_topo *t, int host)
{
    return host_ok(t, host) ? t->members[t->first[host]] : FM_ERR_INVALID;
}

int fm_topo_host_ranks(const fm_topo *t, int host, const int **ranks)
{
    if (!host_ok(t, host) || !ranks)
        return FM_ERR_INVALID;
    *ranks = t->members + t->first[host];
    return t->first[host + 1] - t->first[host];
}

int fm_topo_same_host(const fm_topo *t, int a, int b)
{
    if (!rank_ok(t, a) || !rank_ok(t, b))
        return FM_ERR_INVALID;
    return t->host[a] == t->host[b];
}

const char *fm_topo_name(const fm_topo *t, int host)
{
    return host_ok(t, host) ? t->name[host] : NULL;
}

const char *fm_topo_key(const fm_topo *t, int host)
{
    return host_ok(t, host) ? t->key[host] : NULL;
}

int fm_topo_kind(const fm_topo *t)
{
    return t ? t->kind : FM_ERR_INVALID;
}

int fm_topo_unidirectional(const fm_topo *t)
{
    return t ? t->unidirectional : FM_ERR_INVALID;
}

int fm_topo_ndims(const fm_topo *t)
{
    return t ? t->ndims : FM_ERR_INVALID;
}

int fm_topo_dims(const fm_topo *t, int *dims)
{
    if (!t || (!dims && t->ndims))
        return FM_ERR_INVALID;
    for (int i = 0; i < t->ndims; i++)
        dims[i] = t->dims[i];
    return t->ndims;
}

int fm_topo_coord(const fm_topo *t, int rank, int *coord)
{
    if (!rank_ok(t, rank) || !coord || !t->ndims)
        return FM_ERR_INVALID;
    memcpy(coord, t->coord + (size_t)rank * FM_TOPO_MAXDIMS, (size_t)t->ndims * sizeof *coord);
    return FM_OK;
}

/* "AxBxC" into buf. */
static const char *dims_str(const int *dims, int ndims, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < ndims && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, i ? "x%d" : "%d", dims[i]);
    return buf;
}

int fm_topo_print(const fm_topo *t, FILE *f)
{
    if (!t || !f)
        return FM_ERR_INVALID;
    int w = 4; /* "name" */
    for (int h = 0; h < t->nhosts; h++)
        if ((int)strlen(t->name[h]) > w)
            w = (int)strlen(t->name[h]);
    fprintf(f, "%6s %6s  %-*s %7s%s\n", "rank", "host", w, "name", "local",
            t->ndims ? "  coord" : "");
    for (int r = 0; r < t->nranks; r++) {
        char local[32];
        snprintf(local, sizeof local, "%d/%d", t->local[r], fm_topo_nlocal(t, r));
        fprintf(f, "%6d %6d  %-*s %7s", r, t->host[r], w, t->name[t->host[r]], local);
        for (int i = 0; i < t->ndims; i++)
            fprintf(f, "%s%d", i ? "," : "  (", t->coord[(size_t)r * FM_TOPO_MAXDIMS + (size_t)i]);
        fprintf(f, "%s\n", t->ndims ? ")" : "");
    }
    char dims[48];
    dims_str(t->dims, t->ndims, dims, sizeof dims);
    fprintf(f, "%d rank%s on %d host%s", t->nranks, t->nranks == 1 ? "" : "s", t->nhosts,
            t->nhosts == 1 ? "" : "s");
    const char *way = t->unidirectional ? " (unidirectional)" : "";
    if (t->kind == FM_TOPO_TORUS_HOSTS)
        fprintf(f, ", torus %s%s, one position per host", dims, way);
    else if (t->kind == FM_TOPO_TORUS_RANKS)
        fprintf(f, ", torus %s%s, one position per rank", dims, way);
    else if (t->kind == FM_TOPO_FILE)
        fprintf(f, ", coordinates %s from %s", dims, t->path);
    fputc('\n', f);
    return ferror(f) ? FM_ERR_INVALID : FM_OK;
}

/* The name in netns_dir of the namespace self_ns is, unless it is init_ns: 0 and the name in
 * buf, or -1. Several names for one namespace: the smallest, so every process picks the same. */
static int netns_name(const char *netns_dir, const char *self_ns, const char *init_ns, char *buf,
                      size_t len)
{
    struct stat self, st;
    if (!netns_dir || !self_ns || stat(self_ns, &self))
        return -1;
    if (init_ns && !stat(init_ns, &st) && st.st_dev == self.st_dev && st.st_ino == self.st_ino)
        return -1;
    DIR *d = opendir(netns_dir);
    if (!d)
        return -1;
    int found = -1;
    struct dirent *de;
    while ((de = readdir(d))) {
        char path[4096];
        if (de->d_name[0] == '.' ||
            (size_t)snprintf(path, sizeof path, "%s/%s", netns_dir, de->d_name) >= sizeof path)
            continue;
        if (stat(path, &st) || st.st_dev != self.st_dev || st.st_ino != self.st_ino)
            continue;
        if (strlen(de->d_name) < len && (found || strcmp(de->d_name, buf) < 0)) {
            strcpy(buf, de->d_name);
            found = 0;
        }
    }
    closedir(d);
    return found;
}

int fm_topo_host_name_at(const char *netns_dir, const char *self_ns, const char *init_ns, char *buf,
                         size_t len)
{
    char name[258];
    if (!buf || !len)
        return FM_ERR_INVALID;
    if (netns_name(netns_dir, self_ns, init_ns, name, sizeof name)) {
        /* POSIX leaves a truncated name unterminated; the extra byte terminates it. */
        if (gethostname(name, sizeof name - 1))
            return FM_ERR_INTERNAL;
        name[sizeof name - 1] = '\0';
        if (!name[0])
            return FM_ERR_INTERNAL;
    }
    if (strlen(name) >= len)
        return FM_ERR_TOO_LONG;
    strcpy(buf, name);
    return FM_OK;
}

int fm_topo_host_key_at(const char *netns_dir, const char *self_ns, const char *init_ns, char *buf,
                        size_t len)
{
    char name[258];
    struct stat st;
    if (!buf || !len)
        return FM_ERR_INVALID;
    int rc = fm_topo_host_name_at(netns_dir, self_ns, init_ns, name, sizeof name);
    if (rc != FM_OK)
        return rc;
    unsigned long long ino = self_ns && !stat(self_ns, &st) ? (unsigned long long)st.st_ino : 0;
    if ((size_t)snprintf(buf, len, "%s/%llu", name, ino) >= len)
        return FM_ERR_TOO_LONG;
    return FM_OK;
}

int fm_topo_host_name(char *buf, size_t len)
{
    return fm_topo_host_name_at("/run/netns", "/proc/self/ns/net", "/proc/1/ns/net", buf, len);
}

int fm_topo_host_key(char *buf, size_t len)
{
    return fm_topo_host_key_at("/run/netns", "/proc/self/ns/net", "/proc/1/ns/net", buf, len);
}
