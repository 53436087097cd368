/* The context: everything one process's fastmsg instance holds. Internal to the runtime. */
#ifndef FM_CONTEXT_H
#define FM_CONTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "bootstrap.h"
#include "config.h"
#include "fastmsg.h"
#include "transport.h"
#include "wire.h"

#define FM_MAX_MESSAGE (1ULL << 48) /* longest message fm_begin_message* accept */

/* The steps of the small-message path, folded into their callers: a call per step costs more
 * than the step (bench/README.md, "Where the time goes"). */
#if defined(__GNUC__)
#define FM_HOT static inline __attribute__((always_inline))
#else
#define FM_HOT static inline
#endif

/* Internal handler ids live above the user's. */
enum {
    FM_HANDLER_BARRIER = FM_MAX_HANDLERS,
    FM_HANDLER_CALIB_COUNT, /* calibrate.c: messages counted once complete */
    FM_HANDLER_CALIB_RESULT,
    FM_HANDLER_WIREUP, /* wireup.c: hellos at fm_init */
    FM_HANDLER_COUNT
};

/* COPY: one destination's copy of a packet whose payload lives in another buffer (a send
 * buffer of a multi-destination stream, or a received packet being forwarded): buf holds only
 * its header, payload the packet it carries (multi.c). */
typedef enum {
    FM_PKT_RECV_BUF = 1,
    FM_PKT_SEND_BUF,
    FM_PKT_CREDIT_BUF,
    FM_PKT_COPY_BUF
} fm_pkt_kind;

/* Zero-copy state of a received FM_PKT_RNDV packet (zcopy.c). */
typedef enum {
    FM_ZC_NONE = 0,  /* an ordinary packet: its payload is in buf */
    FM_ZC_ANNOUNCED, /* the piece is announced; no receive posted for it yet */
    FM_ZC_POSTED,    /* a tagged receive is posted for it */
    FM_ZC_ARRIVED    /* its bytes are in data (a bounce buffer) or already delivered */
} fm_zc_state;

/* A packet buffer: header + payload in registered memory, plus its bookkeeping. */
typedef struct fm_pkt {
    struct fm_pkt *next; /* free list, pending queue or a stream's packet list */
    unsigned char *buf;  /* FM_WIRE_HDR_LEN header bytes, then the payload */
    fm_tp_mr *mr;
    fm_pkt_kind kind;
    int peer; /* destination (send) or source (receive) */
    uint32_t seq;
    uint32_t len;    /* payload bytes */
    uint32_t off;    /* payload bytes already read by the handler (receive) */
    uint16_t flags;  /* FM_PKT_LAST */
    uint8_t compact; /* send: a whole message behind FM_PKT_SHORT's header, which sits just
                      * before the payload (wire.h) */
    /* An FM_PKT_RNDV packet (receive): len is the piece's length, its bytes arrive apart. */
    uint8_t zc;          /* fm_zc_state */
    uint64_t tag;        /* the piece's tag */
    unsigned char *data; /* the piece's bounce buffer, NULL when it goes straight to the
                          * delivery buffer */
    fm_tp_mr *data_mr;   /* registration of the bounce or delivery range, if needed */
    struct fm_stream *owner;
    /* Multi-destination and forwarded packets: holds on this buffer (copies in flight, and
     * for a received packet its stream's hold until the handler is done with it); the buffer
     * is free when the count drops to 0. */
    int refs;
    struct fm_pkt *payload; /* FM_PKT_COPY_BUF: the packet whose payload it sends */
} fm_pkt;

typedef struct fm_pkt_queue {
    fm_pkt *head, *tail;
} fm_pkt_queue;

/* A chunk of packet buffers allocated and registered at once. */
typedef struct fm_pkt_slab {
    struct fm_pkt_slab *next;
    void *mem;
    fm_pkt *pkts;
    fm_tp_mr *mr;
} fm_pkt_slab;

struct fm_stream {
    /* both directions */
    fm_context *ctx;
    struct fm_stream *next; /* the peer's inbound list, or the free list */
    int sending;            /* 1: our outbound message (2: its last packet has left); 0: inbound */
    int peer;
    uint16_t handler;
    uint32_t msg_id;
    uint64_t declared; /* fm_begin_message's len */
    void *user;
    /* sending (fm_send_alloc zeroes everything above FM_STREAM_RECV_FIRST) */
    uint64_t written; /* bytes appended so far */
    size_t cap;       /* payload bytes per packet for this message */
    uint32_t seq;     /* next packet's sequence number */
    fm_pkt *cur;      /* packet being filled */
    size_t reserved;  /* send buffers promised to this stream (opened in a handler) */
    /* Multi-destination sending (multi.c): every packet is written once and sent to each
     * of ndest ranks with a header of its own; ndest = 0 for a one-destination stream. */
    int ndest, multi;
    int *dests;
    uint32_t *dest_msg_ids;
    uint8_t ptype;       /* FM_PKT_DATA, or FM_PKT_MCAST for a tree multicast */
    uint32_t desc_len;   /* multicast: descriptor bytes at the head of packet 0 */
    unsigned char *desc; /* multicast: the descriptor to put there */
    /* receiving (recv.c zeroes the whole stream) */
    uint64_t counted;    /* bytes announced so far, checked against declared */
    int origin;          /* the rank handlers see as sender (a multicast's root) */
    struct fm_fwd *fwd;  /* forwarding state of a multicast (forward.c) */
    uint32_t next_seq;   /* next sequence number to move to ready */
    fm_pkt_queue ready;  /* in-order packets not yet fully read */
    fm_pkt *early;       /* packets that arrived ahead of next_seq, sorted by seq */
    uint64_t avail;      /* unread bytes in ready */
    uint64_t total;      /* message length, known once complete */
    int complete;        /* the last packet is in ready */
    int finished;        /* handler returned FM_DONE: drop the rest */
    int started;         /* the handler has been called */
    fm_pkt *blocked;     /* a zero-copy piece in ready whose bytes have not arrived: later
                          * packets wait in early behind it */
    unsigned char *dbuf; /* fm_stream_deliver target */
    size_t dcap, dlen;
    fm_deliver_fn dfn;
    void *darg;
};
#define FM_STREAM_RECV_FIRST counted

typedef struct fm_peer {
    int send_credits; /* packets we may still send to this peer */
    int owed;         /* credits we owe it: its packets we have freed */
    int credit_dirty; /* on the context's list of peers owing credits */
    uint32_t next_msg_id;
    uint64_t next_tag;    /* zero-copy pieces sent to this peer */
    fm_pkt_queue pending; /* data packets waiting for a credit */
    fm_pkt credit_pkt;    /* our one credit packet to it */
    int credit_busy;      /* that packet is in flight */
    unsigned char credit_buf[FM_WIRE_HDR_LEN];
    fm_stream *inbound; /* its messages in progress here */
    /* Zero-copy pieces of its whose receive we have posted: clear-to-send tags that go out
     * on our credit packets to it, one per packet (zcopy.c). */
    uint64_t *cts;
    int cts_n, cts_cap;
} fm_peer;

typedef struct fm_handler_slot {
    fm_handler_fn fn;
    void *arg;
} fm_handler_slot;

struct fm_context {
    fm_config cfg;
    fm_boot boot;
    fm_tp *tp;
    int rank, size;
    uint64_t job_key;
    size_t packet_size; /* payload bytes per packet */
    size_t zcopy_min;   /* pieces this large go zero-copy (FM_ZCOPY; SIZE_MAX: never) */
    /* Messages of at most small_max bytes travel in packets of small_payload bytes, which the
     * provider injects (shm: 4 KiB): a few injects beat one larger send's slower protocol. */
    size_t small_max, small_payload;
    int credits; /* window per peer */
    int credit_threshold;

    fm_peer *peers;
    int *dirty; /* peers owing credits, to settle after a progress round */
    int ndirty;
    fm_handler_slot handlers[FM_HANDLER_COUNT];

    fm_pkt_slab *recv_slabs, *send_slabs, *copy_slabs;
    fm_pkt *copy_free;            /* idle per-destination copy headers */
    struct fm_group *groups;      /* groups created here, by id (mcast.c) */
    unsigned char *seen;          /* size bytes of scratch: duplicate checks of member lists */
    struct fm_mcast_costs *costs; /* the model's measured costs (calibrate.c) */
    fm_pkt *repost;               /* receive buffers handlers are done with, to post again */
    fm_pkt *send_free;            /* idle send packet buffers */
    size_t send_free_n;           /* how many */
    size_t send_reserved;         /* promised to streams opened inside handlers */
    size_t send_pkts;             /* send buffers in existence */
    size_t send_pkts_max;         /* the FM_OVERFLOW budget, in packets */
    size_t sends_inflight;        /* handed to the transport, completion not seen */
    fm_stream *stream_free;

    int in_handler;   /* depth of handler calls */
    int run_held;     /* a handler was registered inside a handler: run held messages */
    int finalizing;   /* no more credit packets */
    int failed;       /* the last wait failed with FM_ERR_TIMEOUT or FM_ERR_PEER: fm_finalize
                       * then waits for nothing more */
    uint64_t handled; /* payload bytes given to handlers, for fm_extract */

    /* The one zero-copy send in progress: its sender waits outside any handler, first for
     * the receiver's clear-to-send (waiting, cleared), then for the tagged send (busy). */
    struct {
        int waiting, cleared, busy, status;
        uint64_t tag;
        fm_tp_mr *mr;
    } zc_send;
    unsigned char zc_withdraw; /* context of the empty sends that withdraw a piece */

    uint64_t calib_count;  /* calibrate.c */
    uint64_t wireup_heard; /* wireup.c: hellos from lower ranks */
    int calib_have;

    uint32_t barrier_epoch;
    uint32_t barrier_seen[2][32]; /* [epoch parity][round] arrivals */

    fm_stats stats;
    uint64_t drops[FM_WIRE_NREASONS];
};

/* context.c: the context fm_init returned; NULL before fm_init and after fm_finalize. Public
 * calls compare their context with it before reading through the pointer, so a finalized or
 * foreign pointer gets FM_ERR_NOT_INIT instead of a read of freed memory. */
extern fm_context *fm_live_ctx;
static inline int fm_ctx_live(const fm_context *ctx)
{
    return ctx && ctx == fm_live_ctx;
}

/* pool.c: packet buffers */
int fm_pool_init(fm_context *ctx);
void fm_pool_fini(fm_context *ctx);
fm_pkt *fm_pool_get_send(fm_context *ctx, int reserved);
/* An idle send buffer, or NULL (no growing). */
static inline fm_pkt *fm_pool_pop_send(fm_context *ctx)
{
    fm_pkt *p = ctx->send_free;
    if (p) {
        ctx->send_free_n--;
        ctx->send_free = p->next;
        p->next = NULL;
        p->len = 0;
        p->flags = 0;
        p->compact = 0;
        p->refs = 0;
    }
    return p;
}
fm_pkt *fm_pool_get_send_any(fm_context *ctx);
fm_pkt *fm_pool_get_copy(fm_context *ctx);
void fm_pool_put_copy(fm_context *ctx, fm_pkt *c);
int fm_pool_reserve(fm_context *ctx, size_t n);
static inline void fm_pool_unreserve(fm_context *ctx, size_t n)
{
    ctx->send_reserved -= n;
}
void fm_pool_put_send(fm_context *ctx, fm_pkt *p);
int fm_pool_repost(fm_context *ctx, fm_pkt *p);

/* credits.c: the flow-control window */
void fm_credits_init(fm_context *ctx);
void fm_credits_owe(fm_context *ctx, int peer);
int fm_credits_settle(fm_context *ctx);
/* The credits to piggyback on a packet to peer p now (and no longer owed). */
static inline int fm_credits_take_owed(fm_peer *p)
{
    int n = p->owed > 0xffff ? 0xffff : p->owed;
    p->owed -= n;
    return n;
}
int fm_credits_queue_cts(fm_context *ctx, int peer, uint64_t tag);
void fm_credits_packet_done(fm_context *ctx, int peer);

/* send.c */
int fm_send_alloc(fm_context *ctx, size_t len, size_t cap, int handler, fm_stream **stream);
int fm_send_open(fm_context *ctx, int dest, size_t len, int handler, fm_stream **stream);
void fm_send_submit(fm_stream *s, fm_pkt *p, int type, int last);
int fm_send_next_packet(fm_stream *s);
int fm_send_flush_peer(fm_context *ctx, int peer);
int fm_send_packet_now(fm_context *ctx, fm_pkt *p);
void fm_send_queue(fm_context *ctx, fm_pkt *p);
void fm_send_done(fm_context *ctx, fm_pkt *p);

/* multi.c: one payload, one header per destination */
int fm_multi_open(fm_context *ctx, const int *dests, int n, size_t len, size_t cap, int handler,
                  const unsigned char *desc, size_t desc_len, fm_stream **stream);
void fm_multi_submit(fm_stream *s, fm_pkt *p, int last);
int fm_multi_send_copy(fm_context *ctx, fm_pkt *payload, int dest, const fm_wire_hdr *h);
void fm_multi_close(fm_stream *s);
int fm_multi_drained(const fm_stream *s);

/* forward.c: multicast packets on to this member's children */
int fm_fwd_start(fm_context *ctx, fm_stream *s, fm_pkt *p, const fm_wire_hdr *h);
void fm_fwd_packet(fm_context *ctx, fm_stream *s, fm_pkt *p);
void fm_fwd_free(fm_stream *s);

/* recv.c */
void fm_recv_packet_done(fm_context *ctx, fm_pkt *p);
int fm_recv_packet(fm_context *ctx, fm_pkt *p, size_t len);
void fm_recv_fini(fm_context *ctx);
void fm_recv_run_held(fm_context *ctx, int handler);
void fm_recv_resume(fm_context *ctx, fm_stream *s);
int fm_recv_repost(fm_context *ctx);

/* zcopy.c: large pieces as tagged messages, straight between the two buffers */
int fm_zcopy_wanted(const fm_stream *s, size_t len);
int fm_zcopy_send(fm_stream *s, const void *buf, size_t len);
void fm_zcopy_sent(fm_context *ctx, void *op, int status);
void fm_zcopy_cleared(fm_context *ctx, int peer, uint64_t tag);
int fm_zcopy_check(fm_context *ctx, fm_pkt *p, uint64_t room);
void fm_zcopy_post(fm_context *ctx, fm_stream *s);
void fm_zcopy_arrived(fm_context *ctx, fm_pkt *p, size_t len, int status);
void fm_zcopy_release(fm_context *ctx, fm_pkt *p);

/* progress.c */
int fm_progress_once(fm_context *ctx);
typedef int (*fm_progress_cond)(fm_context *ctx, void *arg);
int fm_progress_until(fm_context *ctx, fm_progress_cond done, void *arg, const char *what);

/* calibrate.c */
void fm_calibrate_init(fm_context *ctx);
/* wireup.c: connect every pair in one direction at fm_init (connection-based providers). */
void fm_wireup_init(fm_context *ctx);
int fm_wireup(fm_context *ctx);

/* barrier.c */
int fm_barrier_internal(fm_context *ctx);
int fm_barrier_handler(fm_stream *s, int sender, void *arg);

/* Inline: once per packet. */
static inline void fm_credits_gained(fm_context *ctx, int peer, int n)
{
    if (n <= 0)
        return;
    fm_peer *p = &ctx->peers[peer];
    p->send_credits += n;
    if (p->pending.head)
        fm_send_flush_peer(ctx, peer);
}

/* Drop one hold on a packet buffer (multi.c): a send buffer goes back to the pool, a received
 * packet back to the network (at the next progress round) with its credit owed to its sender. */
static inline void fm_multi_unref(fm_context *ctx, fm_pkt *p)
{
    if (--p->refs > 0)
        return;
    if (p->kind == FM_PKT_SEND_BUF) {
        fm_pool_put_send(ctx, p);
        return;
    }
    p->next = ctx->repost;
    ctx->repost = p;
}

#endif
