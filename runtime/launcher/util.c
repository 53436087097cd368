/* SPDX-License-Identifier: BSD-3-Clause */
/* Small helpers of fastmsg-run: messages, whole writes, growing buffers. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run.h"

static void fm_run_vsay(const char *fmt, va_list ap)
{
    char line[1024];
    int n = snprintf(line, sizeof line, "fastmsg-run: ");
    vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    size_t len = strlen(line);
    line[len++] = '\n';
    fm_run_write_all(2, line, len);
}

void fm_run_say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fm_run_vsay(fmt, ap);
    va_end(ap);
}

int fm_run_fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fm_run_vsay(fmt, ap);
    va_end(ap);
    return code;
}

/* Write all of data; waits in poll() if fd is non-blocking. -1 on a real error. */
int fm_run_write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EAGAIN) {
            struct pollfd p = {.fd = fd, .events = POLLOUT};
            poll(&p, 1, 1000);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

int fm_run_buf_append(struct fm_run_buf *b, const char *data, size_t len)
{
    if (!len)
        return 0;
    if (b->len + len > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + len)
            cap *= 2;
        char *p = realloc(b->data, cap);
        if (!p)
            return -1;
        b->data = p;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
    return 0;
}
