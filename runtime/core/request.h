/* SPDX-License-Identifier: BSD-3-Clause */
/* Requests (request.c): whole-buffer messages that progress writes into packets as send
 * buffers free up, never waiting in the call that starts them. */
#ifndef FM_CORE_REQUEST_H
#define FM_CORE_REQUEST_H

#include "context.h"

/* Starting a request over any stream: fm_req_new takes a request for len bytes at buf
 * (FM_ERR_INVALID for buf NULL with len > 0, FM_EAGAIN at FM_REQUESTS, FM_ERR_NOMEM) and marks the
 * context so that the stream opened next is promised no buffers even inside a handler (requests
 * fill it as buffers free up instead); fm_req_start then takes that opening's status and stream: on
 * an error it gives the request back and returns the error, else it starts writing buf into the
 * stream and returns FM_OK. */
int fm_req_new(fm_context *ctx, const void *buf, size_t len, fm_request **r);
int fm_req_start(fm_request *r, int open_rc, fm_stream *s, const void *buf, size_t len,
                 fm_request_fn done, void *arg, fm_request **req);

/* Completion of r also waits for a release (acknowledgements: mcast/ack.c); call before
 * fm_req_start. fm_req_release: one hold goes, status (non-zero) becomes the request's if
 * its own is FM_OK; the last one completes it if its stream is written. */
void fm_req_hold(fm_request *r);
void fm_req_release(fm_request *r, int status);

/* A small message (at most FM_REQ_INLINE bytes, copied now) of the layers above the core to
 * dest, for an internal handler id: a request nobody waits for, not counted in FM_REQUESTS
 * (its callers bound how many they send). Never waits; FM_ERR_NOMEM. */
#define FM_REQ_INLINE 32
int fm_req_send_internal(fm_context *ctx, int dest, const void *buf, size_t len, int handler);

/* A worker thread's request (submit.h): checks what needs no context (req NULL, buf, handler)
 * and makes the record for n ranks with those arguments; the caller sets the rest (start,
 * dest, ranks, group, tree, flags) and pushes it. */
struct fm_submit;
int fm_req_submit(fm_context *ctx, fm_request **req, const void *buf, size_t len, int handler,
                  fm_request_fn done, void *arg, int n, struct fm_submit **out);

/* From each progress round: write waiting requests into packets, in start order (returns
 * how many moved on), and, outside handlers, run the callbacks of completed ones (returns
 * how many ran). */
int fm_req_pump(fm_context *ctx);
int fm_req_notify(fm_context *ctx);
/* Whether requests still have bytes to write (fm_finalize sends them first). */
static inline int fm_req_pending(const fm_context *ctx)
{
    return ctx->req.head != NULL;
}
/* fm_finalize past its barrier (setup.c): requests not yet written end, their messages cut
 * short, with FM_ERR_TRUNCATED (callbacks still run; one nobody can see is just freed).
 * Returns how many. */
int fm_req_cut(fm_context *ctx);
/* fm_finalize: free every request, their streams too (said on stderr when some never
 * completed). */
void fm_req_fini(fm_context *ctx);

#endif
