/* SPDX-License-Identifier: BSD-3-Clause */
/* The launcher's side of run_protocol.h: hello, puts kept until the next fence is done
 * (store.c), fences, gets answered from the store, abort and fini. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvline.h"
#include "run.h"

_Static_assert(FM_RUN_PUT_BYTES_MAX == 4 * 1024 * 1024, "the message below says 4 MiB");

void fm_run_exchange_error(struct fm_run_conn *c, const char *reason)
{
    char esc[512], line[600];
    if (c->draining)
        return;
    fm_kvline_escape(reason, esc, sizeof esc);
    snprintf(line, sizeof line, "cmd=error msg=%s\n", esc);
    fm_run_conn_send_text(c, line);
    c->draining = 1;
    if (c->rank >= 0)
        fm_run_job_fail(c->job, 1, "rank %d broke the bootstrap protocol (%s)", c->rank, reason);
    else if (c->job->opts->verbose)
        fm_run_say("dropping a connection: %s", reason);
}

static void fm_run_exchange_payload(struct fm_run_conn *c, const char *data, size_t len);

static int fm_run_exchange_int(const char *s, long min, long max, long *out)
{
    char *end;
    if (!s || (*s != '-' && (*s < '0' || *s > '9')))
        return -1;
    long v = strtol(s, &end, 10);
    if (*end || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

static void fm_run_exchange_hello(struct fm_run_conn *c, const fm_kvline *l)
{
    struct fm_run_job *job = c->job;
    long r, v;
    if (fm_run_exchange_int(fm_kvline_get(l, "rank"), 0, job->opts->n - 1, &r)) {
        fm_run_exchange_error(c, "cmd=hello without a valid rank");
        return;
    }
    if (fm_run_exchange_int(fm_kvline_get(l, "version"), 0, 2147483647L, &v) ||
        v != FM_RUN_VERSION) {
        static const char why[] =
            "cmd=hello of another protocol version than fastmsg-run's " FM_RUN_STR(
                FM_RUN_VERSION) " (a program built with another fastmsg?)";
        /* Named, so the job ends now rather than at its first fence's timeout. */
        c->rank = (int)r;
        fm_run_exchange_error(c, why);
        return;
    }
    if (job->rank[r].hello) {
        fm_run_exchange_error(c, "a second cmd=hello for one rank");
        return;
    }
    c->rank = (int)r;
    job->rank[r].hello = 1;
    job->rank[r].conn = c;
}

/* Make the generation's puts visible, answer every rank fence_done, start the next. */
static void fm_run_exchange_release(struct fm_run_job *job)
{
    static const char done[] = "cmd=fence_done\n";
    struct fm_run_blob *b = fm_run_blob_new(done, sizeof done - 1);
    fm_run_store_commit(job->kv);
    if (!b) {
        fm_run_job_fail(job, 1, "out of memory in a fence");
        return;
    }
    for (int r = 0; r < job->opts->n; r++) {
        job->rank[r].fenced = 0;
        if (job->rank[r].conn) {
            b->refs++;
            fm_run_conn_send(job->rank[r].conn, b);
        }
    }
    fm_run_blob_unref(b);
    job->nfenced = 0;
}

void fm_run_exchange_check_fence(struct fm_run_job *job)
{
    int waiter = -1, gone = -1;
    for (int r = 0; r < job->opts->n; r++) {
        struct fm_run_rank *rk = &job->rank[r];
        if (rk->fenced && waiter < 0)
            waiter = r;
        if (!rk->fenced && (rk->settled || rk->fini) && gone < 0)
            gone = r;
    }
    if (waiter >= 0 && gone >= 0)
        fm_run_job_fail(job, 1, "rank %d ended without joining the fence rank %d waits in", gone,
                        waiter);
}

/* The value follows the line: returns its length, and the payload callback stores it. */
static size_t fm_run_exchange_put(struct fm_run_conn *c, const fm_kvline *l)
{
    const char *key, *why = fm_run_parse_put(l, &key, &c->put_bytes);
    if (why) {
        fm_run_exchange_error(c, why);
        return 0;
    }
    if (c->job->rank[c->rank].fenced) {
        fm_run_exchange_error(c, "cmd=put during a fence");
        return 0;
    }
    snprintf(c->put_key, sizeof c->put_key, "%s", key);
    if (c->put_bytes == 0)
        fm_run_exchange_payload(c, "", 0);
    return c->put_bytes;
}

static void fm_run_exchange_payload(struct fm_run_conn *c, const char *data, size_t len)
{
    struct fm_run_job *job = c->job;
    if (job->ending)
        return;
    int rc = fm_run_store_put(job->kv, c->rank, c->put_key, data, len);
    if (rc == -2)
        fm_run_exchange_error(c, "cmd=put beyond the 4 MiB a rank may put");
    else if (rc)
        fm_run_job_fail(job, 1, "out of memory storing a put");
}

static void fm_run_exchange_get(struct fm_run_conn *c, const fm_kvline *l)
{
    struct fm_run_job *job = c->job;
    struct fm_run_get g;
    const char *why = fm_run_parse_get(l, job->opts->n, &g);
    if (why) {
        fm_run_exchange_error(c, why);
        return;
    }
    if (job->rank[c->rank].fenced) {
        fm_run_exchange_error(c, "cmd=get during a fence");
        return;
    }
    struct fm_run_blob *b = fm_run_store_reply(job->kv, &g);
    if (b)
        fm_run_conn_send(c, b);
    else
        fm_run_job_fail(job, 1, "out of memory answering a get");
}

static void fm_run_exchange_fence(struct fm_run_conn *c)
{
    struct fm_run_job *job = c->job;
    if (job->rank[c->rank].fenced) {
        fm_run_exchange_error(c, "a second cmd=fence before fence_done");
        return;
    }
    job->rank[c->rank].fenced = 1;
    if (++job->nfenced == job->opts->n)
        fm_run_exchange_release(job);
    else
        fm_run_exchange_check_fence(job);
}

static void fm_run_exchange_abort(struct fm_run_conn *c, const fm_kvline *l)
{
    char *msg = (char *)fm_kvline_get(l, "msg");
    long code = 1;
    if (fm_run_exchange_int(fm_kvline_get(l, "code"), -2147483647L - 1, 2147483647L, &code))
        code = 1;
    if (!msg || fm_kvline_unescape(msg))
        msg = "";
    fm_run_job_fail(c->job, code > 0 && code < 256 ? (int)code : 1,
                    "rank %d called fm_abort(%ld): %s", c->rank, code, msg);
}

static void fm_run_exchange_fini(struct fm_run_conn *c)
{
    struct fm_run_rank *rk = &c->job->rank[c->rank];
    if (rk->fenced) {
        fm_run_exchange_error(c, "cmd=fini during a fence");
        return;
    }
    rk->fini = 1;
    fm_run_job_review(c->job, c->rank);
    fm_run_exchange_check_fence(c->job);
}

size_t fm_run_exchange_line(struct fm_run_conn *c, char *line)
{
    fm_kvline l;
    const char *cmd = fm_kvline_parse(line, &l) ? NULL : fm_kvline_get(&l, "cmd");
    if (c->job->ending)
        return 0;
    if (!cmd)
        fm_run_exchange_error(c, "a malformed line");
    else if (c->rank < 0 && strcmp(cmd, "hello"))
        fm_run_exchange_error(c, "the first line must be cmd=hello");
    else if (c->rank < 0)
        fm_run_exchange_hello(c, &l);
    else if (c->job->rank[c->rank].fini)
        fm_run_exchange_error(c, "a line after cmd=fini");
    else if (!strcmp(cmd, "put"))
        return fm_run_exchange_put(c, &l);
    else if (!strcmp(cmd, "get"))
        fm_run_exchange_get(c, &l);
    else if (!strcmp(cmd, "fence"))
        fm_run_exchange_fence(c);
    else if (!strcmp(cmd, "abort"))
        fm_run_exchange_abort(c, &l);
    else if (!strcmp(cmd, "fini"))
        fm_run_exchange_fini(c);
    else if (!strcmp(cmd, "hello"))
        fm_run_exchange_error(c, "a second cmd=hello");
    else
        fm_run_exchange_error(c, "an unknown cmd");
    return 0;
}

void fm_run_exchange_closed(struct fm_run_conn *c)
{
    if (c->rank < 0)
        return;
    struct fm_run_rank *rk = &c->job->rank[c->rank];
    rk->conn = NULL;
    if (!rk->fini)
        rk->lost = 1;
    fm_run_job_review(c->job, c->rank);
}

static void fm_run_exchange_fail(struct fm_run_conn *c, const char *why)
{
    fm_run_job_fail(c->job, 1, "%s", why);
}

const struct fm_run_conn_ops fm_run_exchange_ops = {
    .line = fm_run_exchange_line,
    .payload = fm_run_exchange_payload,
    .error = fm_run_exchange_error,
    .closed = fm_run_exchange_closed,
    .fail = fm_run_exchange_fail,
};
