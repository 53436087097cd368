/* The registry of tree builders by name, and the "name[:param]" spec parser. A builder's id is
 * its index in the table below: add new builders at the end, so ids stay stable. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fastmsg.h"
#include "trees/tree.h"

extern const struct fm_tree_builder fm_tree_flat, fm_tree_chain, fm_tree_binomial,
    fm_tree_kbinomial, fm_tree_postal;

static const struct fm_tree_builder *const builders[] = {
    &fm_tree_flat, &fm_tree_chain, &fm_tree_binomial, &fm_tree_kbinomial, &fm_tree_postal,
};

int fm_tree_count(void)
{
    return (int)(sizeof builders / sizeof builders[0]);
}

const struct fm_tree_builder *fm_tree_builder_get(int builder)
{
    return builder >= 0 && builder < fm_tree_count() ? builders[builder] : NULL;
}

const char *fm_tree_name(int builder)
{
    const struct fm_tree_builder *b = fm_tree_builder_get(builder);
    return b ? b->name : NULL;
}

static int lookup_len(const char *name, size_t len)
{
    for (int i = 0; i < fm_tree_count(); i++)
        if (strlen(builders[i]->name) == len && !strncmp(builders[i]->name, name, len))
            return i;
    return FM_ERR_INVALID;
}

int fm_tree_lookup(const char *name)
{
    return name ? lookup_len(name, strlen(name)) : FM_ERR_INVALID;
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return FM_ERR_INVALID;
}

/* Appends the builder names to err, for "unknown tree" messages. */
static void list_names(char *err, size_t errlen)
{
    for (int i = 0; i < fm_tree_count() && err; i++) {
        size_t used = strlen(err);
        if (used + 1 < errlen)
            snprintf(err + used, errlen - used, "%s%s", i ? ", " : "", builders[i]->name);
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
        return fail(err, errlen, "no tree given");
    const char *colon = strchr(spec, ':');
    size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
    int id = lookup_len(spec, len);
    if (id < 0) {
        fail(err, errlen, "unknown tree '%.*s' (known: ", (int)len, spec);
        list_names(err, errlen);
        if (err && strlen(err) + 1 < errlen)
            strcat(err, ")");
        return FM_ERR_INVALID;
    }
    int value = 0;
    if (colon && !builders[id]->param)
        return fail(err, errlen, "tree '%s' takes no parameter", builders[id]->name);
    if (colon && parse_param(colon + 1, &value))
        return fail(err, errlen,
                    "tree '%s': %s must be a whole number from 1 to 1000000000, not '%s'",
                    builders[id]->name, builders[id]->param, colon + 1);
    *builder = id;
    *param = value;
    return FM_OK;
}
