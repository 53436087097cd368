/* SPDX-License-Identifier: BSD-3-Clause */
/* The FPFS model: predicted completion time of an m-packet multicast down a tree.
 *
 * Units: one step = the time a sender is busy injecting one packet copy; lambda = time from the
 * start of a send until the receiver can forward that packet. The root holds every packet at
 * time 0. A member sends one copy at a time; a member's completion is when its last packet
 * became available, the multicast's is the latest member's.
 *   FPFS:          packet j goes to all children, in child order, before packet j+1; a copy
 *                  leaves as soon as the sender is free and holds that packet.
 *   store-forward: a member forwards only once it holds all m packets, then sends the whole
 *                  message to each child in turn (the root starts at once).
 * With lambda = 1, FPFS on a full k-binomial tree takes t_1 + (m-1) k steps. */
#ifndef FM_MODEL_H
#define FM_MODEL_H

#include "trees/tree.h"

enum fm_model_mode { FM_MODEL_FPFS = 0, FM_MODEL_STORE_FORWARD = 1 };

/* A whole tree by position: children of p are kids[first[p]] .. kids[first[p+1] - 1], in send
 * order (fm_tree_layout's format). */
struct fm_model_tree {
    int n, root;
    const int *first, *kids;
};

/* Completion time in steps of an m-packet multicast down d (m >= 1, lambda >= 1) into *T.
 * per_member: NULL, or n doubles by position, each member's completion (the root's is 0).
 * FM_OK, FM_ERR_INVALID or FM_ERR_NOMEM. */
int fm_model_steps(const struct fm_tree_desc *d, int m, double lambda, enum fm_model_mode mode,
                   double *T, double *per_member);

/* The same in seconds, from measured costs: step_s = seconds to inject one copy of a packet
 * (of the size in use), lambda_s = seconds from the start of a send until the receiver can
 * forward it (> 0; below step_s is allowed, as measurements may give). T and per_member are in
 * seconds, and scale linearly with step_s for a fixed lambda_s / step_s. */
int fm_model_seconds(const struct fm_tree_desc *d, int m, double step_s, double lambda_s,
                     enum fm_model_mode mode, double *T, double *per_member);

/* The simulation on any tree given whole (lambda > 0). FM_ERR_INVALID when t is not a tree
 * rooted at t->root that reaches all n members. */
int fm_model_run(const struct fm_model_tree *t, int m, double lambda, enum fm_model_mode mode,
                 double *T, double *per_member);

#endif
