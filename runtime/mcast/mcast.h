/* The multicast layer: groups and roots (mcast.c), forwarding (forward.c), the choice of tree
 * (tree_choice.c), calibration (calibrate.c). It sits above the core: the core reaches it only
 * through the hooks fm_mcast_init registers (hooks.h). */
#ifndef FM_MCAST_H
#define FM_MCAST_H

#include <stddef.h>
#include <stdint.h>

#include "context.h"
#include "trees/tree.h"

/* The layer's state: ctx->mcast. */
struct fm_mcast {
    struct fm_group *groups;      /* groups created here, by id (mcast.c) */
    struct fm_mcast_costs *costs; /* the model's costs and auto's decisions (tree_choice.c) */
    int calib_count_handler, calib_result_handler; /* internal handler ids (calibrate.c) */
    uint64_t calib_count;
    int calib_have;
};

/* Allocate the state, register the core hooks and calibration's handlers (fm_init). */
int fm_mcast_init(fm_context *ctx);
/* Free groups, costs and state (fm_finalize, after the core is closed). */
void fm_mcast_fini(fm_context *ctx);
/* FM_TREE and FM_MCAST_COSTS, before anything starts: FM_OK or FM_ERR_CONFIG with err set. */
int fm_mcast_check_config(const fm_config *cfg, char *err, size_t errlen);
/* calibrate.c's handlers, registered by fm_mcast_init. */
int fm_calibrate_init(fm_context *ctx);
/* forward.c's side of the core hooks. */
int fm_fwd_start(fm_context *ctx, fm_stream *s, fm_pkt *p, const fm_wire_hdr *h);
void fm_fwd_packet(fm_context *ctx, fm_stream *s, fm_pkt *p);
void fm_fwd_free(fm_stream *s);

/* A group: an ordered member list every member created alike. Its id is a hash of the list,
 * so members agree on it without talking; multicasts name it instead of listing members. */
struct fm_group {
    fm_context *ctx;
    struct fm_group *next; /* the context's list */
    uint64_t id;
    int n, pos; /* members; the caller's position (-1: not a member) */
    int *members;
};

struct fm_group *fm_group_find(fm_context *ctx, uint64_t id);

/* The tree the root uses for a message of len bytes (descriptor included) to n members: spec
 * is a tree name ("binomial", "kbinomial:3", "auto", ...; NULL = FM_TREE). Fills builder,
 * param and lambda of *d (n and root already set) and *payload, the packet payload size the
 * multicast uses: FM_PACKET_SIZE for a named tree; auto may choose less, never below
 * min_payload (packet 0 must hold the descriptor). FM_OK or FM_ERR_TREE. */
int fm_mcast_choose(fm_context *ctx, const char *spec, size_t len, size_t min_payload,
                    int store_forward, struct fm_tree_desc *d, size_t *payload);

/* The model's prediction (seconds) for a multicast of bytes (descriptor included) down d in
 * packets of payload bytes. */
int fm_mcast_predict(fm_context *ctx, const struct fm_tree_desc *d, size_t bytes, size_t payload,
                     int sf, double *seconds);
int fm_mcast_costs_parse(const char *text, double *overhead_s, double *per_byte_s,
                         double *latency_s);
void fm_mcast_set_costs(fm_context *ctx, double overhead_s, double per_byte_s, double latency_s);

#endif
