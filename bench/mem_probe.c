/* SPDX-License-Identifier: BSD-3-Clause */
/* fastmsg-bench-memory: what one rank's memory is right after fm_init (bench/memory.sh runs
 * it at several job sizes and takes the medians over ranks).
 *
 *   fastmsg-run -n 8 fastmsg-bench-memory
 *
 * Every rank prints one line: its context's packet buffers (fm_stats.mem_*, bytes) and its
 * process's resident memory (VmRSS before and after fm_init, VmHWM after, KiB):
 *   memprobe rank=R size=N recv=B send=B copy=B registered=B peak=B rss0=K rss=K hwm=K */
#include <stdio.h>

#include "fm_common.h"

#define PROG "fastmsg-bench-memory"

int main(int argc, char **argv)
{
    (void)argv;
    if (argc > 1) {
        fprintf(stderr, "usage: fastmsg-run -n N " PROG " (no options)\n");
        return 2;
    }
    long rss0, hwm0, rss, hwm;
    bench_rss_kib(&rss0, &hwm0);
    fm_context *ctx = bench_fm_init(PROG);
    if (!ctx)
        return 1;
    bench_rss_kib(&rss, &hwm);
    fm_stats st;
    int rc = fm_get_stats(ctx, &st);
    if (rc != FM_OK) {
        fprintf(stderr, PROG ": fm_get_stats: %s\n", fm_strerror(rc));
        return bench_fm_finalize(PROG, ctx, 1);
    }
    printf("memprobe rank=%d size=%d recv=%llu send=%llu copy=%llu registered=%llu peak=%llu "
           "rss0=%ld rss=%ld hwm=%ld\n",
           fm_rank(ctx), fm_size(ctx), (unsigned long long)st.mem_recv_bytes,
           (unsigned long long)st.mem_send_bytes, (unsigned long long)st.mem_copy_bytes,
           (unsigned long long)st.mem_registered_bytes, (unsigned long long)st.mem_peak_bytes, rss0,
           rss, hwm);
    fflush(stdout);
    return bench_fm_finalize(PROG, ctx, 0);
}
