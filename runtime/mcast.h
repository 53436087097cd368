/* Multicast groups and the choice of tree: internal to the runtime (mcast.c, forward.c). */
#ifndef FM_MCAST_H
#define FM_MCAST_H

#include <stdint.h>

#include "context.h"
#include "trees/tree.h"

/* A group: an ordered member list every member created alike. Its id is a hash of the list,
 * so members agree on it without talking; multicasts name it instead of listing members. */
struct fm_group {
    fm_context *ctx;
    struct fm_group *next; /* the context's list */
    uint64_t id;
    int n, pos; /* members; the caller's position (-1: not a member) */
    int *members;
};

struct fm_group *fm_group_find(fm_context *ctx, uint64_t id);
/* A member or destination list: FM_OK, or FM_ERR_EMPTY / INVALID / RANK / DUPLICATE /
 * NOMEM; *pos = the caller's position in it, or -1. */
int fm_mcast_check_list(fm_context *ctx, const int *members, int n, int *pos);
void fm_mcast_fini(fm_context *ctx);

/* The tree the root uses for a message of len bytes (descriptor included) to n members: spec
 * is a tree name ("binomial", "kbinomial:3", "auto", ...; NULL = FM_TREE). Fills builder,
 * param and lambda of *d (n and root already set) and *payload, the packet payload size the
 * multicast uses: FM_PACKET_SIZE for a named tree; auto may choose less, never below
 * min_payload (packet 0 must hold the descriptor). FM_OK or FM_ERR_TREE. */
int fm_mcast_choose(fm_context *ctx, const char *spec, size_t len, size_t min_payload,
                    int store_forward, struct fm_tree_desc *d, size_t *payload);

/* The model's prediction (seconds) for a multicast of bytes (descriptor included) down d in
 * packets of payload bytes. */
int fm_mcast_predict(fm_context *ctx, const struct fm_tree_desc *d, size_t bytes, size_t payload,
                     int sf, double *seconds);
int fm_mcast_costs_parse(const char *text, double *overhead_s, double *per_byte_s,
                         double *latency_s);
void fm_mcast_set_costs(fm_context *ctx, double overhead_s, double per_byte_s, double latency_s);
void fm_mcast_costs_free(fm_context *ctx);

#endif
