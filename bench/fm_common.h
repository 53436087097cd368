/* SPDX-License-Identifier: BSD-3-Clause */
/* What fastmsg's benchmark programs (fastmsg-bench-pingpong, fastmsg-bench-mcast) share beyond
 * common.h: start-up and shutdown with their error lines, the settings their headers and CSV
 * rows name, a wait for a handler's count, and a whole message written to an open stream. */
#ifndef BENCH_FM_COMMON_H
#define BENCH_FM_COMMON_H

#include <fastmsg.h>

#include "common.h"

/* fm_init; NULL after a line "PROG: fm_init: reason" on stderr. */
fm_context *bench_fm_init(const char *prog);
/* fm_finalize; the exit status: status, or 1 after a line on stderr when finalize fails. */
int bench_fm_finalize(const char *prog, fm_context *ctx, int status);
/* The provider, FM_PACKET_SIZE and FM_CREDITS as fastmsg reads them: the environment, else
 * the defaults fastmsg-info lists ("shm", then "default" for the two settings). */
bench_label bench_fm_label(void);
/* One line on stdout, after prefix: the packet buffers ctx holds now (fm_stats.mem_*), and
 * this process's VmRSS and VmHWM. */
void bench_fm_print_memory(fm_context *ctx, const char *prefix);
/* fm_wait until *flag (set by a handler) reaches want; FM_ERR_TIMEOUT after timeout_s
 * seconds without progress, or fm_wait's error. */
int bench_fm_await(fm_context *ctx, const int *flag, int want, double timeout_s);
/* The whole message: rc is the begin call's; on FM_OK, buf's len bytes into s, then the end.
 * The first error. */
int bench_fm_write(int rc, fm_stream *s, const void *buf, size_t len);

#endif
