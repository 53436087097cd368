/* SPDX-License-Identifier: BSD-3-Clause */
/* The multicast model: predicted completion time of an m-packet multicast down a tree, sending
 * as the forwarding engine (forward.c) sends, from LogGP costs (costs.h).
 *
 * Every member is one CPU: it receives a packet, posts its copies to its children, copies the
 * packet into the caller's buffer, then takes the next packet. A posted copy leaves on the
 * sender's link (gap per byte, after the link's burst) and arrives `latency` later; it waits
 * for a credit first when the sender already has `window` packets at that child not yet
 * released there (released: the child is done with it and its own copies have left), the
 * credit taking `latency` to come back. Modes, as forward.c sends:
 *   FPFS           packet j goes to every child, in child order, before packet j+1;
 *   store-forward  an inner member keeps a copy of every packet and, once it holds all m,
 *                  sends the whole message to its first child, then to the next, ...;
 *   FCFS           an inner member sends each packet to its first child as it arrives and
 *                  keeps a copy; once it holds all m, the whole message to its second child,
 *                  then the next, ... (Kesavan & Panda's First-Child-First-Served).
 * The root sends packet by packet in every mode (it streams the caller's pieces). A member's
 * completion is when its last packet is in the caller's buffer; the multicast's, the latest
 * member's. Where members share cores (or a host's link), the completion is at least their
 * CPU work (wake-ups included) over the cores (their bytes at the link's rate): the
 * simulation gives each member its own CPU and link, and that bound adds the sharing.
 *
 * The unit-step form (fm_model_steps, fm_model_run) is the classic one: one step per copy at
 * the sender, lambda steps from the start of a send until the receiver can forward it, nothing
 * else (send_pkt = 1, latency = lambda - 1). With lambda = 1, FPFS on a full k-binomial tree
 * takes t_1 + (m-1) k steps. */
#ifndef FM_MODEL_H
#define FM_MODEL_H

#include <stddef.h>

#include "costs.h"
#include "trees/tree.h"

enum fm_model_mode { FM_MODEL_FPFS = 0, FM_MODEL_STORE_FORWARD = 1, FM_MODEL_FCFS = 2 };

/* A whole tree by position: children of p are kids[first[p]] .. kids[first[p+1] - 1], in send
 * order (fm_tree_layout's format). A split multicast (twotree, join.c) has a second tree,
 * first2 and kids2 alike, down which the odd packets go (the even ones down the first); a
 * member then takes its packets in the order they arrive, from both parents, and the credits
 * between a parent and a child count that pair's packets alone. FPFS only. */
struct fm_model_tree {
    int n, root;
    const int *first, *kids;
    const int *first2, *kids2; /* NULL: one tree */
};

/* The network between the members' hosts when it is more than one link per host (a torus,
 * torus_net.h): the copy a member v gets from its parent crosses the links
 * route_links[route_first[v] .. route_first[v + 1]) (ids < nlinks; none for the root, or
 * for a parent on the same host). Copies whose routes share a link while both are under way
 * share its rate (1 / gap_byte) equally: each copy's stream runs at the rate its busiest link
 * leaves it, found by repeating the simulation with the previous run's overlaps (damped)
 * until they settle. Every link after the first adds a router's time to the arrival (frame,
 * hop). With a net, a member's copies leave by their routes, not through one
 * shaped link of the member's: each stream is a token bucket at its share of the link's rate
 * (1 / gap_byte) and of its bucket (burst), full when the stream starts, and a host's members
 * share no link (link_shared has no effect). A split multicast's member gets two streams, one
 * from each tree's parent: route_first then has 2n + 1 entries, stream n + v being the
 * copies of the second tree's (odd) packets to v. */
struct fm_model_net {
    int nlinks;
    const int *route_first, *route_links;
    double frame; /* a router passes on a frame of at most this many bytes (header included)
                   * once it has it whole: each router adds min(copy + header, frame) bytes at
                   * the link's rate */
    double hop;   /* and this much more per router */
    /* NULL, or each member's route back to its parent, laid out alike: the way its credits
     * go. A credit then waits, on each link of it, behind the copies queued there (each
     * stream's copies queue at its route's first link; with equal rates they flow on
     * from there); on a unidirectional torus that is the traffic the rest of the way round.
     * NULL: credits are back `latency` after their release. */
    const int *back_first, *back_links;
};

/* The job around the tree. */
struct fm_model_job {
    int window;       /* credits per sender at each child; 0: no limit */
    const int *group; /* NULL, or n: members with the same value (>= 0) share `cores` cores and
                       * (when link_shared) one link */
    double cores;     /* cores per group; 0: no sharing */
    int link_shared;  /* a group is one host: its members' copies share its link */
    /* NULL, or n: each member's host (>= 0; < 0: unknown). A copy to a member of the
     * sender's own host goes through memory, not the sender's link (no gap, no share of the
     * host's link); without a net only (a net's routes say it themselves). */
    const int *host;
    /* NULL, or n: each member's rack (< 0: unknown). A copy between members of two known racks
     * takes c->far_latency times the latency (when above 1), and so does its credit back. */
    const int *rack;
    /* 1: a member's copies of one packet to children of its own host share its bytes (sm's
     * shared payloads, FM_SM_SHARE): the first pays send_byte, the others send_pkt alone. */
    int shared;
    /* 1: a member that forwards nothing reads what a parent of its own host sends where the
     * parent wrote it (sm's loans, FM_SM_LEND): it pays recv_pkt, not recv_byte; a forwarding
     * member copies the packet in as before, for its children's copies to send from. */
    int lent;
    /* The copies of one packet that a member posts to several children leave its link in an
     * order of the provider's and kernel's choosing, not the posting order (measured over tcp:
     * a flat tree's children got a 32 KiB message in a different order each time). With
     * orders > 1 the completion (and each member's) is the mean over that many random orders,
     * held the last order's (a link with a gap only; only copies that waited on the link
     * together change places: one ready after the one before had left found the link idle);
     * 0 or 1: the posting order. */
    int orders;
    const struct fm_model_net *net; /* NULL: one link per host (a star) */
};

struct fm_model_out {
    double T;         /* completion, seconds (steps in the unit-step form) */
    double *member;   /* NULL, or n: each member's completion (the root's: 0) */
    double *held;     /* NULL, or n: most packets each member held at once for its children,
                       * from arrival until its last copy left (the root: 0; its packets
                       * are the caller's pieces) */
    double cpu_bound; /* the sharing bound (0: none); T is at least this */
    /* With a net: link visits (the links every copy crosses, summed) and links used
     * (distinct), Oral & George's link concentration being their ratio; 0 without. */
    int link_visits, links_used;
};

/* Simulates m packets of payload bytes each (the last one: the rest of bytes) down t in the
 * given mode. FM_OK, FM_ERR_INVALID (not a tree rooted at t->root reaching all n members, or
 * a bad argument) or FM_ERR_NOMEM. */
int fm_model_sim(const struct fm_model_tree *t, int m, size_t payload, size_t bytes,
                 enum fm_model_mode mode, const struct fm_costs *c, const struct fm_model_job *job,
                 struct fm_model_out *out);

/* Unit steps: completion in steps of an m-packet multicast down d (m >= 1, lambda >= 1) into
 * *T; per_member NULL or n doubles by position. FM_OK, FM_ERR_INVALID or FM_ERR_NOMEM. */
int fm_model_steps(const struct fm_tree_desc *d, int m, double lambda, enum fm_model_mode mode,
                   double *T, double *per_member);

/* The same in seconds: step_s = seconds to inject one copy, lambda_s = seconds from the start
 * of a send until the receiver can forward it (> 0; below step_s is allowed). */
int fm_model_seconds(const struct fm_tree_desc *d, int m, double step_s, double lambda_s,
                     enum fm_model_mode mode, double *T, double *per_member);

/* The unit-step simulation on a tree given whole (lambda > 0). */
int fm_model_run(const struct fm_model_tree *t, int m, double lambda, enum fm_model_mode mode,
                 double *T, double *per_member);

/* Lay d out whole for the model: *first (n + 1) and *kids (n - 1, at least 1), malloc'd; the
 * caller frees both. FM_OK, FM_ERR_INVALID or FM_ERR_NOMEM. */
int fm_model_layout(const struct fm_tree_desc *d, int **first, int **kids);
/* d laid out into *t, with twotree's second tree when split (what a split multicast sends:
 * fm_model_splits says when); fm_model_tree_free frees it. FM_OK, FM_ERR_INVALID or
 * FM_ERR_NOMEM. */
int fm_model_tree_of(const struct fm_tree_desc *d, int split, struct fm_model_tree *t);
void fm_model_tree_free(struct fm_model_tree *t);
/* Whether a multicast down d of m packets in mode goes split (mcast.c's split_form: twotree,
 * FPFS, at least two packets and three members). */
int fm_model_splits(const struct fm_tree_desc *d, int m, int mode);

#endif
