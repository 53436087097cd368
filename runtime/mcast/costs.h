/* SPDX-License-Identifier: BSD-3-Clause */
/* The model's costs in LogGP terms (costs.c): what fm_mcast_calibrate measures, FM_MCAST_COSTS
 * sets and FM_MCAST_COSTS_FILE keeps. One packet copy of B payload bytes from a sender to a
 * child costs, in order:
 *   sender CPU   send_pkt + B x send_byte (+ send_msg for a message's first packet), and at the
 *                root once per packet, whatever its children, B x fill_byte (the caller's piece
 *                copied into the packet);
 *   sender link  B x gap_byte, shared by every copy leaving the sender's host, after the first
 *                `burst` bytes of an idle link (a token-bucket shaper; 0: no burst);
 *   wire         latency + B x lat_byte (a network whose latency grows with the packet: a
 *                different protocol above some size, a store-and-forward hop); where
 *                link_fair is 1 the copy takes its latency first and then shares the
 *                sender's link with the other copies then under way, instead of queueing
 *                (in inverse proportion to their latencies: far_latency);
 *   receiver CPU recv_pkt + B x recv_byte before the packet can be forwarded, then, after its
 *                copies to the receiver's children are posted, B x copy_byte into the caller's
 *                buffer; a receiver that has waited longer than `spin` (fm_wait's polling
 *                before it naps) first wakes up (wake);
 *   idle CPU     every wait polls before it sleeps or yields the core: up to `poll` of CPU
 *                time each time a member runs out of work, and once after its last packet
 *                (work on a core that others sharing it want).
 * Times are seconds, per-byte costs seconds per byte. */
#ifndef FM_MCAST_COSTS_H
#define FM_MCAST_COSTS_H

#include <stddef.h>
#include <stdio.h>

#define FM_COSTS_SIZES 8 /* packet sizes with costs of their own, at most */

struct fm_costs {
    double send_msg, send_pkt, send_byte, fill_byte, gap_byte;
    double recv_pkt, recv_byte, copy_byte;
    double latency, wake, spin, burst, poll;
    double lat_byte; /* latency grows with the packet (a network's per-size protocol) */
    /* 0: a sender's copies leave its link one after another (a connection's byte stream);
     * 1: every copy is a flow of its own, and the flows past their latency share the link
     * equally (SimGrid's network models, where each MPI message is such a flow) */
    double link_fair;
    /* a copy between members in different racks (the first coordinate of FM_TOPOLOGY's
     * file) takes this many times the latency (both parts) of one within a rack; 0 or 1: the
     * same */
    double far_latency;
    /* The link's costs measured at other packet sizes as well (a network whose rate and
     * latency change with the message size in steps, as SMPI's do): packets of at_bytes[i]
     * payload bytes (0: no entry) move at at_gap[i] and take at_lat[i] more latency per byte.
     * fm_costs_at gives the model the nearest size's. */
    double at_bytes[FM_COSTS_SIZES], at_gap[FM_COSTS_SIZES], at_lat[FM_COSTS_SIZES];
};

/* How many fields, and the i-th's key and unit scale in text (value in text x scale = the
 * field in seconds, seconds per byte or bytes). */
#define FM_COSTS_NFIELDS 16
/* The key of field i ("send_pkt_ns", "gap_ns_per_kib", ...) or NULL past the last. */
const char *fm_costs_key(int i);
/* Field i of c (0 <= i < FM_COSTS_NFIELDS), in seconds, seconds per byte or bytes. */
double *fm_costs_field(struct fm_costs *c, int i);

/* The bit of a parse's *set for the costs per packet size (the at_* tables). */
#define FM_COSTS_SIZES_BIT (1u << FM_COSTS_NFIELDS)

/* Parse text into *c, overriding only the fields it names: "key=value" items separated by
 * commas, spaces or newlines ('#' starts a comment to the end of its line), or the older
 * "SEND_PKT_NS:NS_PER_KIB:LATENCY_NS" (send_pkt, send_byte and latency). A packet size's own
 * link costs are "gap_ns_per_kib@BYTES=value" and "latency_ns_per_kib@BYTES=value". *set gets
 * a bit per field named, and FM_COSTS_SIZES_BIT for any per-size cost (may be NULL). 0, or -1
 * with err (if not NULL) saying what is wrong. */
int fm_costs_parse(const char *text, struct fm_costs *c, unsigned *set, char *err, size_t errlen);

/* Copy the fields of src whose bits are in set into dst; FM_COSTS_SIZES_BIT copies the
 * per-size tables. A gap or latency per byte set without them empties dst's tables (the value
 * given holds at every size). */
void fm_costs_merge(struct fm_costs *dst, const struct fm_costs *src, unsigned set);

/* Record the link's costs for packets of bytes payload bytes (an entry of that size is
 * replaced). 0, or -1 when the table is full or bytes is not positive. */
int fm_costs_set_at(struct fm_costs *c, double bytes, double gap_byte, double lat_byte);

/* *out = *c with gap_byte and lat_byte those of the entry nearest to payload bytes (by
 * ratio), when c has entries. */
void fm_costs_at(const struct fm_costs *c, size_t payload, struct fm_costs *out);

/* The classic model's lambda in steps for B-byte packets (postal's, and the unit-step
 * model's): from the start of a copy until its receiver can forward it, over the time a
 * sender is busy per copy; at least 1. */
double fm_costs_lambda(const struct fm_costs *c, double B);

/* Write every field as "key value" lines, after comment lines naming what was measured (note,
 * may be NULL). 0 or -1 (errno set). */
int fm_costs_write(FILE *f, const struct fm_costs *c, const char *note);

/* Load path into *c (fields the file names; others keep their value): 0, or -1 with err. */
int fm_costs_load(const char *path, struct fm_costs *c, char *err, size_t errlen);
/* Save *c to path, atomically (a temporary file beside it, then rename): 0, or -1 with err. */
int fm_costs_save(const char *path, const struct fm_costs *c, const char *note, char *err,
                  size_t errlen);

/* Estimates for a provider before anything is measured: shared memory (local_only) or a
 * network stack; sender_writes: over shared memory, the sender copies each packet into
 * memory its receivers read (sm), rather than they pull it from the sender's (shm's CMA). */
void fm_costs_estimate(struct fm_costs *c, int local_only, int sender_writes);

#endif
