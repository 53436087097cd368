/* SPDX-License-Identifier: BSD-3-Clause */
#include "cc_draw.h"

#include <stddef.h>

#include "common.h"

static uint64_t mix(uint64_t x)
{
    return bench_mix64(x + 0x9e3779b97f4a7c15ull); /* splitmix64's step */
}

/* The roots' stream: (round, 0xffffffff), a root number no rank has. */
void cc_draw_roots(uint64_t seed, int round, int n, int r, int *scratch, unsigned char *is_root)
{
    for (int i = 0; i < n; i++) {
        is_root[i] = r >= n;
        scratch[i] = i;
    }
    if (r >= n)
        return;
    uint64_t x = mix(((uint64_t)(unsigned)round << 32) ^ 0xffffffffull ^ seed);
    for (int i = 0; i < r; i++) {
        x = mix(x);
        int j = i + (int)(x % (uint64_t)(n - i));
        int t = scratch[i];
        scratch[i] = scratch[j];
        scratch[j] = t;
        is_root[scratch[i]] = 1;
    }
}

void cc_draw(uint64_t seed, int round, int root, int n, int k, int *scratch, int *out)
{
    int *all = scratch; /* n - 1 others */
    for (int r = 0, i = 0; r < n; r++)
        if (r != root)
            all[i++] = r;
    uint64_t x = mix(((uint64_t)(unsigned)round << 32) ^ (uint64_t)(unsigned)root ^ seed);
    for (int i = 0; i < k; i++) {
        x = mix(x);
        int j = i + (int)(x % (uint64_t)(n - 1 - i));
        int t = all[i];
        all[i] = all[j];
        all[j] = t;
        out[i] = all[i];
    }
}

void cc_reduce_round(const double *reports, int n, const unsigned char *is_root, double *each,
                     long *ne, double *T)
{
    double first = 1e300, last = -1e300;
    for (int root = 0; root < n; root++) {
        if (!is_root[root])
            continue;
        const double *rep = reports + (size_t)root * (size_t)(n + 1);
        first = rep[0] < first ? rep[0] : first;
        double slowest = -1e300;
        for (int r = 0; r < n; r++) {
            double at = reports[(size_t)r * (size_t)(n + 1) + 1 + (size_t)root];
            slowest = at >= 0 && at > slowest ? at : slowest;
        }
        last = slowest > last ? slowest : last;
        each[(*ne)++] = slowest - rep[0];
    }
    *T = last - first;
}
