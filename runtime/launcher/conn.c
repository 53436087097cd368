/* SPDX-License-Identifier: BSD-3-Clause */
/* One rank's TCP connection: reassembles input lines (and the bytes a line says follow it)
 * for exchange.c and queues output without ever blocking the loop. While more than
 * FM_RUN_OUT_MAX waits to be written, the rank's further lines wait too (its read watcher is
 * stopped). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "run.h"

struct fm_run_blob *fm_run_blob_new(const char *data, size_t len)
{
    struct fm_run_blob *b = malloc(sizeof *b + len);
    if (!b)
        return NULL;
    b->refs = 1;
    b->len = len;
    if (data)
        memcpy(b->data, data, len);
    return b;
}

void fm_run_blob_unref(struct fm_run_blob *b)
{
    if (b && --b->refs == 0)
        free(b);
}

static void fm_run_conn_lines(struct fm_run_conn *c);

/* Take input again once the output has drained below the bound (from the write watcher,
 * never from inside a line's handling). */
static void fm_run_conn_release(struct fm_run_conn *c)
{
    if (!c->held || c->queued >= FM_RUN_OUT_MAX)
        return;
    c->held = 0;
    ev_io_start(c->job->loop, &c->rw);
    fm_run_conn_lines(c);
}

static void fm_run_conn_drop_output(struct fm_run_conn *c)
{
    while (c->head) {
        struct fm_run_out *o = c->head;
        c->head = o->next;
        fm_run_blob_unref(o->blob);
        free(o);
    }
    c->tail = NULL;
    c->queued = 0;
    ev_io_stop(c->job->loop, &c->ww);
}

/* Write what the socket takes now; the write watcher runs while anything is left. */
static void fm_run_conn_flush(struct fm_run_conn *c)
{
    while (c->head) {
        struct fm_run_out *o = c->head;
        ssize_t n = send(c->fd, o->blob->data + o->off, o->blob->len - o->off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            break;
        if (n < 0) {
            /* The peer is gone; the read side sees it and closes. */
            fm_run_conn_drop_output(c);
            if (c->held) {
                c->held = 0;
                ev_io_start(c->job->loop, &c->rw);
            }
            return;
        }
        o->off += (size_t)n;
        c->queued -= (size_t)n;
        if (o->off < o->blob->len)
            continue;
        c->head = o->next;
        if (!c->head)
            c->tail = NULL;
        fm_run_blob_unref(o->blob);
        free(o);
    }
    if (c->head)
        ev_io_start(c->job->loop, &c->ww);
    else
        ev_io_stop(c->job->loop, &c->ww);
}

void fm_run_conn_send(struct fm_run_conn *c, struct fm_run_blob *b)
{
    struct fm_run_out *o = calloc(1, sizeof *o);
    if (!o) {
        fm_run_blob_unref(b);
        c->ops->fail(c, "out of memory");
        return;
    }
    o->blob = b;
    c->queued += b->len;
    if (c->tail)
        c->tail->next = o;
    else
        c->head = o;
    c->tail = o;
    fm_run_conn_flush(c);
}

void fm_run_conn_send_text(struct fm_run_conn *c, const char *text)
{
    struct fm_run_blob *b = fm_run_blob_new(text, strlen(text));
    if (b)
        fm_run_conn_send(c, b);
}

static void fm_run_conn_close(struct fm_run_conn *c)
{
    ev_io_stop(c->job->loop, &c->rw);
    fm_run_conn_drop_output(c);
    close(c->fd);
    c->ops->closed(c);
    free(c->raw);
    free(c);
}

/* Hand the payload over once whole. */
static void fm_run_conn_payload_done(struct fm_run_conn *c)
{
    if (c->raw_have < c->raw_len)
        return;
    char *raw = c->raw;
    c->raw = NULL;
    if (!c->draining)
        c->ops->payload(c, raw, c->raw_len);
    free(raw);
}

/* A line said want bytes follow it: start collecting them, taking what of src is buffered
 * already. Returns the bytes of src taken. */
static size_t fm_run_conn_payload(struct fm_run_conn *c, size_t want, const char *src, size_t avail)
{
    c->raw = malloc(want);
    if (!c->raw) {
        c->ops->fail(c, "out of memory");
        c->draining = 1;
        return 0;
    }
    c->raw_len = want;
    c->raw_have = avail < want ? avail : want;
    memcpy(c->raw, src, c->raw_have);
    size_t took = c->raw_have;
    fm_run_conn_payload_done(c);
    return took;
}

/* Hand every complete line (and its payload) to the exchange; keep the partial rest. */
static void fm_run_conn_lines(struct fm_run_conn *c)
{
    size_t start = 0;
    char *nl;
    while (!c->draining && !c->raw && c->queued < FM_RUN_OUT_MAX &&
           (nl = memchr(c->in + start, '\n', c->len - start))) {
        char *line = c->in + start;
        size_t n = (size_t)(nl - line), want = 0;
        *nl = '\0';
        if (strlen(line) != n)
            c->ops->error(c, "a line holds a NUL byte");
        else
            want = c->ops->line(c, line);
        start += n + 1;
        if (want && !c->draining)
            start += fm_run_conn_payload(c, want, c->in + start, c->len - start);
    }
    if (c->draining) {
        c->len = 0;
        return;
    }
    memmove(c->in, c->in + start, c->len - start);
    c->len -= start;
    if (c->raw)
        return; /* everything buffered went into it */
    if (c->queued >= FM_RUN_OUT_MAX) {
        c->held = 1;
        ev_io_stop(c->job->loop, &c->rw);
    } else if (c->len == sizeof c->in)
        c->ops->error(c, "a line is longer than " FM_RUN_STR(FM_RUN_LINE_MAX) " bytes");
}

/* One read (or, when draining a dead rank, all of them). Returns 1 if the peer closed. */
static int fm_run_conn_input(struct fm_run_conn *c, int all)
{
    for (;;) {
        char sink[4096];
        ssize_t n = c->draining ? read(c->fd, sink, sizeof sink)
                    : c->raw    ? read(c->fd, c->raw + c->raw_have, c->raw_len - c->raw_have)
                                : read(c->fd, c->in + c->len, sizeof c->in - c->len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return 0;
        if (n <= 0) {
            fm_run_conn_close(c);
            return 1;
        }
        if (!c->draining && c->raw) {
            c->raw_have += (size_t)n;
            fm_run_conn_payload_done(c);
        } else if (!c->draining) {
            c->len += (size_t)n;
            fm_run_conn_lines(c);
        }
        if (!all)
            return 0;
    }
}

void fm_run_conn_drain(struct fm_run_conn *c)
{
    /* Its process has ended: nobody reads the output, and the lines it held back (a fini)
     * still count. */
    if (c->held) {
        fm_run_conn_drop_output(c);
        c->held = 0;
        fm_run_conn_lines(c);
    }
    fm_run_conn_input(c, 1);
}

static void fm_run_conn_read_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    (void)revents;
    fm_run_conn_input(w->data, 0);
}

static void fm_run_conn_write_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    (void)revents;
    fm_run_conn_flush(w->data);
    fm_run_conn_release(w->data);
}

struct fm_run_conn *fm_run_conn_new(struct fm_run_job *job, int fd,
                                    const struct fm_run_conn_ops *ops)
{
    struct fm_run_conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->job = job;
    c->ops = ops;
    c->fd = fd;
    c->rank = -1;
    ev_io_init(&c->rw, fm_run_conn_read_cb, fd, EV_READ);
    ev_io_init(&c->ww, fm_run_conn_write_cb, fd, EV_WRITE);
    c->rw.data = c;
    c->ww.data = c;
    ev_io_start(job->loop, &c->rw);
    return c;
}
