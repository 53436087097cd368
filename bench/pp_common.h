/* SPDX-License-Identifier: BSD-3-Clause */
/* The parts of fastmsg-bench-pingpong that do not need fastmsg: options, sizes, iteration counts,
 * the sweep and the report. bench/mpi/mpi_pingpong.c builds on them too, so that both programs take
 * the same options, run the same iterations and print the same table and CSV.
 *
 *   pp_opts.c    command line, sizes, iteration counts
 *   pp_run.c     the buffers, the repeats of one size and the sweep over sizes
 *   pp_report.c  the table / CSV output */
#ifndef PP_COMMON_H
#define PP_COMMON_H

#include <stddef.h>

#include "common.h"

#define PP_MAX_SIZE   (4UL << 20) /* default --max */
#define PP_MAX_SIZES  64
#define PP_MAX_REPEAT 101

typedef struct pp_opts {
    size_t min, max;   /* sizes: 0 and/or powers of two in [min, max] */
    long lat_iters;    /* round trips per latency run for small sizes (-i) */
    long bw_windows;   /* windows per bandwidth run for small sizes (-n) */
    int window;        /* messages per window (-w) */
    int repeats;       /* timed runs per size; the median is reported (-r) */
    long warmup;       /* untimed round trips / windows first; -1: a tenth, at least 2 */
    int do_lat, do_bw; /* which measurements */
    int csv;           /* CSV instead of the table */
    int use_receive;   /* handler copies with fm_receive instead of fm_stream_deliver */
    int check;         /* verify every received byte */
    double timeout_s;  /* give up a stalled wait after this long */
} pp_opts;

/* What differs between the programs sharing the command line: the usage text and whether
 * fastmsg's --receive exists. */
typedef struct pp_cli {
    const char *launch;  /* the usage line's launcher, e.g. "fastmsg-run -n 2" */
    const char *between; /* "... message rate between two <between>." */
    const char *timeout; /* --timeout's help, without the default */
    int receive;         /* --receive is an option */
} pp_cli;

/* Returns 0 and fills o, 1 after printing usage (-h), or -1 after printing an error. */
int pp_parse_cli(int argc, char **argv, const pp_cli *cli, pp_opts *o);
/* fastmsg-bench-pingpong's command line. */
int pp_parse(int argc, char **argv, pp_opts *o);
/* The sizes to run, ascending; returns how many (at most PP_MAX_SIZES). */
int pp_sizes(const pp_opts *o, size_t *sizes);
/* Iterations (round trips, windows) and warm-up for one size: fewer for big messages, so
 * every size takes about as long. */
long pp_lat_iters(const pp_opts *o, size_t size);
long pp_bw_windows(const pp_opts *o, size_t size);
long pp_warmup(const pp_opts *o, long iters);

/* One timed run of one size; rank 0 gets the figures, rank 1 only takes part. */
typedef struct pp_sample {
    double lat_us;   /* one-way latency: half the mean round trip */
    double bw_mbs;   /* window bandwidth, MB/s (10^6 bytes per second) */
    double rate_mps; /* messages per second within windows */
} pp_sample;

/* Report. */
typedef struct pp_row {
    size_t size;
    long lat_iters, bw_msgs;
    pp_sample median;
} pp_row;

/* The end of the header that every program shares: the CSV header line, or the table's
 * method line and column names. Each program prints its own '#' lines before it. */
void pp_print_head(const pp_opts *o);
void pp_print_row(const pp_opts *o, const bench_label *lb, const pp_row *r);

/* The send and receive buffers of both programs: pp_capacity(o) bytes each, 64-byte aligned,
 * every page touched (no fault lands in a timing), the send buffer holding the pattern that
 * --check compares with. 0, or -1 without memory (free both either way). */
size_t pp_capacity(const pp_opts *o);
int pp_buffers(const pp_opts *o, unsigned char **sbuf, unsigned char **rbuf);

/* How a program takes one timed run of one size (pp_measure.c for fastmsg); rank 0 gets the
 * figures, the peer only takes part. 0, or an error code, which ends the sweep. */
typedef struct pp_ops {
    int (*latency)(void *arg, const pp_opts *o, size_t size, pp_sample *out);
    int (*bandwidth)(void *arg, const pp_opts *o, size_t size, pp_sample *out);
    void *arg;
} pp_ops;

/* Every size: -r repeats, latency then bandwidth in each so that drift in the machine hits
 * both, and the medians; rank 0 (print) prints each row. 0, or the first error, with *failed
 * the size it came at. */
int pp_sweep(const pp_opts *o, const pp_ops *ops, int print, const bench_label *lb, size_t *failed);

#endif
