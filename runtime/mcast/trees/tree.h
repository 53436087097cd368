/* Multicast trees: which members a member sends to, computed from a small descriptor alone.
 *
 * Members are positions 0..n-1 of an ordered member list; the caller maps positions to ranks.
 * No node holds the whole tree: each member asks for its own children (and parent). Builders
 * work on the relative index r = (pos - root + n) % n, so the root is r = 0 and every tree is
 * rotated by its root. Children come in send order, largest subtree first.
 *
 * Cost of one fm_tree_children / fm_tree_parent call, with no heap allocation:
 *   flat, chain              O(1) (flat's root: O(n) to list its children)
 *   binomial, kbinomial      O(depth * k) descent from the root (depth <= 45 for k >= 2; k = 1
 *                            is the chain, O(1)), with a 64-entry table on the stack; kbinomial
 *                            without k adds O(log^2 n) to choose k (fm_tree_resolve: once)
 *   postal                   O(n) greedy over the whole member list, in the caller's scratch of
 *                            fm_tree_scratch_size() bytes (n doubles and n ints)
 * Every call returns a count >= 0 or FM_OK, or a negative FM_ERR_* code (fastmsg.h):
 * FM_ERR_INVALID for a bad descriptor, position or missing scratch. */
#ifndef FM_TREE_H
#define FM_TREE_H

#include <stddef.h>

/* Everything a member needs to know to find its place in the tree. Every member of a multicast
 * must use the same descriptor. */
struct fm_tree_desc {
    int builder;   /* registry id, from fm_tree_lookup() or fm_tree_parse() */
    int param;     /* kbinomial: k; postal: lambda in steps; 0 = choose automatically */
    int n;         /* members, >= 1 */
    int root;      /* root position in [0, n) */
    int m;         /* packets per message: only for kbinomial's automatic k (then >= 1) */
    double lambda; /* postal's lambda in steps when param is 0 (then >= 1) */
};

/* Children of position pos in send order, into out[0..cap). Returns how many children pos has,
 * like snprintf: when that exceeds cap only cap are written (cap 0 with out NULL counts).
 * scratch: fm_tree_scratch_size(d) bytes, suitably aligned for doubles (malloc'd memory is);
 * may be NULL when that size is 0. */
int fm_tree_children(const struct fm_tree_desc *d, int pos, int *out, int cap, void *scratch);
/* Parent position of pos into *parent, -1 for the root. Returns FM_OK or FM_ERR_INVALID. */
int fm_tree_parent(const struct fm_tree_desc *d, int pos, void *scratch, int *parent);
/* Scratch bytes the children/parent calls need for d (0 for all builders but postal). */
size_t fm_tree_scratch_size(const struct fm_tree_desc *d);
/* FM_OK when d describes a tree: known builder, n >= 1, root in range, and the builder's own
 * needs (param >= 0, m >= 1 for automatic k, lambda >= 1 for postal without param). */
int fm_tree_check(const struct fm_tree_desc *d);

/* *out = d with an automatic parameter chosen (kbinomial's k; postal keeps param 0 and its
 * lambda). The tree is the same; the point is to choose once, e.g. at the root before sending
 * the descriptor, instead of in every call. FM_OK or FM_ERR_INVALID. */
int fm_tree_resolve(const struct fm_tree_desc *d, struct fm_tree_desc *out);

/* The whole tree at once, for the model and tests (it allocates, unlike the calls above):
 * children of position p are kids[first[p]] .. kids[first[p+1] - 1], in send order.
 * first has n + 1 entries, kids n - 1 (at least 1). FM_OK, FM_ERR_INVALID or FM_ERR_NOMEM. */
int fm_tree_layout(const struct fm_tree_desc *d, int *first, int *kids);

/* Registry (registry.c). A builder's id is explicit in the table and stable: it is what the
 * multicast descriptor carries on the wire. */
enum { FM_TREE_AUTO = 1 }; /* flags: FM_TREE=auto weighs this builder */
int fm_tree_count(void);   /* builders in the table */
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

/* One builder: one file under runtime/mcast/trees/ and one line in registry.c's table. Its functions
 * see a checked descriptor and relative indices (root = 0). */
struct fm_tree_builder {
    const char *name;
    const char *param; /* what its parameter means ("k", "lambda"), NULL when it takes none */
    /* Builder-specific checks of d (param, m, lambda); NULL when there are none. */
    int (*check)(const struct fm_tree_desc *d);
    /* The parameter to use when d->param is 0; NULL when it stays 0. */
    int (*resolve)(const struct fm_tree_desc *d);
    /* Children of relative index r in send order, snprintf-style count. */
    int (*children)(const struct fm_tree_desc *d, int r, int *out, int cap, void *scratch);
    /* Parent relative index of r > 0. */
    int (*parent)(const struct fm_tree_desc *d, int r, void *scratch);
    /* Scratch bytes needed; NULL when none. */
    size_t (*scratch_size)(const struct fm_tree_desc *d);
    /* Optional: relative parent of every r (parent[0] = -1) in one pass, for a builder whose
     * children are in increasing relative order and whose per-call cost is O(n). */
    int (*parents)(const struct fm_tree_desc *d, int *parent, void *scratch);
};
const struct fm_tree_builder *fm_tree_builder_get(int builder); /* NULL for an unknown id */

/* k-binomial arithmetic (Kesavan & Panda), shared by the binomial and kbinomial builders. */
long long fm_tree_kbin_cover(int s, int k); /* N(s,k), saturating at FM_TREE_COVER_MAX */
int fm_tree_kbin_steps(int n, int k);       /* t_1(n,k): least s with N(s,k) >= n */
/* The k in [1, ceil(log2 n)] minimising t_1(n,k) + (m-1)k; the smallest such k on ties. */
int fm_tree_kbin_optimal_k(int n, int m);
int fm_tree_ceil_log2(int n); /* ceil(log2 n) for n >= 1 */
int fm_tree_kbin_children(int n, int k, int r, int *out, int cap);
int fm_tree_kbin_parent(int n, int k, int r);
#define FM_TREE_COVER_MAX (1LL << 62)

#endif
