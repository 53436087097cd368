/* SPDX-License-Identifier: BSD-3-Clause */
/* fastmsg-bench-mpi-pingpong-openmpi, fastmsg-bench-mpi-pingpong-mpich: fastmsg-bench-pingpong's
 * measurements over MPI, with its options, iteration counts and output (pp_opts.c, pp_report.c), so
 * that one comparison can run fastmsg and both MPIs on the same sizes and parse them alike.
 *
 *   mpirun.openmpi -n 2 fastmsg-bench-mpi-pingpong-openmpi [options]     (-h lists them)
 *   mpiexec.mpich -n 2 fastmsg-bench-mpi-pingpong-mpich [options]
 *
 * Latency: rank 0 MPI_Send's a message, rank 1 MPI_Recv's it and answers with one of the same
 * size; one-way latency is half the mean round trip (osu_latency). Bandwidth and message rate:
 * rank 0 MPI_Isend's a window of messages back to back and MPI_Waitall's them; rank 1 posts an
 * MPI_Irecv for each, waits for all, and answers the window with one empty message (osu_bw).
 * A window's receives all land in one buffer, as in osu_bw and as fastmsg-bench-pingpong delivers
 * every message into one buffer. Every size runs -r times, latency then bandwidth; medians.
 *
 * CSV columns as fastmsg-bench-pingpong's: provider is the MPI ("openmpi" or "mpich"); packet_size
 * and credits, fastmsg settings, are "-". Rank 0 prints; MPI errors end the job (the default
 * MPI_ERRORS_ARE_FATAL); a failed --check or a stalled run makes the exit status non-zero. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi_common.h"
#include "pp_common.h"

#define PROG "fastmsg-bench-mpi-pingpong-" MB_MPI

enum { TAG_LAT = 1, TAG_BW, TAG_ACK };

typedef struct mp_link {
    int me, peer;
    unsigned char *sbuf, *rbuf; /* pp_buffers' */
    MPI_Request *reqs;          /* one per message of a window */
    MPI_Status *stats;
    int check;
    long bad; /* messages that failed --check */
} mp_link;

static int link_init(mp_link *l, int me, const pp_opts *o)
{
    *l = (mp_link){.me = me, .peer = 1 - me, .check = o->check};
    int rc = pp_buffers(o, &l->sbuf, &l->rbuf);
    l->reqs = calloc((size_t)o->window, sizeof *l->reqs);
    l->stats = calloc((size_t)o->window, sizeof *l->stats);
    return rc || !l->reqs || !l->stats ? -1 : 0;
}

static void link_fini(mp_link *l)
{
    free(l->sbuf);
    free(l->rbuf);
    free(l->reqs);
    free(l->stats);
}

/* --check: the message had `size` bytes, all as sent. */
static void check(mp_link *l, const MPI_Status *st, size_t size)
{
    int got = -1;
    MPI_Get_count(st, MPI_BYTE, &got);
    if (got != (int)size || memcmp(l->rbuf, l->sbuf, size) != 0)
        l->bad++;
}

static void recv_one(mp_link *l, size_t size)
{
    MPI_Status st;
    MPI_Recv(l->rbuf, (int)size, MPI_BYTE, l->peer, TAG_LAT, MPI_COMM_WORLD,
             l->check ? &st : MPI_STATUS_IGNORE);
    if (l->check)
        check(l, &st, size);
}

/* One latency run (pp_ops's); both ranks run the same counts, rank 0 fills out. */
static int measure_latency(void *link, const pp_opts *o, size_t size, pp_sample *out)
{
    mp_link *l = link;
    long iters = pp_lat_iters(o, size), total = pp_warmup(o, iters) + iters;
    double t0 = 0;
    mb_watchdog_arm();
    MPI_Barrier(MPI_COMM_WORLD);
    for (long i = 0; i < total; i++) {
        if (i == total - iters)
            t0 = bench_now_us(CLOCK_MONOTONIC);
        if (l->me == 0) {
            MPI_Send(l->sbuf, (int)size, MPI_BYTE, l->peer, TAG_LAT, MPI_COMM_WORLD);
            recv_one(l, size);
        } else {
            recv_one(l, size);
            MPI_Send(l->sbuf, (int)size, MPI_BYTE, l->peer, TAG_LAT, MPI_COMM_WORLD);
        }
    }
    out->lat_us = (bench_now_us(CLOCK_MONOTONIC) - t0) / (2.0 * (double)iters);
    return 0;
}

/* One bandwidth run (pp_ops's): windows out from rank 0, one empty ack back for each. */
static int measure_bandwidth(void *link, const pp_opts *o, size_t size, pp_sample *out)
{
    mp_link *l = link;
    long timed = pp_bw_windows(o, size), total = pp_warmup(o, timed) + timed;
    int n = (int)size, w = o->window;
    double t0 = 0;
    mb_watchdog_arm();
    MPI_Barrier(MPI_COMM_WORLD);
    for (long i = 0; i < total; i++) {
        if (l->me == 0) {
            if (i == total - timed)
                t0 = bench_now_us(CLOCK_MONOTONIC);
            for (int k = 0; k < w; k++)
                MPI_Isend(l->sbuf, n, MPI_BYTE, l->peer, TAG_BW, MPI_COMM_WORLD, &l->reqs[k]);
            MPI_Waitall(w, l->reqs, l->stats);
            MPI_Recv(l->rbuf, 0, MPI_BYTE, l->peer, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            for (int k = 0; k < w; k++)
                MPI_Irecv(l->rbuf, n, MPI_BYTE, l->peer, TAG_BW, MPI_COMM_WORLD, &l->reqs[k]);
            MPI_Waitall(w, l->reqs, l->stats);
            for (int k = 0; k < w && l->check; k++)
                check(l, &l->stats[k], size);
            MPI_Send(l->sbuf, 0, MPI_BYTE, l->peer, TAG_ACK, MPI_COMM_WORLD);
        }
    }
    if (l->me == 0) {
        double us = bench_now_us(CLOCK_MONOTONIC) - t0, msgs = (double)timed * w;
        out->bw_mbs = msgs * (double)size / us; /* bytes per us = 10^6 B/s */
        out->rate_mps = msgs / us * 1e6;
    }
    return 0;
}

static void print_header(const pp_opts *o)
{
    if (!o->csv) {
        char lib[256], tp[256];
        mb_library(lib, sizeof lib);
        mb_transport(tp, sizeof tp);
        printf("# " PROG " (%s): 2 ranks, %s\n", lib, tp);
        printf("# median of %d repeats; latency by MPI_Send/MPI_Recv, windows by "
               "MPI_Isend/MPI_Irecv + MPI_Waitall\n",
               o->repeats);
    }
    pp_print_head(o);
}

/* The sizes and repeats (pp_sweep); MPI errors end the job, so none come back. */
static void sweep(mp_link *l, const pp_opts *o)
{
    static const bench_label lb = {MB_MPI, "-", "-"};
    pp_ops ops = {measure_latency, measure_bandwidth, l};
    size_t failed;
    pp_sweep(o, &ops, l->me == 0, &lb, &failed);
}

int main(int argc, char **argv)
{
    static const pp_cli cli = {
        .launch = MB_LAUNCH " 2",
        .between = MB_NAME " ranks",
        .timeout = "fail when one timed run lasts this long",
        .receive = 0,
    };
    pp_opts o;
    int prc = pp_parse_cli(argc, argv, &cli, &o);
    if (prc)
        return prc > 0 ? 0 : 2;
    if (o.max > INT_MAX) {
        fprintf(stderr, PROG ": --max is at most %d B (MPI counts are int)\n", INT_MAX);
        return 2;
    }
    int me, n, status = mb_start(&argc, &argv, PROG, o.timeout_s, &me, &n);
    mp_link l = {0};
    if (status == 0 && n != 2) {
        if (me == 0)
            fprintf(stderr, PROG ": needs exactly 2 ranks (" MB_LAUNCH " 2), not %d\n", n);
        status = 2;
    } else if (status == 0 && link_init(&l, me, &o)) {
        fprintf(stderr, PROG ": rank %d: no memory for %zu B buffers\n", me, o.max);
        status = 1;
    }
    if (mb_all_ok(&status)) {
        if (me == 0)
            print_header(&o);
        sweep(&l, &o);
        if (l.bad) {
            fprintf(stderr, PROG ": rank %d: %ld messages failed the check\n", me, l.bad);
            status = 1;
        }
    }
    link_fini(&l);
    mb_finish();
    return status;
}
