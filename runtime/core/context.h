/* SPDX-License-Identifier: BSD-3-Clause */
/* The context: one process's fastmsg instance, as the core sees it. Module-private state sits
 * in sub-structs named for their module (pool, zc); the layers above the core keep theirs
 * behind opaque pointers (mcast, services), so the core never needs their headers. Internal
 * to the runtime: the core's modules declare their calls in their own headers beside them. */
#ifndef FM_CORE_CONTEXT_H
#define FM_CORE_CONTEXT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "bootstrap.h"
#include "config.h"
#include "fastmsg.h"
#include "peer.h"
#include "pkt.h"
#include "stream.h"
#include "transport.h"
#include "wire.h"

#define FM_MAX_MESSAGE (1ULL << 48) /* longest message fm_begin_message* accept */

/* The steps of the small-message path, folded into their callers: a call per step costs more
 * than the step (bench/README.md, "Where the time goes"). */
#if defined(__GNUC__)
#define FM_HOT static inline __attribute__((always_inline))
/* A rare branch of a hot function, kept out of line so it does not crowd the common path's
 * registers (the multicast branch of fm_recv_packet: 2 instructions per packet). */
#define FM_COLD static __attribute__((noinline, cold))
#else
#define FM_HOT  static inline
#define FM_COLD static
#endif

/* Internal handler ids live above the user's: the layers above the core take them with
 * fm_handlers_add_internal (handlers.h) at fm_init, in the same order on every rank. */
#define FM_INTERNAL_HANDLERS 8
#define FM_HANDLER_COUNT     (FM_MAX_HANDLERS + FM_INTERNAL_HANDLERS)

typedef struct fm_handler_slot {
    fm_handler_fn fn;
    void *arg;
    /* Registered inside a handler: takes effect at the next progress round, after the
     * messages held for it have started (so that newer ones cannot overtake them). */
    fm_handler_fn late_fn;
    /* A whole-message handler (whole.c): fn is fm_whole_handler, arg this slot, and these
     * are the caller's function and argument. */
    fm_message_fn mfn;
    void *marg;
} fm_handler_slot;

/* Whole-message handlers (whole.c): the FM_MESSAGE_BUFFER budget, messages waiting for it,
 * and per sender the messages whose function has not run yet, in order. */
typedef struct fm_whole_state {
    size_t budget;                         /* FM_MESSAGE_BUFFER */
    size_t used, peak;                     /* bytes of buffers held now; the most (fm_stats) */
    struct fm_whole_msg *wait, *wait_tail; /* waiting for budget, in the order they came */
    struct fm_whole_msg *done;             /* run, their parked streams to release */
    struct fm_whole_queue *order;          /* per sender (NULL until a message needs one) */
    int run;                               /* for the next progress round: start waiting messages,
                                            * release done ones */
    int warned;                            /* FM_ERR_TOO_LONG said on stderr */
} fm_whole_state;

/* Packet buffers (pool.c). */
typedef struct fm_pool_state {
    fm_pkt_slab *recv_slabs, *send_slabs, *copy_slabs;
    fm_pkt *copy_free;    /* idle per-destination copy headers */
    fm_pkt *send_free;    /* idle send packet buffers */
    size_t send_free_n;   /* how many */
    size_t send_reserved; /* promised to streams opened inside handlers */
    size_t send_pkts;     /* send buffers in existence */
    size_t send_pkts_max; /* the FM_OVERFLOW budget, in packets */
    size_t send_base;     /* buffers of the first slab, kept until fm_finalize */
    /* Bytes of the slabs' buffers (fm_stats.mem_*): receive, send and copy slabs in
     * existence, those registered with the provider, the most of the three together. */
    size_t bytes_recv, bytes_send, bytes_copy, bytes_registered, bytes_peak;
    /* Send buffers held for multicast children slower than their siblings (a root's packets
     * not yet sent to every destination, a forwarding member's copies): at most held_max
     * (FM_MCAST_BUFFER) before the root waits and members keep their parents' packets. */
    size_t held, held_max, held_peak;
    size_t held_reserved; /* promised to store-and-forward and FCFS messages */
    /* Bytes of packet buffers held now for forwarding multicasts, whole buffers each
     * (fm_pool_pkt_bytes): forwarding copies, and receive buffers a child's send still reads
     * (their most: fm_stats.fwd_held_peak). */
    size_t fwd_held;
    unsigned idle_rounds; /* progress rounds since a send buffer was last in use */
} fm_pool_state;

/* Receive buffers (recv_pool.c): multi-receive regions every sender's packets land in, or,
 * where there are none (FM_RECV_POOL=0, or a provider without FI_MULTI_RECV), one buffer per
 * credit per peer in `slabs`. */
typedef struct fm_recv_pool_state {
    struct fm_recv_region *regions; /* every region in existence */
    size_t nregions, nposted;       /* in existence; with the provider (no REGION_DONE yet) */
    size_t base;         /* regions made at fm_init; more exist only while some are pinned */
    size_t region_bytes; /* where messages land in one region */
    fm_pkt *free_desc;   /* idle packet descriptors for messages that land in regions */
    struct fm_recv_desc_chunk *chunks;
    fm_pkt_slab *slabs;              /* the other layout: a buffer per credit per peer */
    size_t grown;                    /* regions made because every one was pinned (FM_STATS line) */
    size_t moved;                    /* held packets moved out of pinned regions (FM_STATS line) */
    struct fm_recv_moved *moved_mem; /* their memory while they are held */
} fm_recv_pool_state;

/* Zero-copy (zcopy.c): the one zero-copy send in progress; its sender waits outside any
 * handler, first for the receiver's clear-to-send (waiting, cleared), then for the tagged
 * send (busy). */
typedef struct fm_zcopy_state {
    struct {
        int waiting, cleared, declined, busy, status;
        uint64_t tag;  /* the piece's id */
        uint64_t rtag; /* the tag the receiver posted its receive with */
        fm_tp_mr *mr;
    } send;
    unsigned char withdraw; /* context of the empty sends that withdraw a piece */
    uint64_t next_rtag;     /* receive tags: from a random start, never 0 */
} fm_zcopy_state;

/* Requests (request.c): started and not complete, in start order; complete with a callback
 * still to run; freed ones kept for reuse; how many exist (FM_REQUESTS at most). */
struct fm_request;
typedef struct fm_req_state {
    struct fm_request *head, *tail;
    struct fm_request *notify, *notify_tail;
    struct fm_request *free;
    void *slabs;
    long live;
} fm_req_state;

/* Worker threads (submit.c): the progress thread, requests queued by others, the wake-up. */
struct fm_submit;
typedef struct fm_thread_state {
    pthread_t owner;
    pthread_mutex_t lock;
    struct fm_submit *head, *tail; /* under lock */
    atomic_int queued;             /* submitted, not started yet */
    atomic_int woken;              /* fm_wake since fm_wait last looked */
    int wake_fd;                   /* eventfd fm_wake writes */
    int ready;                     /* lock and fd exist */
} fm_thread_state;

struct fm_mcast;       /* the multicast layer's state (runtime/mcast) */
struct fm_mcast_hooks; /* what the core calls on multicast packets (hooks.h) */
struct fm_services;    /* barrier and wire-up state (runtime/services) */
struct fm_topo;        /* where each rank is (runtime/topo) */

struct fm_context {
    fm_config cfg;
    fm_boot boot;
    fm_tp *tp;
    struct fm_topo *topo;
    int rank, size;
    uint64_t job_key;
    size_t packet_size; /* payload bytes per packet */
    size_t zcopy_min;   /* pieces this large go zero-copy (FM_ZCOPY; SIZE_MAX: never) */
    size_t zcopy_local; /* the same to peers on this host (>= zcopy_min; the hybrid's sm) */
    /* Messages of at most small_max bytes travel in packets of small_payload bytes, which the
     * provider injects (shm: 4 KiB): a few injects beat one larger send's slower protocol. */
    size_t small_max, small_payload;
    int credits; /* the largest window per peer */
    /* Per-peer windows (window.c), where receive buffers are shared regions: on, the floor
     * every window starts at, the credits left to grant, the senders waiting for a grant. */
    struct {
        int on, floor, free;
        int *wants, nwants;
    } win;

    fm_peer *peers;
    int *dirty; /* peers owing credits, to settle after a progress round */
    int ndirty;
    fm_handler_slot handlers[FM_HANDLER_COUNT];
    int internal_handlers; /* internal ids taken so far */

    fm_pool_state pool;
    fm_recv_pool_state rpool;
    fm_pkt *repost;         /* receive buffers handlers are done with, to post again */
    size_t sends_inflight;  /* handed to the transport, completion not seen */
    fm_stream *stream_free; /* streams to reuse (streams.c) */
    fm_stream **stream_all; /* every stream allocated, freed at close (open ones too) */
    size_t nstream_all, stream_all_cap;
    unsigned char *seen; /* size bytes of scratch: duplicate checks of member lists */

    /* Rounds an idle wait polls before it yields the core (progress.c): FM_PROGRESS_SPINS, or
     * 1 when this host runs more ranks of the job than it has cores, where a spinning rank
     * only keeps the one it waits for off the core. */
    int idle_spins;
    /* Copies of one payload go by the transport's sendv_shared (FM_SM_SHARE, where it has one):
     * the payload moves once for every destination it can share it with. */
    int share_copies;
    /* Shared payloads from ranks of this host are read where their sender wrote them
     * (FM_SM_LEND, where the transport lends: recv_lend.c). */
    int lend_packets;
    int in_handler;   /* depth of handler calls (deliver callbacks included) */
    int run_held;     /* a handler was registered inside a handler: run held messages */
    int run_groups;   /* a group was created inside a handler: start multicasts held for it */
    int held_mcast;   /* multicasts waiting for their group (await_group) */
    int ndeferred;    /* messages deferred by their handlers (fm_stream_defer) */
    int finalizing;   /* no more credit packets */
    int failed;       /* the last wait failed with FM_ERR_TIMEOUT or FM_ERR_PEER: fm_finalize
                       * then waits for nothing more */
    uint64_t handled; /* payload bytes of user messages handed to handlers, for fm_extract */
    /* fm_wait's watch on peers that owe this rank something (progress.c): seconds spent
     * waiting (gaps between waits longer than a second not counted), when last looked. */
    double wclock, wlast;

    fm_zcopy_state zc;
    fm_req_state req;
    fm_thread_state thr;
    int req_opening; /* a request's stream is being opened: promise it no buffers (send.c) */
    fm_whole_state whole;

    const struct fm_mcast_hooks *mcast_hooks; /* NULL: multicast packets are dropped */
    int extra_fd;   /* a layer's descriptor idle waits also sleep on (datagrams), or -1 */
    int layer_poll; /* nonzero: every progress round calls mcast_hooks->progress */
    int wait_epoll; /* fm_wait_fd's: the provider's fd and extra_fd together, or -1 */
    struct fm_mcast *mcast;
    struct fm_services *services;

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

/* fm_finalize's report (context.c): FM_STATS counters, and messages that never ran. */
void fm_core_report(const fm_context *ctx);

#endif
