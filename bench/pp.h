/* fm-pingpong: shared declarations of the benchmark's files.
 *
 *   pp_opts.c      command line, sizes, iteration counts
 *   pp_transfer.c  moving messages: the receive handlers, one send, polling for arrivals
 *   pp_measure.c   one timed latency run and one timed bandwidth run of one size
 *   pp_report.c    medians and the table / CSV output
 *   fm_pingpong.c  main: the sweep over sizes and repeats */
#ifndef PP_H
#define PP_H

#include <fastmsg.h>
#include <stddef.h>
#include <stdint.h>

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

/* Returns 0 and fills o, 1 after printing usage (-h), or -1 after printing an error. */
int pp_parse(int argc, char **argv, pp_opts *o);
/* The sizes to run, ascending; returns how many (at most PP_MAX_SIZES). */
int pp_sizes(const pp_opts *o, size_t *sizes);
/* Iterations (round trips, windows) and warm-up for one size: fewer for big messages, so
 * every size takes about as long. */
long pp_lat_iters(const pp_opts *o, size_t size);
long pp_bw_windows(const pp_opts *o, size_t size);
long pp_warmup(const pp_opts *o, long iters);

/* The messaging state of one rank. */
typedef struct pp_link {
    fm_context *ctx;
    int me, peer, handler;
    unsigned char *sbuf, *rbuf; /* preallocated, opts.max bytes each (at least 1) */
    size_t cap;
    long arrived;  /* messages fully received */
    long bad;      /* messages that failed --check */
    size_t expect; /* length of the messages now arriving, for --check */
    int check;
    double timeout_s;
} pp_link;

/* Allocate the buffers and register the handler (fm_stream_deliver, or fm_receive when
 * use_receive). FM_OK or an FM_ERR_* code. */
int pp_link_init(pp_link *l, fm_context *ctx, const pp_opts *o);
void pp_link_fini(pp_link *l);
/* One message of len bytes to the peer: begin, one fm_send_piece, end. */
int pp_send(pp_link *l, size_t len);
/* Poll with fm_extract until `count` messages have arrived in total. */
int pp_await(pp_link *l, long count);

/* One timed run of one size; rank 0 gets the figures, rank 1 only takes part. */
typedef struct pp_sample {
    double lat_us;   /* one-way latency: half the mean round trip */
    double bw_mbs;   /* window bandwidth, MB/s (10^6 bytes per second) */
    double rate_mps; /* messages per second within windows */
} pp_sample;

int pp_measure_latency(pp_link *l, const pp_opts *o, size_t size, pp_sample *out);
int pp_measure_bandwidth(pp_link *l, const pp_opts *o, size_t size, pp_sample *out);

/* Report. */
typedef struct pp_row {
    size_t size;
    long lat_iters, bw_msgs;
    pp_sample median;
} pp_row;

double pp_median(double *v, int n); /* sorts v */
void pp_print_header(const pp_opts *o, fm_context *ctx);
void pp_print_row(const pp_opts *o, const pp_row *r);

#endif
