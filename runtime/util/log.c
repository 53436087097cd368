/* SPDX-License-Identifier: BSD-3-Clause */
#include "log.h"

#include <stdio.h>

int fm_log_level = 0;
int fm_log_rank = -1;

void fm_log(int level, const char *fmt, ...)
{
    if (level > fm_log_level)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (fm_log_rank >= 0)
        fprintf(stderr, "fastmsg[%d]: %s\n", fm_log_rank, line);
    else
        fprintf(stderr, "fastmsg: %s\n", line);
}
