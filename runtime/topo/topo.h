/* SPDX-License-Identifier: BSD-3-Clause */
/* Topology: where each rank of a job is. Built once from one host key per rank (gathered by the
 * caller through the bootstrap) and the FM_TOPOLOGY spec; pure computation, no communication.
 *
 * Hosts are numbered 0.. in order of first appearance by rank: ranks with the same key share a
 * host. A rank's local position is its index among its host's ranks, in rank order; the host's
 * leader is its lowest rank (local position 0). Optional coordinates (ndims 1..3) come from
 * FM_TOPOLOGY:
 *   ""              none (ndims 0); a NULL spec means the same
 *   "torus:AxB[xC][:uni]"
 *                   one position per host when the job has A*B*C hosts (the number each
 *                   host's name ends in when all end in distinct numbers below A*B*C, else
 *                   in host order), else one per rank when
 *                   it has A*B*C ranks (one machine emulating a torus), else, when every
 *                   host's name ends in a distinct number below A*B*C, at that position (the
 *                   emulated torus's hosts fmt0 .. fmt15, any subset of them), else
 *                   FM_ERR_CONFIG.
 *                   Position i is x = i % A, y = (i / A) % B, z = i / (A*B). ":uni": the
 *                   torus's links carry traffic the + way only (replies go round the ring);
 *                   without it both ways. Routes are dimension-ordered (x, then y, then z),
 *                   which only the multicast model uses (a torus of hosts).
 *   "file:PATH"     lines "NAME X [Y [Z]]" give each host's coordinates; NAME is the host's name
 *
 * Every call returns FM_OK, a count or index >= 0, or a negative FM_ERR_* code (fastmsg.h):
 * FM_ERR_INVALID for a bad argument (NULL, rank or host index out of range), FM_ERR_CONFIG for a
 * spec that is malformed or does not fit the job, FM_ERR_NOMEM, FM_ERR_TOO_LONG for a result
 * that does not fit the caller's buffer. Calls that take err write a one-line reason there (err
 * may be NULL). */
#ifndef FM_TOPO_H
#define FM_TOPO_H

#include <stddef.h>
#include <stdio.h>

#include "topo_spec.h"

typedef struct fm_topo fm_topo;

/* Where the coordinates came from. */
enum fm_topo_kind {
    FM_TOPO_NONE,        /* no coordinates */
    FM_TOPO_TORUS_HOSTS, /* torus spec, one position per host */
    FM_TOPO_TORUS_RANKS, /* torus spec, one position per rank */
    FM_TOPO_FILE,        /* coordinates per host from a file */
};

/* keys[r]: rank r's host key, "NAME/NETNS_INODE" (fm_topo_host_key()); NAME, the part before the
 * last '/' (the whole key without one), is the host's name. Keys are copied. */
int fm_topo_build(int nranks, const char *const *keys, const char *spec, fm_topo **out, char *err,
                  size_t errlen);
/* The same with each rank's host name given in names[r] instead of taken from its key (names
 * NULL: from the keys). Ranks with the same key must give the same name (else FM_ERR_INVALID). */
int fm_topo_build_named(int nranks, const char *const *keys, const char *const *names,
                        const char *spec, fm_topo **out, char *err, size_t errlen);
void fm_topo_free(fm_topo *t); /* NULL is fine */

int fm_topo_nranks(const fm_topo *t);
int fm_topo_nhosts(const fm_topo *t);
int fm_topo_host(const fm_topo *t, int rank);   /* host index of rank */
int fm_topo_local(const fm_topo *t, int rank);  /* position of rank on its host */
int fm_topo_nlocal(const fm_topo *t, int rank); /* ranks on rank's host */
int fm_topo_leader(const fm_topo *t, int host); /* lowest rank on host */
/* Ranks on host in rank order: *ranks points into t (valid until fm_topo_free). Returns their
 * count. */
int fm_topo_host_ranks(const fm_topo *t, int host, const int **ranks);
/* 1 when ranks a and b are on the same host, 0 when not. */
int fm_topo_same_host(const fm_topo *t, int a, int b);
const char *fm_topo_name(const fm_topo *t, int host); /* host's name; NULL for a bad index */
const char *fm_topo_key(const fm_topo *t, int host);  /* host's key; NULL for a bad index */

int fm_topo_kind(const fm_topo *t); /* enum fm_topo_kind */
/* 1 for a torus spec with ":uni", 0 otherwise. */
int fm_topo_unidirectional(const fm_topo *t);
int fm_topo_ndims(const fm_topo *t);
/* Extent of each axis into dims[0..ndims); returns ndims (0: nothing written). A file's extents
 * are the largest coordinate + 1 on each axis, over every line of the file. */
int fm_topo_dims(const fm_topo *t, int *dims);
/* Coordinates of rank into coord[0..ndims); FM_ERR_INVALID when t has none. */
int fm_topo_coord(const fm_topo *t, int rank, int *coord);

/* A table (rank, host index, host name, local position/count, coordinates), then a one-line
 * summary such as "16 ranks on 4 hosts, torus 4x4, one position per rank". FM_ERR_INVALID
 * when t or f is NULL or f is in error afterwards. */
int fm_topo_print(const fm_topo *t, FILE *f);

/* This process's host name: the name of the network namespace it runs in when that is a named
 * one (a file in /run/netns with the inode of /proc/self/ns/net) other than init's, else the
 * hostname. The emulated cluster's hosts are such namespaces (fmh0, fmh1, ...). */
int fm_topo_host_name(char *buf, size_t len);
/* "NAME/NETNS_INODE": NAME as above, the inode of /proc/self/ns/net (0 where it is missing),
 * so processes in different namespaces of one machine count as different hosts. */
int fm_topo_host_key(char *buf, size_t len);
/* The same with the three paths given (tests): the named-namespace directory, this process's
 * namespace, init's namespace (NULL or unreadable: not compared). */
int fm_topo_host_name_at(const char *netns_dir, const char *self_ns, const char *init_ns, char *buf,
                         size_t len);
int fm_topo_host_key_at(const char *netns_dir, const char *self_ns, const char *init_ns, char *buf,
                        size_t len);

#endif
