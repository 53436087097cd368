/* SPDX-License-Identifier: BSD-3-Clause */
/* fastmsg progress inside an application's libev loop (api/fastmsg_ev.h). Built as its own
 * library on the public API only: libev.so also exports libevent-compatible symbols
 * (event_add, ...) that would shadow libevent inside libpmix if libfastmsg linked libev. */
#include <stdlib.h>

#include "fastmsg_ev.h"

/* Idle polls without traffic before an fd-less transport drops back to the timer. */
#define FM_EV_IDLE_POLLS 256

struct fm_ev {
    fm_context *ctx;
    struct ev_loop *loop;
    ev_io io;           /* the provider's wait fd, where there is one */
    ev_prepare prepare; /* runs progress before the loop would sleep */
    ev_idle idle;       /* keeps polling while traffic flows */
    ev_timer timer;     /* polls an fd-less transport while idle */
    int fd;
    unsigned quiet; /* consecutive empty polls */
    int error;
};

/* Run progress; keep the idle watcher on while there is work, or while the transport says
 * sleeping on its fd is not safe yet. */
static void run(fm_ev *w)
{
    long n = fm_extract(w->ctx, 0);
    if (n < 0 && !w->error)
        w->error = (int)n;
    int busy = n > 0 || fm_trywait(w->ctx) != FM_OK;
    w->quiet = busy ? 0 : w->quiet + 1;
    if (busy || (w->fd < 0 && w->quiet < FM_EV_IDLE_POLLS))
        ev_idle_start(w->loop, &w->idle);
    else
        ev_idle_stop(w->loop, &w->idle);
}

#define FM_EV_CB(name, type)                                                                       \
    static void name(struct ev_loop *loop, type *watcher, int revents)                             \
    {                                                                                              \
        (void)loop;                                                                                \
        (void)revents;                                                                             \
        run(watcher->data);                                                                        \
    }
FM_EV_CB(on_io, ev_io)
FM_EV_CB(on_prepare, ev_prepare)
FM_EV_CB(on_idle, ev_idle)
FM_EV_CB(on_timer, ev_timer)

int fm_ev_start(fm_context *ctx, struct ev_loop *loop, fm_ev **out)
{
    if (out)
        *out = NULL;
    if (fm_rank(ctx) < 0) /* NULL, finalized or not a context */
        return FM_ERR_NOT_INIT;
    if (!loop || !out)
        return FM_ERR_INVALID;
    fm_ev *w = calloc(1, sizeof *w);
    if (!w)
        return FM_ERR_NOMEM;
    w->ctx = ctx;
    w->loop = loop;
    w->fd = fm_wait_fd(ctx);
    ev_prepare_init(&w->prepare, on_prepare);
    ev_idle_init(&w->idle, on_idle);
    w->prepare.data = w->idle.data = w;
    ev_prepare_start(loop, &w->prepare);
    if (w->fd >= 0) {
        ev_io_init(&w->io, on_io, w->fd, EV_READ);
        w->io.data = w;
        ev_io_start(loop, &w->io);
    } else {
        ev_timer_init(&w->timer, on_timer, FM_EV_POLL_US * 1e-6, FM_EV_POLL_US * 1e-6);
        w->timer.data = w;
        ev_timer_start(loop, &w->timer);
    }
    /* fastmsg's two standing watchers do not keep ev_run alive; the application's do. */
    ev_unref(loop);
    ev_unref(loop);
    *out = w;
    return FM_OK;
}

void fm_ev_stop(fm_ev *w)
{
    if (!w)
        return;
    ev_ref(w->loop);
    ev_ref(w->loop);
    ev_prepare_stop(w->loop, &w->prepare);
    ev_idle_stop(w->loop, &w->idle);
    if (w->fd >= 0)
        ev_io_stop(w->loop, &w->io);
    else
        ev_timer_stop(w->loop, &w->timer);
    free(w);
}

int fm_ev_error(const fm_ev *w)
{
    return w ? w->error : FM_ERR_INVALID;
}
