/* SPDX-License-Identifier: BSD-3-Clause */
/* Handler slots (handlers.c). The user's ids are 0..FM_MAX_HANDLERS-1; the layers above the
 * core take internal ids above those for their own messages. */
#ifndef FM_CORE_HANDLERS_H
#define FM_CORE_HANDLERS_H

#include "context.h"

/* The next internal handler id, bound to fn(arg): FM_ERR_HANDLER when all
 * FM_INTERNAL_HANDLERS are taken. Ids are handed out in call order, so every rank must make
 * the same calls in the same order (fm_init does). */
int fm_handlers_add_internal(fm_context *ctx, fm_handler_fn fn, void *arg);

#endif
