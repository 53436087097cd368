/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the fuzz harnesses: the libFuzzer entry point and an invariant check that stops the
 * run (libFuzzer then saves the input) whether or not NDEBUG is set. */
#ifndef FM_FUZZ_H
#define FM_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond);           \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#endif
