/* SPDX-License-Identifier: BSD-3-Clause */
/* The choice of tree and packet size, and the model's costs (tree_choice.c). */
#ifndef FM_MCAST_TREE_CHOICE_H
#define FM_MCAST_TREE_CHOICE_H

#include <stddef.h>

#include "context.h"
#include "trees/tree.h"

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
/* FM_TREE and FM_MCAST_COSTS, before anything starts: FM_OK or FM_ERR_CONFIG with err set. */
int fm_mcast_check_config(const fm_config *cfg, char *err, size_t errlen);

#endif
