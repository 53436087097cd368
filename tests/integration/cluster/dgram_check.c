/* SPDX-License-Identifier: BSD-3-Clause */
/* The datagram multicast path (providers/udp) on its own, inside the emulated cluster's hosts
 * (run.sh dgram):
 *   dgram_check local IFACE GROUP PORT
 *       three endpoints on this host (three ranks of one host) in GROUP: each gets its own
 *       copy of every datagram, the sender's included, whole, at sizes 0, 1, 1471, 1472;
 *       1473 bytes are refused; an endpoint of another group on the same port gets nothing
 *       until it joins GROUP too, and nothing again once it left it; the fd is readable
 *       exactly while a datagram waits; bad groups, ports and interfaces fail clearly.
 *   dgram_check recv IFACE GROUP PORT COUNT READY
 *       join, create READY, then expect datagrams 0..COUNT-1 of `send` (each once, bytes
 *       checked) within 20 s; COUNT 0: expect nothing for 2 s.
 *   dgram_check send IFACE GROUP PORT COUNT
 *       send COUNT numbered datagrams of sizes cycling over 0..1472 bytes.
 * Exit 0 when every check held; each failure is printed. */
#include <arpa/inet.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fastmsg.h"
#include "transport.h"

static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "dgram_check: FAIL %s:%d: ", __FILE__, __LINE__);                      \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* An endpoint on port that joined group (0: none). */
static fm_tp_dgram *open_or_die(const char *iface, uint32_t group, unsigned port)
{
    fm_tp_dgram_config c = {.port = (uint16_t)port, .iface = iface, .rcvbuf = 4u << 20};
    fm_tp_dgram *d = NULL;
    char err[256] = "";
    int rc = fm_tp_dgram_open(&c, &d, err, sizeof err);
    if (rc == FM_OK && group && (rc = d->ops->join(d, group)) != FM_OK)
        snprintf(err, sizeof err, "join: error %d", rc);
    if (rc != FM_OK) {
        fprintf(stderr, "dgram_check: cannot open %s:%u on %s: %s\n",
                inet_ntoa((struct in_addr){htonl(group)}), port, iface, err);
        exit(1);
    }
    return d;
}

/* Datagram k of `send`: its size, and byte i of it. */
static size_t dg_size(unsigned k)
{
    static const size_t sizes[] = {0, 1, 4, 100, 1000, 1471, 1472};
    size_t n = sizes[k % (sizeof sizes / sizeof sizes[0])];
    return n < 4 ? 4 : n; /* the number needs 4 bytes */
}

static unsigned char dg_byte(unsigned k, size_t i)
{
    return (unsigned char)(k * 131u + i * 7u + 1u);
}

static void dg_fill(unsigned char *b, unsigned k, size_t n)
{
    memcpy(b, &k, 4);
    for (size_t i = 4; i < n; i++)
        b[i] = dg_byte(k, i);
}

static int readable(const fm_tp_dgram *d, int ms)
{
    struct pollfd p = {.fd = d->ops->fd(d), .events = POLLIN};
    return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

/* The next datagram of d within ms, FM_EAGAIN if none came. */
static int next(fm_tp_dgram *d, unsigned char *buf, size_t cap, size_t *len, int ms)
{
    if (!readable(d, ms))
        return FM_EAGAIN;
    return d->ops->recv(d, buf, cap, len);
}

static int run_local(const char *iface, uint32_t group, unsigned port)
{
    fm_tp_dgram *ep[3], *other;
    for (int i = 0; i < 3; i++)
        ep[i] = open_or_die(iface, group, port);
    other = open_or_die(iface, group + 1, port); /* another job's group, same port */
    unsigned char out[FM_TP_DGRAM_MAX + 1], in[FM_TP_DGRAM_MAX + 64];
    size_t len;
    CHECK(ep[0]->ops->recv(ep[0], in, sizeof in, &len) == FM_EAGAIN, "recv on nothing");
    CHECK(!readable(ep[0], 0), "readable with nothing waiting");
    static const size_t sizes[] = {0, 1, FM_TP_DGRAM_MAX - 1, FM_TP_DGRAM_MAX};
    for (unsigned s = 0; s < 4; s++) {
        for (size_t i = 0; i < sizes[s]; i++)
            out[i] = dg_byte(s, i);
        int from = (int)(s % 3); /* every endpoint sends once */
        int rc = ep[from]->ops->send(ep[from], group, out, sizes[s]);
        CHECK(rc == FM_OK, "send of %zu bytes: %d", sizes[s], rc);
        for (int i = 0; i < 3; i++) {
            rc = next(ep[i], in, sizeof in, &len, 2000);
            CHECK(rc == FM_OK, "endpoint %d got no %zu-byte datagram (%d)", i, sizes[s], rc);
            CHECK(rc != FM_OK || (len == sizes[s] && !memcmp(in, out, len)),
                  "endpoint %d got %zu bytes, sent %zu", i, len, sizes[s]);
            CHECK(next(ep[i], in, sizeof in, &len, 0) == FM_EAGAIN,
                  "endpoint %d got a %zu-byte datagram twice", i, sizes[s]);
        }
    }
    CHECK(ep[0]->ops->send(ep[0], group, out, FM_TP_DGRAM_MAX + 1) == FM_ERR_TOO_LONG,
          "a %d-byte datagram was taken", FM_TP_DGRAM_MAX + 1);
    CHECK(ep[0]->ops->send(ep[0], 0x0a000001u, out, 10) == FM_ERR_INVALID,
          "a datagram to a unicast address was taken");
    CHECK(next(other, in, sizeof in, &len, 300) == FM_EAGAIN,
          "another group's endpoint got a datagram");
    /* Cut short: the whole length is still told. */
    CHECK(ep[1]->ops->send(ep[1], group, out, 100) == FM_OK, "send of 100 bytes");
    CHECK(next(ep[2], in, 10, &len, 2000) == FM_OK && len == 100, "a cut datagram's length");
    for (int i = 0; i < 2; i++)
        CHECK(next(ep[i], in, sizeof in, &len, 2000) == FM_OK && len == 100,
              "endpoint %d: the 100-byte datagram", i);
    /* Joined to both groups, it gets both; after leaving one, only the other. */
    CHECK(other->ops->join(other, group) == FM_OK, "join a second group");
    CHECK(ep[0]->ops->send(ep[0], group, out, 7) == FM_OK, "send of 7 bytes");
    CHECK(ep[0]->ops->send(ep[0], group + 1, out, 9) == FM_OK, "send of 9 bytes");
    size_t got = 0;
    for (int i = 0; i < 2; i++)
        if (next(other, in, sizeof in, &len, 2000) == FM_OK)
            got += len;
    CHECK(got == 16, "two groups' datagrams: %zu bytes, want 7 + 9", got);
    CHECK(other->ops->leave(other, group) == FM_OK, "leave");
    CHECK(ep[0]->ops->send(ep[0], group, out, 5) == FM_OK, "send of 5 bytes");
    CHECK(next(other, in, sizeof in, &len, 300) == FM_EAGAIN, "a datagram after leaving");
    CHECK(other->ops->join(other, 0x0a000001u) == FM_ERR_INVALID, "joined a unicast address");
    for (int i = 0; i < 3; i++)
        ep[i]->ops->close(ep[i]);
    other->ops->close(other);

    fm_tp_dgram *d = NULL;
    char err[256] = "";
    fm_tp_dgram_config bad = {.port = 0, .iface = iface};
    CHECK(fm_tp_dgram_open(&bad, &d, err, sizeof err) == FM_ERR_INVALID && !d,
          "port 0 was accepted");
    bad = (fm_tp_dgram_config){.port = (uint16_t)port, .iface = "nosuch0"};
    err[0] = '\0';
    CHECK(fm_tp_dgram_open(&bad, &d, err, sizeof err) == FM_ERR_PROVIDER && !d &&
              strstr(err, "nosuch0"),
          "an unknown interface: \"%s\"", err);
    return failures ? 1 : 0;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int run_recv(const char *iface, uint32_t group, unsigned port, unsigned count,
                    const char *ready)
{
    fm_tp_dgram *d = open_or_die(iface, group, port);
    FILE *f = fopen(ready, "w");
    if (!f || fclose(f)) {
        perror(ready);
        return 1;
    }
    unsigned char *seen = calloc(count + 1, 1), in[FM_TP_DGRAM_MAX + 64];
    unsigned got = 0;
    double end = now() + (count ? 20.0 : 2.0);
    while (got < count || !count) {
        double left = end - now();
        if (left <= 0)
            break;
        size_t len;
        int rc = next(d, in, sizeof in, &len, (int)(left * 1000) + 1);
        if (rc == FM_EAGAIN)
            continue;
        CHECK(rc == FM_OK, "recv: %d", rc);
        unsigned k;
        CHECK(len >= 4, "a %zu-byte datagram", len);
        if (rc != FM_OK || len < 4)
            break;
        memcpy(&k, in, 4);
        CHECK(k < count, "datagram %u of %u", k, count);
        if (k >= count)
            break;
        CHECK(!seen[k], "datagram %u twice", k);
        CHECK(len == dg_size(k), "datagram %u: %zu bytes, sent %zu", k, len, dg_size(k));
        for (size_t i = 4; i < len && i < dg_size(k); i++)
            if (in[i] != dg_byte(k, i)) {
                CHECK(0, "datagram %u: byte %zu differs", k, i);
                break;
            }
        got += !seen[k];
        seen[k] = 1;
    }
    CHECK(got == count, "got %u of %u datagrams", got, count);
    printf("dgram_check: received %u of %u datagrams on %s\n", got, count, d->where);
    free(seen);
    d->ops->close(d);
    return failures ? 1 : 0;
}

static int run_send(const char *iface, uint32_t group, unsigned port, unsigned count)
{
    fm_tp_dgram *d = open_or_die(iface, 0, port); /* a sender need not join */
    unsigned char out[FM_TP_DGRAM_MAX];
    for (unsigned k = 0; k < count; k++) {
        dg_fill(out, k, dg_size(k));
        int rc;
        while ((rc = d->ops->send(d, group, out, dg_size(k))) == FM_EAGAIN)
            usleep(100);
        CHECK(rc == FM_OK, "send %u: %d", k, rc);
        usleep(200); /* well within the receivers' pace */
    }
    d->ops->close(d);
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    struct in_addr a;
    if (argc < 5 || !inet_aton(argv[3], &a)) {
        fprintf(stderr, "usage: dgram_check local|recv|send IFACE GROUP PORT [COUNT [READY]]\n");
        return 2;
    }
    uint32_t group = ntohl(a.s_addr);
    unsigned port = (unsigned)atoi(argv[4]);
    if (!strcmp(argv[1], "local"))
        return run_local(argv[2], group, port);
    if (!strcmp(argv[1], "recv") && argc == 7)
        return run_recv(argv[2], group, port, (unsigned)atoi(argv[5]), argv[6]);
    if (!strcmp(argv[1], "send") && argc == 6)
        return run_send(argv[2], group, port, (unsigned)atoi(argv[5]));
    fprintf(stderr, "dgram_check: bad arguments\n");
    return 2;
}
