/* SPDX-License-Identifier: BSD-3-Clause */
/* The ping-pong benchmarks' output (fastmsg-bench-pingpong, bench/mpi's
 * fastmsg-bench-mpi-pingpong): the shared end of the header, then one row per size, as an aligned
 * table (OSU style) or as CSV. */
#include <stdio.h>

#include "pp_common.h"

void pp_print_head(const pp_opts *o)
{
    if (o->csv) {
        printf("provider,packet_size,credits,size,latency_us,bandwidth_MBps,rate_msgps,"
               "lat_iters,bw_msgs\n");
        return;
    }
    printf("# latency: one-way, half the round trip; bandwidth: windows of %d messages + 1 ack, "
           "MB/s = 10^6 B/s\n",
           o->window);
    printf("%-10s %12s %16s %14s %10s %10s\n", "# Size(B)", "Latency(us)", "Bandwidth(MB/s)",
           "Rate(msg/s)", "Lat-iters", "BW-msgs");
    fflush(stdout);
}

static void csv_row(const pp_opts *o, const bench_label *lb, const pp_row *r)
{
    printf("%s,%s,%s,%zu,", lb->provider, lb->packet_size, lb->credits, r->size);
    if (o->do_lat)
        printf("%.3f", r->median.lat_us);
    putchar(',');
    if (o->do_bw)
        printf("%.2f,%.0f", r->median.bw_mbs, r->median.rate_mps);
    else
        putchar(',');
    printf(",%ld,%ld\n", o->do_lat ? r->lat_iters : 0, o->do_bw ? r->bw_msgs : 0);
}

void pp_print_row(const pp_opts *o, const bench_label *lb, const pp_row *r)
{
    if (o->csv) {
        csv_row(o, lb, r);
    } else {
        printf("%-10zu ", r->size);
        if (o->do_lat)
            printf("%12.2f ", r->median.lat_us);
        else
            printf("%12s ", "-");
        if (o->do_bw)
            printf("%16.2f %14.0f ", r->median.bw_mbs, r->median.rate_mps);
        else
            printf("%16s %14s ", "-", "-");
        printf("%10ld %10ld\n", o->do_lat ? r->lat_iters : 0, o->do_bw ? r->bw_msgs : 0);
    }
    fflush(stdout);
}
