/* SPDX-License-Identifier: BSD-3-Clause */
/* fastmsg-bench-pingpong: shared declarations of the benchmark's files.
 *
 *   pp_opts.c      command line, sizes, iteration counts (pp_common.h)
 *   pp_transfer.c  moving messages: the receive handlers, one send, polling for arrivals
 *   pp_measure.c   one timed latency run and one timed bandwidth run of one size
 *   pp_run.c       the buffers, the sweep over sizes and repeats (pp_common.h)
 *   pp_report.c    the table / CSV output (pp_common.h)
 *   fm_pingpong.c  main: the header lines, start and end */
#ifndef PP_H
#define PP_H

#include <fastmsg.h>
#include <stddef.h>
#include <stdint.h>

#include "pp_common.h"

/* The messaging state of one rank. */
typedef struct pp_link {
    fm_context *ctx;
    int me, peer, handler;
    unsigned char *sbuf, *rbuf; /* pp_buffers' */
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

/* One timed run of one size (pp_ops's, arg a pp_link); rank 0 gets the figures, rank 1 only
 * takes part. */
int pp_measure_latency(void *link, const pp_opts *o, size_t size, pp_sample *out);
int pp_measure_bandwidth(void *link, const pp_opts *o, size_t size, pp_sample *out);

#endif
