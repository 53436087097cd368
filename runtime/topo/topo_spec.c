/* SPDX-License-Identifier: BSD-3-Clause */
/* FM_TOPOLOGY parsing: "", "torus:AxB[xC]" or "file:PATH". A file is read whole and cut into
 * names in place, then checked and sorted by name, so fm_topo_build only looks names up. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fail.h"
#include "fastmsg.h"
#include "topo_spec.h"

/* A whole number in [lo, hi] spelt with decimal digits only (no sign, space or junk). Stops as
 * soon as the value passes hi, so no length of digits can overflow. */
static int parse_num(const char *s, size_t len, int lo, int hi, int *out)
{
    long v = 0;
    if (len == 0)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
        if (v > hi)
            return -1;
    }
    if (v < lo)
        return -1;
    *out = (int)v;
    return 0;
}

static long spots(const int *dims, int ndims)
{
    long n = 1;
    for (int i = 0; i < ndims; i++)
        n *= dims[i]; /* each <= FM_TOPO_MAXDIM: at most 2^30 */
    return n;
}

static int parse_torus(const char *spec, const char *p, struct fm_topo_spec *s, char *err,
                       size_t errlen)
{
    const char *colon = strchr(p, ':');
    if (colon && strcmp(colon, ":uni"))
        return fm_fail(err, errlen, FM_ERR_CONFIG,
                       "FM_TOPOLOGY '%s': after the dimensions only ':uni' (a unidirectional "
                       "torus) may follow, not '%s'",
                       spec, colon);
    s->unidirectional = colon != NULL;
    for (;;) {
        size_t len = strcspn(p, "x:");
        if (s->ndims == FM_TOPO_MAXDIMS)
            return fm_fail(err, errlen, FM_ERR_CONFIG,
                           "FM_TOPOLOGY '%s': a torus has at most %d dimensions", spec,
                           FM_TOPO_MAXDIMS);
        if (len == 0)
            return fm_fail(err, errlen, FM_ERR_CONFIG, "FM_TOPOLOGY '%s': dimension %d is missing",
                           spec, s->ndims + 1);
        if (parse_num(p, len, 1, FM_TOPO_MAXDIM, &s->dims[s->ndims]))
            return fm_fail(err, errlen, FM_ERR_CONFIG,
                           "FM_TOPOLOGY '%s': dimension %d must be a whole number from 1 to "
                           "%d, not '%.*s'",
                           spec, s->ndims + 1, FM_TOPO_MAXDIM, (int)len, p);
        s->ndims++;
        p += len;
        if (!*p || *p == ':')
            break;
        p++; /* the 'x' */
    }
    long n = spots(s->dims, s->ndims);
    if (n > FM_TOPO_MAXSPOTS)
        return fm_fail(err, errlen, FM_ERR_CONFIG, "FM_TOPOLOGY '%s': %ld positions, more than %d",
                       spec, n, FM_TOPO_MAXSPOTS);
    s->kind = FM_TOPO_SPEC_TORUS;
    return FM_OK;
}

/* The whole file as one NUL-terminated string, in *text. */
static int read_all(const char *path, char **text, size_t *size, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return fm_fail(err, errlen, FM_ERR_CONFIG, "FM_TOPOLOGY file '%s': %s", path,
                       strerror(errno));
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        len += fread(buf + len, 1, cap - len - 1, f);
        if (len < cap - 1)
            break;
        char *bigger = realloc(buf, cap * 2);
        if (!bigger)
            free(buf);
        buf = bigger;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf)
        return fm_fail(err, errlen, FM_ERR_NOMEM, "FM_TOPOLOGY file '%s': out of memory", path);
    if (bad) {
        free(buf);
        return fm_fail(err, errlen, FM_ERR_CONFIG, "FM_TOPOLOGY file '%s': read error", path);
    }
    buf[len] = '\0';
    *text = buf;
    *size = len;
    return FM_OK;
}

/* The next whitespace-separated word of *p, NUL-terminated in place; NULL at the end. */
static char *next_word(char **p)
{
    char *w = *p + strspn(*p, " \t\r\v\f");
    if (!*w)
        return NULL;
    char *end = w + strcspn(w, " \t\r\v\f");
    *p = *end ? end + 1 : end;
    *end = '\0';
    return w;
}

/* One line into e. Returns its number of coordinates (>= 1), 0 for a blank or comment line, or
 * an error code. */
static int parse_line(const char *path, char *line, int lineno, struct fm_topo_entry *e, char *err,
                      size_t errlen)
{
    line[strcspn(line, "#")] = '\0';
    char *p = line, *name = next_word(&p), *w;
    if (!name)
        return 0;
    int n = 0;
    *e = (struct fm_topo_entry){.name = name, .line = lineno};
    while ((w = next_word(&p))) {
        if (n == FM_TOPO_MAXDIMS)
            return fm_fail(err, errlen, FM_ERR_CONFIG,
                           "FM_TOPOLOGY file '%s' line %d: more than %d coordinates", path, lineno,
                           FM_TOPO_MAXDIMS);
        if (parse_num(w, strlen(w), 0, FM_TOPO_MAXDIM - 1, &e->coord[n]))
            return fm_fail(err, errlen, FM_ERR_CONFIG,
                           "FM_TOPOLOGY file '%s' line %d: coordinate '%s' is not a whole "
                           "number from 0 to %d",
                           path, lineno, w, FM_TOPO_MAXDIM - 1);
        n++;
    }
    if (n == 0)
        return fm_fail(err, errlen, FM_ERR_CONFIG,
                       "FM_TOPOLOGY file '%s' line %d: host '%s' has no coordinates", path, lineno,
                       name);
    return n;
}

static int by_coord(const void *a, const void *b)
{
    const struct fm_topo_entry *x = a, *y = b;
    for (int i = 0; i < FM_TOPO_MAXDIMS; i++)
        if (x->coord[i] != y->coord[i])
            return x->coord[i] < y->coord[i] ? -1 : 1;
    return (x->line > y->line) - (x->line < y->line);
}

static int by_name(const void *a, const void *b)
{
    const struct fm_topo_entry *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->line > y->line) - (x->line < y->line);
}

static int check_entries(const char *path, struct fm_topo_spec *s, char *err, size_t errlen)
{
    struct fm_topo_entry *e = s->entries;
    long n = spots(s->dims, s->ndims);
    if (n > FM_TOPO_MAXSPOTS)
        return fm_fail(err, errlen, FM_ERR_CONFIG,
                       "FM_TOPOLOGY file '%s': its coordinates span %ld positions, more "
                       "than %d",
                       path, n, FM_TOPO_MAXSPOTS);
    qsort(e, (size_t)s->nentries, sizeof *e, by_name);
    for (int i = 1; i < s->nentries; i++)
        if (!strcmp(e[i - 1].name, e[i].name))
            return fm_fail(err, errlen, FM_ERR_CONFIG,
                           "FM_TOPOLOGY file '%s' line %d: host '%s' is listed again "
                           "(first on line %d)",
                           path, e[i].line, e[i].name, e[i - 1].line);
    qsort(e, (size_t)s->nentries, sizeof *e, by_coord);
    for (int i = 1; i < s->nentries; i++)
        if (!memcmp(e[i - 1].coord, e[i].coord, sizeof e[i].coord))
            return fm_fail(err, errlen, FM_ERR_CONFIG,
                           "FM_TOPOLOGY file '%s': lines %d and %d give hosts '%s' and "
                           "'%s' the same coordinates",
                           path, e[i - 1].line, e[i].line, e[i - 1].name, e[i].name);
    /* Sorted by name for fm_topo_spec_find. */
    qsort(e, (size_t)s->nentries, sizeof *e, by_name);
    return FM_OK;
}

static int parse_file(const char *path, struct fm_topo_spec *s, char *err, size_t errlen)
{
    size_t size = 0, lines = 1;
    char *text = NULL;
    if (!*path)
        return fm_fail(err, errlen, FM_ERR_CONFIG, "FM_TOPOLOGY 'file:' names no file");
    int rc = read_all(path, &text, &size, err, errlen);
    if (rc != FM_OK)
        return rc;
    s->text = text;
    s->kind = FM_TOPO_SPEC_FILE;
    if (memchr(text, '\0', size))
        return fm_fail(err, errlen, FM_ERR_CONFIG,
                       "FM_TOPOLOGY file '%s' is not text (it holds a NUL byte)", path);
    for (size_t i = 0; i < size; i++)
        lines += text[i] == '\n';
    s->entries = malloc(lines * sizeof *s->entries);
    if (!s->entries)
        return fm_fail(err, errlen, FM_ERR_NOMEM, "FM_TOPOLOGY file '%s': out of memory", path);
    char *line = text;
    int first_line = 0;
    for (int lineno = 1; line; lineno++) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        rc = parse_line(path, line, lineno, &s->entries[s->nentries], err, errlen);
        line = nl ? nl + 1 : NULL;
        if (rc < 0)
            return rc;
        if (rc == 0)
            continue;
        int n = rc;
        if (s->nentries == 0) {
            s->ndims = n;
            first_line = lineno;
        } else if (n != s->ndims) {
            return fm_fail(err, errlen, FM_ERR_CONFIG,
                           "FM_TOPOLOGY file '%s': lines %d and %d have different numbers "
                           "of coordinates (%d and %d)",
                           path, first_line, lineno, s->ndims, n);
        }
        for (int i = 0; i < n; i++)
            if (s->entries[s->nentries].coord[i] >= s->dims[i])
                s->dims[i] = s->entries[s->nentries].coord[i] + 1;
        s->nentries++;
    }
    if (s->nentries == 0)
        return fm_fail(err, errlen, FM_ERR_CONFIG, "FM_TOPOLOGY file '%s' lists no hosts", path);
    return check_entries(path, s, err, errlen);
}

int fm_topo_spec_parse(const char *spec, struct fm_topo_spec *s, char *err, size_t errlen)
{
    if (!s)
        return fm_fail(err, errlen, FM_ERR_INVALID, "no place for the parsed FM_TOPOLOGY");
    *s = (struct fm_topo_spec){.kind = FM_TOPO_SPEC_NONE};
    for (int i = 0; i < FM_TOPO_MAXDIMS; i++)
        s->dims[i] = 1;
    if (!spec || !*spec)
        return FM_OK;
    int rc;
    if (!strncmp(spec, "torus:", 6)) {
        rc = parse_torus(spec, spec + 6, s, err, errlen);
    } else if (!strncmp(spec, "file:", 5)) {
        s->path = spec + 5;
        rc = parse_file(spec + 5, s, err, errlen);
    } else {
        rc = fm_fail(err, errlen, FM_ERR_CONFIG,
                     "FM_TOPOLOGY '%s' is neither torus:AxB[xC][:uni] nor file:PATH", spec);
    }
    if (rc != FM_OK)
        fm_topo_spec_clear(s);
    return rc;
}

int fm_topo_spec_find(const struct fm_topo_spec *s, const char *name)
{
    if (!s || !name || !s->nentries)
        return -1;
    /* Names are unique, so the line number in the key does not matter: compare names only. */
    int lo = 0, hi = s->nentries - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2, c = strcmp(name, s->entries[mid].name);
        if (c == 0)
            return mid;
        if (c < 0)
            hi = mid - 1;
        else
            lo = mid + 1;
    }
    return -1;
}

void fm_topo_spec_clear(struct fm_topo_spec *s)
{
    if (!s)
        return;
    free(s->entries);
    free(s->text);
    *s = (struct fm_topo_spec){.kind = FM_TOPO_SPEC_NONE};
    for (int i = 0; i < FM_TOPO_MAXDIMS; i++)
        s->dims[i] = 1;
}
