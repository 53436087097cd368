/* SPDX-License-Identifier: BSD-3-Clause */
/* Socket plumbing shared by the bootstrap back ends; see boot_socket.h. */
#include "boot_socket.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

long long fm_sock_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

long long fm_sock_deadline(int timeout_s)
{
    return fm_sock_now_ms() + 1000LL * (timeout_s > 0 ? timeout_s : 60);
}

int fm_sock_wait(int fd, short events, long long deadline)
{
    for (;;) {
        long long left = deadline - fm_sock_now_ms();
        if (left <= 0)
            return 0;
        struct pollfd pfd = {.fd = fd, .events = events};
        int n = poll(&pfd, 1, left > INT_MAX ? INT_MAX : (int)left);
        if (n > 0)
            return 1;
        if (n < 0 && errno != EINTR)
            return -1;
    }
}

int fm_sock_write_all(int fd, const char *buf, size_t n, long long deadline)
{
    while (n > 0) {
        int w = fm_sock_wait(fd, POLLOUT, deadline);
        if (w == 0)
            return 0;
        /* MSG_NOSIGNAL: a dead peer must give an error, not SIGPIPE. */
        ssize_t s = w < 0 ? -1 : send(fd, buf, n, MSG_NOSIGNAL);
        if (s < 0 && errno == ENOTSOCK)
            s = write(fd, buf, n);
        if (s < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (s < 0)
            return -1;
        buf += s;
        n -= (size_t)s;
    }
    return 1;
}

int fm_sock_resolve(const char *hostport, int flags, struct addrinfo **res, int *gai)
{
    char host[256];
    const char *colon = hostport ? strrchr(hostport, ':') : NULL;
    *gai = 0;
    if (!colon || colon == hostport || !colon[1] || (size_t)(colon - hostport) >= sizeof host)
        return -1;
    memcpy(host, hostport, (size_t)(colon - hostport));
    host[colon - hostport] = '\0';
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = flags};
    *gai = getaddrinfo(host, colon + 1, &hints, res);
    return *gai ? -1 : 0;
}

int fm_sock_connect_addr(const struct addrinfo *ai, long long deadline)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0)
        return -1;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
        return fd;
    int err = errno;
    if (err == EINPROGRESS) {
        int w = fm_sock_wait(fd, POLLOUT, deadline);
        socklen_t len = sizeof err;
        if (w == 0)
            err = ETIMEDOUT;
        else if (w < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
            err = errno;
        if (err == 0)
            return fd;
    }
    close(fd);
    errno = err;
    return -1;
}

int fm_sock_connect_any(const struct addrinfo *res, long long deadline, int *err)
{
    for (const struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        int fd = fm_sock_connect_addr(ai, deadline);
        if (fd >= 0)
            return fd;
        /* A wait cut short by the deadline says less than a refusal seen before it. */
        if (errno != ETIMEDOUT || *err == 0)
            *err = errno;
    }
    return -1;
}
