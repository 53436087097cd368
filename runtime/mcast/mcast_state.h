/* SPDX-License-Identifier: BSD-3-Clause */
/* The multicast layer's state (ctx->mcast), shared by its files; no code of its own. */
#ifndef FM_MCAST_MCAST_STATE_H
#define FM_MCAST_MCAST_STATE_H

#include <stdint.h>

#include "context.h"

struct fm_mcast {
    struct fm_group *groups;      /* groups created here (group.c) */
    struct fm_mcast_costs *costs; /* the model's costs and auto's decisions (tree_choice.c) */
    int calib_count_handler, calib_result_handler; /* internal handler ids (calibrate.c) */
    uint64_t calib_count;
    double calib_value;        /* the last timing a calibration partner sent (calibrate.c) */
    unsigned char *calib_sink; /* where calibration's handler copies messages out */
    int calib_have;
    int *set_scratch; /* ranks of a destination set decoded from a descriptor (forward.c) */
    struct fm_prefix_router *routers; /* ids and this rank's table per base (prefix/router.c) */
    struct fm_ack *acks;              /* acknowledged multicasts waiting here (ack.c) */
    int acks_early;                   /* of them, acknowledgements for none known here yet */
    uint32_t ack_next;                /* the last id this root gave one */
    int ack_handler;
    struct fm_ipmc *ipmc;  /* the two-stage multicast (ipmc/) */
    struct fm_join *joins; /* split multicasts whose halves are being joined here (join.c) */
    int join_handler;      /* the halves' internal handler id (join.c) */
    uint32_t split_next;   /* the last id this root gave a split multicast */
};

#endif
