/* SPDX-License-Identifier: BSD-3-Clause */
/* --label: a rank's stdout and stderr come through pipes and leave with "[rank] " before
 * every line. A line is written with one write() so ranks do not interleave within lines. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run.h"

#define FM_RUN_LABEL_BUF 4096 /* longer lines leave in pieces, labelled once */

struct fm_run_label {
    struct fm_run_job *job;
    int rank, fd, to;
    int midline; /* what was written last did not end a line */
    size_t len;
    ev_io w;
    char buf[FM_RUN_LABEL_BUF];
};

/* Write n bytes of buf, labelled unless they continue a line, plus '\n' if nl. */
static void fm_run_label_emit(struct fm_run_label *l, const char *buf, size_t n, int nl)
{
    char out[FM_RUN_LABEL_BUF + 24];
    int p = l->midline ? 0 : snprintf(out, sizeof out, "[%d] ", l->rank);
    memcpy(out + p, buf, n);
    if (nl)
        out[p + n++] = '\n';
    fm_run_write_all(l->to, out, (size_t)p + n);
    l->midline = !nl;
}

/* Print every complete line held; a full buffer without one leaves as a piece. */
static void fm_run_label_lines(struct fm_run_label *l)
{
    size_t start = 0;
    char *nl;
    while ((nl = memchr(l->buf + start, '\n', l->len - start))) {
        size_t n = (size_t)(nl - (l->buf + start));
        fm_run_label_emit(l, l->buf + start, n, 1);
        start += n + 1;
    }
    memmove(l->buf, l->buf + start, l->len - start);
    l->len -= start;
    if (l->len == sizeof l->buf) {
        fm_run_label_emit(l, l->buf, l->len, 0);
        l->len = 0;
    }
}

static void fm_run_label_close(struct fm_run_label *l)
{
    if (l->fd < 0)
        return;
    if (l->len || l->midline)
        fm_run_label_emit(l, l->buf, l->len, 1); /* the partial last line */
    l->len = 0;
    ev_io_stop(l->job->loop, &l->w);
    close(l->fd);
    l->fd = -1;
}

/* Read once, or until the pipe is empty when all is set. */
static void fm_run_label_read(struct fm_run_label *l, int all)
{
    while (l->fd >= 0) {
        ssize_t n = read(l->fd, l->buf + l->len, sizeof l->buf - l->len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        if (n <= 0) {
            fm_run_label_close(l);
            return;
        }
        l->len += (size_t)n;
        fm_run_label_lines(l);
        if (!all)
            return;
    }
}

static void fm_run_label_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    (void)revents;
    fm_run_label_read(w->data, 0);
}

struct fm_run_label *fm_run_label_new(struct fm_run_job *job, int rank, int fd, int to)
{
    struct fm_run_label *l = calloc(1, sizeof *l);
    if (!l) {
        close(fd);
        return NULL;
    }
    l->job = job;
    l->rank = rank;
    l->fd = fd;
    l->to = to;
    ev_io_init(&l->w, fm_run_label_cb, fd, EV_READ);
    l->w.data = l;
    ev_io_start(job->loop, &l->w);
    return l;
}

/* What the rank wrote before it exited is in the pipe; a descendant holding the pipe open
 * must not keep us waiting, so read only what is there. */
void fm_run_label_drain(struct fm_run_label *l)
{
    fm_run_label_read(l, 1);
    fm_run_label_close(l);
}
