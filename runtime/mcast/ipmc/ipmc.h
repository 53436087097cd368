/* SPDX-License-Identifier: BSD-3-Clause */
/* The two-stage multicast (tree name "ipmc", Hoefler et al., seed 001): stage 1 sends every
 * chunk of the message once as a datagram to the job's IP multicast group; stage 2 repairs
 * over the ring of the members in order from the root, each member asking its predecessor
 * only for what it misses. README.md in this folder says how and why. */
#ifndef FM_MCAST_IPMC_H
#define FM_MCAST_IPMC_H

#include <stdint.h>

#include "context.h"

struct fm_request;

/* At fm_init: the ring's handler, and the datagram endpoint as FM_MCAST_DGRAM says. */
int fm_ipmc_init(fm_context *ctx);
void fm_ipmc_fini(fm_context *ctx);
/* FM_MCAST_DGRAM, FM_MCAST_DROP, FM_MCAST_REPAIR and FM_MCAST_GROUP: FM_OK, or FM_ERR_CONFIG
 * with the variable named in err. */
struct fm_config;
int fm_ipmc_check_config(const struct fm_config *cfg, char *err, size_t errlen);
/* Whether this rank can be a two-stage multicast's root (a datagram endpoint is open). */
int fm_ipmc_available(const fm_context *ctx);
/* The fraction of datagrams lost on purpose here (FM_MCAST_DROP), for the model. */
double fm_ipmc_loss(const fm_context *ctx);

/* The root's stream of a two-stage multicast of len bytes for handler to the n members
 * (this rank at position pos), the group's id or 0 for a member list; ack: the request that
 * completes once every member has the message (FM_MCAST_ACK), else NULL. The caller has
 * resolved the tree (tree_choice.c: only in FPFS, only with datagram multicast here). Errors:
 * FM_ERR_TOO_LONG (over FM_MCAST_BUFFER, or a member set that
 * does not fit a datagram), FM_EAGAIN (inside a handler, FM_MCAST_BUFFER taken), FM_ERR_NOMEM
 * and the waits' errors. */
int fm_ipmc_open(fm_context *ctx, const int *members, int n, int pos, uint64_t group, size_t len,
                 int handler, struct fm_request *ack, fm_stream **stream);

/* The core's hooks (hooks.h). */
int fm_ipmc_progress(fm_context *ctx);
int fm_ipmc_busy(fm_context *ctx);
int fm_ipmc_pending(fm_context *ctx);
void fm_ipmc_ext_release(fm_context *ctx, fm_pkt *p);

#endif
