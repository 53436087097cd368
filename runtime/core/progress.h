/* SPDX-License-Identifier: BSD-3-Clause */
/* Progress (progress.c): one round of completions, and the polite wait every blocking call
 * uses. */
#ifndef FM_CORE_PROGRESS_H
#define FM_CORE_PROGRESS_H

#include "context.h"

/* An idle wait with the provider's wait fd sleeps on it after FM_PROGRESS_FD_SPINS rounds of
 * polling (a local provider's, sm's, after the spins and yields below). Without one:
 * FM_PROGRESS_SPINS rounds of polling (one where the host runs more ranks than cores:
 * ctx->idle_spins), then
 * FM_PROGRESS_YIELDS more that also yield the core, then naps of FM_PROGRESS_NAP_NS (ten times
 * that after 4096 idle rounds). The model charges a member idle past this polling a wake-up
 * (calibrate.c measures both). */
#define FM_PROGRESS_FD_SPINS 16
#define FM_PROGRESS_SPINS    64
#define FM_PROGRESS_YIELDS   960
#define FM_PROGRESS_NAP_NS   20000

/* Sets ctx->idle_spins for local_ranks ranks of the job on this host. */
void fm_progress_setup(fm_context *ctx, int local_ranks);
int fm_progress_once(fm_context *ctx);
/* A layer's descriptor (datagrams) that idle waits sleep on too (ctx->extra_fd): fm_wait_fd
 * then returns an epoll descriptor readable when either it or the provider's is (where the
 * provider has one). FM_OK, or FM_ERR_NOMEM / FM_ERR_INTERNAL when epoll fails. */
int fm_progress_watch_fd(fm_context *ctx, int fd);
typedef int (*fm_progress_cond)(fm_context *ctx, void *arg);
/* Progress until done(ctx, arg) holds: FM_OK, or FM_ERR_TIMEOUT after FM_TIMEOUT seconds (the
 * log says it waited for what), FM_ERR_PEER when a peer died, or a transport error. */
int fm_progress_until(fm_context *ctx, fm_progress_cond done, void *arg, const char *what);

#endif
