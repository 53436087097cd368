/* SPDX-License-Identifier: BSD-3-Clause */
/* Bootstrap under fastmsg-run: one TCP connection to the launcher speaking run_protocol.h.
 * Values travel as bytes (put_bin, get_bin: no hex, no chunks). Puts stream out
 * unacknowledged and a fence is one round trip; a get asks the launcher for what it needs. A get
 * that carries on where the last reply for its key ended (rank r+1 after r) asks for twice as many
 * ranks as that reply did, up to FM_BOOT_RUN_AHEAD_MAX, so reading every rank's value takes a
 * logarithmic number of round trips while a rank that reads one value receives only that one.
 * Replies are kept, a bounded few, until the next fence. Every wait is a poll() bounded by
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

#include "boot_socket.h"
#include "boot_backend.h"
#include "fastmsg.h"
#include "kvline.h"
#include "log.h"
#include "run_protocol.h"
#include "run_wire.h"

#define FM_BOOT_RUN_CONNECT_S     10   /* retry connect at most this long (and <= timeout) */
#define FM_BOOT_RUN_ABORT_WAIT_MS 5000 /* how long abort waits for the launcher to kill us */
#define FM_BOOT_RUN_MSG_MAX       256  /* characters of an abort message we pass on */
#define FM_BOOT_RUN_INBUF         (16 * FM_RUN_LINE_MAX)
#define FM_BOOT_RUN_AHEAD_MAX     1024 /* ranks one get may ask for */
/* Replies kept for later gets, and their bytes: the newest is always kept. Reading two keys
 * in step (a value's chunks: "k" and "k.1") needs two. */
#define FM_BOOT_RUN_WINDOWS   8
#define FM_BOOT_RUN_CACHE_MAX (1024 * 1024)

_Static_assert(FM_BOOT_KEY_MAX <= FM_RUN_KEY_MAX && FM_BOOT_BIN_MAX <= FM_RUN_VALUE_MAX,
               "run_protocol.h cannot carry every key and value fm_boot_put takes");

/* One cmd=vals reply kept: rank first+i's value of key in vals[i]. */
struct fm_boot_run_win {
    char key[FM_RUN_KEY_MAX + 1];
    int first, count, asked;
    size_t bytes;
    unsigned long long used; /* when a get last found it, for eviction */
    struct fm_run_val *vals; /* NULL: an empty slot; one allocation with the payload */
};

struct fm_boot_run {
    int fd;
    struct fm_boot_run_win win[FM_BOOT_RUN_WINDOWS];
    unsigned long long clock;
    size_t cached;     /* payload bytes held in win[] */
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

static void fm_boot_run_forget(struct fm_boot_run *p, struct fm_boot_run_win *w)
{
    p->cached -= w->bytes;
    free(w->vals);
    memset(w, 0, sizeof *w);
}

/* Every kept reply: at a fence, after which values may differ. */
static void fm_boot_run_forget_all(struct fm_boot_run *p)
{
    for (int i = 0; i < FM_BOOT_RUN_WINDOWS; i++)
        if (p->win[i].vals)
            fm_boot_run_forget(p, &p->win[i]);
}

static void fm_boot_run_close(fm_boot *b)
{
    struct fm_boot_run *p = b->priv;
    if (!p)
        return;
    if (p->fd >= 0)
        close(p->fd);
    fm_boot_run_forget_all(p);
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
    rc = fm_boot_run_connect(b, getenv(FM_RUN_ENV_ADDR));
    FM_CHECK_QUIET(rc == FM_OK, rc);
    int n =
        snprintf(hello, sizeof hello, "cmd=hello rank=%d version=%d\n", b->rank, FM_RUN_VERSION);
    rc = fm_boot_run_send(b, hello, (size_t)n, "hello");
    FM_CHECK_QUIET(rc == FM_OK, rc);
    return FM_OK;
error:
    b->job_key = 0;
    fm_boot_run_close(b);
    return rc;
}

/* ---- the key-value exchange ---- */

static int fm_boot_run_put(fm_boot *b, const char *key, const void *val, size_t len)
{
    char line[FM_RUN_LINE_MAX];
    int n = fm_run_key_ok(key) ? fm_run_fmt_put(line, sizeof line, key, len) : -1;
    if (n < 0 || len > FM_RUN_VALUE_MAX)
        return fm_boot_fail(b, FM_ERR_INVALID, "run bootstrap: cannot put '%.48s' (%zu bytes)", key,
                            len);
    int rc = fm_boot_run_send(b, line, (size_t)n, "put");
    return rc || !len ? rc : fm_boot_run_send(b, (const char *)val, len, "put");
}

/* A cmd=error from the launcher as our error; anything else it should not have sent. */
static int fm_boot_run_unexpected(fm_boot *b, const fm_kvline *l, const char *cmd, const char *what)
{
    if (cmd && !strcmp(cmd, "error")) {
        char *msg = (char *)fm_kvline_get(l, "msg");
        if (msg && fm_kvline_unescape(msg))
            msg = NULL;
        return fm_boot_fail(b, FM_ERR_BOOTSTRAP, "run bootstrap: fastmsg-run says: %s",
                            msg ? msg : "protocol error");
    }
    return fm_boot_fail(b, FM_ERR_BOOTSTRAP,
                        "run bootstrap: unexpected line from fastmsg-run (%s, in %s)",
                        cmd ? cmd : "malformed", what);
}

static int fm_boot_run_fence(fm_boot *b)
{
    static const char fence[] = "cmd=fence\n";
    struct fm_boot_run *p = b->priv;
    char *line = NULL;
    fm_kvline l;
    fm_boot_run_forget_all(p);
    int rc = fm_boot_run_send(b, fence, sizeof fence - 1, "fence");
    if (rc == FM_OK)
        rc = fm_boot_run_recv(b, "fence", &line);
    if (rc)
        return rc;
    const char *cmd = fm_kvline_parse(line, &l) ? NULL : fm_kvline_get(&l, "cmd");
    if (cmd && !strcmp(cmd, "fence_done") && l.n == 1)
        return FM_OK;
    return fm_boot_run_unexpected(b, &l, cmd, "fence");
}

/* Exactly n bytes into dst: first what is buffered, then straight from the socket. */
static int fm_boot_run_read(fm_boot *b, char *dst, size_t n, const char *what)
{
    struct fm_boot_run *p = b->priv;
    size_t have = p->tail - p->head < n ? p->tail - p->head : n;
    memcpy(dst, p->in + p->head, have);
    p->head += have;
    while (have < n) {
        int w = fm_sock_wait(p->fd, POLLIN, fm_sock_deadline(b->timeout_s));
        if (w == 0)
            return fm_boot_fail(b, FM_ERR_TIMEOUT,
                                "run bootstrap: no word from fastmsg-run within %d s (in %s)",
                                b->timeout_s, what);
        ssize_t r = w < 0 ? -1 : read(p->fd, dst + have, n - have);
        if (r < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (r <= 0)
            return fm_boot_fail(b, FM_ERR_BOOTSTRAP, "run bootstrap: %s fastmsg-run (in %s)",
                                r ? "reading from" : "connection closed by", what);
        have += (size_t)r;
    }
    return FM_OK;
}

/* The slot for a new reply: an empty one, else the one a get found least recently. */
static struct fm_boot_run_win *fm_boot_run_slot(struct fm_boot_run *p)
{
    struct fm_boot_run_win *old = &p->win[0];
    for (int i = 0; i < FM_BOOT_RUN_WINDOWS; i++) {
        if (!p->win[i].vals)
            return &p->win[i];
        if (p->win[i].used < old->used)
            old = &p->win[i];
    }
    fm_boot_run_forget(p, old);
    return old;
}

/* Keep the newest reply (w) and drop the oldest others while the rest exceed the budget. */
static void fm_boot_run_trim(struct fm_boot_run *p, const struct fm_boot_run_win *w)
{
    while (p->cached > FM_BOOT_RUN_CACHE_MAX) {
        struct fm_boot_run_win *old = NULL;
        for (int i = 0; i < FM_BOOT_RUN_WINDOWS; i++)
            if (p->win[i].vals && &p->win[i] != w && (!old || p->win[i].used < old->used))
                old = &p->win[i];
        if (!old)
            return;
        fm_boot_run_forget(p, old);
    }
}

/* Ask for g and keep the reply in a slot; *out is that slot. */
static int fm_boot_run_ask(fm_boot *b, const struct fm_run_get *g, struct fm_boot_run_win **out)
{
    struct fm_boot_run *p = b->priv;
    char req[FM_RUN_LINE_MAX], *line = NULL;
    fm_kvline l;
    int n = fm_run_fmt_get(req, sizeof req, g), rc, count;
    size_t bytes;
    rc = n < 0 ? fm_boot_fail(b, FM_ERR_TOO_LONG, "run bootstrap: key too long")
               : fm_boot_run_send(b, req, (size_t)n, "get");
    if (rc == FM_OK)
        rc = fm_boot_run_recv(b, "get", &line);
    if (rc)
        return rc;
    const char *cmd = fm_kvline_parse(line, &l) ? NULL : fm_kvline_get(&l, "cmd");
    if (!cmd || strcmp(cmd, "vals"))
        return fm_boot_run_unexpected(b, &l, cmd, "get");
    const char *why = fm_run_parse_vals(&l, g, &count, &bytes);
    if (why)
        return fm_boot_fail(b, FM_ERR_BOOTSTRAP, "run bootstrap: fastmsg-run sent %s", why);
    struct fm_boot_run_win *w = fm_boot_run_slot(p);
    struct fm_run_val *vals = malloc((size_t)count * sizeof *vals + bytes);
    if (!vals)
        return fm_boot_fail(b, FM_ERR_NOMEM, "run bootstrap: out of memory for %zu bytes", bytes);
    char *data = (char *)(vals + count);
    rc = fm_boot_run_read(b, data, bytes, "get");
    why = rc ? NULL : fm_run_split_vals(data, bytes, count, vals);
    if (rc || why) {
        free(vals);
        return rc ? rc
                  : fm_boot_fail(b, FM_ERR_BOOTSTRAP, "run bootstrap: fastmsg-run sent %s", why);
    }
    snprintf(w->key, sizeof w->key, "%s", g->key);
    w->first = g->rank;
    w->count = count;
    w->asked = g->count;
    w->bytes = bytes;
    w->vals = vals;
    p->cached += bytes;
    *out = w;
    return FM_OK;
}

/* How many ranks a get of (rank, key) asks for: one, or twice the reply it carries on. */
static int fm_boot_run_ahead(const fm_boot *b, const struct fm_boot_run *p, int rank,
                             const char *key)
{
    int count = 1;
    for (int i = 0; i < FM_BOOT_RUN_WINDOWS; i++) {
        const struct fm_boot_run_win *w = &p->win[i];
        if (w->vals && w->first + w->count == rank && !strcmp(w->key, key))
            count = w->asked < FM_BOOT_RUN_AHEAD_MAX / 2 ? 2 * w->asked : FM_BOOT_RUN_AHEAD_MAX;
    }
    return count < b->size - rank ? count : b->size - rank;
}

static int fm_boot_run_get(fm_boot *b, int rank, const char *key, void *val, size_t *len)
{
    struct fm_boot_run *p = b->priv;
    struct fm_boot_run_win *w = NULL;
    if (!p)
        return fm_boot_fail(b, FM_ERR_BOOTSTRAP, "run bootstrap: not connected");
    if (!fm_run_key_ok(key))
        return fm_boot_fail(b, FM_ERR_INVALID, "run bootstrap: cannot get '%.48s'", key);
    for (int i = 0; i < FM_BOOT_RUN_WINDOWS && !w; i++)
        if (p->win[i].vals && rank >= p->win[i].first && rank - p->win[i].first < p->win[i].count &&
            !strcmp(p->win[i].key, key))
            w = &p->win[i];
    if (!w) {
        struct fm_run_get g = {rank, fm_boot_run_ahead(b, p, rank, key), key};
        int rc = fm_boot_run_ask(b, &g, &w);
        if (rc)
            return rc;
        fm_boot_run_trim(p, w);
    }
    w->used = ++p->clock;
    const struct fm_run_val *v = &w->vals[rank - w->first];
    if (!v->data)
        return fm_boot_fail(b, FM_ERR_BOOTSTRAP,
                            "run bootstrap: rank %d published nothing under '%s' before the last "
                            "fence",
                            rank, key);
    if (v->len > *len)
        return fm_boot_fail(b, FM_ERR_TOO_LONG,
                            "run bootstrap: value of '%s' from rank %d is %zu bytes, buffer holds "
                            "%zu",
                            key, rank, v->len, *len);
    memcpy(val, v->data, v->len);
    *len = v->len;
    return FM_OK;
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
    .put_bin = fm_boot_run_put,
    .fence = fm_boot_run_fence,
    .get_bin = fm_boot_run_get,
    .abort = fm_boot_run_abort,
    .fini = fm_boot_run_fini,
};
