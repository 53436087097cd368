/* SPDX-License-Identifier: BSD-3-Clause */
/* Rank 0's stdin when ours is a terminal. Rank 0 runs in its own process group, which is not
 * the terminal's foreground group, so reading the terminal itself would stop it (SIGTTIN):
 * the launcher reads the terminal and passes the bytes on through a pipe. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "run.h"

struct fm_run_relay {
    struct fm_run_job *job;
    int to; /* the pipe's write end */
    size_t len, off;
    ev_io in_w, out_w;
    char buf[4096];
};

static void fm_run_relay_stop(struct fm_run_relay *r)
{
    ev_io_stop(r->job->loop, &r->in_w);
    ev_io_stop(r->job->loop, &r->out_w);
    close(r->to);
    free(r);
}

/* Push the buffered bytes; wait for the pipe, not the terminal, while some are left. */
static void fm_run_relay_push(struct fm_run_relay *r)
{
    while (r->off < r->len) {
        ssize_t n = write(r->to, r->buf + r->off, r->len - r->off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN) {
            ev_io_stop(r->job->loop, &r->in_w);
            ev_io_start(r->job->loop, &r->out_w);
            return;
        }
        if (n < 0) { /* rank 0 is gone or closed its stdin */
            fm_run_relay_stop(r);
            return;
        }
        r->off += (size_t)n;
    }
    r->len = r->off = 0;
    ev_io_stop(r->job->loop, &r->out_w);
    ev_io_start(r->job->loop, &r->in_w);
}

static void fm_run_relay_in_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    struct fm_run_relay *r = w->data;
    (void)loop;
    (void)revents;
    ssize_t n = read(0, r->buf, sizeof r->buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) { /* end of input: rank 0 sees EOF */
        fm_run_relay_stop(r);
        return;
    }
    r->len = (size_t)n;
    r->off = 0;
    fm_run_relay_push(r);
}

static void fm_run_relay_out_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    (void)revents;
    fm_run_relay_push(w->data);
}

int fm_run_relay_start(struct fm_run_job *job)
{
    int p[2];
    /* Only a foreground launcher may read the terminal; otherwise rank 0 inherits it. */
    if (!isatty(0) || tcgetpgrp(0) != getpgrp() || pipe2(p, O_CLOEXEC))
        return -1;
    struct fm_run_relay *r = calloc(1, sizeof *r);
    if (!r) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    fcntl(p[1], F_SETFL, O_NONBLOCK);
    r->job = job;
    r->to = p[1];
    ev_io_init(&r->in_w, fm_run_relay_in_cb, 0, EV_READ);
    ev_io_init(&r->out_w, fm_run_relay_out_cb, p[1], EV_WRITE);
    r->in_w.data = r;
    r->out_w.data = r;
    ev_io_start(job->loop, &r->in_w);
    return p[0];
}
