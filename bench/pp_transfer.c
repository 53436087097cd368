/* SPDX-License-Identifier: BSD-3-Clause */
/* Moving fastmsg-bench-pingpong's messages: the receive handlers, one send, and polling for
 * arrivals. Both ends work in preallocated buffers, so no allocation or page fault lands in a
 * timing. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pp.h"

/* A whole message is here: count it, and check it against the pattern if asked. */
static void arrived(pp_link *l, const unsigned char *buf, size_t len)
{
    if (l->check && (len != l->expect || memcmp(buf, l->sbuf, len) != 0))
        l->bad++;
    l->arrived++;
}

static void delivered(void *buf, size_t len, int status, int sender, void *arg)
{
    (void)sender;
    if (status != FM_OK)
        ((pp_link *)arg)->bad++;
    arrived(arg, buf, len);
}

/* Default: hand fastmsg the buffer on the first packet; it copies the rest as it comes. */
static int on_deliver(fm_stream *s, int sender, void *arg)
{
    (void)sender;
    pp_link *l = arg;
    fm_stream_deliver(s, l->rbuf, l->cap, delivered, l);
    return FM_CONTINUE;
}

/* --receive: copy with fm_receive each time more arrives; the offset so far rides on the
 * stream's user pointer, so no state is allocated per message. */
static int on_receive(fm_stream *s, int sender, void *arg)
{
    (void)sender;
    pp_link *l = arg;
    size_t off = (size_t)(uintptr_t)fm_stream_user(s);
    size_t n = fm_stream_available(s);
    if (n > l->cap - off)
        n = l->cap - off;
    if (n > 0) {
        ssize_t got = fm_receive(s, l->rbuf + off, n);
        if (got > 0)
            off += (size_t)got;
    }
    /* Once complete and all read, the stream is released: this is the last call. */
    if (fm_stream_complete(s) && fm_stream_available(s) == 0) {
        arrived(l, l->rbuf, off);
        return FM_DONE;
    }
    fm_stream_set_user(s, (void *)(uintptr_t)off);
    return FM_CONTINUE;
}

int pp_link_init(pp_link *l, fm_context *ctx, const pp_opts *o)
{
    memset(l, 0, sizeof *l);
    l->ctx = ctx;
    l->me = fm_rank(ctx);
    l->peer = 1 - l->me;
    l->cap = pp_capacity(o);
    l->check = o->check;
    l->timeout_s = o->timeout_s;
    if (pp_buffers(o, &l->sbuf, &l->rbuf))
        return FM_ERR_NOMEM;
    l->handler = fm_add_handler(ctx, o->use_receive ? on_receive : on_deliver, l);
    return l->handler < 0 ? l->handler : FM_OK;
}

void pp_link_fini(pp_link *l)
{
    free(l->sbuf);
    free(l->rbuf);
    l->sbuf = l->rbuf = NULL;
}

int pp_send(pp_link *l, size_t len)
{
    fm_stream *s;
    int rc = fm_begin_message(l->ctx, l->peer, len, l->handler, &s);
    if (rc == FM_OK)
        rc = fm_send_piece(s, l->sbuf, len);
    if (rc == FM_OK)
        rc = fm_end_message(s);
    return rc;
}

/* Busy polling: a ping-pong is all waiting, and fm_wait's back-off would add latency. The
 * clock is read rarely, to notice a stall without slowing the loop. */
int pp_await(pp_link *l, long count)
{
    double deadline = 0;
    for (unsigned long spins = 1; l->arrived < count; spins++) {
        long rc = fm_extract(l->ctx, 0);
        if (rc < 0)
            return (int)rc;
        if (spins % 65536 == 0) {
            double t = bench_now_us(CLOCK_MONOTONIC);
            if (deadline == 0)
                deadline = t + l->timeout_s * 1e6;
            else if (t > deadline)
                return FM_ERR_TIMEOUT;
        }
    }
    return FM_OK;
}
