/* SPDX-License-Identifier: BSD-3-Clause */
/* Fuzz target: the two-stage multicast's datagram check (mcast/ipmc/ipmc_wire.c), which reads
 * every datagram of the job's multicast group, any job's or host's. The input is one datagram
 * as received. Whatever validates must obey every rule the receive path relies on (ipmc_recv.c
 * indexes its chunk bitmap with index and copies chunk_len bytes), and encode back to the
 * same header bytes. */
#include <string.h>

#include "fuzz.h"
#include "ipmc/ipmc_wire.h"
#include "transport.h"

#define FUZZ_JOB_KEY 0x0123456789abcdefULL /* make_corpus.c's */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int sizes[] = {2, 16, 4096};
    for (int k = 0; k < 3; k++)
        for (int payload = 0; payload < 2; payload++) {
            fm_ipmc_hdr h;
            if (fm_ipmc_hdr_decode(data, size, FUZZ_JOB_KEY, sizes[k], 64, payload, &h) !=
                FM_IPMC_OK)
                continue;
            FUZZ_CHECK(size >= FM_IPMC_HDR_LEN + (size_t)h.extra_len);
            FUZZ_CHECK(h.job_key == FUZZ_JOB_KEY && h.root < (uint32_t)sizes[k]);
            FUZZ_CHECK(h.handler < 64 && h.n >= 2 && h.n <= (uint32_t)sizes[k]);
            FUZZ_CHECK(h.flags == FM_IPMC_GROUP || h.flags == FM_IPMC_SET);
            FUZZ_CHECK(h.chunk >= 1 && FM_IPMC_HDR_LEN + h.extra_len + h.chunk <= FM_TP_DGRAM_MAX);
            FUZZ_CHECK(h.len <= FM_IPMC_MAX_LEN && h.index < fm_ipmc_chunks(h.len, h.chunk));
            if (payload)
                FUZZ_CHECK(size - FM_IPMC_HDR_LEN - h.extra_len ==
                           fm_ipmc_chunk_len(h.len, h.chunk, h.index));
            unsigned char again[FM_IPMC_HDR_LEN];
            fm_ipmc_hdr_encode(&h, again);
            FUZZ_CHECK(!memcmp(again, data, FM_IPMC_HDR_LEN));
        }
    return 0;
}
