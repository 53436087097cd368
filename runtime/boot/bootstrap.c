/* SPDX-License-Identifier: BSD-3-Clause */
/* The generic bootstrap layer: picks a back end from the environment, and turns binary values
 * of any length into the short printable chunks every back end can carry. */
#include "bootstrap.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "fastmsg.h"
#include "fm_build_config.h"
#include "log.h"

/* Raw bytes per chunk: hex doubles them, and the first chunk also carries "<len>/". */
#define FM_BOOT_CHUNK_RAW ((FM_BOOT_VALUE_MAX - 24) / 2)

static int env_set(const char *name)
{
    const char *v = getenv(name);
    return v && *v;
}

const struct fm_boot_ops *fm_boot_detect(void)
{
#if FM_HAVE_MPI
    return &fm_boot_mpi_ops; /* a program built with MPI is started as an MPI job */
#endif
#if FM_HAVE_PMIX
    if (env_set("PMIX_RANK") && env_set("PMIX_NAMESPACE"))
        return &fm_boot_pmix_ops;
#endif
    if (env_set("PMI_FD") || (env_set("PMI_PORT") && env_set("PMI_ID")))
        return &fm_boot_pmi1_ops;
    if (env_set("FASTMSG_RUN_ADDR"))
        return &fm_boot_run_ops;
    return &fm_boot_singleton_ops;
}

static const struct fm_boot_ops *boot_by_name(const char *which)
{
    const struct fm_boot_ops *all[] = {
#if FM_HAVE_PMIX
        &fm_boot_pmix_ops,
#endif
        &fm_boot_pmi1_ops,
        &fm_boot_run_ops,
        &fm_boot_singleton_ops,
#if FM_HAVE_MPI
        &fm_boot_mpi_ops,
#endif
    };
    if (!strcmp(which, "auto"))
        return fm_boot_detect();
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (!strcmp(all[i]->name, which))
            return all[i];
    return NULL;
}

/* Back ends that are handed no key: rank 0 draws one and publishes it. */
static int agree_job_key(fm_boot *b)
{
    uint64_t key = 0;
    int rc;
    if (b->rank == 0) {
        while (key == 0)
            if (getrandom(&key, sizeof key, 0) != sizeof key)
                return fm_boot_fail(b, FM_ERR_BOOTSTRAP, "getrandom failed for the job key");
        if ((rc = fm_boot_put(b, "fm.jobkey", &key, sizeof key)))
            return rc;
    }
    if ((rc = fm_boot_fence(b)))
        return rc;
    size_t len = sizeof key;
    if ((rc = fm_boot_get(b, 0, "fm.jobkey", &key, &len)))
        return rc;
    if (len != sizeof key || key == 0)
        return fm_boot_fail(b, FM_ERR_BOOTSTRAP, "rank 0 published a malformed job key");
    b->job_key = key;
    return FM_OK;
}

int fm_boot_init(fm_boot *b, const char *which, int timeout_s)
{
    memset(b, 0, sizeof *b);
    b->timeout_s = timeout_s;
    b->ops = boot_by_name(which ? which : "auto");
    if (!b->ops)
        return fm_boot_fail(
            b, FM_ERR_CONFIG, "unknown back end '%s' (known: auto, pmix, pmi1, run, singleton%s%s)",
            which, FM_HAVE_MPI ? ", mpi" : "", FM_HAVE_PMIX ? "" : "; pmix not built in");
    int rc = b->ops->init(b);
    if (rc) {
        b->ops = NULL;
        return rc;
    }
    if (b->size < 1 || b->rank < 0 || b->rank >= b->size) {
        rc = fm_boot_fail(b, FM_ERR_BOOTSTRAP, "%s bootstrap reported rank %d of size %d",
                          b->ops->name, b->rank, b->size);
        fm_boot_fini(b);
        return rc;
    }
    if (b->job_key == 0 && (rc = agree_job_key(b)))
        fm_boot_fini(b);
    return rc;
}

/* [A-Za-z0-9_.-], with room for a chunk suffix and a back end's rank prefix. A loop, not
 * strspn: every get checks its key, a million times in a 1024-rank fm_init. */
static int key_ok(const char *key)
{
    size_t n = 0;
    for (; key[n]; n++) {
        char c = key[n];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return 0;
    }
    return n > 0 && n + 16 <= FM_BOOT_KEY_MAX;
}

static void hex_encode(const unsigned char *src, size_t n, char *dst)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        dst[2 * i] = digits[src[i] >> 4];
        dst[2 * i + 1] = digits[src[i] & 15];
    }
    dst[2 * n] = '\0';
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

static int hex_decode(const char *src, unsigned char *dst, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int hi = hex_digit(src[2 * i]), lo = hi < 0 ? -1 : hex_digit(src[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        dst[i] = (unsigned char)(hi << 4 | lo);
    }
    return src[2 * n] == '\0' ? 0 : -1;
}

/* Chunk c of key: "key" for the first, "key.c" after (keys are [A-Za-z0-9_.-]). */
static void chunk_key(char *out, size_t len, const char *key, size_t c)
{
    if (c == 0)
        snprintf(out, len, "%s", key);
    else
        snprintf(out, len, "%s.%zu", key, c);
}

int fm_boot_put(fm_boot *b, const char *key, const void *val, size_t len)
{
    if (!b || !b->ops)
        return FM_ERR_NOT_INIT;
    if (!key || !key_ok(key) || (!val && len))
        return fm_boot_fail(b, FM_ERR_INVALID, "bootstrap put: bad key or value");
    if (len > FM_BOOT_BIN_MAX)
        return fm_boot_fail(b, FM_ERR_TOO_LONG, "bootstrap put: %zu bytes exceeds 64 KiB", len);
    if (b->ops->put_bin)
        return b->ops->put_bin(b, key, val, len);
    const unsigned char *p = val;
    size_t done = 0, c = 0;
    do {
        size_t n = len - done < FM_BOOT_CHUNK_RAW ? len - done : FM_BOOT_CHUNK_RAW;
        char text[FM_BOOT_VALUE_MAX + 1], k[FM_BOOT_KEY_MAX + 1];
        int off = c == 0 ? snprintf(text, sizeof text, "%zu/", len) : 0;
        hex_encode(p + done, n, text + off);
        chunk_key(k, sizeof k, key, c);
        int rc = b->ops->put(b, k, text);
        if (rc)
            return rc;
        done += n;
        c++;
    } while (done < len);
    return FM_OK;
}

int fm_boot_fence(fm_boot *b)
{
    if (!b || !b->ops)
        return FM_ERR_NOT_INIT;
    return b->ops->fence(b);
}

int fm_boot_get(fm_boot *b, int rank, const char *key, void *val, size_t *len)
{
    if (!b || !b->ops)
        return FM_ERR_NOT_INIT;
    if (!key || !key_ok(key) || !len || (!val && *len) || rank < 0 || rank >= b->size)
        return fm_boot_fail(b, FM_ERR_INVALID, "bootstrap get: bad rank, key or buffer");
    if (b->ops->get_bin)
        return b->ops->get_bin(b, rank, key, val, len);
    char text[FM_BOOT_VALUE_MAX + 1], k[FM_BOOT_KEY_MAX + 1];
    int rc = b->ops->get(b, rank, key, text, sizeof text);
    if (rc)
        return rc;
    char *slash;
    size_t total = strtoul(text, &slash, 10);
    if (*slash != '/')
        return fm_boot_fail(b, FM_ERR_BOOTSTRAP, "bootstrap: malformed value for %s of rank %d",
                            key, rank);
    if (total > *len)
        return fm_boot_fail(b, FM_ERR_TOO_LONG,
                            "bootstrap: %s of rank %d is %zu bytes, buffer holds %zu", key, rank,
                            total, *len);
    unsigned char *p = val;
    const char *hex = slash + 1;
    size_t done = 0, c = 0;
    do {
        size_t n = total - done < FM_BOOT_CHUNK_RAW ? total - done : FM_BOOT_CHUNK_RAW;
        if (c > 0) {
            chunk_key(k, sizeof k, key, c);
            if ((rc = b->ops->get(b, rank, k, text, sizeof text)))
                return rc;
            hex = text;
        }
        if (hex_decode(hex, p + done, n))
            return fm_boot_fail(b, FM_ERR_BOOTSTRAP,
                                "bootstrap: corrupt chunk %zu of %s from rank %d", c, key, rank);
        done += n;
        c++;
    } while (done < total);
    *len = total;
    return FM_OK;
}

int fm_boot_host(fm_boot *b, char *buf, size_t len)
{
    return b && b->ops && b->ops->host && buf && len && b->ops->host(b, buf, len) == FM_OK;
}

void fm_boot_abort(fm_boot *b, int code, const char *msg)
{
    if (b && b->ops)
        b->ops->abort(b, code, msg);
    fprintf(stderr, "fastmsg: abort(%d): %s\n", code, msg ? msg : "");
    _Exit(code ? code : 1);
}

void fm_boot_fini(fm_boot *b)
{
    if (b && b->ops) {
        b->ops->fini(b);
        b->ops = NULL;
    }
}
