/* SPDX-License-Identifier: BSD-3-Clause */
/* Start-up, shutdown and settings of fastmsg's benchmark programs (fm_common.h). */
#include "fm_common.h"

#include <stdio.h>

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
