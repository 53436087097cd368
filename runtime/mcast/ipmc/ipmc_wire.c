/* SPDX-License-Identifier: BSD-3-Clause */
/* The datagram header (ipmc_wire.h): encoding, and the checks every received one passes. */
#include "ipmc_wire.h"

#include "transport.h"
#include "wire.h"

void fm_ipmc_hdr_encode(const fm_ipmc_hdr *h, unsigned char *b)
{
    fm_put16(b, FM_IPMC_MAGIC);
    b[2] = FM_IPMC_VERSION;
    b[3] = h->flags;
    fm_put16(b + 4, h->handler);
    fm_put16(b + 6, h->extra_len);
    fm_put64(b + 8, h->job_key);
    fm_put32(b + 16, h->root);
    fm_put32(b + 20, h->mid);
    fm_put32(b + 24, h->index);
    fm_put32(b + 28, h->chunk);
    fm_put64(b + 32, h->len);
    fm_put32(b + 40, h->ack_id);
    fm_put32(b + 44, h->n);
}

fm_ipmc_status fm_ipmc_hdr_decode(const unsigned char *b, size_t len, uint64_t key, int size,
                                  unsigned handlers, int payload, fm_ipmc_hdr *h)
{
    if (len < FM_IPMC_HDR_LEN)
        return FM_IPMC_SHORT;
    if (fm_get16(b) != FM_IPMC_MAGIC || b[2] != FM_IPMC_VERSION)
        return FM_IPMC_FOREIGN;
    *h = (fm_ipmc_hdr){.flags = b[3],
                       .handler = fm_get16(b + 4),
                       .extra_len = fm_get16(b + 6),
                       .job_key = fm_get64(b + 8),
                       .root = fm_get32(b + 16),
                       .mid = fm_get32(b + 20),
                       .index = fm_get32(b + 24),
                       .chunk = fm_get32(b + 28),
                       .len = fm_get64(b + 32),
                       .ack_id = fm_get32(b + 40),
                       .n = fm_get32(b + 44)};
    if (h->job_key != key)
        return FM_IPMC_KEY;
    if (len < FM_IPMC_HDR_LEN + h->extra_len)
        return FM_IPMC_SHORT;
    size_t room = FM_TP_DGRAM_MAX - FM_IPMC_HDR_LEN;
    int group = h->flags == FM_IPMC_GROUP, set = h->flags == FM_IPMC_SET;
    if ((!group && !set) || (group && h->extra_len != 8) || (set && !h->extra_len) ||
        h->extra_len >= room || h->chunk == 0 || h->chunk > room - h->extra_len ||
        h->len > FM_IPMC_MAX_LEN || h->root >= (uint32_t)size || h->handler >= handlers ||
        h->n < 2 || h->n > (uint32_t)size)
        return FM_IPMC_BAD;
    uint64_t chunks = h->len ? (h->len + h->chunk - 1) / h->chunk : 1;
    if (chunks > UINT32_MAX || h->index >= chunks)
        return FM_IPMC_BAD;
    if (payload &&
        len - FM_IPMC_HDR_LEN - h->extra_len != fm_ipmc_chunk_len(h->len, h->chunk, h->index))
        return FM_IPMC_BAD;
    return FM_IPMC_OK;
}
