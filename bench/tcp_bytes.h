/* SPDX-License-Identifier: BSD-3-Clause */
/* The bytes this process has received on its TCP sockets, as the kernel counts them: what a
 * bootstrap exchange cost one rank (bench/boot_exchange.c, tests/integration/boot_probe.c). */
#ifndef FM_BENCH_TCP_BYTES_H
#define FM_BENCH_TCP_BYTES_H

long long tcp_bytes_received(void);

#endif
