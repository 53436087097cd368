/* SPDX-License-Identifier: BSD-3-Clause */
/* Bootstrap under fastmsg-run: one TCP connection to the launcher speaking run_protocol.h.
 * Puts stream out unacknowledged; a fence brings back every pair put since the previous one
 * into a local store, so gets need no round trip. Every wait is a poll() bounded by
 * b->timeout_s. */
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "boot_kvstore.h"
#include "boot_socket.h"
#include "boot_backend.h"
#include "fastmsg.h"
#include "kvline.h"
#include "log.h"
#include "run_protocol.h"

#define FM_BOOT_RUN_CONNECT_S     10   /* retry connect at most this long (and <= timeout) */
#define FM_BOOT_RUN_ABORT_WAIT_MS 5000 /* how long abort waits for the launcher to kill us */
#define FM_BOOT_RUN_MSG_MAX       256  /* characters of an abort message we pass on */
#define FM_BOOT_RUN_INBUF         (16 * FM_RUN_LINE_MAX) /* read in big gulps during a fence */

/* A kv line is "cmd=kv rank=R key=K value=V\n" with K and V escaped (3 bytes per byte). */
_Static_assert(FM_RUN_LINE_MAX >= 3 * (FM_BOOT_KEY_MAX + FM_BOOT_VALUE_MAX) + 40,
               "FM_RUN_LINE_MAX cannot carry the longest escaped key and value");

struct fm_boot_run {
    int fd;
    fm_boot_kvstore *kv;
    size_t head, tail; /* unread bytes are in[head..tail) */
    char in[FM_BOOT_RUN_INBUF];
};

/* ---- bounded I/O ---- */

static int fm_boot_run_send(fm_boot *b, const char *buf, size_t n, const char *what)
{
    struct fm_boot_run *p = b->priv;
    int w = fm_sock_write_all(p->fd, buf, n, fm_sock_deadline(b->timeout_s));
    if (w == 0)
        return fm_boot_fail(b, FM_ERR_TIMEOUT, "run bootstrap: could not send %s within %d s", what,
                            b->timeout_s);
    if (w < 0)
        return fm_boot_fail(b, FM_ERR_BOOTSTRAP, "run bootstrap: sending %s to fastmsg-run: %s",
                            what, strerror(errno));
    return FM_OK;
}

/* Read more bytes; each wait for them is bounded by the timeout. */
static int fm_boot_run_fill(fm_boot *b, const char *what)
{
    struct fm_boot_run *p = b->priv;
    for (;;) {
        int w = fm_sock_wait(p->fd, POLLIN, fm_sock_deadline(b->timeout_s));
        if (w == 0)
            return fm_boot_fail(b, FM_ERR_TIMEOUT,
                                "run bootstrap: no word from fastmsg-run within %d s (in %s)",
                                b->timeout_s, what);
        ssize_t n = w < 0 ? -1 : read(p->fd, p->in + p->tail, sizeof p->in - p->tail);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n < 0)
            return fm_boot_fail(b, FM_ERR_BOOTSTRAP, "run bootstrap: reading from fastmsg-run: %s",
                                strerror(errno));
        if (n == 0)
            return fm_boot_fail(b, FM_ERR_BOOTSTRAP,
                                "run bootstrap: fastmsg-run closed the connection (in %s)", what);
        p->tail += (size_t)n;
        return FM_OK;
    }
}

/* The next line from the launcher without its '\n', valid until the next call. */
static int fm_boot_run_recv(fm_boot *b, const char *what, char **line)
{
    struct fm_boot_run *p = b->priv;
    for (;;) {
        char *s = p->in + p->head;
        size_t avail = p->tail - p->head;
        char *nl = memchr(s, '\n', avail);
        if (nl) {
            *nl = '\0';
            p->head += (size_t)(nl - s) + 1;
            if (strlen(s) != (size_t)(nl - s))
                return fm_boot_fail(b, FM_ERR_BOOTSTRAP,
                                    "run bootstrap: fastmsg-run sent a NUL byte (in %s)", what);
            *line = s;
            return FM_OK;
        }
        if (avail >= FM_RUN_LINE_MAX)
            return fm_boot_fail(b, FM_ERR_BOOTSTRAP,
                                "run bootstrap: fastmsg-run sent a line over %d bytes (in %s)",
                                FM_RUN_LINE_MAX, what);
        memmove(p->in, s, avail);
        p->head = 0;
        p->tail = avail;
        int rc = fm_boot_run_fill(b, what);
        if (rc)
            return rc;
    }
}

/* ---- joining ---- */

/* A decimal environment value in min..max; strict: digits only. */
static int fm_boot_run_env_int(fm_boot *b, const char *name, long min, long max, int *out)
{
    const char *s = getenv(name);
    char *end = NULL;
    errno = 0;
    long v = s && *s >= '0' && *s <= '9' ? strtol(s, &end, 10) : -1;
    if (!end || *end || errno || v < min || v > max)
        return fm_boot_fail(b, FM_ERR_BOOTSTRAP,
                            "run bootstrap: %s=%s is not an integer in %ld..%ld (fastmsg-run sets "
                            "it)",
                            name, s ? s : "(unset)", min, max);
    *out = (int)v;
    return FM_OK;
}

static int fm_boot_run_env_key(fm_boot *b)
{
    const char *s = getenv(FM_RUN_ENV_JOBKEY);
    if (!s || strlen(s) != 16 || strspn(s, "0123456789abcdefABCDEF") != 16 ||
        !(b->job_key = strtoull(s, NULL, 16)))
        return fm_boot_fail(b, FM_ERR_BOOTSTRAP,
                            "run bootstrap: %s=%s is not 16 hex digits, not all zero",
                            FM_RUN_ENV_JOBKEY, s ? s : "(unset)");
    return FM_OK;
}

static int fm_boot_run_env(fm_boot *b)
{
    int rc;
    rc = fm_boot_run_env_int(b, FM_RUN_ENV_SIZE, 1, INT_MAX, &b->size);
    FM_CHECK_QUIET(rc == FM_OK, rc);
    rc = fm_boot_run_env_int(b, FM_RUN_ENV_RANK, 0, b->size - 1, &b->rank);
    FM_CHECK_QUIET(rc == FM_OK, rc);
    rc = fm_boot_run_env_key(b);
    FM_CHECK_QUIET(rc == FM_OK, rc);
    return FM_OK;
error:
    return rc;
}

/* The launcher listens before it starts anyone, but a remote network may need a moment. */
static int fm_boot_run_connect(fm_boot *b, const char *addr)
{
    struct fm_boot_run *p = b->priv;
    struct addrinfo *res;
    int g;
    if (fm_sock_resolve(addr, AI_NUMERICSERV, &res, &g))
        return g ? fm_boot_fail(b, FM_ERR_BOOTSTRAP, "run bootstrap: %s=%s: %s", FM_RUN_ENV_ADDR,
                                addr, gai_strerror(g))
                 : fm_boot_fail(b, FM_ERR_BOOTSTRAP, "run bootstrap: %s=%s is not host:port",
                                FM_RUN_ENV_ADDR, addr ? addr : "(unset)");
    int limit_s = b->timeout_s > 0 && b->timeout_s < FM_BOOT_RUN_CONNECT_S ? b->timeout_s
                                                                           : FM_BOOT_RUN_CONNECT_S;
    long long end = fm_sock_now_ms() + 1000LL * limit_s;
    int err = 0, delay_ms = 50;
    for (;;) {
        p->fd = fm_sock_connect_any(res, end, &err);
        long long left = end - fm_sock_now_ms();
        if (p->fd >= 0 || left <= 0)
            break;
        poll(NULL, 0, left < delay_ms ? (int)left : delay_ms);
        delay_ms = delay_ms < 500 ? delay_ms * 2 : 1000;
    }
    freeaddrinfo(res);
    if (p->fd < 0)
        return fm_boot_fail(b, err == ETIMEDOUT ? FM_ERR_TIMEOUT : FM_ERR_BOOTSTRAP,
                            "run bootstrap: cannot connect to fastmsg-run at %s within %d s: %s",
                            addr, limit_s, strerror(err));
    return FM_OK;
}

static void fm_boot_run_close(fm_boot *b)
{
    struct fm_boot_run *p = b->priv;
    if (!p)
        return;
    if (p->fd >= 0)
        close(p->fd);
    fm_boot_kvstore_free(p->kv);
    free(p);
    b->priv = NULL;
}

static int fm_boot_run_init(fm_boot *b)
{
    struct fm_boot_run *p = NULL;
    char hello[64];
    int rc;
    rc = fm_boot_run_env(b);
    FM_CHECK_QUIET(rc == FM_OK, rc);
    p = calloc(1, sizeof *p);
    FM_CHECK_QUIET(p, fm_boot_fail(b, FM_ERR_NOMEM, "run bootstrap: out of memory"));
    p->fd = -1;
    b->priv = p;
    p->kv = fm_boot_kvstore_new();
    FM_CHECK_QUIET(p->kv, fm_boot_fail(b, FM_ERR_NOMEM, "run bootstrap: out of memory"));
    rc = fm_boot_run_connect(b, getenv(FM_RUN_ENV_ADDR));
    FM_CHECK_QUIET(rc == FM_OK, rc);
    int n = snprintf(hello, sizeof hello, "cmd=hello rank=%d\n", b->rank);
    rc = fm_boot_run_send(b, hello, (size_t)n, "hello");
    FM_CHECK_QUIET(rc == FM_OK, rc);
    return FM_OK;
error:
    b->job_key = 0;
    fm_boot_run_close(b);
    return rc;
}

/* ---- the key-value exchange ---- */

static int fm_boot_run_put(fm_boot *b, const char *key, const char *value)
{
    char k[3 * FM_BOOT_KEY_MAX + 1], v[3 * FM_BOOT_VALUE_MAX + 1], line[FM_RUN_LINE_MAX + 1];
    if (fm_kvline_escape(key, k, sizeof k) < 0 || fm_kvline_escape(value, v, sizeof v) < 0)
        return fm_boot_fail(b, FM_ERR_TOO_LONG,
                            "run bootstrap: key '%.48s' or its value is too long", key);
    int n = snprintf(line, sizeof line, "cmd=put key=%s value=%s\n", k, v);
    /* The launcher forwards it as "cmd=kv rank=R ...": up to 16 bytes longer. */
    if (n < 0 || n + 16 > FM_RUN_LINE_MAX)
        return fm_boot_fail(b, FM_ERR_TOO_LONG,
                            "run bootstrap: key '%s' and its value exceed one line", key);
    return fm_boot_run_send(b, line, (size_t)n, "put");
}

/* Store one "cmd=kv rank=R key=K value=V" line. */
static int fm_boot_run_store(fm_boot *b, const fm_kvline *l)
{
    struct fm_boot_run *p = b->priv;
    const char *r = fm_kvline_get(l, "rank");
    char *key = (char *)fm_kvline_get(l, "key"), *value = (char *)fm_kvline_get(l, "value"), *end;
    long rank = r ? strtol(r, &end, 10) : -1;
    if (!r || !*r || *end || rank < 0 || rank >= b->size || !key || !value ||
        fm_kvline_unescape(key) || fm_kvline_unescape(value))
        return fm_boot_fail(b, FM_ERR_BOOTSTRAP,
                            "run bootstrap: malformed kv line from fastmsg-run");
    if (fm_boot_kvstore_put(p->kv, (int)rank, key, value))
        return fm_boot_fail(b, FM_ERR_NOMEM, "run bootstrap: out of memory storing '%s'", key);
    return FM_OK;
}

/* Handle one line of a fence reply: 1 at fence_done, 0 to read on, or an error. */
static int fm_boot_run_fence_line(fm_boot *b, char *line)
{
    fm_kvline l;
    const char *cmd = fm_kvline_parse(line, &l) ? NULL : fm_kvline_get(&l, "cmd");
    if (cmd && !strcmp(cmd, "fence_done"))
        return 1;
    if (cmd && !strcmp(cmd, "kv"))
        return fm_boot_run_store(b, &l);
    if (cmd && !strcmp(cmd, "error")) {
        char *msg = (char *)fm_kvline_get(&l, "msg");
        if (msg)
            fm_kvline_unescape(msg);
        return fm_boot_fail(b, FM_ERR_BOOTSTRAP, "run bootstrap: fastmsg-run says: %s",
                            msg ? msg : "protocol error");
    }
    return fm_boot_fail(b, FM_ERR_BOOTSTRAP, "run bootstrap: unexpected line from fastmsg-run (%s)",
                        cmd ? cmd : "malformed");
}

static int fm_boot_run_fence(fm_boot *b)
{
    static const char fence[] = "cmd=fence\n";
    char *line = NULL;
    int rc = fm_boot_run_send(b, fence, sizeof fence - 1, "fence");
    while (rc == FM_OK) {
        rc = fm_boot_run_recv(b, "fence", &line);
        if (rc == FM_OK)
            rc = fm_boot_run_fence_line(b, line);
    }
    return rc == 1 ? FM_OK : rc;
}

static int fm_boot_run_get(fm_boot *b, int rank, const char *key, char *value, size_t len)
{
    struct fm_boot_run *p = b->priv;
    return fm_boot_kvstore_fetch(b, p ? p->kv : NULL, rank, key, value, len);
}

/* ---- leaving ---- */

/* Tell the launcher; it names us and the message and kills the job, us included. */
static int fm_boot_run_tell_abort(fm_boot *b, int code, const char *msg)
{
    char m[FM_BOOT_RUN_MSG_MAX + 1], esc[3 * FM_BOOT_RUN_MSG_MAX + 1], line[FM_RUN_LINE_MAX];
    snprintf(m, sizeof m, "%s", msg ? msg : "");
    fm_kvline_escape(m, esc, sizeof esc);
    int n = snprintf(line, sizeof line, "cmd=abort code=%d msg=%s\n", code, esc);
    return fm_boot_run_send(b, line, (size_t)n, "abort");
}

/* Wait until the launcher kills us, closes the connection, or the wait runs out. */
static void fm_boot_run_await_kill(struct fm_boot_run *p)
{
    long long deadline = fm_sock_now_ms() + FM_BOOT_RUN_ABORT_WAIT_MS;
    char sink[256];
    while (fm_sock_wait(p->fd, POLLIN, deadline) == 1) {
        ssize_t n = read(p->fd, sink, sizeof sink);
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
            return;
    }
}

static void fm_boot_run_abort(fm_boot *b, int code, const char *msg)
{
    struct fm_boot_run *p = b->priv;
    if (p && p->fd >= 0 && fm_boot_run_tell_abort(b, code, msg) == FM_OK) {
        fm_boot_run_await_kill(p);
    } else {
        fprintf(stderr, "fastmsg[%d]: abort(%d): %s\n", b->rank, code, msg ? msg : "");
        fflush(stderr);
    }
    _exit(code ? code : 1);
}

static void fm_boot_run_fini(fm_boot *b)
{
    static const char fini[] = "cmd=fini\n";
    struct fm_boot_run *p = b->priv;
    if (!p)
        return;
    if (p->fd >= 0 && fm_boot_run_send(b, fini, sizeof fini - 1, "fini") == FM_OK)
        shutdown(p->fd, SHUT_WR);
    fm_boot_run_close(b);
}

const struct fm_boot_ops fm_boot_run_ops = {
    .name = "run",
    .init = fm_boot_run_init,
    .put = fm_boot_run_put,
    .fence = fm_boot_run_fence,
    .get = fm_boot_run_get,
    .abort = fm_boot_run_abort,
    .fini = fm_boot_run_fini,
};
