/* SPDX-License-Identifier: BSD-3-Clause */
/* The services' state (ctx->services), shared by their files; no code of its own. */
#ifndef FM_SERVICES_STATE_H
#define FM_SERVICES_STATE_H

#include <stdint.h>

struct fm_services {
    int barrier_handler, wireup_handler; /* internal handler ids */
    uint32_t barrier_epoch;
    uint32_t barrier_seen[2][32]; /* [epoch parity][round] arrivals */
    uint64_t wireup_heard;        /* hellos from lower ranks */
};

#endif
