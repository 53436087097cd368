/* SPDX-License-Identifier: BSD-3-Clause */
/* Start-up, shutdown, settings, waits and whole-message writes of fastmsg's benchmark programs
 * (fm_common.h). */
#include "fm_common.h"

#include <stdio.h>
#include <time.h>

fm_context *bench_fm_init(const char *prog)
{
    fm_context *ctx;
    int rc = fm_init(&ctx);
    if (rc != FM_OK) {
        fprintf(stderr, "%s: fm_init: %s\n", prog, fm_strerror(rc));
        return NULL;
    }
    return ctx;
}

int bench_fm_finalize(const char *prog, fm_context *ctx, int status)
{
    int rc = fm_finalize(ctx);
    if (rc != FM_OK) {
        fprintf(stderr, "%s: fm_finalize: %s\n", prog, fm_strerror(rc));
        return status ? status : 1;
    }
    return status;
}

bench_label bench_fm_label(void)
{
    return (bench_label){bench_env("FM_PROVIDER", "shm"), bench_env("FM_PACKET_SIZE", "default"),
                         bench_env("FM_CREDITS", "default")};
}

void bench_fm_print_memory(fm_context *ctx, const char *prefix)
{
    fm_stats st;
    long rss, hwm;
    char proc[96] = "process VmRSS and VmHWM unknown";
    if (fm_get_stats(ctx, &st) != FM_OK)
        return;
    if (bench_rss_kib(&rss, &hwm) == 0)
        snprintf(proc, sizeof proc, "process VmRSS %.1f MiB, VmHWM %.1f MiB", (double)rss / 1024,
                 (double)hwm / 1024);
    printf("%smemory of rank %d: packet buffers receive %.1f MiB, send %.1f MiB, copy %.1f MiB, "
           "registered %.1f MiB, peak %.1f MiB; %s\n",
           prefix, fm_rank(ctx), (double)st.mem_recv_bytes / 1048576,
           (double)st.mem_send_bytes / 1048576, (double)st.mem_copy_bytes / 1048576,
           (double)st.mem_registered_bytes / 1048576, (double)st.mem_peak_bytes / 1048576, proc);
    fflush(stdout);
}

int bench_fm_await(fm_context *ctx, const int *flag, int want, double timeout_s)
{
    double last = bench_now_us(CLOCK_MONOTONIC);
    while (*flag < want) {
        long rc = fm_wait(ctx, 100);
        if (rc < 0)
            return (int)rc;
        double t = bench_now_us(CLOCK_MONOTONIC);
        if (rc > 0)
            last = t;
        else if (t - last > timeout_s * 1e6)
            return FM_ERR_TIMEOUT;
    }
    return FM_OK;
}

int bench_fm_write(int rc, fm_stream *s, const void *buf, size_t len)
{
    if (rc == FM_OK)
        rc = fm_send_piece(s, buf, len);
    if (rc == FM_OK)
        rc = fm_end_message(s);
    return rc;
}
