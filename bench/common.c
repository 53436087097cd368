/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers of every benchmark program (common.h). */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *v, long n)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

const char *bench_env(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

double bench_now_us(int clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

void bench_sleep_until_us(double us)
{
    double left = us - bench_now_us(CLOCK_MONOTONIC);
    if (left > 0) {
        long long ns = (long long)(left * 1e3) + 1; /* never short: a simulated clock
                                                     * stands still until slept past */
        struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
        nanosleep(&ts, NULL);
    }
}

int bench_rss_kib(long *rss, long *hwm)
{
    char line[256];
    FILE *f = fopen("/proc/self/status", "r");
    *rss = *hwm = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "VmRSS:", 6))
            *rss = strtol(line + 6, NULL, 10);
        else if (!strncmp(line, "VmHWM:", 6))
            *hwm = strtol(line + 6, NULL, 10);
    }
    fclose(f);
    if (*rss < 0 || *hwm < 0) {
        *rss = *hwm = -1;
        return -1;
    }
    return 0;
}
