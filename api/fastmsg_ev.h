/* SPDX-License-Identifier: BSD-3-Clause */
/* Drive fastmsg's progress from an application's own libev loop.
 *
 *   fm_ev *w;
 *   fm_ev_start(ctx, EV_DEFAULT, &w);   // handlers now run from ev_run()
 *   ev_run(EV_DEFAULT, 0);
 *   fm_ev_stop(w);
 *
 * Where the provider has a wait fd (tcp), an io watcher on it wakes the loop when packets
 * arrive and a prepare watcher runs fm_extract before the loop sleeps. Where it has none
 * (shm), fastmsg polls from an idle watcher while traffic flows and falls back to a timer
 * (FM_EV_POLL_US) when it stops, so an idle loop sleeps instead of spinning. */
#ifndef FASTMSG_EV_H
#define FASTMSG_EV_H

#include <ev.h>

#include "fastmsg.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Only these calls are exported; the library builds with hidden visibility. */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

typedef struct fm_ev fm_ev;

/* Interval of the fallback poll timer when the provider has no wait fd. */
#define FM_EV_POLL_US 200

/* Attach ctx's progress to loop. Calls from handlers run inside the loop's callbacks. Errors:
 * FM_ERR_NOT_INIT (ctx NULL), FM_ERR_INVALID (loop or out NULL), FM_ERR_NOMEM. */
int fm_ev_start(fm_context *ctx, struct ev_loop *loop, fm_ev **out);

/* Detach and free the watchers (w may be NULL). Call before fm_finalize. */
void fm_ev_stop(fm_ev *w);

/* The last error an ev callback's fm_extract returned (0 if none): the callbacks cannot
 * return one, so check this after ev_run returns or from your own watchers. */
int fm_ev_error(const fm_ev *w);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif
