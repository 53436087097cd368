/* SPDX-License-Identifier: BSD-3-Clause */
/* Whole-message handlers (whole.c): a handler the core runs for ids registered with
 * fm_register_message_handler, which hands each message to the caller's function once, whole. */
#ifndef FM_CORE_WHOLE_H
#define FM_CORE_WHOLE_H

#include "context.h"

/* The handler of every whole-message id; arg is the id's slot (its mfn and marg). */
int fm_whole_handler(fm_stream *s, int sender, void *arg);
/* From a progress round, outside handlers (ctx->whole.run): start the messages that waited
 * for budget, in the order they came, while they fit; release the streams of messages whose
 * function ran while they were parked. */
void fm_whole_run(fm_context *ctx);
/* fm_finalize's report: messages never handed to their function. */
void fm_whole_report(const fm_context *ctx);
/* Free everything (after the streams and the transport are gone). */
void fm_whole_fini(fm_context *ctx);

#endif
