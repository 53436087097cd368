/* SPDX-License-Identifier: BSD-3-Clause */
/* The back ends' one shared helper. */
#include <stdarg.h>
#include <stdio.h>

#include "boot_backend.h"

int fm_boot_fail(fm_boot *b, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->err, sizeof b->err, fmt, ap);
    va_end(ap);
    return code;
}
