/* SPDX-License-Identifier: BSD-3-Clause */
/* The services built on the core's messages: fm_barrier (barrier.c) and the wire-up of
 * connection-based transports at fm_init (wireup.c). They register their own internal
 * handlers; their state hangs off the context as an opaque pointer. */
#ifndef FM_SERVICES_H
#define FM_SERVICES_H

#include <stdint.h>

#include "context.h"

/* Allocate the state and register both handlers (fm_init, after fm_mcast_init). */
int fm_services_init(fm_context *ctx);
void fm_services_fini(fm_context *ctx);

#endif
