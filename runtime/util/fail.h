/* SPDX-License-Identifier: BSD-3-Clause */
/* The one way the pure parsers (PMI-1 replies, FM_TOPOLOGY, tree specs) report an error: a
 * one-line reason into the caller's buffer, and the code returned. */
#ifndef FM_UTIL_FAIL_H
#define FM_UTIL_FAIL_H

#include <stddef.h>

/* printf-formats the reason into err (when err and errlen) and returns code. */
int fm_fail(char *err, size_t errlen, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
