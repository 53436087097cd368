/* SPDX-License-Identifier: BSD-3-Clause */
/* One 64-bit mixing function for seeded, reproducible choices (the model's random link orders,
 * prefix tables' random entries): splitmix64's step, a bijection that scrambles every bit. */
#ifndef FM_UTIL_MIX_H
#define FM_UTIL_MIX_H

#include <stdint.h>

static inline uint64_t fm_mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

#endif
