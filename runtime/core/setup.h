/* SPDX-License-Identifier: BSD-3-Clause */
/* The core's part of fm_init / fm_finalize (setup.c, context.c). */
#ifndef FM_CORE_SETUP_H
#define FM_CORE_SETUP_H

#include "context.h"

/* With ctx->cfg loaded and ctx->boot up: host cards and topology, transport, addresses,
 * credits, packet buffers. FM_OK or an FM_ERR_* code, logged. */
int fm_core_open(fm_context *ctx);
/* Progress until everything sent has left (what: for the timeout's log line). Once
 * ctx->finalizing (past fm_finalize's barrier), what waits for credits or send buffers is
 * dropped instead (said on stderr at FM_VERBOSE=1). */
int fm_core_drain(fm_context *ctx, const char *what);
/* Free what fm_core_open made (also after it failed half-way). */
void fm_core_close(fm_context *ctx);

#endif
