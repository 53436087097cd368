/* SPDX-License-Identifier: BSD-3-Clause */
/* The two-stage multicast's state (ctx->mcast->ipmc), shared by the files of ipmc/. */
#ifndef FM_MCAST_IPMC_STATE_H
#define FM_MCAST_IPMC_STATE_H

#include <stdint.h>

#include "context.h"
#include "ipmc_wire.h"

struct fm_ack;

/* One multicast at one member (the root included): its bytes as they come, what the ring
 * owes around it. The root's comes from its stream (ipmc_root.c), a member's from datagrams
 * and repairs (ipmc_recv.c). */
typedef struct fm_ipmc_msg {
    struct fm_ipmc_msg *next;
    fm_ipmc_hdr h;        /* as in every datagram (index unused) */
    unsigned char *extra; /* h.extra_len bytes: the group's id or the member set */
    uint32_t npk;         /* chunks */
    unsigned char *data;  /* h.len bytes */
    uint64_t *have;       /* a bit per chunk */
    uint32_t nhave;       /* bits set */
    uint32_t run;         /* chunks [0, run) are all here */
    uint32_t hi;          /* one past the highest chunk a datagram brought */
    uint64_t *want;       /* chunks the successor asked for that this member lacked, or NULL */
    uint32_t nwant;
    int pred, succ; /* ring neighbours; succ -1 when the successor is the root */
    uint8_t is_root;
    uint8_t complete;  /* every chunk is here */
    uint8_t succ_has;  /* the successor has it all (or there is none) */
    uint8_t forwarded; /* FM_MCAST_REPAIR=forward: sent on whole */
    uint8_t abandoned; /* the root's stream ended early: nothing more to send */
    uint8_t offered;   /* the predecessor offered: answer at the next progress round */
    /* member: the stream its handler reads (NULL once its last bytes were lent), bytes lent
     * to it so far and runs not yet given back */
    fm_stream *s;
    uint64_t lent_to;
    int lent;
    /* root: bytes its stream has written, datagrams sent, the sync member's answer */
    uint64_t filled;
    uint32_t sent;
    int sync_with;   /* the member asked to answer first, -1 when none (or it answered) */
    double start_at; /* root: not before (FM_MCAST_ROOT_DELAY) */
    /* timers (seconds, CLOCK_MONOTONIC): a member's next NACK, the next offer; their waits */
    double nack_at, nack_wait, offer_at, offer_wait;
    double news_at;     /* a member's last new chunk */
    struct fm_ack *ack; /* a member's share of FM_MCAST_ACK, NULL without */
    uint64_t bytes;     /* counted in the budget */
} fm_ipmc_msg;

/* The multicasts of one root this member has finished with: a window of FM_IPMC_DONE_SPAN
 * numbers from base (older ones count as finished), so late datagrams and repeated offers
 * start nothing. Only multicasts this rank is a member of move it. */
#define FM_IPMC_DONE_SPAN 4096u
typedef struct fm_ipmc_done {
    uint32_t base;
    uint64_t bits[FM_IPMC_DONE_SPAN / 64];
} fm_ipmc_done;

/* Multicasts this rank is not a member of, recently seen (root, number + 1; 0 empty): their
 * datagrams are dropped without reading the member set again. A cache: an entry pushed out
 * only costs that reading. */
#define FM_IPMC_OTHERS 256u

typedef struct fm_ipmc {
    fm_tp_dgram *dgram; /* NULL: no datagram multicast here */
    uint32_t group;     /* the job's multicast address */
    uint16_t port;
    int handler;        /* the ring messages' internal handler id */
    fm_ipmc_msg *msgs;  /* every multicast in progress here */
    fm_ipmc_done *done; /* per root, allocated at first use */
    uint64_t others[FM_IPMC_OTHERS];
    uint32_t next_mid;     /* this rank's next multicast number as a root */
    uint64_t held, budget; /* bytes of messages held, and at most (FM_MCAST_BUFFER) */
    double drop;           /* FM_MCAST_DROP */
    uint64_t rng;          /* its draws */
    double rate;           /* FM_MCAST_RATE, bytes/s; 0 unpaced */
    double tokens, tokens_at;
    double wait0;                            /* FM_MCAST_REPAIR_WAIT, seconds */
    int forward;                             /* FM_MCAST_REPAIR=forward */
    double next_tick;                        /* when timers are looked at next */
    int offers;                              /* offers to answer at the next round */
    unsigned char buf[FM_TP_DGRAM_MAX + 64]; /* one datagram in or out */
} fm_ipmc;

#endif
