/* Statistics shared by the benchmarks (fm-pingpong, fm-mcast and their MPI counterparts). */
#ifndef BENCH_STATS_H
#define BENCH_STATS_H

/* The median of v[0..n) (sorts v); 0 for n <= 0. */
double bench_median(double *v, long n);

#endif
