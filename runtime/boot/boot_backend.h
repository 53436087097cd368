/* SPDX-License-Identifier: BSD-3-Clause */
/* What a bootstrap back end implements (its ops) and the state it works on; bootstrap.h is
 * the generic layer above the back ends. */
#ifndef FM_BOOT_BACKEND_H
#define FM_BOOT_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#define FM_BOOT_VALUE_MAX 400         /* characters of one back-end value, without the NUL */
#define FM_BOOT_KEY_MAX   48          /* characters of one back-end key, without the NUL */
#define FM_BOOT_BIN_MAX   (64 * 1024) /* bytes of one value, the most fm_boot_put takes */

typedef struct fm_boot fm_boot;

struct fm_boot_ops {
    const char *name;
    /* Join the job: set b->rank and b->size; may set b->job_key (non-zero) if the launcher
     * hands one out. Errors are reported into b->err. */
    int (*init)(fm_boot *b);
    /* A back end implements put and get (printable strings, which the generic layer makes
     * of binary values by hex-encoding and chunking them), or put_bin and get_bin (bytes as
     * they are, each value whole). */
    /* Publish key=value for this rank. key: [A-Za-z0-9_.-], at most FM_BOOT_KEY_MAX chars;
     * value: printable, no spaces, at most FM_BOOT_VALUE_MAX chars. */
    int (*put)(fm_boot *b, const char *key, const char *value);
    /* Collective: every put before any rank's fence is visible to every get after it. */
    int (*fence)(fm_boot *b);
    /* Read what rank published under key (after a fence) into value (len bytes, NUL-ended). */
    int (*get)(fm_boot *b, int rank, const char *key, char *value, size_t len);
    /* Publish len bytes (at most FM_BOOT_BIN_MAX) under key. */
    int (*put_bin)(fm_boot *b, const char *key, const void *val, size_t len);
    /* Read rank's value of key into val (capacity *len); *len becomes its length.
     * FM_ERR_TOO_LONG if it does not fit. */
    int (*get_bin)(fm_boot *b, int rank, const char *key, void *val, size_t *len);
    /* Optional (NULL: not known better): the name of the host this rank runs on, where the
     * back end knows it better than the host's own name (a simulated host). */
    int (*host)(fm_boot *b, char *buf, size_t len);
    /* End the whole job. Must not return. */
    void (*abort)(fm_boot *b, int code, const char *msg);
    void (*fini)(fm_boot *b);
};

struct fm_boot {
    const struct fm_boot_ops *ops;
    int rank, size;
    uint64_t job_key;
    int timeout_s; /* bound for every blocking wait (FM_TIMEOUT) */
    void *priv;    /* the back end's state */
    char err[256]; /* last error, one line */
};

/* Set b->err (printf-style) and return code; for back ends. */
int fm_boot_fail(fm_boot *b, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
