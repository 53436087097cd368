/* SPDX-License-Identifier: BSD-3-Clause */
/* The choice of tree and packet size, and the model's costs (tree_choice.c). */
#ifndef FM_MCAST_TREE_CHOICE_H
#define FM_MCAST_TREE_CHOICE_H

#include <stddef.h>

#include "context.h"
#include "costs.h"
#include "trees/tree.h"

/* Smallest packet payload auto considers: below it per-packet costs dominate everywhere. */
#define FM_MCAST_MIN_PACKET 1024
/* Packet sizes auto weighs: FM_PACKET_SIZE and this many halvings of it (calibration
 * measures the link at each where a network's costs change with the size). */
#define FM_MCAST_PACKET_CHOICES 6

/* The model's mode (enum fm_model_mode) for fm_mcast_begin's flags; -1 for unknown or
 * conflicting flags. */
int fm_mcast_mode(unsigned flags);

/* The tree the root uses for a message of len bytes (descriptor included) to n members: spec
 * is a tree name ("binomial", "kbinomial:3", "auto", ...; NULL = FM_TREE). Fills builder,
 * param and lambda of *d (n, root and topo already set) and *payload, the packet payload size
 * the multicast uses: FM_PACKET_SIZE for a named tree; auto may choose less, never below
 * min_payload (packet 0 must hold the descriptor). mode: fm_mcast_mode's. FM_OK or
 * FM_ERR_TREE. */
int fm_mcast_choose(fm_context *ctx, const char *spec, size_t len, size_t min_payload, int mode,
                    struct fm_tree_desc *d, size_t *payload);

/* The model's prediction (seconds) for a multicast of bytes (descriptor included) down d in
 * packets of payload bytes; held (may be NULL): the most packets any member holds at once for
 * its children. */
int fm_mcast_model_predict(fm_context *ctx, const struct fm_tree_desc *d, size_t bytes,
                           size_t payload, int mode, double *seconds, double *held);

/* The costs in use (NULL: out of memory); *source (may be NULL) says where those that
 * FM_MCAST_COSTS does not set come from: "estimated", "FM_MCAST_COSTS_FILE", "calibrated", or
 * "FM_MCAST_COSTS" when it sets them all. */
const struct fm_costs *fm_mcast_costs(fm_context *ctx, const char **source);
/* Measured costs (FM_MCAST_COSTS's fields still win); clears auto's decisions. source: a
 * string that outlives the context. */
void fm_mcast_set_costs(fm_context *ctx, const struct fm_costs *c, const char *source);

/* FM_TREE, FM_MCAST_COSTS and FM_MCAST_COSTS_FILE (when it exists), before anything starts:
 * FM_OK or FM_ERR_CONFIG with err set. */
int fm_mcast_check_config(const fm_config *cfg, char *err, size_t errlen);

#endif
