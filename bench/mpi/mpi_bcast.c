/* mpi-bcast-openmpi, mpi-bcast-mpich: MPI_Bcast completion time per size, measured the way
 * fm-mcast measures a multicast, with its options (mc_opts.c) and columns, so that one
 * comparison can run fastmsg and both MPIs on the same sizes and parse them alike.
 *
 *   mpirun.openmpi -n N mpi-bcast-openmpi [options]     (-h lists them)
 *   mpiexec.mpich -n N mpi-bcast-mpich [options]
 *
 * Method, per broadcast (fm_mcast.c's): every rank leaves an MPI_Barrier (the common start)
 * and reads its own clock. The root lets --settle microseconds pass, so that the others have
 * left the barrier too, then calls MPI_Bcast; every other rank calls MPI_Bcast at once and
 * notes when it returns, measured from its own barrier exit plus the settle time (clocks of
 * different processes cannot be compared, so the barrier's exit skew is in the figures). The
 * root's CPU time is CLOCK_PROCESS_CPUTIME_ID around its MPI_Bcast. MPI_Gather brings every
 * rank's figures to rank 0; the slowest member's time is that broadcast's completion time. A
 * row is one warm-up broadcast, then -r runs of ITERS broadcasts: medians over the iterations,
 * then over the runs. One difference remains: a member inside MPI's tree returns from
 * MPI_Bcast only after passing the data on, where an fm-mcast member is done when its own copy
 * is complete.
 *
 * The warm-up and every broadcast of the first run are checked: each receiver first fills its
 * buffer with bytes that differ from the pattern everywhere, then compares every byte.
 *
 * Columns as fm-mcast's. MPI_Bcast picks its own algorithm and has no model, so tree is
 * "ompi-bcast" or "mpich-bcast", and resolved, mode, model_us, ratio (and the fastmsg settings
 * packet_size, credits, calibrated) are "-". Rank 0 prints; MPI errors end the job. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mc.h"
#include "stats.h"
#include "mpi_common.h"

#define PROG "mpi-bcast-" MB_MPI
#if defined(OPEN_MPI)
#define TREE "ompi-bcast"
#else
#define TREE "mpich-bcast"
#endif

typedef struct bc {
    const mc_opts *o;
    int me, n, root;
    unsigned char *buf; /* the root's message, or this member's copy */
    double *reports;    /* rank 0: {us, cpu_us} of every rank for the current broadcast */
    long bad;           /* wrong copies */
} bc;

static unsigned char pattern(size_t i)
{
    return (unsigned char)(i * 131 + 7);
}

/* The figures of one broadcast, on rank 0. */
typedef struct sample {
    double done, lo, hi, cpu; /* slowest, fastest member; root CPU time; us */
} sample;

/* One broadcast of size bytes; rank 0 gets *out. */
static void one_bcast(bc *b, size_t size, int check, sample *out)
{
    /* member: until its copy was complete; root: CPU time; CLOCK_MONOTONIC when the copy was
     * complete (member) or the broadcast began (root), for --common-clock */
    double mine[3] = {-1, 0, 0};
    if (check && b->me != b->root)
        for (size_t i = 0; i < size; i++)
            b->buf[i] = (unsigned char)~pattern(i);
    mb_watchdog_arm();
    MPI_Barrier(MPI_COMM_WORLD);
    double t_start = mb_now_us(CLOCK_MONOTONIC) + b->o->settle_us;
    if (b->me == b->root) {
        /* fm-mcast drives progress while it waits; MPI has nothing to drive here. */
        while (mb_now_us(CLOCK_MONOTONIC) < t_start)
            ;
        double c0 = mb_now_us(CLOCK_PROCESS_CPUTIME_ID);
        mine[2] = mb_now_us(CLOCK_MONOTONIC);
        MPI_Bcast(b->buf, (int)size, MPI_BYTE, b->root, MPI_COMM_WORLD);
        mine[1] = mb_now_us(CLOCK_PROCESS_CPUTIME_ID) - c0;
    } else {
        MPI_Bcast(b->buf, (int)size, MPI_BYTE, b->root, MPI_COMM_WORLD);
        mine[2] = mb_now_us(CLOCK_MONOTONIC);
        mine[0] = mine[2] - t_start;
        for (size_t i = 0; check && i < size; i++)
            if (b->buf[i] != pattern(i)) {
                b->bad++;
                break;
            }
    }
    MPI_Gather(mine, 3, MPI_DOUBLE, b->reports, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (b->me != 0)
        return;
    *out = (sample){.done = 0, .lo = 1e300, .hi = -1e300, .cpu = b->reports[3 * b->root + 1]};
    for (int r = 0; r < b->n; r++) {
        if (r == b->root)
            continue;
        double us = b->reports[3 * r];
        if (b->o->common_clock)
            us = b->reports[3 * r + 2] - b->reports[3 * b->root + 2];
        out->lo = us < out->lo ? us : out->lo;
        out->hi = us > out->hi ? us : out->hi;
    }
    out->done = out->hi;
}

/* A row: medians of completion, fastest and slowest member, skew and root CPU time. */
#define MC_COLS 5

static int run_row(bc *b, size_t size, double *row)
{
    long iters = mc_iters(b->o, size);
    double *it = malloc(sizeof *it * (size_t)iters * MC_COLS);
    double rep[MC_COLS][MC_MAX_REPEAT];
    if (!it)
        return -1;
    sample s;
    one_bcast(b, size, 1, &s); /* warm-up: pages, connections, caches */
    for (int r = 0; r < b->o->repeats; r++) {
        for (long i = 0; i < iters; i++) {
            one_bcast(b, size, r == 0, &s);
            double v[MC_COLS] = {s.done, s.lo, s.hi, s.hi - s.lo, s.cpu};
            for (int c = 0; c < MC_COLS; c++)
                it[c * iters + i] = v[c];
        }
        for (int c = 0; c < MC_COLS && b->me == 0; c++)
            rep[c][r] = bench_median(it + c * iters, iters);
    }
    for (int c = 0; c < MC_COLS && b->me == 0; c++)
        row[c] = bench_median(rep[c], b->o->repeats);
    free(it);
    return 0;
}

static void print_header(const bc *b)
{
    const mc_opts *o = b->o;
    if (o->csv) {
        fputs(MC_CSV_HEADER, stdout);
        return;
    }
    char lib[256], tp[256];
    mb_library(lib, sizeof lib);
    mb_transport(tp, sizeof tp);
    printf("# " PROG " (%s): %d ranks, root %d, %s\n", lib, b->n, b->root, tp);
    printf("# MPI_Bcast picks its own algorithm, no model (resolved, mode, model_us, ratio: -); "
           "medians of %d repeats; ",
           o->repeats);
    if (o->common_clock)
        printf("times from the root's start (one clock)\n");
    else
        printf("times from each rank's own barrier exit + %.0f us settle\n", o->settle_us);
    printf("# completion = slowest member; min/max = fastest/slowest member; skew = max - min; "
           "cpu = root's CPU time per broadcast\n");
    fputs(MC_TABLE_HEADER, stdout);
    fflush(stdout);
}

static void print_row(const bc *b, size_t size, const double *row)
{
    long iters = mc_iters(b->o, size);
    if (b->o->csv)
        printf("%s,%d,-,-,-,%s,-,-,%zu,%.2f,%.2f,%.2f,%.2f,%.2f,-,-,%ld\n", MB_MPI, b->n, TREE,
               size, row[0], row[1], row[2], row[3], row[4], iters);
    else
        printf("%-12s %-14s %-4s %9zu %11.2f %9.2f %9.2f %9.2f %9.2f %9s %6s %5ld\n", TREE, "-",
               "-", size, row[0], row[1], row[2], row[3], row[4], "-", "-", iters);
    fflush(stdout);
}

static int sweep(bc *b)
{
    for (int i = 0; i < b->o->nsizes; i++) {
        double row[MC_COLS];
        if (run_row(b, b->o->sizes[i], row)) {
            fprintf(stderr, PROG ": rank %d: no memory\n", b->me);
            return -1;
        }
        if (b->me == 0)
            print_row(b, b->o->sizes[i], row);
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const mc_cli cli = {
        .launch = MB_LAUNCH " N",
        .what = "MPI_Bcast completion time from one root to every rank, per size.",
        .noun = "broadcast",
        .timeout = "fail when one broadcast lasts this long",
        .trees = 0,
    };
    mc_opts o;
    int prc = mc_parse_cli(argc, argv, &cli, &o);
    if (prc)
        return prc > 0 ? 0 : 2;
    if (o.sizes[o.nsizes - 1] > INT_MAX) {
        fprintf(stderr, PROG ": sizes are at most %d B (MPI counts are int)\n", INT_MAX);
        return 2;
    }
    MPI_Init(&argc, &argv);
    int me, n, status = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    mb_watchdog_init(PROG, me, o.timeout_s);
    bc b = {.o = &o, .me = me, .n = n, .root = o.root};
    if (me == 0 && mb_check_library(PROG)) {
        status = 1;
    } else if (n < 2 || o.root >= n) {
        if (me == 0)
            fprintf(stderr, PROG ": needs at least 2 ranks and --root below %d\n", n);
        status = 2;
    } else {
        b.buf = malloc(o.sizes[o.nsizes - 1]);
        b.reports = calloc(3 * (size_t)n, sizeof *b.reports);
        if (!b.buf || !b.reports) {
            fprintf(stderr, PROG ": rank %d: no memory for %zu B\n", me, o.sizes[o.nsizes - 1]);
            status = 1;
        }
        for (size_t i = 0; b.buf && me == o.root && i < o.sizes[o.nsizes - 1]; i++)
            b.buf[i] = pattern(i);
    }
    /* Every rank stops if any cannot go on, rather than leave the others waiting. */
    int worst = 0;
    MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (worst == 0) {
        if (me == 0)
            print_header(&b);
        if (sweep(&b))
            MPI_Abort(MPI_COMM_WORLD, 1); /* the others are inside a collective */
        if (b.bad) {
            fprintf(stderr, PROG ": rank %d: %ld wrong copies\n", me, b.bad);
            status = 1;
        }
    } else if (status == 0) {
        status = worst;
    }
    free(b.buf);
    free(b.reports);
    mb_watchdog_arm();
    MPI_Finalize();
    mb_watchdog_stop();
    return status;
}
