/* SPDX-License-Identifier: BSD-3-Clause */
/* fm_copy: memcpy for the small message's path. A call into the C library's memcpy costs about
 * 25 cycles whatever the size (the call, then its size dispatch); an 8-byte message was
 * copied that way four times between fm_send_piece and the receiver's buffer. Up to 32
 * bytes are moved inline here, as two possibly overlapping loads and stores of one width
 * (the loads first, so that it is right for any n in the class); more goes to memcpy. */
#ifndef FM_UTIL_COPY_H
#define FM_UTIL_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FM_COPY_PAIR(type, d, s, n)                                                                \
    do {                                                                                           \
        type a_, b_;                                                                               \
        memcpy(&a_, (s), sizeof a_);                                                               \
        memcpy(&b_, (s) + (n) - sizeof b_, sizeof b_);                                             \
        memcpy((d), &a_, sizeof a_);                                                               \
        memcpy((d) + (n) - sizeof b_, &b_, sizeof b_);                                             \
    } while (0)

typedef struct {
    uint64_t w[2];
} fm_copy16_t;

/* n bytes from src to dst (not overlapping, as memcpy's). */
static inline void fm_copy(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (n > 32) {
        memcpy(d, s, n);
    } else if (n >= 16) {
        FM_COPY_PAIR(fm_copy16_t, d, s, n);
    } else if (n >= 8) {
        FM_COPY_PAIR(uint64_t, d, s, n);
    } else if (n >= 4) {
        FM_COPY_PAIR(uint32_t, d, s, n);
    } else if (n) { /* 1-3: first, middle, last */
        unsigned char a = s[0], b = s[n / 2], c = s[n - 1];
        d[0] = a;
        d[n / 2] = b;
        d[n - 1] = c;
    }
}

#endif
