/* SPDX-License-Identifier: BSD-3-Clause */
/* fastmsg-bench-mpi-concurrent-openmpi, fastmsg-bench-mpi-concurrent-mpich: fastmsg-bench-mcast
 * --concurrent K [--roots R] over MPI. Every rank (or R ranks drawn per round) a root at once,
 * each sending to K other ranks drawn at random with the same draw (cc_draw.c: the same roots and
 * sets for the same round numbers), timed, checked and reported the same way, with fastmsg's
 * options (mc_opts.c) and columns, the method in the tree column:
 *
 *   mpirun.openmpi -n N fastmsg-bench-mpi-concurrent-openmpi --concurrent K --common-clock
 * [options] mpiexec.mpich -n N fastmsg-bench-mpi-concurrent-mpich --concurrent K --common-clock
 * [options]
 *
 * Methods (--methods, both by default, in the order given):
 *   p2p    the multicast a user writes with point-to-point: each root MPI_Isend's its buffer to
 *          each of its K ranks; every rank MPI_Irecv's from each root that drew it (it knows
 *          them from the draw; the receives are posted before the round's barrier)
 *   bcast  MPI_Ibcast on a communicator per distinct (root, set) that occurs in the method's
 *          rounds (only the rounds' roots), all
 *          made before its first round in one global order (round, then root; members
 *          ascending) with MPI_Comm_create_group, tag the order index, so that no two ranks wait
 *          for each other in different creations; the creation's time (the slowest rank's, from
 *          a barrier) is reported on its own comment line after the method's rows. Each round
 *          every rank starts MPI_Ibcast on every communicator it is in, its own first (blocking
 *          MPI_Bcast on several at once could deadlock). Freed after the method's rows.
 *
 * Per round (mc_concurrent.c's method): every rank leaves an MPI_Barrier, lets --settle
 * microseconds pass, notes its start and starts its requests, then takes them as they complete
 * (MPI_Waitany), noting when each copy was complete (CLOCK_MONOTONIC: --common-clock is
 * required, every rank on one kernel); MPI_Gather brings every rank's start and times to rank 0.
 * A multicast's completion is its slowest member less its root's start; the round's is the
 * last copy anywhere less the earliest root's start, and the aggregate rate R x K x size bytes
 * over that (R = n without --roots). Medians over the rounds (mc_iters x -r of them, after a
 * warm-up) and over every multicast of every round. Every copy's first and last bytes are checked
 * (the root's own pattern; both are overwritten before each round); a wrong copy makes the exit
 * status 1. Rank 0 prints; MPI errors end the job. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cc_draw.h"
#include "mc.h"
#include "mpi_common.h"

#define PROG    "fastmsg-bench-mpi-concurrent-" MB_MPI
#define METHODS "p2p,bcast"
#define TAG     7

/* One distinct (root, set) of the bcast method: its members ascending, root's place among them,
 * and the communicator (MPI_COMM_NULL on ranks outside it). */
typedef struct group {
    int *members; /* k + 1 */
    int root, root_at;
    MPI_Comm comm;
} group;

typedef struct cc {
    const mc_opts *o;
    int me, n, k, roots; /* roots: R, n without --roots */
    const char *method;
    size_t size;
    int round;                   /* as mc_concurrent.c's: counts on over rows and methods */
    unsigned char **rbuf, *sbuf; /* per root: this rank's copy; this rank's message */
    int *dests;                  /* n x k: every root's draw this round (roots only) */
    unsigned char *is_root;      /* this round's roots (cc_draw_roots) */
    int *scratch;                /* n, cc_draw's and cc_draw_roots' */
    MPI_Request *req;            /* this round's: up to k sends and n - 1 copies */
    int *req_root;               /* per request: the root whose copy it brings, -1: this rank's */
    int nreq;
    double *times;   /* this rank's report: start, then per root (-1: not a member) */
    double *reports; /* rank 0: every rank's report, n x (n + 1) */
    double *each, *T;
    long bad;
    /* bcast: the groups in creation order, and per (round - first_round, root) its group (-1:
     * not a root that round) */
    group *groups;
    long ngroups;
    int *group_of;
    int first_round;
} cc;

static unsigned char pattern(size_t i, int root)
{
    return (unsigned char)(mc_pattern(i) ^ (unsigned)root);
}

static int is_dest(const cc *c, int root, int r)
{
    if (!c->is_root[root])
        return 0;
    for (int i = 0; i < c->k; i++)
        if (c->dests[(size_t)root * (size_t)c->k + (size_t)i] == r)
            return 1;
    return 0;
}

static void draw_round(cc *c, int round)
{
    cc_draw_roots(CC_DRAW_SEED, round, c->n, c->roots, c->scratch, c->is_root);
    for (int root = 0; root < c->n; root++)
        if (c->is_root[root])
            cc_draw(CC_DRAW_SEED, round, root, c->n, c->k, c->scratch,
                    c->dests + (size_t)root * (size_t)c->k);
}

/* Whether the copy from root in rbuf[root] is the root's message; *got bytes came. */
static int copy_ok(const cc *c, int root, size_t got)
{
    const unsigned char *p = c->rbuf[root];
    return got == c->size &&
           (!got || (p[0] == pattern(0, root) && p[got - 1] == pattern(got - 1, root)));
}

/* Before the barrier: this round's draws, no copies yet, the checked bytes of every copy this
 * rank will get overwritten, and p2p's receives posted. */
static void plan_round(cc *c)
{
    draw_round(c, c->round);
    c->nreq = 0;
    for (int root = 0; root < c->n; root++) {
        c->times[1 + root] = -1;
        if (root == c->me || !is_dest(c, root, c->me))
            continue;
        if (c->size) {
            c->rbuf[root][0] = (unsigned char)~pattern(0, root);
            c->rbuf[root][c->size - 1] = (unsigned char)~pattern(c->size - 1, root);
        }
        if (!strcmp(c->method, "p2p")) {
            c->req_root[c->nreq] = root;
            MPI_Irecv(c->rbuf[root], (int)c->size, MPI_BYTE, root, TAG, MPI_COMM_WORLD,
                      &c->req[c->nreq++]);
        }
    }
}

/* The round's sends: p2p's K MPI_Isend's (a root's), or bcast's MPI_Ibcast on every
 * communicator of the round this rank is in (its own first, then the others' in root order). */
static void start_round(cc *c)
{
    if (!strcmp(c->method, "p2p")) {
        for (int i = 0; i < c->k && c->is_root[c->me]; i++) {
            c->req_root[c->nreq] = -1;
            MPI_Isend(c->sbuf, (int)c->size, MPI_BYTE, c->dests[(size_t)c->me * (size_t)c->k + i],
                      TAG, MPI_COMM_WORLD, &c->req[c->nreq++]);
        }
        return;
    }
    const int *g = c->group_of + (size_t)(c->round - c->first_round) * (size_t)c->n;
    for (int j = -1; j < c->n; j++) {
        int root = j < 0 ? c->me : j; /* this rank's own first */
        if (j == c->me || g[root] < 0)
            continue;
        const group *gr = &c->groups[g[root]];
        if (gr->comm == MPI_COMM_NULL)
            continue;
        c->req_root[c->nreq] = root == c->me ? -1 : root;
        MPI_Ibcast(root == c->me ? c->sbuf : c->rbuf[root], (int)c->size, MPI_BYTE, gr->root_at,
                   gr->comm, &c->req[c->nreq++]);
    }
}

static void one_round(cc *c, long *ne, double *T)
{
    c->round++;
    mb_watchdog_arm();
    plan_round(c);
    MPI_Barrier(MPI_COMM_WORLD);
    double start = bench_now_us(CLOCK_MONOTONIC) + c->o->settle_us;
    while (bench_now_us(CLOCK_MONOTONIC) < start)
        ;
    c->times[0] = bench_now_us(CLOCK_MONOTONIC);
    start_round(c);
    for (int left = c->nreq; left > 0; left--) {
        int i;
        MPI_Status st;
        MPI_Waitany(c->nreq, c->req, &i, &st);
        double at = bench_now_us(CLOCK_MONOTONIC);
        int root = i == MPI_UNDEFINED ? -1 : c->req_root[i];
        if (root < 0)
            continue;
        c->times[1 + root] = at;
        int got = (int)c->size; /* (MPI_Ibcast's status says nothing of the count) */
        if (!strcmp(c->method, "p2p") &&
            (MPI_Get_count(&st, MPI_BYTE, &got) != MPI_SUCCESS || st.MPI_SOURCE != root))
            got = -1;
        if (got < 0 || !copy_ok(c, root, (size_t)got))
            c->bad++;
    }
    MPI_Gather(c->times, c->n + 1, MPI_DOUBLE, c->reports, c->n + 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (c->me == 0)
        cc_reduce_round(c->reports, c->n, c->is_root, c->each, ne, T);
}

static void print_row(const cc *c, double each_med, double each_max, double round_med)
{
    const mc_opts *o = c->o;
    long rounds = mc_iters(o, c->size) * o->repeats;
    double mbps = (double)c->roots * c->k * (double)c->size / round_med; /* bytes/us = MB/s */
    if (o->csv)
        printf("%s,%d,-,-,%s,%zu,%d,%.2f,%.2f,%.2f,%.3f,%ld\n", MB_MPI, c->n, c->method, c->size,
               c->k, each_med, each_max, round_med, mbps, rounds);
    else
        printf("%-12s %9zu %5d %11.2f %11.2f %11.2f %10.3f %5ld\n", c->method, c->size, c->k,
               each_med, each_max, round_med, mbps, rounds);
    fflush(stdout);
}

/* One row: a warm-up round, then mc_iters x repeats rounds. */
static void row(cc *c)
{
    long rounds = mc_iters(c->o, c->size) * c->o->repeats, ne = 0;
    double T;
    one_round(c, &ne, &T);
    ne = 0;
    for (long i = 0; i < rounds; i++)
        one_round(c, &ne, &c->T[i]);
    if (c->me == 0) {
        double each_max = 0;
        for (long i = 0; i < ne; i++)
            each_max = c->each[i] > each_max ? c->each[i] : each_max;
        double each_med = bench_median(c->each, ne);
        print_row(c, each_med, each_max, bench_median(c->T, rounds));
    }
}

/* The rounds of one method's rows: a warm-up and mc_iters x repeats per size. */
static long method_rounds(const mc_opts *o)
{
    long r = 0;
    for (int i = 0; i < o->nsizes; i++)
        r += mc_iters(o, o->sizes[i]) * o->repeats + 1;
    return r;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static uint64_t group_hash(int root, const int *members, int m)
{
    uint64_t h = bench_mix64((uint64_t)(unsigned)root + 1);
    for (int i = 0; i < m; i++)
        h = bench_mix64(h ^ (uint64_t)(unsigned)members[i]);
    return h;
}

/* The bcast method's groups: every (round, root) of the next `rounds` rounds, for the roots
 * drawn in that round, mapped to a distinct (root, set), numbered in order of first appearance
 * (round, then root); the others' entries -1. 0, or -1 without memory. */
static int plan_groups(cc *c, long rounds)
{
    size_t pairs = (size_t)rounds * (size_t)c->n, cap = 1;
    while (cap < 2 * pairs)
        cap *= 2;
    long *slot = malloc(sizeof *slot * cap); /* open addressing: group index, or -1 */
    int *m = malloc(sizeof *m * (size_t)(c->k + 1));
    c->groups = calloc(pairs, sizeof *c->groups);
    c->group_of = malloc(sizeof *c->group_of * pairs);
    c->ngroups = 0;
    c->first_round = c->round + 1;
    int rc = slot && m && c->groups && c->group_of ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < cap; i++)
        slot[i] = -1;
    for (long r = 0; rc == 0 && r < rounds; r++) {
        draw_round(c, c->first_round + (int)r);
        for (int root = 0; rc == 0 && root < c->n; root++) {
            c->group_of[(size_t)r * (size_t)c->n + (size_t)root] = -1;
            if (!c->is_root[root])
                continue;
            m[0] = root;
            memcpy(m + 1, c->dests + (size_t)root * (size_t)c->k, sizeof *m * (size_t)c->k);
            qsort(m, (size_t)c->k + 1, sizeof *m, cmp_int);
            size_t h = (size_t)group_hash(root, m, c->k + 1) & (cap - 1);
            while (slot[h] >= 0 &&
                   (c->groups[slot[h]].root != root ||
                    memcmp(c->groups[slot[h]].members, m, sizeof *m * (size_t)(c->k + 1))))
                h = (h + 1) & (cap - 1);
            if (slot[h] < 0) {
                group *g = &c->groups[c->ngroups];
                g->members = malloc(sizeof *m * (size_t)(c->k + 1));
                if (!g->members) {
                    rc = -1;
                    break;
                }
                memcpy(g->members, m, sizeof *m * (size_t)(c->k + 1));
                g->root = root;
                g->root_at = 0;
                while (m[g->root_at] != root)
                    g->root_at++;
                g->comm = MPI_COMM_NULL;
                slot[h] = c->ngroups++;
            }
            c->group_of[(size_t)r * (size_t)c->n + (size_t)root] = (int)slot[h];
        }
    }
    free(slot);
    free(m);
    return rc;
}

/* The communicators of this rank's groups, in group order (every rank the same order, so
 * no creation waits on one that waits on it); the slowest rank's time from a barrier in *ms. */
static void create_comms(cc *c, double *ms)
{
    MPI_Group world;
    int *tag_ub, flag;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    long ub = flag ? *tag_ub : 32767;
    mb_watchdog_arm();
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = bench_now_us(CLOCK_MONOTONIC);
    for (long i = 0; i < c->ngroups; i++) {
        group *g = &c->groups[i];
        int in = 0;
        for (int j = 0; j <= c->k; j++)
            in |= g->members[j] == c->me;
        if (!in)
            continue;
        MPI_Group sub;
        MPI_Group_incl(world, c->k + 1, g->members, &sub);
        MPI_Comm_create_group(MPI_COMM_WORLD, sub, (int)(i % (ub + 1)), &g->comm);
        MPI_Group_free(&sub);
    }
    double mine = (bench_now_us(CLOCK_MONOTONIC) - t0) / 1000, worst = 0;
    MPI_Reduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Group_free(&world);
    *ms = worst;
}

static void free_groups(cc *c)
{
    for (long i = 0; c->groups && i < c->ngroups; i++) {
        if (c->groups[i].comm != MPI_COMM_NULL)
            MPI_Comm_free(&c->groups[i].comm);
        free(c->groups[i].members);
    }
    free(c->groups);
    free(c->group_of);
    c->groups = NULL;
    c->group_of = NULL;
    c->ngroups = 0;
}

/* One method's rows, every size. 0, or 1 when the bcast method's plan found no memory. */
static int method(cc *c, const char *name)
{
    c->method = name;
    double ms = 0;
    int bcast = !strcmp(name, "bcast"), st = 0;
    if (bcast) {
        st = plan_groups(c, method_rounds(c->o));
        if (st)
            fprintf(stderr, PROG ": rank %d: no memory for the bcast method's groups\n", c->me);
        if (!mb_all_ok(&st)) {
            free_groups(c);
            return st;
        }
        create_comms(c, &ms);
    }
    for (int i = 0; i < c->o->nsizes; i++) {
        c->size = c->o->sizes[i];
        row(c);
    }
    if (bcast && c->me == 0)
        printf("# bcast: %ld communicators created in %.1f ms (%.0f us each), not in the "
               "figures above\n",
               c->ngroups, ms, c->ngroups ? ms * 1000 / (double)c->ngroups : 0.0);
    fflush(stdout);
    if (bcast)
        free_groups(c);
    return 0;
}

static int setup(cc *c)
{
    int n = c->n;
    size_t cap = c->o->sizes[c->o->nsizes - 1];
    long rounds = mc_iters(c->o, c->o->sizes[0]) * c->o->repeats; /* the most of any row */
    c->rbuf = calloc((size_t)n, sizeof *c->rbuf);
    c->sbuf = malloc(cap ? cap : 1);
    c->dests = malloc(sizeof *c->dests * (size_t)n * (size_t)c->k);
    c->scratch = malloc(sizeof *c->scratch * (size_t)n);
    c->is_root = malloc((size_t)n);
    c->req = malloc(sizeof *c->req * (size_t)(n + c->k));
    c->req_root = malloc(sizeof *c->req_root * (size_t)(n + c->k));
    c->times = malloc(sizeof *c->times * (size_t)(n + 1));
    c->reports = malloc(sizeof *c->reports * (size_t)n * (size_t)(n + 1));
    c->each = malloc(sizeof *c->each * (size_t)n * (size_t)(rounds + 1));
    c->T = malloc(sizeof *c->T * (size_t)(rounds + 1));
    int ok = c->rbuf && c->sbuf && c->dests && c->scratch && c->is_root && c->req && c->req_root &&
             c->times && c->reports && c->each && c->T;
    for (int r = 0; ok && r < n; r++)
        if (r != c->me && !(c->rbuf[r] = malloc(cap ? cap : 1)))
            ok = 0;
    for (size_t i = 0; ok && i < cap; i++)
        c->sbuf[i] = pattern(i, c->me);
    if (!ok)
        fprintf(stderr, PROG ": rank %d: no memory for %zu B\n", c->me, cap);
    return ok ? 0 : 1;
}

static void teardown(cc *c)
{
    for (int r = 0; c->rbuf && r < c->n; r++)
        free(c->rbuf[r]);
    free(c->rbuf);
    free(c->sbuf);
    free(c->dests);
    free(c->scratch);
    free(c->is_root);
    free(c->req);
    free(c->req_root);
    free(c->times);
    free(c->reports);
    free(c->each);
    free(c->T);
}

static void print_header(const cc *c)
{
    if (c->o->csv) {
        fputs(MC_CONCURRENT_CSV_HEADER, stdout);
        return;
    }
    char lib[256], tp[256];
    mb_library(lib, sizeof lib);
    mb_transport(tp, sizeof tp);
    printf("# " PROG " --concurrent %d --roots %d (%s, %s): %d ranks, %s a root at once to %d "
           "random others (fastmsg-bench-mcast --concurrent's draw); times from each root's start "
           "(one clock)\n"
           "# p2p = MPI_Isend to each of the K, MPI_Irecv from each root that drew this rank; "
           "bcast = MPI_Ibcast on a communicator per (root, set), made beforehand\n"
           "# each = one multicast's slowest member; round = the last copy of a round; "
           "aggregate = R x K x size / round\n"
           "# tree          size(B)     K    each_us  each_max_us    round_us   agg_MBps "
           "rounds\n",
           c->k, c->roots, lib, tp, c->n,
           c->roots < c->n ? "R of them (drawn per round)" : "every rank", c->k);
}

int main(int argc, char **argv)
{
    static const mc_cli cli = {
        .launch = MB_LAUNCH " N",
        .what = "Every rank a root at once to K random others (fastmsg-bench-mcast --concurrent "
                "K's draw),\nby MPI point-to-point (p2p) and MPI_Ibcast on communicators (bcast), "
                "per size.",
        .noun = "multicast",
        .timeout = "fail when one round lasts this long",
        .trees = 0,
        .concurrent = 1,
        .methods = METHODS,
    };
    mc_opts o;
    int prc = mc_parse_cli(argc, argv, &cli, &o);
    if (prc)
        return prc > 0 ? 0 : 2;
    if (o.sizes[o.nsizes - 1] > INT_MAX) {
        fprintf(stderr, PROG ": sizes are at most %d B (MPI counts are int)\n", INT_MAX);
        return 2;
    }
    int me, n, status = mb_start(&argc, &argv, PROG, o.timeout_s, &me, &n);
    cc c = {.o = &o, .me = me, .n = n, .k = o.concurrent, .roots = o.roots ? o.roots : n};
    if (status == 0 && (o.concurrent < 1 || o.concurrent >= n || !o.common_clock)) {
        if (me == 0)
            fprintf(stderr,
                    PROG ": needs --concurrent K, K below the job's %d ranks, and --common-clock\n",
                    n);
        status = 2;
    } else if (status == 0 && o.roots > n) {
        if (me == 0)
            fprintf(stderr, PROG ": --roots %d: at most the job's %d ranks can be roots\n", o.roots,
                    n);
        status = 2;
    } else if (status == 0) {
        status = setup(&c);
    }
    if (mb_all_ok(&status)) {
        if (me == 0)
            print_header(&c);
        for (int t = 0; t < o.ntrees && status == 0; t++) {
            status = method(&c, o.trees[t]);
            mb_all_ok(&status);
        }
        if (c.bad) {
            fprintf(stderr, PROG ": rank %d: %ld wrong copies\n", me, c.bad);
            status = 1;
        }
    }
    teardown(&c);
    mb_finish();
    return status;
}
