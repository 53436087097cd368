/* SPDX-License-Identifier: BSD-3-Clause */
/* The registry of tree builders, and the "name[:param]" spec parser.
 *
 * One line per builder in FM_TREE_BUILDERS: its id on the wire (explicit and stable: never
 * reuse or renumber one, since members of one job must agree and a member that gets an id it
 * does not know drops the multicast), its name (the file NAME.c defines fm_tree_NAME), and its
 * flags (FM_TREE_AUTO: FM_TREE=auto weighs it; FM_TREE_TORUS: auto weighs it when the members
 * have torus coordinates). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fail.h"
#include "fastmsg.h"
#include "trees/builder.h"
#include "trees/registry.h"

#define FM_TREE_BUILDERS(X)                                                                        \
    X(0, flat, FM_TREE_AUTO)                                                                       \
    X(1, chain, FM_TREE_AUTO)                                                                      \
    X(2, binomial, FM_TREE_AUTO)                                                                   \
    X(3, kbinomial, FM_TREE_AUTO)                                                                  \
    X(4, postal, FM_TREE_AUTO)                                                                     \
    X(5, prefix, 0)                                                                                \
    X(6, ipmc, 0)                                                                                  \
    X(7, sepaddr, FM_TREE_TORUS)                                                                   \
    X(8, utorus, FM_TREE_TORUS)                                                                    \
    X(9, storus, FM_TREE_TORUS)                                                                    \
    X(10, mdtorus, FM_TREE_TORUS)                                                                  \
    X(11, mutorus, FM_TREE_TORUS)                                                                  \
    X(12, node, FM_TREE_AUTO)                                                                      \
    X(13, twotree, FM_TREE_AUTO)

#define DECLARE(id, name, flags) extern const struct fm_tree_builder fm_tree_##name;
FM_TREE_BUILDERS(DECLARE)
#undef DECLARE

static const struct fm_tree_entry {
    int id;
    unsigned flags;
    const struct fm_tree_builder *b;
} entries[] = {
#define ENTRY(id, name, flags) {id, flags, &fm_tree_##name},
    FM_TREE_BUILDERS(ENTRY)
#undef ENTRY
};

int fm_tree_count(void)
{
    return (int)(sizeof entries / sizeof entries[0]);
}

int fm_tree_id_at(int index, unsigned *flags)
{
    if (index < 0 || index >= fm_tree_count())
        return FM_ERR_INVALID;
    if (flags)
        *flags = entries[index].flags;
    return entries[index].id;
}

static const struct fm_tree_entry *entry(int builder)
{
    for (int i = 0; i < fm_tree_count(); i++)
        if (entries[i].id == builder)
            return &entries[i];
    return NULL;
}

const struct fm_tree_builder *fm_tree_builder_get(int builder)
{
    const struct fm_tree_entry *e = entry(builder);
    return e ? e->b : NULL;
}

int fm_tree_candidates(int builder, int n, int *params, int cap)
{
    const struct fm_tree_builder *b = fm_tree_builder_get(builder);
    if (!b)
        return FM_ERR_INVALID;
    if (b->candidates)
        return b->candidates(n, params, cap);
    if (cap > 0)
        params[0] = 0;
    return 1;
}

const char *fm_tree_name(int builder)
{
    const struct fm_tree_builder *b = fm_tree_builder_get(builder);
    return b ? b->name : NULL;
}

static const struct fm_tree_entry *lookup_len(const char *name, size_t len)
{
    for (int i = 0; i < fm_tree_count(); i++)
        if (strlen(entries[i].b->name) == len && !strncmp(entries[i].b->name, name, len))
            return &entries[i];
    return NULL;
}

int fm_tree_lookup(const char *name)
{
    const struct fm_tree_entry *e = name ? lookup_len(name, strlen(name)) : NULL;
    return e ? e->id : FM_ERR_INVALID;
}

/* Appends the builder names to err, for "unknown tree" messages. */
static void list_names(char *err, size_t errlen)
{
    for (int i = 0; i < fm_tree_count() && err; i++) {
        size_t used = strlen(err);
        if (used + 1 < errlen)
            snprintf(err + used, errlen - used, "%s%s", i ? ", " : "", entries[i].b->name);
    }
}

/* A positive decimal int and nothing else: no sign, no spaces, no trailing junk. */
static int parse_param(const char *s, int *out)
{
    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || errno == ERANGE || v < 1 || v > 1000000000L)
        return -1;
    *out = (int)v;
    return 0;
}

int fm_tree_parse(const char *spec, int *builder, int *param, char *err, size_t errlen)
{
    if (!spec || !builder || !param)
        return fm_fail(err, errlen, FM_ERR_INVALID, "no tree given");
    const char *colon = strchr(spec, ':');
    size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
    const struct fm_tree_entry *e = lookup_len(spec, len);
    if (!e) {
        fm_fail(err, errlen, FM_ERR_INVALID, "unknown tree '%.*s' (known: ", (int)len, spec);
        list_names(err, errlen);
        if (err && strlen(err) + 1 < errlen)
            strcat(err, ")");
        return FM_ERR_INVALID;
    }
    int value = 0;
    if (colon && !e->b->param)
        return fm_fail(err, errlen, FM_ERR_INVALID, "tree '%s' takes no parameter", e->b->name);
    if (colon && parse_param(colon + 1, &value))
        return fm_fail(err, errlen, FM_ERR_INVALID,
                       "tree '%s': %s must be a whole number from 1 to 1000000000, not '%s'",
                       e->b->name, e->b->param, colon + 1);
    *builder = e->id;
    *param = value;
    return FM_OK;
}
