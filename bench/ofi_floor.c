/* SPDX-License-Identifier: BSD-3-Clause */
/* fastmsg-bench-ofi-floor: one side of a ping-pong straight on libfabric, set up exactly as fastmsg
 * sets up its transport (providers/ofi): an RDM endpoint with FI_MSG | FI_TAGGED (FI_MSG alone
 * where tagged is not offered), FI_CONTEXT2, FI_MR_LOCAL-style registration, an AV table,
 * FI_THREAD_DOMAIN, one FI_CQ_FORMAT_MSG completion queue for sends and receives, nine posted
 * receive buffers of a 64 KiB packet plus header, reposted after the reply, and messages of
 * SIZE + 40 bytes (fastmsg's header; + 20 up to 12 bytes, its compact header), injected when
 * they fit. What it measures is the floor
 * any runtime on that set-up pays; compare-pingpong.sh --floor puts it beside fastmsg and
 * fi_pingpong, so fastmsg's own cost and the set-up's cost read apart.
 *
 *   fastmsg-bench-ofi-floor --dir DIR --rank 0|1 [-p PROVIDER] [-S SIZE] [-I ITERS]
 *
 * Both ranks find each other through files in DIR (which the caller creates and removes).
 * Rank 0 prints the one-way latency in us (half the round trip). Exits 1 with a message on
 * any libfabric error, and after 30 s without the peer's address. */
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

#define PROG "fastmsg-bench-ofi-floor"

#define FLOOR_HDR       40 /* fastmsg's packet header */
#define FLOOR_SHORT     20 /* its compact header (runtime/core/wire.h), */
#define FLOOR_SHORT_MAX 12 /* for messages of at most this many bytes */
#define FLOOR_PKT       (65536 + FLOOR_HDR)
#define FLOOR_NBUF      9 /* FM_CREDITS (8) + 1, as fastmsg posts per peer */
#define FLOOR_BATCH     16

#define CHECK(call)                                                                                \
    do {                                                                                           \
        long ret_ = (long)(call);                                                                  \
        if (ret_) {                                                                                \
            fprintf(stderr, PROG ": %s: %s (%ld)\n", #call, fi_strerror((int)-ret_), ret_);        \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

struct floor {
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_cq *cq;
    struct fid_av *av;
    struct fid_ep *ep;
    struct fid_mr *mr;
    fi_addr_t peer;
    char *mem; /* FLOOR_NBUF receive buffers, then the send buffer */
    struct fi_context2 ctx[FLOOR_NBUF + 1];
    int done[FLOOR_NBUF + 1]; /* completions read, not yet awaited */
};

static void usage(void)
{
    fprintf(stderr, "usage: " PROG " --dir DIR --rank 0|1 [-p PROVIDER] [-S SIZE] [-I ITERS]\n");
    exit(2);
}

/* fastmsg's hints (providers/ofi/ofi_select.c): tagged asked first, then messages alone. */
static void open_info(struct floor *f, const char *prov)
{
    static const uint64_t caps[] = {FI_MSG | FI_TAGGED, FI_MSG};
    int ret = -FI_ENODATA;
    for (size_t i = 0; i < 2 && ret; i++) {
        struct fi_info *h = fi_allocinfo();
        if (!h)
            exit(1);
        h->caps = caps[i];
        h->mode = FI_CONTEXT | FI_CONTEXT2;
        h->ep_attr->type = FI_EP_RDM;
        h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
        h->domain_attr->av_type = FI_AV_TABLE;
        h->domain_attr->threading = FI_THREAD_DOMAIN;
        h->fabric_attr->prov_name = strdup(prov);
        ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &f->info);
        fi_freeinfo(h);
    }
    CHECK(ret);
}

static void open_all(struct floor *f, const char *prov)
{
    open_info(f, prov);
    CHECK(fi_fabric(f->info->fabric_attr, &f->fabric, NULL));
    CHECK(fi_domain(f->fabric, f->info, &f->domain, NULL));
    struct fi_cq_attr cq = {.format = FI_CQ_FORMAT_MSG,
                            .wait_obj = FI_WAIT_NONE,
                            .size = f->info->tx_attr->size + f->info->rx_attr->size};
    CHECK(fi_cq_open(f->domain, &cq, &f->cq, NULL));
    struct fi_av_attr av = {.type = FI_AV_TABLE};
    CHECK(fi_av_open(f->domain, &av, &f->av, NULL));
    CHECK(fi_endpoint(f->domain, f->info, &f->ep, NULL));
    CHECK(fi_ep_bind(f->ep, &f->cq->fid, FI_TRANSMIT | FI_RECV));
    CHECK(fi_ep_bind(f->ep, &f->av->fid, 0));
    CHECK(fi_enable(f->ep));
    size_t bytes = (size_t)(FLOOR_NBUF + 1) * FLOOR_PKT;
    f->mem = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
    if (!f->mem)
        exit(1);
    memset(f->mem, 0, bytes);
    CHECK(fi_mr_reg(f->domain, f->mem, bytes, FI_SEND | FI_RECV, 0, 0, 0, &f->mr, NULL));
}

static void close_all(struct floor *f)
{
    fi_close(&f->ep->fid); /* first: shm unlinks its /dev/shm region here */
    fi_close(&f->mr->fid);
    fi_close(&f->av->fid);
    fi_close(&f->cq->fid);
    fi_close(&f->domain->fid);
    fi_close(&f->fabric->fid);
    fi_freeinfo(f->info);
    free(f->mem);
}

/* Publish our address in dir, and insert the peer's once it is there. */
static void meet(struct floor *f, const char *dir, int rank)
{
    char name[256], path[4096], tmp[4096];
    size_t len = sizeof name;
    CHECK(fi_getname(&f->ep->fid, name, &len));
    snprintf(tmp, sizeof tmp, "%s/.name.%d", dir, rank);
    snprintf(path, sizeof path, "%s/name.%d", dir, rank);
    FILE *out = fopen(tmp, "w");
    if (!out || fwrite(name, 1, len, out) != len || fclose(out) || rename(tmp, path)) {
        fprintf(stderr, PROG ": cannot write %s\n", path);
        exit(1);
    }
    snprintf(path, sizeof path, "%s/name.%d", dir, 1 - rank);
    FILE *in;
    double give_up = bench_now_us(CLOCK_MONOTONIC) + 30e6;
    while (!(in = fopen(path, "r"))) {
        if (bench_now_us(CLOCK_MONOTONIC) > give_up) {
            fprintf(stderr, PROG ": no address from rank %d in %s after 30 s\n", 1 - rank, dir);
            exit(1);
        }
        usleep(1000);
    }
    len = fread(name, 1, sizeof name, in);
    fclose(in);
    if (fi_av_insert(f->av, name, 1, &f->peer, 0, NULL) != 1) {
        fprintf(stderr, PROG ": fi_av_insert of rank %d's address failed\n", 1 - rank);
        exit(1);
    }
}

static void post_recv(struct floor *f, int b)
{
    CHECK(fi_recv(f->ep, f->mem + (size_t)b * FLOOR_PKT, FLOOR_PKT, fi_mr_desc(f->mr),
                  FI_ADDR_UNSPEC, &f->ctx[b]));
}

/* Read what has completed into f->done. */
static void poll_cq(struct floor *f)
{
    struct fi_cq_msg_entry ent[FLOOR_BATCH];
    ssize_t got = fi_cq_read(f->cq, ent, FLOOR_BATCH);
    for (ssize_t i = 0; i < got; i++)
        f->done[(struct fi_context2 *)ent[i].op_context - f->ctx] = 1;
    if (got < 0 && got != -FI_EAGAIN) {
        fprintf(stderr, PROG ": fi_cq_read: %s (%zd)\n", fi_strerror((int)-got), got);
        exit(1);
    }
}

/* Until operation k has completed; 0, or -1 after limit_s seconds (limit_s 0: no limit). */
static int await(struct floor *f, int k, double limit_s)
{
    double give_up = limit_s > 0 ? bench_now_us(CLOCK_MONOTONIC) + limit_s * 1e6 : 0;
    for (unsigned spins = 0; !f->done[k]; spins++) {
        poll_cq(f);
        if (give_up > 0 && (spins & 1023) == 0 && bench_now_us(CLOCK_MONOTONIC) > give_up)
            return -1;
    }
    f->done[k] = 0;
    return 0;
}

/* One message of len bytes: injected when it fits, else sent and completed. */
static void send_one(struct floor *f, size_t len)
{
    char *buf = f->mem + (size_t)FLOOR_NBUF * FLOOR_PKT;
    ssize_t ret;
    if (len < f->info->tx_attr->inject_size) {
        while ((ret = fi_inject(f->ep, buf, len, f->peer)) == -FI_EAGAIN)
            poll_cq(f);
        CHECK(ret);
        return;
    }
    void *ctx = &f->ctx[FLOOR_NBUF];
    while ((ret = fi_send(f->ep, buf, len, fi_mr_desc(f->mr), f->peer, ctx)) == -FI_EAGAIN)
        poll_cq(f);
    CHECK(ret);
    await(f, FLOOR_NBUF, 0);
}

int main(int argc, char **argv)
{
    const char *dir = NULL, *prov = "shm";
    int rank = -1;
    long size = 8, iters = 10000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--dir"))
            dir = argv[i + 1];
        else if (!strcmp(argv[i], "--rank"))
            rank = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-p"))
            prov = argv[i + 1];
        else if (!strcmp(argv[i], "-S"))
            size = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "-I"))
            iters = atol(argv[i + 1]);
        else
            usage();
    }
    if (argc % 2 == 0 || !dir || (rank != 0 && rank != 1) || size < 0 ||
        size > FLOOR_PKT - FLOOR_HDR || iters < 1)
        usage();

    struct floor f = {0};
    open_all(&f, prov);
    for (int b = 0; b < FLOOR_NBUF; b++)
        post_recv(&f, b);
    meet(&f, dir, rank);

    size_t len = (size_t)size + (size <= FLOOR_SHORT_MAX ? FLOOR_SHORT : FLOOR_HDR);
    long warmup = iters / 10 > 2 ? iters / 10 : 2;
    int next = 0; /* receive buffers complete in the order they were posted */
    double t0 = 0;
    for (long i = 0; i < warmup + iters; i++) {
        if (i == warmup)
            t0 = bench_now_us(CLOCK_MONOTONIC);
        if (rank == 0)
            send_one(&f, len);
        await(&f, next, 0);
        if (rank == 1)
            send_one(&f, len);
        post_recv(&f, next); /* after the reply, off its path, as fastmsg reposts */
        next = (next + 1) % FLOOR_NBUF;
    }
    double t = bench_now_us(CLOCK_MONOTONIC) - t0; /* us */
    /* Rank 1's last reply has arrived; rank 0's goodbye (sent, not injected, and completed)
     * lets rank 1 close without dropping it. Rank 1 gives up on it after 5 s. */
    if (rank == 0) {
        printf("%.3f\n", t / (2.0 * (double)iters));
        size_t inject = f.info->tx_attr->inject_size;
        send_one(&f, inject < FLOOR_PKT ? inject : FLOOR_PKT);
    } else if (await(&f, next, 5.0)) {
        fprintf(stderr, PROG ": rank 1: no goodbye from rank 0 within 5 s\n");
    }
    close_all(&f);
    return 0;
}
