/* mpi-pingpong-openmpi, mpi-pingpong-mpich: fm-pingpong's measurements over MPI, with its
 * options, iteration counts and output (pp_opts.c, pp_report.c), so that one comparison can run
 * fastmsg and both MPIs on the same sizes and parse them alike.
 *
 *   mpirun.openmpi -n 2 mpi-pingpong-openmpi [options]     (-h lists them)
 *   mpiexec.mpich -n 2 mpi-pingpong-mpich [options]
 *
 * Latency: rank 0 MPI_Send's a message, rank 1 MPI_Recv's it and answers with one of the same
 * size; one-way latency is half the mean round trip (osu_latency). Bandwidth and message rate:
 * rank 0 MPI_Isend's a window of messages back to back and MPI_Waitall's them; rank 1 posts an
 * MPI_Irecv for each, waits for all, and answers the window with one empty message (osu_bw).
 * A window's receives all land in one buffer, as in osu_bw and as fm-pingpong delivers every
 * message into one buffer. Every size runs -r times, latency then bandwidth; medians.
 *
 * CSV columns as fm-pingpong's: provider is the MPI ("openmpi" or "mpich"); packet_size and
 * credits, fastmsg settings, are "-". Rank 0 prints; MPI errors end the job (the default
 * MPI_ERRORS_ARE_FATAL); a failed --check or a stalled run makes the exit status non-zero. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi_common.h"
#include "stats.h"
#include "pp_common.h"

#define PROG "mpi-pingpong-" MB_MPI

enum { TAG_LAT = 1, TAG_BW, TAG_ACK };

typedef struct mp_link {
    int me, peer;
    unsigned char *sbuf, *rbuf; /* preallocated, --max bytes each (at least 64) */
    MPI_Request *reqs;          /* one per message of a window */
    MPI_Status *stats;
    int check;
    long bad; /* messages that failed --check */
} mp_link;

static unsigned char *buffer(size_t len)
{
    unsigned char *b = aligned_alloc(64, (len + 63) & ~(size_t)63);
    if (b)
        memset(b, 0, len); /* fault every page in now, not in a timing */
    return b;
}

static int link_init(mp_link *l, int me, const pp_opts *o)
{
    size_t cap = o->max > 64 ? o->max : 64;
    *l = (mp_link){.me = me, .peer = 1 - me, .check = o->check};
    l->sbuf = buffer(cap);
    l->rbuf = buffer(cap);
    l->reqs = calloc((size_t)o->window, sizeof *l->reqs);
    l->stats = calloc((size_t)o->window, sizeof *l->stats);
    if (!l->sbuf || !l->rbuf || !l->reqs || !l->stats)
        return -1;
    for (size_t i = 0; i < cap; i++)
        l->sbuf[i] = (unsigned char)(i * 131 + (i >> 8) + 7);
    return 0;
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

/* One latency run; both ranks run the same counts, rank 0 fills out. */
static void measure_latency(mp_link *l, const pp_opts *o, size_t size, pp_sample *out)
{
    long iters = pp_lat_iters(o, size), total = pp_warmup(o, iters) + iters;
    double t0 = 0;
    mb_watchdog_arm();
    MPI_Barrier(MPI_COMM_WORLD);
    for (long i = 0; i < total; i++) {
        if (i == total - iters)
            t0 = mb_now_us(CLOCK_MONOTONIC);
        if (l->me == 0) {
            MPI_Send(l->sbuf, (int)size, MPI_BYTE, l->peer, TAG_LAT, MPI_COMM_WORLD);
            recv_one(l, size);
        } else {
            recv_one(l, size);
            MPI_Send(l->sbuf, (int)size, MPI_BYTE, l->peer, TAG_LAT, MPI_COMM_WORLD);
        }
    }
    out->lat_us = (mb_now_us(CLOCK_MONOTONIC) - t0) / (2.0 * (double)iters);
}

/* One bandwidth run: windows out from rank 0, one empty ack back for each. */
static void measure_bandwidth(mp_link *l, const pp_opts *o, size_t size, pp_sample *out)
{
    long timed = pp_bw_windows(o, size), total = pp_warmup(o, timed) + timed;
    int n = (int)size, w = o->window;
    double t0 = 0;
    mb_watchdog_arm();
    MPI_Barrier(MPI_COMM_WORLD);
    for (long i = 0; i < total; i++) {
        if (l->me == 0) {
            if (i == total - timed)
                t0 = mb_now_us(CLOCK_MONOTONIC);
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
        double us = mb_now_us(CLOCK_MONOTONIC) - t0, msgs = (double)timed * w;
        out->bw_mbs = msgs * (double)size / us; /* bytes per us = 10^6 B/s */
        out->rate_mps = msgs / us * 1e6;
    }
}

/* Every repeat of one size: latency then bandwidth, so drift in the machine hits both. */
static void run_size(mp_link *l, const pp_opts *o, size_t size, pp_row *row)
{
    double lat[PP_MAX_REPEAT], bw[PP_MAX_REPEAT], rate[PP_MAX_REPEAT];
    for (int r = 0; r < o->repeats; r++) {
        pp_sample s = {0, 0, 0};
        if (o->do_lat)
            measure_latency(l, o, size, &s);
        if (o->do_bw)
            measure_bandwidth(l, o, size, &s);
        lat[r] = s.lat_us;
        bw[r] = s.bw_mbs;
        rate[r] = s.rate_mps;
    }
    *row = (pp_row){.size = size,
                    .lat_iters = pp_lat_iters(o, size),
                    .bw_msgs = pp_bw_windows(o, size) * o->window,
                    .median = {bench_median(lat, o->repeats), bench_median(bw, o->repeats),
                               bench_median(rate, o->repeats)}};
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

static void sweep(mp_link *l, const pp_opts *o)
{
    static const pp_label lb = {MB_MPI, "-", "-"};
    size_t sizes[PP_MAX_SIZES];
    int n = pp_sizes(o, sizes);
    for (int i = 0; i < n; i++) {
        pp_row row;
        run_size(l, o, sizes[i], &row);
        if (l->me == 0)
            pp_print_row(o, &lb, &row);
    }
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
    MPI_Init(&argc, &argv);
    int me, n, status = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    mb_watchdog_init(PROG, me, o.timeout_s);
    mp_link l = {0};
    if (me == 0 && mb_check_library(PROG)) {
        status = 1;
    } else if (n != 2) {
        if (me == 0)
            fprintf(stderr, PROG ": needs exactly 2 ranks (" MB_LAUNCH " 2), not %d\n", n);
        status = 2;
    } else if (link_init(&l, me, &o)) {
        fprintf(stderr, PROG ": rank %d: no memory for %zu B buffers\n", me, o.max);
        status = 1;
    }
    /* Every rank stops if any cannot go on, rather than leave its peer waiting. */
    int worst = 0;
    MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (worst == 0) {
        if (me == 0)
            print_header(&o);
        sweep(&l, &o);
        if (l.bad) {
            fprintf(stderr, PROG ": rank %d: %ld messages failed the check\n", me, l.bad);
            status = 1;
        }
    } else if (status == 0) {
        status = worst;
    }
    link_fini(&l);
    mb_watchdog_arm();
    MPI_Finalize();
    mb_watchdog_stop();
    return status;
}
