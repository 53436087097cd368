/* SPDX-License-Identifier: BSD-3-Clause */
/* Connection wire-up at fm_init for transports that connect on first send (wireup.c). */
#ifndef FM_WIREUP_H
#define FM_WIREUP_H

#include "context.h"

int fm_wireup_handler(fm_stream *s, int sender, void *arg);
/* Connect every pair in one direction; nothing to do where the transport has no connections. */
int fm_wireup(fm_context *ctx);

#endif
