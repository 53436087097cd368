/* SPDX-License-Identifier: BSD-3-Clause */
/* Fuzz target: the packet header parser (wire.c). The input is one received packet, header and
 * payload, exactly as recv.c hands it to fm_wire_decode. It is decoded against a few receiver
 * configurations; whatever validates must obey every rule the receive path relies on. */
#include <string.h>

#include "fuzz.h"
#include "wire.h"

/* The key the seed corpus is written with (make_corpus.c). */
#define FUZZ_JOB_KEY 0x0123456789abcdefULL

/* A compact one-packet message (FM_PKT_SHORT): read as packet 0 of a whole message. */
static void check_short(const uint8_t *data, size_t size, uint64_t key, int nranks,
                        const fm_wire_hdr *h)
{
    FUZZ_CHECK(size >= FM_WIRE_SHORT_LEN && h->version == FM_WIRE_VERSION && h->job_key == key);
    FUZZ_CHECK(h->src < (uint32_t)nranks && h->seq == 0 && h->flags == FM_PKT_LAST);
    FUZZ_CHECK((size_t)h->payload_len == size - FM_WIRE_SHORT_LEN);
    FUZZ_CHECK(h->payload_len <= FM_WIRE_SHORT_MAX && h->msg_len == h->payload_len);
    unsigned char out[FM_WIRE_SHORT_LEN];
    fm_wire_encode_short(h, out);
    FUZZ_CHECK(!memcmp(out, data, FM_WIRE_SHORT_LEN));
}

static void check_valid(const uint8_t *data, size_t size, uint64_t key, int nranks,
                        size_t max_payload, const fm_wire_hdr *h)
{
    if (h->type == FM_PKT_SHORT) {
        check_short(data, size, key, nranks, h);
        return;
    }
    FUZZ_CHECK(size >= FM_WIRE_HDR_LEN);
    FUZZ_CHECK(h->version == FM_WIRE_VERSION && h->job_key == key);
    FUZZ_CHECK(h->type >= FM_PKT_DATA && h->type <= FM_PKT_MCAST);
    FUZZ_CHECK(h->src < (uint32_t)nranks);
    FUZZ_CHECK((size_t)h->payload_len == size - FM_WIRE_HDR_LEN);
    FUZZ_CHECK(h->payload_len <= max_payload);
    if (h->type == FM_PKT_CREDIT) {
        /* A clear-to-send, a window request, a grant, a shrink request, a give-back; the
         * last two never beside a clear-to-send (they use its fields). */
        FUZZ_CHECK(h->payload_len == 0 && !(h->flags & ~(FM_PKT_CTS | FM_PKT_ASK | FM_PKT_GRANT |
                                                         FM_PKT_REVOKE | FM_PKT_GIVEBACK)));
        FUZZ_CHECK(!(h->flags & FM_PKT_CTS) || !(h->flags & (FM_PKT_REVOKE | FM_PKT_GIVEBACK)));
    } else {
        FUZZ_CHECK(!(h->flags & ~(FM_PKT_LAST | FM_PKT_ABORT)));
        /* An abort ends a message already begun, carries nothing, and is its last packet. */
        if (h->flags & FM_PKT_ABORT)
            FUZZ_CHECK(h->flags == (FM_PKT_LAST | FM_PKT_ABORT) && h->seq > 0 &&
                       h->payload_len == 0 && h->type != FM_PKT_RNDV);
    }
    if (h->type == FM_PKT_DATA)
        FUZZ_CHECK(h->payload_len <= h->msg_len);
    if (h->type == FM_PKT_RNDV) {
        FUZZ_CHECK(h->payload_len == FM_WIRE_RNDV_LEN);
        uint64_t piece_len, tag;
        unsigned char again[FM_WIRE_RNDV_LEN];
        fm_wire_rndv_decode(data + FM_WIRE_HDR_LEN, &piece_len, &tag);
        fm_wire_rndv_encode(piece_len, tag, again);
        FUZZ_CHECK(!memcmp(again, data + FM_WIRE_HDR_LEN, FM_WIRE_RNDV_LEN));
    }
    /* Every header field is significant: a header that validates re-encodes to its bytes. */
    unsigned char out[FM_WIRE_HDR_LEN];
    fm_wire_encode(h, out);
    FUZZ_CHECK(!memcmp(out, data, FM_WIRE_HDR_LEN));
}

static void one(const uint8_t *data, size_t size, uint64_t key, int nranks, size_t max_payload)
{
    fm_wire_hdr h = {0}; /* (a short packet leaves it unread) */
    fm_wire_status st = fm_wire_decode(data, size, key, nranks, max_payload, &h);
    FUZZ_CHECK(st >= FM_WIRE_OK && st < FM_WIRE_NREASONS);
    const char *why = fm_wire_status_str(st);
    FUZZ_CHECK(why && strcmp(why, "?"));
    if (st == FM_WIRE_OK)
        check_valid(data, size, key, nranks, max_payload, &h);
    else
        FUZZ_CHECK(st != FM_WIRE_SHORT || size < FM_WIRE_HDR_LEN);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    one(data, size, FUZZ_JOB_KEY, 4, 64 * 1024);
    one(data, size, FUZZ_JOB_KEY, 1, 0);
    one(data, size, FUZZ_JOB_KEY, 0x7fffffff, SIZE_MAX);
    if (size >= 16) /* whatever key the packet carries, so the later checks are reached too */
        one(data, size, fm_get64(data + 8), 2, 16);
    return 0;
}
