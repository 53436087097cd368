/* SPDX-License-Identifier: BSD-3-Clause */
/* The multicast layer: roots (mcast.c), groups (group.c), forwarding (forward.c), the choice
 * of tree (tree_choice.c), calibration (calibrate.c), the descriptor (mcast_desc.c), the model
 * (model.c) and the tree builders (trees/). It sits above the core, which reaches it only
 * through the hooks fm_mcast_init registers (hooks.h). */
#ifndef FM_MCAST_H
#define FM_MCAST_H

#include "context.h"

/* Allocate the layer's state (ctx->mcast), register the core hooks and calibration's
 * handlers (fm_init). FM_OK or FM_ERR_NOMEM / FM_ERR_HANDLER. */
int fm_mcast_init(fm_context *ctx);
/* Free groups, costs and state (fm_finalize, after the core has closed). */
void fm_mcast_fini(fm_context *ctx);

#endif
