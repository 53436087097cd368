/* SPDX-License-Identifier: BSD-3-Clause */
/* fastmsg's shared-memory transport: the segment layout every rank of a host agrees on, the
 * ring records, and the state the providers/sm files share.
 *
 * Every rank owns one segment (a memfd: it has no name, so nothing is left behind when a rank
 * is killed). A segment holds one ring per sending rank (the receiver reads it, only that
 * sender writes it: no locks) and the owner's pool of chunks, which carry packets too large
 * for a ring record. Peers map each other's segments in connect, taking the memfd and the
 * pipe that wakes the owner (pidfd_getfd, or /proc/PID/fd). */
#ifndef FM_SM_INTERNAL_H
#define FM_SM_INTERNAL_H

#include "transport.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define FM_SM_MAGIC   0x666d736d73656731ull /* "fmsmseg1" */
#define FM_SM_VERSION 1u
#define FM_SM_LINE    64u /* a cache line: records and shared words are this aligned */

/* Sizes (sm_segment.c): rings shrink as ranks on the host grow, chunks do not. */
#define FM_SM_SEG_RINGS_BUDGET (2u << 20) /* bytes of rings per segment, at most */
#define FM_SM_RING_MIN         (4u << 10)
#define FM_SM_RING_MAX         (64u << 10)
#define FM_SM_CHUNK_BYTES      (32u << 10)
/* 2 MiB of chunks: half of them (shared payloads' most) holds 16 packets of 64 KiB, twice
 * FM_CREDITS' window. With 32, a flat multicast to 15 ranks on 2 cores ran out of shares and
 * sent a quarter of its copies as copies of their own: 1 MiB took 2.3-2.8 ms, 1.2-1.3 ms with
 * 64 (bench/README.md). */
#define FM_SM_NCHUNKS    64u
#define FM_SM_INLINE_MAX 4096u /* record payload bytes, at most (and ring/8) */
#define FM_SM_MAX_MSG    (1u << 30)

/* A record's first word: kind in bits 24..31, length in 0..23, sequence in 32..63. Never 0:
 * a zero word at the reader's position means "nothing yet" (the reader zeroes the first word
 * of every line it consumed before it publishes its head past them, so stale bytes from the
 * last lap never look like a record). */
enum {
    FM_SM_REC_INLINE = 1, /* a packet */
    FM_SM_REC_CHUNK = 2,  /* a piece of a packet, in a chunk (fm_sm_chunk_ref) */
    FM_SM_REC_WRAP = 3,   /* the rest of the lap is empty */
    FM_SM_REC_RTS = 4,    /* a tagged send: the receiver reads it from the sender (fm_sm_rts) */
    FM_SM_REC_FIN = 5,    /* the receiver has read it (fm_sm_fin) */
    FM_SM_REC_PIECE = 6   /* a piece of a packet, inline (fm_sm_piece, then its bytes): the
                           * header before a shared payload's chunks */
};

static inline uint64_t fm_sm_word(uint32_t seq, unsigned kind, uint32_t len)
{
    return (uint64_t)seq << 32 | (uint64_t)(kind & 0xff) << 24 | (len & 0xffffff);
}

/* A chunk record's body, after the first word: one piece of a packet in a chunk of the
 * sender's segment. */
typedef struct fm_sm_chunk_ref {
    uint32_t chunk; /* index in the sender's pool */
    uint32_t len;   /* bytes in the chunk */
    uint32_t total; /* the packet's length */
    uint32_t off;   /* where these bytes go in the packet */
} fm_sm_chunk_ref;

/* An inline piece's body, before its bytes. */
typedef struct fm_sm_piece {
    uint32_t total; /* the packet's length */
    uint32_t off;   /* where these bytes go in the packet */
} fm_sm_piece;

/* A tagged send's announcement: where the bytes are in the sender's memory. */
typedef struct fm_sm_rts {
    uint64_t tag, addr, len, id;
} fm_sm_rts;

/* The answer: the sender's buffer is free again. */
typedef struct fm_sm_fin {
    uint64_t id;
    int32_t status;
    uint32_t pad;
} fm_sm_fin;

/* A segment's first lines. Written once by the owner before its address is published, except
 * the atomic words. */
typedef struct fm_sm_seg_hdr {
    uint64_t magic;
    uint32_t version;
    uint32_t nslots; /* rings: one per rank of the job on this host */
    uint32_t ring_bytes;
    uint32_t nchunks;
    uint32_t chunk_bytes;
    int32_t pid;
    uint64_t seg_bytes;
    uint64_t nonce;     /* as in the owner's address: a map of the right segment */
    uint64_t self_addr; /* where the owner mapped it: peers try a CMA read of it */
    char pad0[FM_SM_LINE - 56];
    /* 1 while the owner may be asleep on its bell: a writer that clears it rings the bell. */
    _Atomic uint32_t sleeping;
    char pad1[FM_SM_LINE - 4];
    /* 1 while the owner has sends waiting for ring space or chunks: whoever frees either
     * clears it and rings the owner's bell. */
    _Atomic uint32_t starved;
    char pad2[FM_SM_LINE - 4];
} fm_sm_seg_hdr;

/* Per ring, in the receiver's segment: how far the receiver has read (bytes, ever growing). */
typedef struct fm_sm_ring_ctl {
    _Atomic uint64_t head;
    char pad[FM_SM_LINE - 8];
} fm_sm_ring_ctl;

/* Per chunk, in its owner's segment: how many still read it (0: free). A chunk of one
 * destination's packet has 1, that reader's; a shared payload's (fm_sm_share) one per
 * destination whose record names it, plus the owner's until the payload is let go of. */
typedef struct fm_sm_chunk_flag {
    _Atomic uint32_t busy;
    char pad[FM_SM_LINE - 4];
} fm_sm_chunk_flag;

/* Where things are in a segment of a given shape (every rank computes the same). */
typedef struct fm_sm_layout {
    uint32_t nslots, ring_bytes, nchunks, chunk_bytes;
    size_t ctl_off, flags_off, rings_off, chunks_off, bytes;
} fm_sm_layout;

/* What connect learns of a peer: its address, as addr writes it. */
typedef struct fm_sm_addr {
    uint64_t magic;
    uint64_t nonce;
    int32_t pid;
    int32_t memfd;
    int32_t bell; /* the write end of its bell pipe */
    uint32_t nslots;
} fm_sm_addr;

/* A peer's mapped segment and its bell. */
typedef struct fm_sm_peer {
    unsigned char *base; /* its segment */
    fm_sm_seg_hdr *hdr;
    size_t bytes; /* mapped length */
    int bell;     /* its bell pipe's write end (-1: not taken; it wakes by its own
                   * timeouts) */
    /* Sending to it (my ring in its segment): */
    unsigned char *tx_ring; /* where that ring starts */
    uint64_t tail;          /* bytes written, ever growing */
    uint64_t head_seen;     /* its head when last read */
    uint32_t seq;           /* next record's sequence */
    /* Receiving from it (its ring in my segment): */
    unsigned char *rx_ring; /* where that ring starts */
    uint64_t head;          /* bytes read */
    uint64_t head_published;
    uint32_t seq_expected;
    int broken; /* a malformed record was seen: its ring is no longer read */
    /* The packet being assembled from its chunks. */
    struct fm_sm_rx *asm_rx;
    uint32_t asm_total, asm_got;
    int asm_status;
    /* Its chunks may be lent (fm_tp_config.lend): it began with an inline piece, so it is a
     * shared payload (sendv_shared), all of whose chunks were written before its first
     * record; and none of its chunks was copied yet. */
    int asm_lendable;
    /* Its bytes from lent_at on, left where they are: in lent_n chunks of the sender's pool
     * from lent_first on, contiguous, each still counting this reader. NULL lent: every byte
     * so far is in the receive. */
    const unsigned char *lent;
    uint32_t lent_at, lent_first, lent_n;
    /* Sends to it that are waiting (FIFO: order per destination is kept). */
    struct fm_sm_op *q_head, *q_tail;
} fm_sm_peer;

/* A payload written once into chunks of this rank's pool for several destinations on the host
 * (sendv_shared: multicast copies, fm_begin_message_multi): each destination's packet is its
 * own header, inline, then records naming these chunks. */
typedef struct fm_sm_share {
    struct fm_sm_share *next; /* free list */
    uint32_t len;             /* payload bytes */
    uint32_t nchunks;
    uint32_t chunk[FM_SM_NCHUNKS];
} fm_sm_share;

/* A send that could not finish at once: the caller's buffers stay the transport's. Control
 * records (RTS, FIN) keep their bytes in own and complete silently. */
typedef struct fm_sm_op {
    struct fm_sm_op *next;
    int dest;
    unsigned kind; /* FM_SM_REC_INLINE for packets */
    unsigned char own[sizeof(fm_sm_rts)];
    const unsigned char *hdr, *pay;
    size_t hlen, plen;
    size_t done;        /* bytes already in chunks */
    fm_sm_share *share; /* the payload is there (NULL: in pay) */
    void *ctx;
} fm_sm_op;

/* A multi-receive region (post_recv_multi): packets land in it packed, 8-byte aligned. */
typedef struct fm_sm_region {
    struct fm_sm_region *next;                /* the regions not yet full, in posting order */
    struct fm_sm_region *late_next;           /* let go of: its REGION_DONE is due */
    struct fm_sm_region *all_prev, *all_next; /* every region the transport holds */
    unsigned char *buf;
    size_t len, used;
    void *ctx;
    int landing; /* packets still being copied into it */
    int full;    /* less than multi_recv_min left: REGION_DONE once landing is 0 */
} fm_sm_region;

/* Where one packet goes: a posted receive, or a place in a region. */
typedef struct fm_sm_rx {
    void *buf;
    size_t len;
    void *ctx;
    fm_sm_region *region; /* NULL: a posted receive */
} fm_sm_rx;

typedef struct fm_sm_tp {
    fm_tp base;
    fm_sm_layout lay;
    unsigned char *seg; /* my segment */
    fm_sm_seg_hdr *hdr;
    int memfd;
    int bell[2]; /* the bell pipe: [0] is the wait fd, peers write [1] */
    uint64_t nonce;
    uint32_t inline_max;
    int rank, n; /* after connect */
    fm_sm_peer *peers;
    /* Posted receives: a ring of descriptors that grows on demand. */
    fm_sm_rx *rx;
    size_t rx_cap, rx_first, rx_count;
    /* Multi-receive regions, when asked for (multi_min > 0): the one packets land in first. */
    size_t multi_min;
    fm_sm_region *regions, *regions_tail;
    fm_sm_region *late, *late_tail; /* let go of, REGION_DONE not yet returned by poll */
    fm_sm_region *all;
    /* Receives in use by packets being assembled from chunks (one per sender at most). */
    fm_sm_rx *asm_slots;
    /* Sends finished from the queues: their SEND_DONE events are due. */
    fm_sm_op *done_head, *done_tail;
    fm_sm_op *free_ops;
    int queued;       /* destinations with waiting sends */
    int armed;        /* trywait said sleep: the next poll drains the bell */
    int next_slot;    /* where the next poll starts reading (fairness) */
    uint64_t dropped; /* malformed records */
    /* Tagged messages (sm_tagged.c). */
    struct fm_sm_tsend_op *tsends;
    struct fm_sm_trecv_op *trecvs;
    struct fm_sm_unexp *unexp;
    uint64_t next_id;
    uint32_t chunk_next; /* where chunk allocation looks first */
    /* Shared payloads: at most one per chunk can exist, so they never need allocating. */
    fm_sm_share shares[FM_SM_NCHUNKS];
    fm_sm_share *free_shares;
    uint32_t share_chunks; /* chunks the shared payloads hold (at most half the pool) */
    int lend;              /* shared payloads are lent, not copied (fm_tp_config.lend) */
} fm_sm_tp;

static inline fm_sm_tp *fm_sm_of(fm_tp *tp)
{
    return (fm_sm_tp *)tp;
}

static inline fm_sm_ring_ctl *fm_sm_ctl(const fm_sm_layout *l, unsigned char *seg, int slot)
{
    return (fm_sm_ring_ctl *)(seg + l->ctl_off) + slot;
}

static inline fm_sm_chunk_flag *fm_sm_flag(const fm_sm_layout *l, unsigned char *seg, uint32_t c)
{
    return (fm_sm_chunk_flag *)(seg + l->flags_off) + c;
}

static inline unsigned char *fm_sm_ring(const fm_sm_layout *l, unsigned char *seg, int slot)
{
    return seg + l->rings_off + (size_t)slot * l->ring_bytes;
}

static inline unsigned char *fm_sm_chunk(const fm_sm_layout *l, unsigned char *seg, uint32_t c)
{
    return seg + l->chunks_off + (size_t)c * l->chunk_bytes;
}

/* A record's first word, read and written atomically by both ends. */
static inline _Atomic uint64_t *fm_sm_word_at(unsigned char *rec)
{
    return (_Atomic uint64_t *)(void *)rec;
}

/* The record size for a payload of len bytes (first word, then the payload; whole lines). */
static inline size_t fm_sm_rec_bytes(size_t len)
{
    return (8 + len + FM_SM_LINE - 1) & ~(size_t)(FM_SM_LINE - 1);
}

/* sm_segment.c */
void fm_sm_layout_for(fm_sm_layout *l, uint32_t nslots);
int fm_sm_segment_create(fm_sm_tp *t, uint32_t nslots, const char *name, char *err, size_t errlen);
int fm_sm_segment_attach(fm_sm_tp *t, const fm_sm_addr *a, fm_sm_peer *p, int rank);
void fm_sm_segment_close(fm_sm_tp *t);
void fm_sm_ring_bell(fm_sm_peer *p, _Atomic uint32_t *flag);

/* sm_send.c */
int fm_sm_send(fm_tp *tp, int dest, const void *buf, size_t len, fm_tp_mr *mr, void *ctx);
int fm_sm_sendv(fm_tp *tp, int dest, const void *hdr, size_t hlen, fm_tp_mr *hmr,
                const void *payload, size_t plen, fm_tp_mr *pmr, void *ctx);
int fm_sm_sendv_shared(fm_tp *tp, int dest, const void *hdr, size_t hlen, fm_tp_mr *hmr,
                       const void *payload, size_t plen, fm_tp_mr *pmr, void **share, void *ctx);
void fm_sm_share_release(fm_tp *tp, void *share);
void fm_sm_shares_init(fm_sm_tp *t);
int fm_sm_retry(fm_sm_tp *t);
int fm_sm_send_ctl(fm_sm_tp *t, int dest, unsigned kind, const void *body, size_t len);
void fm_sm_ops_free(fm_sm_tp *t);

/* sm_recv.c */
int fm_sm_post_recv(fm_tp *tp, void *buf, size_t len, fm_tp_mr *mr, void *ctx);
int fm_sm_post_recv_multi(fm_tp *tp, void *buf, size_t len, fm_tp_mr *mr, void *ctx);
void fm_sm_recv_free(fm_sm_tp *t);
int fm_sm_receive(fm_sm_tp *t, fm_tp_event *ev, int max);
int fm_sm_pending(fm_sm_tp *t);
void fm_sm_flush(fm_sm_tp *t);
void fm_sm_lend_release(fm_tp *tp, uint64_t lend);

/* sm_tagged.c */
int fm_sm_tsend(fm_tp *tp, int dest, const void *buf, size_t len, fm_tp_mr *mr, uint64_t tag,
                void *ctx);
int fm_sm_trecv(fm_tp *tp, int src, void *buf, size_t len, fm_tp_mr *mr, uint64_t tag, void *ctx);
int fm_sm_on_rts(fm_sm_tp *t, int src, const unsigned char *body, fm_tp_event *e);
int fm_sm_on_fin(fm_sm_tp *t, int src, const unsigned char *body, fm_tp_event *e);
int fm_sm_unexpected(fm_sm_tp *t, fm_tp_event *ev, int max);
int fm_sm_cma_probe(fm_sm_tp *t);
void fm_sm_tagged_free(fm_sm_tp *t);

/* sm_poll.c */
int fm_sm_poll(fm_tp *tp, fm_tp_event *ev, int max);
int fm_sm_wait_fd(fm_tp *tp);
int fm_sm_trywait(fm_tp *tp);

/* sm_transport.c */
int fm_sm_open(const fm_tp_config *cfg, fm_tp **tp, char *err, size_t errlen);

#endif
