/* SPDX-License-Identifier: BSD-3-Clause */
/* The dissemination barrier (barrier.c), for fm_barrier and fm_finalize. */
#ifndef FM_BARRIER_H
#define FM_BARRIER_H

#include "context.h"

int fm_barrier_internal(fm_context *ctx);
int fm_barrier_handler(fm_stream *s, int sender, void *arg);

#endif
