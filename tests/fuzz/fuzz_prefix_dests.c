/* SPDX-License-Identifier: BSD-3-Clause */
/* Fuzz target: the destination-set decoder of prefix routing (mcast/prefix/prefix_route.c),
 * which will read sets carried in packets.
 *
 * Input: 2 bytes (little-endian) giving the job size nranks - 1, then the encoded set. A set
 * that decodes must hold ranks in range in strictly ascending order, and the encoder's form of
 * it must be no longer than the input and decode to the same ranks. */
#include <string.h>

#include "fastmsg.h"
#include "fuzz.h"
#include "prefix/prefix_route.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    int nranks = 1 + (data[0] | data[1] << 8);
    const uint8_t *buf = data + 2;
    size_t len = size - 2;
    int n = fm_prefix_dests_decode(buf, len, nranks, NULL, 0);
    if (n < 0) {
        FUZZ_CHECK(n == FM_ERR_INVALID);
        return 0;
    }
    FUZZ_CHECK(n <= nranks);
    int *out = malloc((size_t)(n ? n : 1) * sizeof *out);
    int *again = malloc((size_t)(n ? n : 1) * sizeof *again);
    uint8_t *re = malloc(len);
    FUZZ_CHECK(out && again && re);
    FUZZ_CHECK(fm_prefix_dests_decode(buf, len, nranks, out, n) == n);
    for (int k = 0; k < n; k++) {
        FUZZ_CHECK(out[k] >= 0 && out[k] < nranks);
        FUZZ_CHECK(k == 0 || out[k - 1] < out[k]);
    }
    int relen = fm_prefix_dests_encode(out, n, nranks, re, len);
    FUZZ_CHECK(relen > 0 && (size_t)relen <= len);
    FUZZ_CHECK(fm_prefix_dests_decode(re, (size_t)relen, nranks, again, n) == n);
    FUZZ_CHECK(!memcmp(out, again, (size_t)n * sizeof *out));
    free(out);
    free(again);
    free(re);
    return 0;
}
