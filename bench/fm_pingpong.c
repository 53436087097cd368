/* SPDX-License-Identifier: BSD-3-Clause */
/* fastmsg-bench-pingpong: one-way latency, bandwidth and message rate between two fastmsg ranks,
 * for message sizes from 0 B to 4 MiB (or --min/--max), each the median of several runs.
 *
 *   fastmsg-run -n 2 fastmsg-bench-pingpong [options]      (-h lists them)
 *
 * Rank 0 prints the table, then a comment line with its context's packet buffers and its
 * process's resident memory at the end (fm_stats.mem_*, VmRSS, VmHWM; not with --csv); every
 * rank reports its own errors on stderr. See bench/README.md for what is measured and how. */
#include <stdio.h>

#include "fm_common.h"
#include "pp.h"

#define PROG "fastmsg-bench-pingpong"

static void print_header(const pp_opts *o, fm_context *ctx, const bench_label *lb)
{
    if (!o->csv) {
        printf("# " PROG " (fastmsg %s): %d ranks, provider %s, FM_PACKET_SIZE %s, "
               "FM_CREDITS %s\n",
               fm_version(), fm_size(ctx), lb->provider, lb->packet_size, lb->credits);
        printf("# median of %d repeats; progress by fm_extract polling; receive by %s\n",
               o->repeats, o->use_receive ? "fm_receive in the handler" : "fm_stream_deliver");
    }
    pp_print_head(o);
}

/* The sizes and repeats (pp_sweep); rank 0 prints, each rank names its own error. */
static int sweep(pp_link *l, const pp_opts *o, const bench_label *lb)
{
    pp_ops ops = {pp_measure_latency, pp_measure_bandwidth, l};
    size_t failed = 0;
    int rc = pp_sweep(o, &ops, l->me == 0, lb, &failed);
    if (rc != FM_OK)
        fprintf(stderr, PROG ": rank %d: error at %zu B: %s\n", l->me, failed, fm_strerror(rc));
    return rc;
}

int main(int argc, char **argv)
{
    pp_opts o;
    int prc = pp_parse(argc, argv, &o);
    if (prc)
        return prc > 0 ? 0 : 2;
    fm_context *ctx = bench_fm_init(PROG);
    if (!ctx)
        return 1;
    int rc, status = 0;
    pp_link l;
    if (fm_size(ctx) != 2) {
        if (fm_rank(ctx) == 0)
            fprintf(stderr, PROG ": needs exactly 2 ranks (fastmsg-run -n 2), not %d\n",
                    fm_size(ctx));
        status = 2;
    } else if ((rc = pp_link_init(&l, ctx, &o)) != FM_OK) {
        fprintf(stderr, PROG ": rank %d: setup: %s\n", fm_rank(ctx), fm_strerror(rc));
        pp_link_fini(&l);
        status = 1;
    } else {
        bench_label lb = bench_fm_label();
        if (l.me == 0)
            print_header(&o, ctx, &lb);
        if (sweep(&l, &o, &lb) != FM_OK)
            status = 1;
        if (l.bad) {
            fprintf(stderr, PROG ": rank %d: %ld messages failed the check\n", l.me, l.bad);
            status = 1;
        }
        /* After the table, a comment line (not in CSV, whose rows stay uniform). */
        if (l.me == 0 && !o.csv)
            bench_fm_print_memory(ctx, "# ");
        pp_link_fini(&l);
    }
    return bench_fm_finalize(PROG, ctx, status);
}
