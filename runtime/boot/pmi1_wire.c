/* SPDX-License-Identifier: BSD-3-Clause */
/* PMI-1 requests and replies as text. Servers differ in detail: hydra omits rc= from maxes,
 * my_kvsname, barrier_out and finalize_ack and adds msg=, Slurm sends rc= everywhere. So rc= is
 * required only where every server sends it, and checked wherever it appears. */
#include "fail.h"
#include "pmi1_wire.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fastmsg.h"
#include "kvline.h"

/* ---- requests ---- */

__attribute__((format(printf, 3, 4))) static int fmt_line(char *buf, size_t len, const char *fmt,
                                                          ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= len || n > FM_PMI1_LINE_MAX)
        return FM_ERR_TOO_LONG;
    return n;
}

/* The protocol splits on spaces and the first '=', and has no escapes. */
static int token_ok(const char *s)
{
    if (!s || !*s)
        return 0;
    for (; *s; s++)
        if (*s <= ' ' || *s > '~' || *s == '=')
            return 0;
    return 1;
}

int fm_pmi1_fmt_init(char *buf, size_t len)
{
    return fmt_line(buf, len, "cmd=init pmi_version=1 pmi_subversion=1\n");
}

int fm_pmi1_fmt_get_maxes(char *buf, size_t len)
{
    return fmt_line(buf, len, "cmd=get_maxes\n");
}

int fm_pmi1_fmt_get_my_kvsname(char *buf, size_t len)
{
    return fmt_line(buf, len, "cmd=get_my_kvsname\n");
}

int fm_pmi1_fmt_put(char *buf, size_t len, const char *kvsname, const char *key, const char *value)
{
    if (!token_ok(kvsname) || !token_ok(key) || !token_ok(value))
        return FM_ERR_INVALID;
    return fmt_line(buf, len, "cmd=put kvsname=%s key=%s value=%s\n", kvsname, key, value);
}

int fm_pmi1_fmt_get(char *buf, size_t len, const char *kvsname, const char *key)
{
    if (!token_ok(kvsname) || !token_ok(key))
        return FM_ERR_INVALID;
    return fmt_line(buf, len, "cmd=get kvsname=%s key=%s\n", kvsname, key);
}

int fm_pmi1_fmt_barrier_in(char *buf, size_t len)
{
    return fmt_line(buf, len, "cmd=barrier_in\n");
}

int fm_pmi1_fmt_abort(char *buf, size_t len, int exitcode)
{
    return fmt_line(buf, len, "cmd=abort exitcode=%d\n", exitcode);
}

int fm_pmi1_fmt_finalize(char *buf, size_t len)
{
    return fmt_line(buf, len, "cmd=finalize\n");
}

int fm_pmi1_fmt_initack(char *buf, size_t len, int pmiid)
{
    if (pmiid < 0)
        return FM_ERR_INVALID;
    return fmt_line(buf, len, "cmd=initack pmiid=%d\n", pmiid);
}

/* ---- replies ---- */

/* Whole string as an int in [min, max]. */
static int parse_int(const char *s, long min, long max, int *out)
{
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return -1;
    *out = (int)v;
    return 0;
}

/* Split line into kv and check cmd= and rc=. rc= must be present if rc_required. */
static int expect(char *line, fm_kvline *kv, const char *cmd, int rc_required, char *err,
                  size_t errlen)
{
    char shown[96];
    snprintf(shown, sizeof shown, "%.80s%s", line, strlen(line) > 80 ? "..." : "");
    if (fm_kvline_parse(line, kv))
        return fm_fail(err, errlen, FM_ERR_BOOTSTRAP, "PMI-1: malformed reply '%s' (expected %s)",
                       shown, cmd);
    const char *got = fm_kvline_get(kv, "cmd");
    if (!got)
        return fm_fail(err, errlen, FM_ERR_BOOTSTRAP, "PMI-1: reply '%s' has no cmd= (expected %s)",
                       shown, cmd);
    if (strcmp(got, cmd))
        return fm_fail(err, errlen, FM_ERR_BOOTSTRAP, "PMI-1: expected cmd=%s, got cmd=%s", cmd,
                       got);
    const char *rc = fm_kvline_get(kv, "rc");
    if (!rc && rc_required)
        return fm_fail(err, errlen, FM_ERR_BOOTSTRAP, "PMI-1: %s reply has no rc= ('%s')", cmd,
                       shown);
    int v;
    if (rc && parse_int(rc, INT_MIN, INT_MAX, &v))
        return fm_fail(err, errlen, FM_ERR_BOOTSTRAP, "PMI-1: %s reply has malformed rc=%s", cmd,
                       rc);
    if (rc && v != 0) {
        const char *msg = fm_kvline_get(kv, "msg");
        return fm_fail(err, errlen, FM_ERR_BOOTSTRAP, "PMI-1: %s failed: rc=%d%s%s", cmd, v,
                       msg ? " msg=" : "", msg ? msg : "");
    }
    return FM_OK;
}

/* A required field, non-empty. */
static const char *field(const fm_kvline *kv, const char *cmd, const char *name, char *err,
                         size_t errlen)
{
    const char *v = fm_kvline_get(kv, name);
    if (!v || !*v)
        fm_fail(err, errlen, FM_ERR_BOOTSTRAP, "PMI-1: %s reply has no %s=", cmd, name);
    return v && *v ? v : NULL;
}

static int copy_out(const char *v, char *dst, size_t len, const char *what, char *err,
                    size_t errlen)
{
    size_t n = strlen(v);
    if (n >= len)
        return fm_fail(err, errlen, FM_ERR_TOO_LONG, "PMI-1: %s of %zu chars exceeds %zu", what, n,
                       len ? len - 1 : 0);
    memcpy(dst, v, n + 1);
    return FM_OK;
}

int fm_pmi1_parse_response_to_init(char *line, char *err, size_t errlen)
{
    fm_kvline kv;
    int rc = expect(line, &kv, "response_to_init", 1, err, errlen);
    if (rc)
        return rc;
    const char *ver = fm_kvline_get(&kv, "pmi_version");
    if (ver && strcmp(ver, "1"))
        return fm_fail(err, errlen, FM_ERR_BOOTSTRAP, "PMI-1: server speaks pmi_version=%s, not 1",
                       ver);
    return FM_OK;
}

int fm_pmi1_parse_maxes(char *line, struct fm_pmi1_maxes *m, char *err, size_t errlen)
{
    fm_kvline kv;
    int rc = expect(line, &kv, "maxes", 0, err, errlen);
    if (rc)
        return rc;
    const char *names[3] = {"kvsname_max", "keylen_max", "vallen_max"};
    int *dst[3] = {&m->kvsname_max, &m->keylen_max, &m->vallen_max};
    for (int i = 0; i < 3; i++) {
        const char *v = field(&kv, "maxes", names[i], err, errlen);
        if (!v)
            return FM_ERR_BOOTSTRAP;
        if (parse_int(v, 1, INT_MAX, dst[i]))
            return fm_fail(err, errlen, FM_ERR_BOOTSTRAP, "PMI-1: maxes reply has bad %s=%s",
                           names[i], v);
    }
    return FM_OK;
}

int fm_pmi1_parse_my_kvsname(char *line, char *kvsname, size_t len, char *err, size_t errlen)
{
    fm_kvline kv;
    int rc = expect(line, &kv, "my_kvsname", 0, err, errlen);
    if (rc)
        return rc;
    const char *v = field(&kv, "my_kvsname", "kvsname", err, errlen);
    if (!v)
        return FM_ERR_BOOTSTRAP;
    return copy_out(v, kvsname, len, "kvsname", err, errlen);
}

int fm_pmi1_parse_put_result(char *line, char *err, size_t errlen)
{
    fm_kvline kv;
    return expect(line, &kv, "put_result", 1, err, errlen);
}

int fm_pmi1_parse_get_result(char *line, char *value, size_t len, char *err, size_t errlen)
{
    fm_kvline kv;
    int rc = expect(line, &kv, "get_result", 1, err, errlen);
    if (rc)
        return rc;
    const char *v = field(&kv, "get_result", "value", err, errlen);
    if (!v)
        return FM_ERR_BOOTSTRAP;
    return copy_out(v, value, len, "value", err, errlen);
}

int fm_pmi1_parse_barrier_out(char *line, char *err, size_t errlen)
{
    fm_kvline kv;
    return expect(line, &kv, "barrier_out", 0, err, errlen);
}

int fm_pmi1_parse_finalize_ack(char *line, char *err, size_t errlen)
{
    fm_kvline kv;
    return expect(line, &kv, "finalize_ack", 0, err, errlen);
}

int fm_pmi1_parse_initack(char *line, char *err, size_t errlen)
{
    fm_kvline kv;
    return expect(line, &kv, "initack", 0, err, errlen);
}

int fm_pmi1_parse_set(char *line, const char *name, int *value, char *err, size_t errlen)
{
    fm_kvline kv;
    int rc = expect(line, &kv, "set", 0, err, errlen);
    if (rc)
        return rc;
    const char *v = fm_kvline_get(&kv, name);
    if (!v)
        return fm_fail(err, errlen, FM_ERR_BOOTSTRAP,
                       "PMI-1: expected cmd=set %s=, got another key", name);
    if (parse_int(v, 0, INT_MAX, value))
        return fm_fail(err, errlen, FM_ERR_BOOTSTRAP, "PMI-1: bad cmd=set %s=%s", name, v);
    return FM_OK;
}

/* ---- line assembler ---- */

void fm_pmi1_lines_init(fm_pmi1_lines *a)
{
    a->len = 0;
    a->taken = 0;
    a->error = 0;
}

/* Forget the line handed out last. */
static void drop_taken(fm_pmi1_lines *a)
{
    if (!a->taken)
        return;
    memmove(a->buf, a->buf + a->taken, a->len - a->taken);
    a->len -= a->taken;
    a->taken = 0;
}

size_t fm_pmi1_lines_space(const fm_pmi1_lines *a)
{
    return FM_PMI1_LINE_MAX - (a->len - a->taken);
}

size_t fm_pmi1_lines_feed(fm_pmi1_lines *a, const char *data, size_t n)
{
    drop_taken(a);
    size_t room = FM_PMI1_LINE_MAX - a->len;
    if (n > room)
        n = room;
    memcpy(a->buf + a->len, data, n);
    a->len += n;
    return n;
}

int fm_pmi1_lines_next(fm_pmi1_lines *a, char **line)
{
    if (a->error)
        return a->error;
    drop_taken(a);
    char *nl = memchr(a->buf, '\n', a->len);
    if (!nl) {
        /* A full buffer without '\n' can only become a line over the limit. */
        if (a->len >= FM_PMI1_LINE_MAX)
            a->error = FM_ERR_TOO_LONG;
        return a->error;
    }
    size_t n = (size_t)(nl - a->buf);
    if (memchr(a->buf, '\0', n))
        return a->error = FM_ERR_BOOTSTRAP;
    *nl = '\0';
    *line = a->buf;
    a->taken = n + 1;
    return 1;
}
