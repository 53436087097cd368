/* SPDX-License-Identifier: BSD-3-Clause */
/* The model's time for the two-stage multicast (ipmc_model.c): a pure function of the costs. */
#ifndef FM_MCAST_IPMC_MODEL_H
#define FM_MCAST_IPMC_MODEL_H

#include <stddef.h>

struct fm_costs;

/* Bytes a datagram carries on the wire beyond its chunk: the 48-byte header, a group's 8-byte
 * id, UDP and IPv4 (28). */
#define FM_IPMC_WIRE_EXTRA 84u
/* A chunk's payload, for a group (the model's case). */
#define FM_IPMC_MODEL_CHUNK 1416u

/* Predicted completion, seconds, of a two-stage multicast of bytes to n members (the root
 * included), where members share cores `share` to one (1: a core each) and loss is the
 * fraction of datagrams lost. Stage 1 is a pipeline of the root's sends, the root's link and
 * each member's receives: the slowest sets the pace, the others add one chunk; bytes within
 * the shaper's burst pass without the link's gap. Loss adds one ring hop: the gaps' bytes
 * from the predecessor once the last datagram showed them. */
double fm_ipmc_model(const struct fm_costs *c, int n, double share, size_t bytes, double loss);

#endif
