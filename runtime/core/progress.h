/* SPDX-License-Identifier: BSD-3-Clause */
/* Progress (progress.c): one round of completions, and the polite wait every blocking call
 * uses. */
#ifndef FM_CORE_PROGRESS_H
#define FM_CORE_PROGRESS_H

#include "context.h"

int fm_progress_once(fm_context *ctx);
typedef int (*fm_progress_cond)(fm_context *ctx, void *arg);
/* Progress until done(ctx, arg) holds: FM_OK, or FM_ERR_TIMEOUT after FM_TIMEOUT seconds (the
 * log says it waited for what), FM_ERR_PEER when a peer died, or a transport error. */
int fm_progress_until(fm_context *ctx, fm_progress_cond done, void *arg, const char *what);

#endif
