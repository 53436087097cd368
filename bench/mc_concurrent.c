/* SPDX-License-Identifier: BSD-3-Clause */
/* fastmsg-bench-mcast --concurrent K [--roots R]: every rank (or R ranks drawn at random per
 * round) a root at once, each multicasting to K other ranks drawn at random, per tree and size
 * (mc.h).
 *
 * Method, per round: every rank leaves an fm_barrier, lets --settle microseconds pass, notes
 * its start and, when it is one of the round's roots, opens its multicast to the list {itself,
 * its K ranks} down the tree (fm_mcast_begin_list), while its handler takes the other roots'
 * multicasts it is a member of. The draws are seeded by the round (which ranks are roots) and by
 * (round, root) (a root's set; cc_draw.c, with bench/mpi's fastmsg-bench-mpi-concurrent the same
 * roots and sets), so every rank knows which copies it must get.
 * Each rank notes when each copy was complete here (CLOCK_MONOTONIC: --common-clock is
 * required, every rank on one kernel) and, once it has them all and has sent its own, sends
 * rank 0 its start and those times. Rank 0: a multicast's completion is its slowest member
 * less its root's start; the round's is the last copy anywhere less the earliest root's start,
 * and the aggregate rate is R x K x size bytes over that (R = n without --roots). Medians over the
 * rounds (mc_iters x -r of them), and over every multicast of every round for the per-multicast
 * figures. Every copy's first and last bytes are checked (the root's own pattern). */
#include <fastmsg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cc_draw.h"
#include "fm_common.h"
#include "mc.h"

#define PROG "fastmsg-bench-mcast"

typedef struct cc cc;

typedef struct slot { /* one root's copy here, this round */
    cc *c;
    int root;
} slot;

struct cc {
    fm_context *ctx;
    const mc_opts *o;
    int me, n, k, roots, h_data, h_report; /* roots: R, n without --roots */
    const char *tree;
    size_t size;
    int round, want, got, nreports;
    unsigned char **rbuf; /* per root: this rank's copy */
    unsigned char *sbuf;
    slot *slots;
    int *members;           /* this rank's list: itself, then its k ranks */
    int *draw;              /* scratch: a root's draw */
    unsigned char *is_root; /* this round's roots (cc_draw_roots) */
    double *times;          /* this rank's report: start, then per root (-1: not a member) */
    double *reports;        /* rank 0: every rank's report, n x (n + 1) */
    double *each, *T;       /* rank 0: per multicast and per round, for the medians */
    long bad;
};

static unsigned char pattern(size_t i, int root)
{
    return (unsigned char)(mc_pattern(i) ^ (unsigned)root);
}

/* Root's k ranks this round into out (cc_draw.h, the draw bench/mpi's program shares). */
static void draw(const cc *c, int root, int *out)
{
    cc_draw(CC_DRAW_SEED, c->round, root, c->n, c->k, c->draw + c->n, out);
}

static void delivered(void *buf, size_t len, int status, int sender, void *arg)
{
    slot *s = arg;
    cc *c = s->c;
    const unsigned char *p = buf;
    c->times[1 + s->root] = bench_now_us(CLOCK_MONOTONIC);
    if (status != FM_OK || len != c->size || sender != s->root ||
        (len && (p[0] != pattern(0, s->root) || p[len - 1] != pattern(len - 1, s->root))))
        c->bad++;
    c->got++;
}

static int on_data(fm_stream *s, int sender, void *arg)
{
    cc *c = arg;
    if (sender < 0 || sender >= c->n || sender == c->me) {
        c->bad++;
        return FM_DONE;
    }
    fm_stream_deliver(s, c->rbuf[sender], c->size, delivered, &c->slots[sender]);
    return FM_CONTINUE;
}

static int on_report(fm_stream *s, int sender, void *arg)
{
    cc *c = arg;
    size_t len = sizeof(double) * (size_t)(c->n + 1);
    if (fm_receive(s, c->reports + (size_t)sender * (size_t)(c->n + 1), len) != (ssize_t)len)
        c->bad++;
    c->nreports++;
    return FM_DONE;
}

static int await(cc *c, const int *flag, int want)
{
    return bench_fm_await(c->ctx, flag, want, c->o->timeout_s);
}

/* This round's roots, how many copies this rank gets, and its own list. */
static void plan_round(cc *c)
{
    c->want = 0;
    cc_draw_roots(CC_DRAW_SEED, c->round, c->n, c->roots, c->draw + c->n, c->is_root);
    for (int root = 0; root < c->n; root++) {
        c->times[1 + root] = -1;
        if (!c->is_root[root])
            continue;
        draw(c, root, c->draw);
        for (int i = 0; i < c->k; i++)
            c->want += c->draw[i] == c->me;
        if (root == c->me) {
            c->members[0] = c->me;
            memcpy(c->members + 1, c->draw, sizeof(int) * (size_t)c->k);
        }
    }
}

static int send_mine(cc *c)
{
    fm_stream *s;
    int rc = fm_mcast_begin_list(c->ctx, c->members, c->k + 1, c->tree, 0, c->size, c->h_data, &s);
    return bench_fm_write(rc, s, c->sbuf, c->size);
}

static int send_report(cc *c)
{
    fm_stream *s;
    size_t len = sizeof(double) * (size_t)(c->n + 1);
    int rc = fm_begin_message(c->ctx, 0, len, c->h_report, &s);
    return bench_fm_write(rc, s, c->times, len);
}

static int one_round(cc *c, long *ne, double *T)
{
    c->round++;
    c->got = 0;
    c->nreports = 0;
    plan_round(c);
    int rc = fm_barrier(c->ctx);
    double start = bench_now_us(CLOCK_MONOTONIC) + c->o->settle_us;
    /* (a simulated clock, --settle-sleep, moves only while this rank sleeps or waits: a
     * polling loop there took a simulator round per nanosecond) */
    if (rc >= 0 && c->o->settle_sleep)
        bench_sleep_until_us(start);
    while (rc >= 0 && bench_now_us(CLOCK_MONOTONIC) < start)
        rc = (int)fm_extract(c->ctx, 0);
    if (rc < 0)
        return rc;
    c->times[0] = bench_now_us(CLOCK_MONOTONIC);
    rc = c->is_root[c->me] ? send_mine(c) : FM_OK;
    if (rc == FM_OK)
        rc = await(c, &c->got, c->want);
    if (rc == FM_OK && c->me != 0)
        return send_report(c);
    if (rc != FM_OK)
        return rc;
    memcpy(c->reports, c->times, sizeof(double) * (size_t)(c->n + 1));
    c->nreports++; /* (the others' may have come while this rank took its copies) */
    rc = await(c, &c->nreports, c->n);
    if (rc == FM_OK)
        cc_reduce_round(c->reports, c->n, c->is_root, c->each, ne, T);
    return rc;
}

static void print_row(const cc *c, double each_med, double each_max, double round_med)
{
    const mc_opts *o = c->o;
    bench_label lb = bench_fm_label();
    double mbps = (double)c->roots * c->k * (double)c->size / round_med; /* bytes/us = MB/s */
    if (o->csv)
        printf("%s,%d,%s,%s,%s,%zu,%d,%.2f,%.2f,%.2f,%.3f,%ld\n", lb.provider, c->n, lb.packet_size,
               lb.credits, c->tree, c->size, c->k, each_med, each_max, round_med, mbps,
               mc_iters(o, c->size) * o->repeats);
    else
        printf("%-12s %9zu %5d %11.2f %11.2f %11.2f %10.3f %5ld\n", c->tree, c->size, c->k,
               each_med, each_max, round_med, mbps, mc_iters(o, c->size) * o->repeats);
    fflush(stdout);
}

/* One row: a warm-up round, then mc_iters x repeats rounds. */
static int row(cc *c)
{
    long rounds = mc_iters(c->o, c->size) * c->o->repeats, ne = 0;
    double T;
    int rc = one_round(c, &ne, &T);
    ne = 0;
    for (long i = 0; i < rounds && rc == FM_OK; i++)
        rc = one_round(c, &ne, &c->T[i]);
    if (rc == FM_OK && c->me == 0) {
        double each_max = 0;
        for (long i = 0; i < ne; i++)
            each_max = c->each[i] > each_max ? c->each[i] : each_max;
        double each_med = bench_median(c->each, ne);
        print_row(c, each_med, each_max, bench_median(c->T, rounds));
    }
    return rc;
}

static int setup(cc *c, fm_context *ctx, const mc_opts *o)
{
    int n = fm_size(ctx);
    long rounds = mc_iters(o, o->sizes[0]) * o->repeats;
    *c = (cc){.ctx = ctx,
              .o = o,
              .me = fm_rank(ctx),
              .n = n,
              .k = o->concurrent,
              .roots = o->roots ? o->roots : n};
    size_t cap = o->sizes[o->nsizes - 1];
    c->rbuf = calloc((size_t)n, sizeof *c->rbuf);
    c->slots = calloc((size_t)n, sizeof *c->slots);
    c->sbuf = malloc(cap ? cap : 1);
    c->members = malloc(sizeof(int) * (size_t)(c->k + 1));
    c->draw = malloc(sizeof(int) * (size_t)(2 * n));
    c->is_root = malloc((size_t)n);
    c->times = malloc(sizeof(double) * (size_t)(n + 1));
    c->reports = malloc(sizeof(double) * (size_t)n * (size_t)(n + 1));
    c->each = malloc(sizeof(double) * (size_t)(n * (rounds + 1)));
    c->T = malloc(sizeof(double) * (size_t)(rounds + 1));
    int rc = c->rbuf && c->slots && c->sbuf && c->members && c->draw && c->is_root && c->times &&
                     c->reports && c->each && c->T
                 ? FM_OK
                 : FM_ERR_NOMEM;
    for (int r = 0; rc == FM_OK && r < n; r++) {
        c->slots[r] = (slot){c, r};
        if (r != c->me && !(c->rbuf[r] = malloc(cap ? cap : 1)))
            rc = FM_ERR_NOMEM;
    }
    for (size_t i = 0; rc == FM_OK && i < cap; i++)
        c->sbuf[i] = pattern(i, c->me);
    if (rc == FM_OK && (c->h_data = fm_add_handler(ctx, on_data, c)) < 0)
        rc = c->h_data;
    if (rc == FM_OK && (c->h_report = fm_add_handler(ctx, on_report, c)) < 0)
        rc = c->h_report;
    return rc;
}

static void teardown(cc *c)
{
    for (int r = 0; c->rbuf && r < c->n; r++)
        free(c->rbuf[r]);
    free(c->rbuf);
    free(c->slots);
    free(c->sbuf);
    free(c->members);
    free(c->draw);
    free(c->is_root);
    free(c->times);
    free(c->reports);
    free(c->each);
    free(c->T);
}

int mc_concurrent(fm_context *ctx, const mc_opts *o)
{
    cc c;
    if (o->concurrent >= fm_size(ctx) || !o->common_clock) {
        if (fm_rank(ctx) == 0)
            fprintf(stderr,
                    PROG ": --concurrent K needs K below the job's %d ranks and --common-clock\n",
                    fm_size(ctx));
        return FM_ERR_INVALID;
    }
    if (o->roots > fm_size(ctx)) {
        if (fm_rank(ctx) == 0)
            fprintf(stderr, PROG ": --roots %d: at most the job's %d ranks can be roots\n",
                    o->roots, fm_size(ctx));
        return FM_ERR_INVALID;
    }
    int rc = setup(&c, ctx, o);
    if (rc == FM_OK && c.me == 0) {
        if (o->csv)
            fputs(MC_CONCURRENT_CSV_HEADER, stdout);
        else
            printf("# " PROG " --concurrent %d --roots %d: %d ranks, %s a root at once, each to %d "
                   "random others; times from each root's start (one clock)\n"
                   "# each = one multicast's slowest member; round = the last copy of a round; "
                   "aggregate = R x K x size / round\n"
                   "# tree          size(B)     K    each_us  each_max_us    round_us   agg_MBps "
                   "rounds\n",
                   c.k, c.roots, c.n, c.roots < c.n ? "R of them (drawn per round)" : "every rank",
                   c.k);
    }
    for (int t = 0; t < o->ntrees && rc == FM_OK; t++)
        for (int i = 0; i < o->nsizes && rc == FM_OK; i++) {
            c.tree = o->trees[t];
            c.size = o->sizes[i];
            rc = row(&c);
            if (rc != FM_OK)
                fprintf(stderr, PROG ": rank %d: --concurrent %s, %zu B: %s\n", c.me, c.tree,
                        c.size, fm_strerror(rc));
        }
    if (c.bad) {
        fprintf(stderr, PROG ": rank %d: %ld wrong copies or reports\n", c.me, c.bad);
        rc = rc == FM_OK ? FM_ERR_INVALID : rc;
    }
    teardown(&c);
    return rc;
}
