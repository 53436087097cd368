/* SPDX-License-Identifier: BSD-3-Clause */
/* Bootstrap over PMI-1 (simple PMI v1.1): MPICH hydra mpiexec, srun --mpi=pmi2.
 *
 * Two ways in: PMI_FD (an inherited socket; PMI_RANK and PMI_SIZE in the environment), or
 * PMI_PORT=host:port + PMI_ID (connect, and the initack handshake tells rank and size).
 * Every exchange is one request line and one reply line, each bounded by b->timeout_s. */
#include <errno.h>
#include <fcntl.h>
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
#include "log.h"
#include "pmi1_wire.h"

#define FM_PMI1_KVSNAME_MAX   256  /* characters of the kvsname we hold, with its NUL */
#define FM_PMI1_ABORT_WAIT_MS 2000 /* how long abort lets the launcher kill the job first */

struct fm_pmi1 {
    int fd;
    char kvsname[FM_PMI1_KVSNAME_MAX];
    fm_pmi1_lines in;
};

/* ---- bounded I/O ---- */

static int fm_pmi1_send(fm_boot *b, const char *buf, size_t n, long long deadline, const char *what)
{
    struct fm_pmi1 *p = b->priv;
    int w = fm_sock_write_all(p->fd, buf, n, deadline);
    if (w == 0)
        return fm_boot_fail(b, FM_ERR_TIMEOUT, "PMI-1: could not send %s within %d s", what,
                            b->timeout_s);
    if (w < 0)
        return fm_boot_fail(b, FM_ERR_BOOTSTRAP, "PMI-1: sending %s: %s", what, strerror(errno));
    return FM_OK;
}

static int fm_pmi1_recv(fm_boot *b, long long deadline, const char *what, char **line)
{
    struct fm_pmi1 *p = b->priv;
    for (;;) {
        int r = fm_pmi1_lines_next(&p->in, line);
        if (r == 1)
            return FM_OK;
        if (r < 0)
            return fm_boot_fail(b, FM_ERR_BOOTSTRAP, "PMI-1: reply to %s %s", what,
                                r == FM_ERR_TOO_LONG ? "longer than 1024 bytes" : "holds a NUL");
        int w = fm_sock_wait(p->fd, POLLIN, deadline);
        if (w == 0)
            return fm_boot_fail(b, FM_ERR_TIMEOUT, "PMI-1: no reply to %s within %d s", what,
                                b->timeout_s);
        char tmp[FM_PMI1_LINE_MAX];
        size_t room = fm_pmi1_lines_space(&p->in);
        ssize_t n = w < 0 ? -1 : read(p->fd, tmp, room < sizeof tmp ? room : sizeof tmp);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n < 0)
            return fm_boot_fail(b, FM_ERR_BOOTSTRAP, "PMI-1: reading the reply to %s: %s", what,
                                strerror(errno));
        if (n == 0)
            return fm_boot_fail(b, FM_ERR_BOOTSTRAP,
                                "PMI-1: the process manager closed the connection (awaiting %s)",
                                what);
        fm_pmi1_lines_feed(&p->in, tmp, (size_t)n);
    }
}

/* Send one formatted request (n from a fm_pmi1_fmt_* call) and read one reply line. */
static int fm_pmi1_call(fm_boot *b, const char *req, int n, const char *what, char **line)
{
    if (n < 0)
        return fm_boot_fail(
            b, n, "PMI-1: %s request %s", what,
            n == FM_ERR_TOO_LONG
                ? "exceeds one 1024-byte line"
                : "has an empty key or value, or one with a space, '=' or control byte");
    long long deadline = fm_sock_deadline(b->timeout_s);
    int rc = fm_pmi1_send(b, req, (size_t)n, deadline, what);
    return rc ? rc : fm_pmi1_recv(b, deadline, what, line);
}

/* ---- joining ---- */

static int fm_pmi1_env_int(fm_boot *b, const char *name, int min, int *out)
{
    const char *s = getenv(name);
    char *end;
    errno = 0;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || !*s || errno || *end || v < min || v > INT_MAX)
        return fm_boot_fail(b, FM_ERR_BOOTSTRAP, "PMI-1: %s=%s is not an integer >= %d", name,
                            s ? s : "(unset)", min);
    *out = (int)v;
    return FM_OK;
}

/* PMI_FD mode: the launcher passed a connected socket and rank/size in the environment. */
static int fm_pmi1_open_fd(fm_boot *b)
{
    struct fm_pmi1 *p = b->priv;
    int fd, rc;
    rc = fm_pmi1_env_int(b, "PMI_FD", 0, &fd);
    FM_CHECK_QUIET(rc == FM_OK, rc);
    FM_CHECK_QUIET(
        fcntl(fd, F_SETFD, FD_CLOEXEC) == 0,
        fm_boot_fail(b, FM_ERR_BOOTSTRAP, "PMI-1: PMI_FD=%d is not open: %s", fd, strerror(errno)));
    p->fd = fd;
    rc = fm_pmi1_env_int(b, "PMI_RANK", 0, &b->rank);
    FM_CHECK_QUIET(rc == FM_OK, rc);
    rc = fm_pmi1_env_int(b, "PMI_SIZE", 1, &b->size);
    FM_CHECK_QUIET(rc == FM_OK, rc);
    return FM_OK;
error:
    return rc;
}

static int fm_pmi1_connect(fm_boot *b, const char *hostport)
{
    struct fm_pmi1 *p = b->priv;
    struct addrinfo *res;
    int g;
    if (fm_sock_resolve(hostport, 0, &res, &g))
        return g ? fm_boot_fail(b, FM_ERR_BOOTSTRAP, "PMI-1: PMI_PORT=%s: %s", hostport,
                                gai_strerror(g))
                 : fm_boot_fail(b, FM_ERR_BOOTSTRAP, "PMI-1: PMI_PORT=%s is not host:port",
                                hostport);
    long long deadline = fm_sock_deadline(b->timeout_s);
    int err = 0;
    for (struct addrinfo *ai = res; ai && p->fd < 0; ai = ai->ai_next) {
        p->fd = fm_sock_connect_addr(ai, deadline);
        err = errno;
    }
    freeaddrinfo(res);
    if (p->fd < 0)
        return fm_boot_fail(b, err == ETIMEDOUT ? FM_ERR_TIMEOUT : FM_ERR_BOOTSTRAP,
                            "PMI-1: connecting to PMI_PORT=%s: %s", hostport, strerror(err));
    return FM_OK;
}

/* PMI_PORT mode: connect, send our PMI_ID; the reply is initack and three cmd=set lines. */
static int fm_pmi1_open_port(fm_boot *b)
{
    static const char *const names[3] = {"size", "rank", "debug"};
    char req[FM_PMI1_LINE_MAX + 1], *line;
    int id, rc, vals[3];
    rc = fm_pmi1_env_int(b, "PMI_ID", 0, &id);
    FM_CHECK_QUIET(rc == FM_OK, rc);
    rc = fm_pmi1_connect(b, getenv("PMI_PORT"));
    FM_CHECK_QUIET(rc == FM_OK, rc);
    rc = fm_pmi1_call(b, req, fm_pmi1_fmt_initack(req, sizeof req, id), "initack", &line);
    FM_CHECK_QUIET(rc == FM_OK, rc);
    rc = fm_pmi1_parse_initack(line, b->err, sizeof b->err);
    FM_CHECK_QUIET(rc == FM_OK, rc);
    long long deadline = fm_sock_deadline(b->timeout_s);
    for (int i = 0; i < 3; i++) {
        rc = fm_pmi1_recv(b, deadline, "initack", &line);
        FM_CHECK_QUIET(rc == FM_OK, rc);
        rc = fm_pmi1_parse_set(line, names[i], &vals[i], b->err, sizeof b->err);
        FM_CHECK_QUIET(rc == FM_OK, rc);
    }
    b->size = vals[0];
    b->rank = vals[1];
    return FM_OK;
error:
    return rc;
}

/* The maxima are C buffer sizes on the server side, so they include the NUL. */
static int fm_pmi1_check_maxes(fm_boot *b, const struct fm_pmi1_maxes *m)
{
    char rank_prefix[16];
    int prefix = snprintf(rank_prefix, sizeof rank_prefix, "r%d.", b->size - 1);
    if (prefix + FM_BOOT_KEY_MAX >= m->keylen_max)
        return fm_boot_fail(b, FM_ERR_BOOTSTRAP,
                            "PMI-1: server keylen_max=%d is below the %d fastmsg needs",
                            m->keylen_max, prefix + FM_BOOT_KEY_MAX + 1);
    if (FM_BOOT_VALUE_MAX >= m->vallen_max)
        return fm_boot_fail(b, FM_ERR_BOOTSTRAP,
                            "PMI-1: server vallen_max=%d is below the %d fastmsg needs",
                            m->vallen_max, FM_BOOT_VALUE_MAX + 1);
    return FM_OK;
}

/* init handshake, maxima, kvsname: the part common to both ways in. */
static int fm_pmi1_handshake(fm_boot *b)
{
    struct fm_pmi1 *p = b->priv;
    struct fm_pmi1_maxes m;
    char req[FM_PMI1_LINE_MAX + 1], *line;
    int rc;
    rc = fm_pmi1_call(b, req, fm_pmi1_fmt_init(req, sizeof req), "init", &line);
    FM_CHECK_QUIET(rc == FM_OK, rc);
    rc = fm_pmi1_parse_response_to_init(line, b->err, sizeof b->err);
    FM_CHECK_QUIET(rc == FM_OK, rc);
    rc = fm_pmi1_call(b, req, fm_pmi1_fmt_get_maxes(req, sizeof req), "get_maxes", &line);
    FM_CHECK_QUIET(rc == FM_OK, rc);
    rc = fm_pmi1_parse_maxes(line, &m, b->err, sizeof b->err);
    FM_CHECK_QUIET(rc == FM_OK, rc);
    rc = fm_pmi1_check_maxes(b, &m);
    FM_CHECK_QUIET(rc == FM_OK, rc);
    rc = fm_pmi1_call(b, req, fm_pmi1_fmt_get_my_kvsname(req, sizeof req), "get_my_kvsname", &line);
    FM_CHECK_QUIET(rc == FM_OK, rc);
    rc = fm_pmi1_parse_my_kvsname(line, p->kvsname, sizeof p->kvsname, b->err, sizeof b->err);
    FM_CHECK_QUIET(rc == FM_OK, rc);
    return FM_OK;
error:
    return rc;
}

static void fm_pmi1_close(fm_boot *b)
{
    struct fm_pmi1 *p = b->priv;
    if (!p)
        return;
    if (p->fd >= 0) {
        shutdown(p->fd, SHUT_RDWR);
        close(p->fd);
    }
    free(p);
    b->priv = NULL;
}

static int fm_pmi1_init(fm_boot *b)
{
    struct fm_pmi1 *p = calloc(1, sizeof *p);
    int rc;
    FM_CHECK_QUIET(p, fm_boot_fail(b, FM_ERR_NOMEM, "PMI-1: out of memory"));
    p->fd = -1;
    fm_pmi1_lines_init(&p->in);
    b->priv = p;
    const char *fd = getenv("PMI_FD");
    rc = fd && *fd ? fm_pmi1_open_fd(b) : fm_pmi1_open_port(b);
    FM_CHECK_QUIET(rc == FM_OK, rc);
    FM_CHECK_QUIET(b->size >= 1 && b->rank >= 0 && b->rank < b->size,
                   fm_boot_fail(b, FM_ERR_BOOTSTRAP, "PMI-1: launcher gave rank %d of size %d",
                                b->rank, b->size));
    rc = fm_pmi1_handshake(b);
    FM_CHECK_QUIET(rc == FM_OK, rc);
    return FM_OK;
error:
    fm_pmi1_close(b);
    return rc;
}

/* ---- the key-value store ---- */

/* PMI-1's KVS is one namespace for the whole job: prefix keys with the owner's rank. */
static int fm_pmi1_key(fm_boot *b, int rank, const char *key, char *out, size_t len)
{
    int n = snprintf(out, len, "r%d.%s", rank, key);
    if (n < 0 || (size_t)n >= len)
        return fm_boot_fail(b, FM_ERR_INVALID, "PMI-1: key '%s' is too long", key);
    return FM_OK;
}

static int fm_pmi1_put(fm_boot *b, const char *key, const char *value)
{
    struct fm_pmi1 *p = b->priv;
    char k[FM_BOOT_KEY_MAX + 16], req[FM_PMI1_LINE_MAX + 1], *line;
    int rc;
    rc = fm_pmi1_key(b, b->rank, key, k, sizeof k);
    FM_CHECK_QUIET(rc == FM_OK, rc);
    rc = fm_pmi1_call(b, req, fm_pmi1_fmt_put(req, sizeof req, p->kvsname, k, value), "put", &line);
    FM_CHECK_QUIET(rc == FM_OK, rc);
    rc = fm_pmi1_parse_put_result(line, b->err, sizeof b->err);
    FM_CHECK_QUIET(rc == FM_OK, rc);
    return FM_OK;
error:
    return rc;
}

static int fm_pmi1_fence(fm_boot *b)
{
    char req[FM_PMI1_LINE_MAX + 1], *line;
    int rc;
    rc = fm_pmi1_call(b, req, fm_pmi1_fmt_barrier_in(req, sizeof req), "barrier_in", &line);
    FM_CHECK_QUIET(rc == FM_OK, rc);
    rc = fm_pmi1_parse_barrier_out(line, b->err, sizeof b->err);
    FM_CHECK_QUIET(rc == FM_OK, rc);
    return FM_OK;
error:
    return rc;
}

static int fm_pmi1_get(fm_boot *b, int rank, const char *key, char *value, size_t len)
{
    struct fm_pmi1 *p = b->priv;
    char k[FM_BOOT_KEY_MAX + 16], req[FM_PMI1_LINE_MAX + 1], *line;
    int rc;
    rc = fm_pmi1_key(b, rank, key, k, sizeof k);
    FM_CHECK_QUIET(rc == FM_OK, rc);
    rc = fm_pmi1_call(b, req, fm_pmi1_fmt_get(req, sizeof req, p->kvsname, k), "get", &line);
    FM_CHECK_QUIET(rc == FM_OK, rc);
    rc = fm_pmi1_parse_get_result(line, value, len, b->err, sizeof b->err);
    FM_CHECK_QUIET(rc == FM_OK, rc);
    return FM_OK;
error:
    return rc;
}

/* ---- leaving ---- */

static void fm_pmi1_abort(fm_boot *b, int code, const char *msg)
{
    struct fm_pmi1 *p = b->priv;
    fprintf(stderr, "fastmsg[%d]: abort(%d): %s\n", b->rank, code, msg ? msg : "");
    fflush(stderr);
    if (p && p->fd >= 0) {
        char req[64];
        long long deadline = fm_sock_now_ms() + FM_PMI1_ABORT_WAIT_MS;
        int n = fm_pmi1_fmt_abort(req, sizeof req, code);
        /* The launcher kills the job on abort; give it a moment before leaving alone. */
        if (n > 0 && fm_pmi1_send(b, req, (size_t)n, deadline, "abort") == FM_OK)
            fm_sock_wait(p->fd, POLLIN, deadline);
    }
    _exit(code ? code : 1);
}

static void fm_pmi1_fini(fm_boot *b)
{
    char req[FM_PMI1_LINE_MAX + 1], *line;
    int rc;
    FM_CHECK_QUIET(b->priv, FM_ERR_NOT_INIT);
    rc = fm_pmi1_call(b, req, fm_pmi1_fmt_finalize(req, sizeof req), "finalize", &line);
    FM_CHECK_QUIET(rc == FM_OK, rc);
    rc = fm_pmi1_parse_finalize_ack(line, b->err, sizeof b->err);
    FM_CHECK_QUIET(rc == FM_OK, rc);
error:
    fm_pmi1_close(b);
}

const struct fm_boot_ops fm_boot_pmi1_ops = {
    .name = "pmi1",
    .init = fm_pmi1_init,
    .put = fm_pmi1_put,
    .fence = fm_pmi1_fence,
    .get = fm_pmi1_get,
    .abort = fm_pmi1_abort,
    .fini = fm_pmi1_fini,
};
