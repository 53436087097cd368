/* SPDX-License-Identifier: BSD-3-Clause */
/* What every benchmark program shares, fastmsg's and bench/mpi's alike: medians, settings
 * from the environment, a clock, and the CSV's first columns. */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <stdint.h>

/* splitmix64's finalizer (Steele, Lea, Flood 2014): a bijection that scrambles every bit, for
 * the benchmarks' seeded draws (the same on every platform and libc). */
static inline uint64_t bench_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The median of v[0..n) (sorts v); 0 for n <= 0. */
double bench_median(double *v, long n);
/* Environment variable name, or dflt when it is unset or empty. */
const char *bench_env(const char *name, const char *dflt);
/* CLOCK_MONOTONIC, CLOCK_PROCESS_CPUTIME_ID, ... in microseconds. */
double bench_now_us(int clock);
/* Sleep until CLOCK_MONOTONIC reaches us (bench_now_us's microseconds). */
void bench_sleep_until_us(double us);
/* This process's resident memory now and at its peak, in KiB (VmRSS and VmHWM of
 * /proc/self/status); 0, or -1 with both -1 where the kernel does not say. */
int bench_rss_kib(long *rss, long *hwm);

/* The CSV's first three columns, the same in every row: the transport and fastmsg's two
 * settings ("-" in the MPI programs, which have none). */
typedef struct bench_label {
    const char *provider, *packet_size, *credits;
} bench_label;

#endif
