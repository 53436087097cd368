/* SPDX-License-Identifier: BSD-3-Clause */
/* fm_copy (runtime/util/copy.h): every length up to past its inline classes, at every
 * alignment of source and destination within a line, against a byte-by-byte reference; no
 * byte outside [dst, dst + n) is written. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "copy.h"

#define GUARD 0xA5

static void copies_exactly_n_bytes(void **state)
{
    (void)state;
    unsigned char src[128], dst[192], want[192];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (unsigned char)(i * 7 + 1);
    for (size_t n = 0; n <= 72; n++)
        for (size_t so = 0; so < 16; so++)
            for (size_t doff = 32; doff < 48; doff++) {
                memset(dst, GUARD, sizeof dst);
                memset(want, GUARD, sizeof want);
                for (size_t i = 0; i < n; i++) /* the reference: one byte at a time */
                    want[doff + i] = src[so + i];
                fm_copy(dst + doff, src + so, n);
                assert_memory_equal(dst, want, sizeof dst);
            }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(copies_exactly_n_bytes)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
