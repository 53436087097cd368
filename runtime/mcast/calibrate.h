/* SPDX-License-Identifier: BSD-3-Clause */
/* fm_mcast_calibrate's handlers (calibrate.c). */
#ifndef FM_MCAST_CALIBRATE_H
#define FM_MCAST_CALIBRATE_H

#include "context.h"

/* Take the two internal handler ids calibration uses (fm_mcast_init). */
int fm_calibrate_init(fm_context *ctx);

#endif
