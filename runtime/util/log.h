/* SPDX-License-Identifier: BSD-3-Clause */
/* Diagnostics on stderr and the one error-check macro every function uses. */
#ifndef FM_LOG_H
#define FM_LOG_H

#include <stdarg.h>

/* Set by fm_init: FM_VERBOSE and this process's rank (-1 before the bootstrap knows it). */
extern int fm_log_level;
extern int fm_log_rank;

/* Print "fastmsg[rank]: message\n" on stderr when level <= FM_VERBOSE (0 = always). */
void fm_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* FM_CHECK(cond, status, fmt, ...): if cond is false, log the message, set rc = status and
 * jump to the function's single `error:` label. The function declares `int rc`. */
#define FM_CHECK(cond, status, ...)                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            rc = (status);                                                                         \
            fm_log(0, __VA_ARGS__);                                                                \
            goto error;                                                                            \
        }                                                                                          \
    } while (0)

/* Same, but silent: for expected failures that the caller reports. */
#define FM_CHECK_QUIET(cond, status)                                                               \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            rc = (status);                                                                         \
            goto error;                                                                            \
        }                                                                                          \
    } while (0)

#endif
