/* SPDX-License-Identifier: BSD-3-Clause */
/* fastmsg-bench-mpi-bcast-openmpi, fastmsg-bench-mpi-bcast-mpich: MPI_Bcast completion time per
 * size, measured the way fastmsg-bench-mcast measures a multicast, with its options (mc_opts.c) and
 * columns, so that one comparison can run fastmsg and both MPIs on the same sizes and parse them
 * alike.
 *
 *   mpirun.openmpi -n N fastmsg-bench-mpi-bcast-openmpi [options]     (-h lists them)
 *   mpiexec.mpich -n N fastmsg-bench-mpi-bcast-mpich [options]
 *
 * Method, per broadcast (fm_mcast.c's): every rank leaves an MPI_Barrier (the common start)
 * and reads its own clock. The root lets --settle microseconds pass, so that the others have
 * left the barrier too, then calls MPI_Bcast; every other rank calls MPI_Bcast at once and
 * notes when it returns, measured from its own barrier exit plus the settle time (clocks of
 * different processes cannot be compared, so the barrier's exit skew is in the figures). The
 * root's CPU time is CLOCK_PROCESS_CPUTIME_ID around its MPI_Bcast. After the quiet time
 * (--quiet; MPI_Bcast from rank 0 before the barrier) MPI_Gather brings every rank's figures to
 * rank 0; the slowest member's time is that broadcast's completion time. A
 * row is one warm-up broadcast, then -r runs of ITERS broadcasts: medians over the iterations,
 * then over the runs. One difference remains: a member inside MPI's tree returns from
 * MPI_Bcast only after passing the data on, where a fastmsg-bench-mcast member is done when its own
 * copy is complete.
 *
 * The warm-up and every broadcast of the first run are checked: each receiver first fills its
 * buffer with bytes that differ from the pattern everywhere, then compares every byte.
 *
 * Columns as fastmsg-bench-mcast's. MPI_Bcast picks its own algorithm and has no model, so tree is
 * "ompi-bcast" or "mpich-bcast", and resolved, mode, model_us, ratio, held_pkts,
 * model_held_pkts (and the fastmsg settings
 * packet_size, credits, calibrated) are "-". Rank 0 prints; MPI errors end the job. */
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mc.h"
#include "mpi_common.h"

#define PROG "fastmsg-bench-mpi-bcast-" MB_MPI
#if defined(FM_BENCH_SMPI)
#define TREE "smpi-bcast"
#elif defined(OPEN_MPI)
#define TREE "ompi-bcast"
#else
#define TREE "mpich-bcast"
#endif

/* Gathered as three doubles a rank. */
_Static_assert(sizeof(mc_times) == 3 * sizeof(double), "mc_times is three doubles");

typedef struct bc {
    const mc_opts *o;
    int me, n, root;
    unsigned char *buf; /* the root's message, or this member's copy */
    unsigned char *ref; /* the message, for members to check their copies against */
    mc_times *times;    /* rank 0: every rank's, for the current broadcast */
    double *scratch;    /* mc_run_row's */
    long bad;           /* wrong copies */
} bc;

/* Until us (CLOCK_MONOTONIC), send nothing but let MPI progress (MPI_Iprobe), yielding the
 * core between probes; with --settle-sleep (a simulated clock, which probing never moves:
 * a member whose copy came before its own start spun there for good) asleep, which loses
 * nothing: MPI_Bcast has returned, its part done. */
static void quiet_until(const mc_opts *o, double us)
{
    while (o->settle_sleep && bench_now_us(CLOCK_MONOTONIC) < us)
        bench_sleep_until_us(us);
    while (bench_now_us(CLOCK_MONOTONIC) < us) {
        int flag;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        sched_yield();
    }
}

/* One broadcast of size bytes (mc_one_fn); rank 0 gets *out. */
static int one_bcast(void *arg, size_t size, int check, double quiet_us, mc_sample *out)
{
    bc *b = arg;
    mc_times mine = {.us = -1};
    check = check && !b->o->shared;
    if (check && b->me != b->root)
        mc_fill(b->buf, size, 0xff);
    mb_watchdog_arm();
    if (b->o->quiet > 0) /* (every rank has the same command line) */
        MPI_Bcast(&quiet_us, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    double t_start = bench_now_us(CLOCK_MONOTONIC) + b->o->settle_us;
    if (b->me == b->root) {
        /* fastmsg-bench-mcast drives progress while it waits; MPI has nothing to drive here. */
        if (b->o->settle_sleep)
            bench_sleep_until_us(t_start);
        while (bench_now_us(CLOCK_MONOTONIC) < t_start)
            ;
        double c0 = bench_now_us(CLOCK_PROCESS_CPUTIME_ID);
        mine.at = bench_now_us(CLOCK_MONOTONIC);
        MPI_Bcast(b->buf, (int)size, MPI_BYTE, b->root, MPI_COMM_WORLD);
        mine.cpu_us = bench_now_us(CLOCK_PROCESS_CPUTIME_ID) - c0;
    } else {
        MPI_Bcast(b->buf, (int)size, MPI_BYTE, b->root, MPI_COMM_WORLD);
        mine.at = bench_now_us(CLOCK_MONOTONIC);
        mine.us = mine.at - t_start;
        if (check && memcmp(b->buf, b->ref, size) != 0)
            b->bad++;
    }
    quiet_until(b->o, t_start + quiet_us);
    MPI_Gather(&mine, 3, MPI_DOUBLE, b->times, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (b->me == 0)
        *out = mc_summarize(b->o, b->n, b->root, b->times);
    return 0;
}

static void print_header(const bc *b)
{
    const mc_opts *o = b->o;
    if (!o->csv) {
        char lib[256], tp[256];
        mb_library(lib, sizeof lib);
        mb_transport(tp, sizeof tp);
        printf("# " PROG " (%s): %d ranks, root %d, %s\n", lib, b->n, b->root, tp);
    }
    mc_print_head(
        o, "MPI_Bcast picks its own algorithm, no model (resolved, mode, model_us, ratio: -)",
        "broadcast");
}

static void sweep(bc *b)
{
    static const mc_label lb = {{MB_MPI, "-", "-"}, 0, "-", TREE, "-", "-"};
    mc_warmup(b->o, one_bcast, b);
    for (int i = 0; i < b->o->nsizes; i++) {
        double row[MC_COLS];
        mc_run_row(b->o, b->me, b->o->sizes[i], one_bcast, b, b->scratch, row);
        if (b->me == 0) {
            mc_label l = lb;
            l.ranks = b->n;
#if defined(FM_BENCH_SMPI)
            /* SMPI's algorithm, which bench/sim/run chose (smpi/bcast) and names here. */
            l.resolved = bench_env("FM_BENCH_SMPI_BCAST", "-");
#endif
            static const mc_extra none = {-1, -1, -1, -1, -1, -1};
            mc_print_row(b->o, &l, b->o->sizes[i], row, &none);
        }
    }
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
    int me, n, status = mb_start(&argc, &argv, PROG, o.timeout_s, &me, &n);
    bc b = {.o = &o, .me = me, .n = n, .root = o.root};
    if (status == 0 && (n < 2 || o.root >= n)) {
        if (me == 0)
            fprintf(stderr, PROG ": needs at least 2 ranks and --root below %d\n", n);
        status = 2;
    } else if (status == 0) {
        b.buf = MC_PAYLOAD(&o, o.sizes[o.nsizes - 1]);
        b.ref = MC_PAYLOAD(&o, o.sizes[o.nsizes - 1]);
        b.times = calloc((size_t)n, sizeof *b.times);
        b.scratch = malloc(sizeof *b.scratch * MC_COLS * (size_t)o.iters);
        if (!b.buf || !b.ref || !b.times || !b.scratch) {
            fprintf(stderr, PROG ": rank %d: no memory for %zu B\n", me, o.sizes[o.nsizes - 1]);
            status = 1;
        }
        if (status == 0) {
            mc_fill(b.ref, o.sizes[o.nsizes - 1], 0);
            memcpy(b.buf, b.ref, o.sizes[o.nsizes - 1]);
        }
    }
    if (mb_all_ok(&status)) {
        if (me == 0)
            print_header(&b);
        sweep(&b);
        if (b.bad) {
            fprintf(stderr, PROG ": rank %d: %ld wrong copies\n", me, b.bad);
            status = 1;
        }
    }
    if (b.buf)
        MC_PAYLOAD_FREE(&o, b.buf);
    if (b.ref)
        MC_PAYLOAD_FREE(&o, b.ref);
    free(b.times);
    free(b.scratch);
    mb_finish();
    return status;
}
