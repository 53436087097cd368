/* SPDX-License-Identifier: BSD-3-Clause */
#include "wire.h"

#include <string.h>

void fm_wire_rndv_encode(uint64_t piece_len, uint64_t tag, void *payload)
{
    fm_put64(payload, piece_len);
    fm_put64((unsigned char *)payload + 8, tag);
}

void fm_wire_rndv_decode(const void *payload, uint64_t *piece_len, uint64_t *tag)
{
    *piece_len = fm_get64(payload);
    *tag = fm_get64((const unsigned char *)payload + 8);
}

const char *fm_wire_status_str(fm_wire_status s)
{
    static const char *names[FM_WIRE_NREASONS] = {"ok",
                                                  "short packet",
                                                  "bad version",
                                                  "foreign job key",
                                                  "bad type or flags",
                                                  "bad source rank",
                                                  "bad length",
                                                  "bad multicast descriptor",
                                                  "more credits than given",
                                                  "bad sequence number"};
    return s < FM_WIRE_NREASONS ? names[s] : "?";
}
