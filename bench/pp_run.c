/* SPDX-License-Identifier: BSD-3-Clause */
/* The ping-pong benchmarks' buffers and their sweep over sizes and repeats (pp_common.h), for
 * fastmsg-bench-pingpong and bench/mpi's fastmsg-bench-mpi-pingpong alike. */
#include <stdlib.h>
#include <string.h>

#include "pp_common.h"

size_t pp_capacity(const pp_opts *o)
{
    return o->max > 64 ? o->max : 64;
}

static unsigned char *buffer(size_t len)
{
    unsigned char *b = aligned_alloc(64, (len + 63) & ~(size_t)63);
    if (b)
        memset(b, 0, len); /* fault every page in now */
    return b;
}

int pp_buffers(const pp_opts *o, unsigned char **sbuf, unsigned char **rbuf)
{
    size_t cap = pp_capacity(o);
    *sbuf = buffer(cap);
    *rbuf = buffer(cap);
    if (!*sbuf || !*rbuf)
        return -1;
    for (size_t i = 0; i < cap; i++)
        (*sbuf)[i] = (unsigned char)(i * 131 + (i >> 8) + 7);
    return 0;
}

static int run_size(const pp_opts *o, const pp_ops *ops, size_t size, pp_row *row)
{
    double lat[PP_MAX_REPEAT], bw[PP_MAX_REPEAT], rate[PP_MAX_REPEAT];
    int rc = 0;
    for (int r = 0; r < o->repeats && rc == 0; r++) {
        pp_sample s = {0, 0, 0};
        if (o->do_lat)
            rc = ops->latency(ops->arg, o, size, &s);
        if (rc == 0 && o->do_bw)
            rc = ops->bandwidth(ops->arg, o, size, &s);
        lat[r] = s.lat_us;
        bw[r] = s.bw_mbs;
        rate[r] = s.rate_mps;
    }
    *row = (pp_row){.size = size,
                    .lat_iters = pp_lat_iters(o, size),
                    .bw_msgs = pp_bw_windows(o, size) * o->window,
                    .median = {bench_median(lat, o->repeats), bench_median(bw, o->repeats),
                               bench_median(rate, o->repeats)}};
    return rc;
}

int pp_sweep(const pp_opts *o, const pp_ops *ops, int print, const bench_label *lb, size_t *failed)
{
    size_t sizes[PP_MAX_SIZES];
    int n = pp_sizes(o, sizes);
    for (int i = 0; i < n; i++) {
        pp_row row;
        int rc = run_size(o, ops, sizes[i], &row);
        if (rc != 0) {
            *failed = sizes[i];
            return rc;
        }
        if (print)
            pp_print_row(o, lb, &row);
    }
    return 0;
}
