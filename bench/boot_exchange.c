/* SPDX-License-Identifier: BSD-3-Clause */
/* boot_exchange: times the bootstrap's key-value exchange under whatever launcher started it
 * (bench/exchange.sh runs it under fastmsg-run). No network is opened.
 *
 *   --gets all     what fm_init does (runtime/core/setup.c): put a 256-byte "fm.card", fence,
 *                  get every rank's card; put a 19-byte "fm.addr", fence, get every rank's
 *                  address (the default)
 *   --gets few     put the card and the address, fence once, then get the address and the
 *                  card of --peers K ranks (rank+1 .. rank+K, modulo the size): fm_init once
 *                  addresses are fetched on first contact
 *
 * Each rank prints one line "boot_exchange rank=R put=T0 done=T1 bytes=B" (CLOCK_MONOTONIC,
 * ns; one clock for every process on a host): T0 right after its puts (the first one for
 * --gets all), T1 after its last get, B the bytes it received over TCP by then (from the
 * launcher, as the kernel counts them). The exchange time is max(T1) - max(T0): from the last
 * rank's put to the last get returning. Values are checked byte for byte; exit 1 on any
 * difference or error. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bootstrap.h"
#include "tcp_bytes.h"
#include "fastmsg.h"

#define BX_CARD 256 /* sizeof fm_host_card in runtime/core/setup.c */
#define BX_ADDR 19  /* fi_getname's length on shm (libfabric 1.17) */

static long long bx_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Rank r's value for key: bytes that differ per rank and per key, NULs included. */
static void bx_value(int r, int salt, unsigned char *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        v[i] = (unsigned char)(r * 131 + (int)i * 7 + salt);
}

static int bx_fail(fm_boot *b, const char *what, int rc)
{
    fprintf(stderr, "boot_exchange: rank %d: %s: %s (%s)\n", b->rank, what, fm_strerror(rc),
            b->err);
    return 1;
}

static int bx_put(fm_boot *b, const char *key, int salt, size_t n)
{
    unsigned char v[BX_CARD];
    bx_value(b->rank, salt, v, n);
    int rc = fm_boot_put(b, key, v, n);
    return rc ? bx_fail(b, "put", rc) : 0;
}

static int bx_get(fm_boot *b, int r, const char *key, int salt, size_t n)
{
    unsigned char want[BX_CARD], got[BX_CARD];
    size_t len = sizeof got;
    int rc = fm_boot_get(b, r, key, got, &len);
    if (rc)
        return bx_fail(b, key, rc);
    bx_value(r, salt, want, n);
    if (len != n || memcmp(got, want, n)) {
        fprintf(stderr, "boot_exchange: rank %d: %s of rank %d differs\n", b->rank, key, r);
        return 1;
    }
    return 0;
}

static int bx_fence(fm_boot *b)
{
    int rc = fm_boot_fence(b);
    return rc ? bx_fail(b, "fence", rc) : 0;
}

static int bx_all(fm_boot *b, long long *t0)
{
    if (bx_put(b, "fm.card", 1, BX_CARD))
        return 1;
    *t0 = bx_now();
    if (bx_fence(b))
        return 1;
    for (int r = 0; r < b->size; r++)
        if (bx_get(b, r, "fm.card", 1, BX_CARD))
            return 1;
    if (bx_put(b, "fm.addr", 2, BX_ADDR) || bx_fence(b))
        return 1;
    for (int r = 0; r < b->size; r++)
        if (bx_get(b, r, "fm.addr", 2, BX_ADDR))
            return 1;
    return 0;
}

static int bx_few(fm_boot *b, int peers, long long *t0)
{
    if (bx_put(b, "fm.card", 1, BX_CARD) || bx_put(b, "fm.addr", 2, BX_ADDR))
        return 1;
    *t0 = bx_now();
    if (bx_fence(b))
        return 1;
    for (int i = 1; i <= peers; i++) {
        int r = (b->rank + i) % b->size;
        if (bx_get(b, r, "fm.addr", 2, BX_ADDR) || bx_get(b, r, "fm.card", 1, BX_CARD))
            return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static fm_boot b;
    int all = 1, peers = 4;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--gets") && i + 1 < argc && !strcmp(argv[i + 1], "all"))
            all = 1, i++;
        else if (!strcmp(argv[i], "--gets") && i + 1 < argc && !strcmp(argv[i + 1], "few"))
            all = 0, i++;
        else if (!strcmp(argv[i], "--peers") && i + 1 < argc && atoi(argv[i + 1]) >= 0)
            peers = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: boot_exchange [--gets all|few] [--peers K]\n");
            return 2;
        }
    }
    int rc = fm_boot_init(&b, "auto", 120);
    if (rc) {
        fprintf(stderr, "boot_exchange: fm_boot_init: %s (%s)\n", fm_strerror(rc), b.err);
        return 1;
    }
    long long t0 = 0;
    if (peers >= b.size)
        peers = b.size - 1;
    if (all ? bx_all(&b, &t0) : bx_few(&b, peers, &t0))
        return 1;
    long long t1 = bx_now();
    printf("boot_exchange rank=%d put=%lld done=%lld bytes=%lld\n", b.rank, t0, t1,
           tcp_bytes_received());
    fflush(stdout);
    fm_boot_fini(&b);
    return 0;
}
