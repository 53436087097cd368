/* SPDX-License-Identifier: BSD-3-Clause */
/* The registry of tree builders (registry.c): ids, names, flags, and "name[:param]" specs. */
#ifndef FM_TREE_REGISTRY_H
#define FM_TREE_REGISTRY_H

#include <stddef.h>

struct fm_tree_builder;

/* Registry (registry.c). A builder's id is explicit in the table and stable: it is what the
 * multicast descriptor carries on the wire. */
/* flags: FM_TREE=auto weighs this builder always (AUTO), or when the members have torus
 * coordinates (TORUS) */
enum { FM_TREE_AUTO = 1, FM_TREE_TORUS = 2 };
int fm_tree_count(void); /* builders in the table */
/* Id of the table's index-th builder (0 <= index < fm_tree_count()), its flags into *flags
 * (may be NULL); FM_ERR_INVALID out of range. For going through every builder. */
int fm_tree_id_at(int index, unsigned *flags);
const char *fm_tree_name(int builder); /* NULL for an unknown id */
int fm_tree_lookup(const char *name);  /* the id, or FM_ERR_INVALID for an unknown name */
/* "name" or "name:param", e.g. "binomial", "kbinomial:3", "postal:2". Sets *builder and *param
 * (0 without a parameter). Errors (FM_ERR_INVALID, reason in err): unknown name, a parameter on
 * a builder that takes none, a parameter that is empty, not a decimal number, < 1, too large, or
 * followed by anything. err may be NULL. */
int fm_tree_parse(const char *spec, int *builder, int *param, char *err, size_t errlen);
const struct fm_tree_builder *fm_tree_builder_get(int builder); /* NULL for an unknown id */
/* The parameters FM_TREE=auto weighs for builder and n members into params[0..cap) (0: the
 * builder's automatic choice), snprintf-style count; FM_ERR_INVALID for an unknown id. */
int fm_tree_candidates(int builder, int n, int *params, int cap);

#endif
