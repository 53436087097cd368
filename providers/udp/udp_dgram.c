/* SPDX-License-Identifier: BSD-3-Clause */
/* Datagram multicast over a plain UDP socket (transport.h, "Datagram multicast"): the group is
 * joined on one interface, every endpoint of a host binds the group's address and port with
 * SO_REUSEADDR (so each rank of the host gets its own copy of each datagram), and sends loop
 * back to this host's other endpoints. Why a socket and not libfabric's udp provider: README.md. */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fastmsg.h"
#include "transport.h"

typedef struct udp_dgram {
    fm_tp_dgram base;
    int fd;
    int index;     /* the interface's, 0 for the kernel's route */
    uint16_t port; /* network byte order */
} udp_dgram;

static struct sockaddr_in udp_addr(uint32_t group, uint16_t port)
{
    return (struct sockaddr_in){
        .sin_family = AF_INET, .sin_port = port, .sin_addr.s_addr = htonl(group)};
}

static int udp_member(fm_tp_dgram *d, uint32_t group, int opt)
{
    udp_dgram *u = (udp_dgram *)d;
    if ((group >> 28) != 0xe)
        return FM_ERR_INVALID;
    struct ip_mreqn m = {.imr_multiaddr.s_addr = htonl(group), .imr_ifindex = u->index};
    return setsockopt(u->fd, IPPROTO_IP, opt, &m, sizeof m) < 0 ? FM_ERR_PROVIDER : FM_OK;
}

static int udp_join(fm_tp_dgram *d, uint32_t group)
{
    return udp_member(d, group, IP_ADD_MEMBERSHIP);
}

static int udp_leave(fm_tp_dgram *d, uint32_t group)
{
    return udp_member(d, group, IP_DROP_MEMBERSHIP);
}

static int udp_send(fm_tp_dgram *d, uint32_t group, const void *buf, size_t len)
{
    udp_dgram *u = (udp_dgram *)d;
    if (len > FM_TP_DGRAM_MAX)
        return FM_ERR_TOO_LONG;
    if ((group >> 28) != 0xe)
        return FM_ERR_INVALID;
    struct sockaddr_in to = udp_addr(group, u->port);
    ssize_t n = sendto(u->fd, buf, len, 0, (const struct sockaddr *)&to, sizeof to);
    if (n == (ssize_t)len)
        return FM_OK;
    /* A full send buffer (or queue: ENOBUFS) passes; the caller tries again later. */
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS || errno == EINTR))
        return FM_EAGAIN;
    return FM_ERR_PROVIDER;
}

static int udp_recv(fm_tp_dgram *d, void *buf, size_t cap, size_t *len)
{
    udp_dgram *u = (udp_dgram *)d;
    for (;;) {
        ssize_t n = recv(u->fd, buf, cap, MSG_TRUNC);
        if (n >= 0) {
            *len = (size_t)n;
            return FM_OK;
        }
        if (errno == EINTR)
            continue;
        /* ECONNREFUSED and the like report an earlier send's ICMP error: not this receive's. */
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNREFUSED ||
            errno == EHOSTUNREACH || errno == ENETUNREACH)
            return FM_EAGAIN;
        return FM_ERR_PROVIDER;
    }
}

static int udp_fd(const fm_tp_dgram *d)
{
    return ((const udp_dgram *)d)->fd;
}

static void udp_close(fm_tp_dgram *d)
{
    udp_dgram *u = (udp_dgram *)d;
    if (!u)
        return;
    if (u->fd >= 0)
        close(u->fd);
    free(u);
}

static const struct fm_tp_dgram_ops udp_ops = {.join = udp_join,
                                               .leave = udp_leave,
                                               .send = udp_send,
                                               .recv = udp_recv,
                                               .fd = udp_fd,
                                               .close = udp_close};

#define UDP_FAIL(...)                                                                              \
    do {                                                                                           \
        snprintf(err, errlen, __VA_ARGS__);                                                        \
        goto error;                                                                                \
    } while (0)

/* The interface's index, checked up and multicast-capable; 0 for the kernel's route. */
static int udp_iface(int fd, const char *iface, int *index, char *err, size_t errlen)
{
    *index = 0;
    if (!iface || !*iface)
        return FM_OK;
    struct ifreq ifr = {0};
    if (strlen(iface) >= sizeof ifr.ifr_name)
        UDP_FAIL("interface name \"%.40s\" is too long", iface);
    strcpy(ifr.ifr_name, iface);
    if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
        UDP_FAIL("no interface \"%s\" (%s)", iface, strerror(errno));
    if (!(ifr.ifr_flags & IFF_UP))
        UDP_FAIL("interface %s is down", iface);
    if (!(ifr.ifr_flags & IFF_MULTICAST))
        UDP_FAIL("interface %s has no multicast", iface);
    *index = (int)if_nametoindex(iface);
    if (!*index)
        UDP_FAIL("no index for interface %s (%s)", iface, strerror(errno));
    return FM_OK;
error:
    return FM_ERR_PROVIDER;
}

/* Whether the kernel has a route for multicast (through the interface when one is named):
 * connecting a UDP socket looks the route up and sends nothing. */
static int udp_route(int index, char *err, size_t errlen)
{
    struct sockaddr_in to = udp_addr(0xefff0001u, htons(9)); /* 239.255.0.1, any port */
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct ip_mreqn via = {.imr_ifindex = index};
    int ok = fd >= 0 &&
             (!index || !setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &via, sizeof via)) &&
             !connect(fd, (const struct sockaddr *)&to, sizeof to);
    int e = errno;
    if (fd >= 0)
        close(fd);
    if (!ok) {
        snprintf(err, errlen, "no route for multicast (%s)", strerror(e));
        return FM_ERR_PROVIDER;
    }
    return FM_OK;
}

/* As large a buffer as asked: SO_*BUFFORCE passes net.core.[rw]mem_max where the process may
 * (root), the ordinary option up to that limit otherwise. */
static void udp_buffer(int fd, int force, int plain, size_t bytes)
{
    int v = bytes > (size_t)(1 << 30) ? 1 << 30 : (int)bytes;
    if (v && setsockopt(fd, SOL_SOCKET, force, &v, sizeof v) < 0)
        (void)setsockopt(fd, SOL_SOCKET, plain, &v, sizeof v);
}

int fm_tp_dgram_open(const fm_tp_dgram_config *cfg, fm_tp_dgram **d, char *err, size_t errlen)
{
    if (!cfg || !d || !cfg->port) {
        snprintf(err, errlen, "no port");
        return FM_ERR_INVALID;
    }
    *d = NULL;
    int rc = FM_ERR_PROVIDER, one = 1, zero = 0, ttl = 1;
    udp_dgram *u = calloc(1, sizeof *u);
    if (!u) {
        snprintf(err, errlen, "out of memory");
        return FM_ERR_NOMEM;
    }
    u->base.ops = &udp_ops;
    u->port = htons(cfg->port);
    u->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (u->fd < 0)
        UDP_FAIL("socket: %s", strerror(errno));
    if ((rc = udp_iface(u->fd, cfg->iface, &u->index, err, errlen)) ||
        (rc = udp_route(u->index, err, errlen)))
        goto error;
    rc = FM_ERR_PROVIDER;
    /* Every endpoint of the host on the port (SO_REUSEADDR): each gets its own copy of a
     * group's datagrams when it joined the group, and none of a group it did not join
     * (IP_MULTICAST_ALL off), so other jobs' groups on the same port stay out. */
    struct sockaddr_in any = udp_addr(INADDR_ANY, u->port);
    if (setsockopt(u->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        setsockopt(u->fd, IPPROTO_IP, IP_MULTICAST_ALL, &zero, sizeof zero) < 0 ||
        bind(u->fd, (const struct sockaddr *)&any, sizeof any) < 0)
        UDP_FAIL("bind port %u: %s", cfg->port, strerror(errno));
    struct ip_mreqn via = {.imr_ifindex = u->index};
    /* Loop back: this host's other ranks are members too. TTL 1: the groups stay on the
     * job's network. */
    if ((u->index && setsockopt(u->fd, IPPROTO_IP, IP_MULTICAST_IF, &via, sizeof via) < 0) ||
        setsockopt(u->fd, IPPROTO_IP, IP_MULTICAST_LOOP, &one, sizeof one) < 0 ||
        setsockopt(u->fd, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof ttl) < 0)
        UDP_FAIL("multicast options: %s", strerror(errno));
    udp_buffer(u->fd, SO_RCVBUFFORCE, SO_RCVBUF, cfg->rcvbuf);
    udp_buffer(u->fd, SO_SNDBUFFORCE, SO_SNDBUF, cfg->rcvbuf);
    snprintf(u->base.where, sizeof u->base.where, "port %u on %s", cfg->port,
             cfg->iface && *cfg->iface ? cfg->iface : "the default route");
    *d = &u->base;
    return FM_OK;
error:
    udp_close(&u->base);
    return rc;
}
