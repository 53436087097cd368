/* SPDX-License-Identifier: BSD-3-Clause */
/* Socket plumbing shared by the bootstrap back ends that talk to a launcher over a stream:
 * monotonic deadlines, bounded waits, bounded connects and writes. Protocol-free. */
#ifndef FM_BOOT_SOCKET_H
#define FM_BOOT_SOCKET_H

#include <netdb.h>
#include <stddef.h>

/* Milliseconds on the monotonic clock. */
long long fm_sock_now_ms(void);

/* The deadline timeout_s seconds from now (60 s when timeout_s <= 0). */
long long fm_sock_deadline(int timeout_s);

/* Wait for events on fd until deadline: 1 ready, 0 timed out, -1 poll error. */
int fm_sock_wait(int fd, short events, long long deadline);

/* Write all n bytes by the deadline (send with MSG_NOSIGNAL; write if fd is no socket):
 * 1 all written, 0 timed out, -1 error with errno set. */
int fm_sock_write_all(int fd, const char *buf, size_t n, long long deadline);

/* Split "host:port" and resolve it for a stream socket with hints.ai_flags = flags: 0 with *res
 * (free with freeaddrinfo), or -1 with *gai 0 if it is not host:port, else the getaddrinfo code. */
int fm_sock_resolve(const char *hostport, int flags, struct addrinfo **res, int *gai);

/* Connect one address with a bounded wait; returns the fd or -1 with errno set. */
int fm_sock_connect_addr(const struct addrinfo *ai, long long deadline);

/* Try every address until one connects or the deadline passes; -1 with *err on failure. */
int fm_sock_connect_any(const struct addrinfo *res, long long deadline, int *err);

#endif
