/* SPDX-License-Identifier: BSD-3-Clause */
/* FM_TOPOLOGY parsed (topo_spec.c): a torus's dimensions or a file's host coordinates. */
#ifndef FM_TOPO_SPEC_H
#define FM_TOPO_SPEC_H

#include <stddef.h>

#define FM_TOPO_MAXDIMS  3
#define FM_TOPO_MAXDIM   1024      /* positions along one axis */
#define FM_TOPO_MAXSPOTS (1 << 20) /* positions in the whole grid */

/* A parsed FM_TOPOLOGY (topo_spec.c). */
enum fm_topo_spec_kind { FM_TOPO_SPEC_NONE, FM_TOPO_SPEC_TORUS, FM_TOPO_SPEC_FILE };

struct fm_topo_entry { /* one host line of a file */
    const char *name;
    int coord[FM_TOPO_MAXDIMS]; /* unused axes 0 */
    int line;                   /* 1-based, for messages */
};

struct fm_topo_spec {
    int kind;                      /* enum fm_topo_spec_kind */
    int ndims;                     /* 0 for none */
    int dims[FM_TOPO_MAXDIMS];     /* unused axes 1 */
    int unidirectional;            /* torus: ":uni", links carry traffic the + way only */
    const char *path;              /* file: the path, pointing into the spec string */
    struct fm_topo_entry *entries; /* file: its hosts, sorted by name */
    int nentries;
    char *text; /* file: its contents, which the names point into */
};

/* Parses spec (NULL or "": none) and, for a file, reads and checks it: one to three coordinates
 * per line, the same number on every line, each 0..FM_TOPO_MAXDIM-1, at most FM_TOPO_MAXSPOTS
 * positions, no host or position listed twice. FM_OK or FM_ERR_CONFIG (FM_ERR_NOMEM); on error
 * *s holds nothing to clear. */
int fm_topo_spec_parse(const char *spec, struct fm_topo_spec *s, char *err, size_t errlen);
/* Index of the entry for host name, or -1. */
int fm_topo_spec_find(const struct fm_topo_spec *s, const char *name);
void fm_topo_spec_clear(struct fm_topo_spec *s);

#endif
