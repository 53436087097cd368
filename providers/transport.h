/* SPDX-License-Identifier: BSD-3-Clause */
/* The transport: the only layer that knows the network. It moves packets (byte buffers) to
 * ranks and reports completions; everything above it is provider-independent. Nothing outside
 * providers/ includes libfabric headers.
 *
 * Ownership: a buffer passed to send or post_recv belongs to the transport until its
 * completion event comes back from poll. Sends that the network cannot take now (-FI_EAGAIN:
 * first contact, full queues) are queued inside the transport and retried from poll: send
 * never spins. */
#ifndef FM_TRANSPORT_H
#define FM_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

typedef struct fm_tp fm_tp;

/* send's "done already" return (> 0, so never an FM_* status). */
#define FM_TP_SENT 1
typedef struct fm_tp_mr fm_tp_mr; /* a registration, NULL where the provider needs none */

typedef enum {
    FM_TP_SEND_DONE = 1,
    FM_TP_RECV_DONE = 2,
    FM_TP_TSEND_DONE = 3, /* a tagged send (tsend) */
    FM_TP_TRECV_DONE = 4, /* a tagged receive (trecv) */
    /* Multi-receive regions (post_recv_multi, only where info.multi_recv): */
    FM_TP_RECV_MULTI = 5,      /* one message landed in a region: at buf, len bytes */
    FM_TP_RECV_REGION_DONE = 6 /* the provider has released the region: no message lands in
                                * it any more, and none of its RECV_MULTIs is still to come */
} fm_tp_event_kind;

typedef struct fm_tp_event {
    fm_tp_event_kind kind;
    int status; /* FM_OK, or an FM_ERR_* code for this one operation */
    void *ctx;  /* as passed to send/post_recv/post_recv_multi */
    /* The message's first byte: the buffer posted (RECV_DONE, TRECV_DONE, sends), the place
     * inside the region where it landed (RECV_MULTI), the region's start (REGION_DONE). */
    void *buf;
    size_t len; /* bytes received (RECV_DONE, TRECV_DONE, RECV_MULTI); 0 for REGION_DONE */
    /* A loan (RECV_DONE, RECV_MULTI; only where fm_tp_config.lend asked for them): the packet's
     * bytes from lent_at on were not written into buf; they are at lent, in memory the
     * transport lends (sm: the sender's chunks), to be read in place and never written. The
     * memory stays readable until the caller gives it back with lend_release(lend), which it
     * does once, soon: the sender cannot use that memory again before. NULL: all in buf. */
    const unsigned char *lent;
    size_t lent_at;
    uint64_t lend;
} fm_tp_event;

typedef struct fm_tp_config {
    const char *provider; /* FM_PROVIDER: "shm", "tcp", "tcp;ofi_rxm", ... */
    const char *iface;    /* interface for tcp, or "" */
    int all_local;        /* every rank on this host: pin tcp to lo unless iface is set */
    int host_ranks;       /* ranks of the job on this host (0: not known) */
    int verbose;
    int no_wait_fd; /* 1: no CQ wait object: wait_fd is -1, but tcp polls faster */
    /* Receives (post_recv and trecv) the caller may have posted at once; 0: not known. A
     * provider sizes its receive queue for them, or open fails saying it cannot. */
    size_t rx_depth;
    /* A name for this endpoint, unique on the host, or NULL: shm names its region in /dev/shm
     * after it (else after the pid), so that a launcher can remove what a killed rank left. */
    const char *name;
    /* Multi-receive regions (post_recv_multi): 0 = not asked (the default: the CQ then keeps
     * its smaller entry format). Otherwise FI_MULTI_RECV is asked for and this is the
     * provider's FI_OPT_MIN_MULTI_RECV: a region is released once less than this is left in
     * it. It must be at least the largest message a peer sends: a message longer than the
     * space left is truncated, not moved to the next region (providers/ofi/README.md). */
    size_t multi_recv_min;
    /* Where every rank runs (hybrid): host_of[r] is rank r's host index (nranks entries, the
     * topology's), rank is this one. NULL where not known. */
    const int *host_of;
    int rank, nranks;
    /* FM_MPI_COSTS: "send=S,recv=S", seconds of simulated compute per packet (mpi under
     * SimGrid), or "" / NULL. */
    const char *costs;
    /* 1: the caller takes loans (fm_tp_event.lent) and gives them back (lend_release); a
     * provider that has nothing to lend ignores it. */
    int lend;
} fm_tp_config;

typedef struct fm_tp_info {
    char provider[64]; /* the provider actually opened, e.g. "tcp;ofi_rxm" */
    char fabric[64];
    size_t inject_size; /* sends up to this size complete at once */
    size_t max_msg_size;
    int needs_mr; /* buffers must be registered (mem_reg) */
    int ordered;  /* packets from one sender arrive in the order sent (FI_ORDER_SAS) */
    int tagged;   /* tsend/trecv exist: the zero-copy path for large pieces */
    int sendv;    /* sendv gathers its two parts (else it copies them when they are large) */
    /* Capabilities: what the layers above ask instead of comparing provider names. */
    int wait_fd;     /* wait_fd returns a descriptor: idle waits can sleep on it */
    int connected;   /* first sends set up connections, which simultaneous first sends from
                      * both ends can break: wire every pair up in one direction (wireup.c) */
    int local_only;  /* packets move through memory within one host (shared memory): no
                      * network stack, no network latency; every rank shares this host */
    int local_peers; /* some peers are reached through memory (sm, and the hybrid when this
                      * host runs other ranks): a reply may be microseconds away, so an idle
                      * wait polls and yields a while before it sleeps on the wait fd */
    int simulated;   /* packets and time are simulated (mpi under SimGrid): a datagram beside
                      * them would travel outside the simulation, so there is none */
    int dgram_mcast; /* datagram multicast: tp->dgram is open (below) */
    int multi_recv;  /* post_recv_multi works: asked for (fm_tp_config.multi_recv_min) and
                      * offered by the provider on this endpoint */
    /* Where tagged messages pay off: pieces below this size are faster as packets, whatever
     * FM_ZCOPY's default says (an FM_ZCOPY set by the user still rules). 0: no opinion. */
    size_t zcopy_from;
    /* The same for the peers on this host, where they travel another way than the others
     * (hybrid: sm's); 0: as zcopy_from. */
    size_t zcopy_from_local;
} fm_tp_info;

struct fm_tp_ops {
    const char *name;
    /* This endpoint's address (opaque bytes) into buf (capacity *len); *len = its size. */
    int (*addr)(fm_tp *tp, void *buf, size_t *len);
    /* Insert the n ranks' addresses (rank order, one every addrlen bytes, zero-padded: their
     * lengths may differ) so that rank r is reachable as destination r. */
    int (*connect)(fm_tp *tp, const void *addrs, size_t addrlen, int n);
    int (*mem_reg)(fm_tp *tp, void *buf, size_t len, fm_tp_mr **mr);
    void (*mem_dereg)(fm_tp *tp, fm_tp_mr *mr);
    /* Send len bytes of buf to rank dest. FM_OK once accepted (maybe queued): exactly one
     * SEND_DONE follows. FM_TP_SENT when the provider took the bytes at once (inject): no
     * event follows and buf is the caller's again, as it is after an error return. */
    int (*send)(fm_tp *tp, int dest, const void *buf, size_t len, fm_tp_mr *mr, void *ctx);
    /* Send hdr (hlen bytes) followed by payload (plen bytes) as one message, without joining
     * them in memory first: one payload, a header per destination (multicast). Completion
     * and ownership as send (both buffers); small ones may be injected (FM_TP_SENT). */
    int (*sendv)(fm_tp *tp, int dest, const void *hdr, size_t hlen, fm_tp_mr *hmr,
                 const void *payload, size_t plen, fm_tp_mr *pmr, void *ctx);
    /* Optional (NULL: every copy goes by sendv): sendv for one of several copies of a payload
     * (multicast and fm_begin_message_multi send one payload behind a header per
     * destination). *share is the caller's, one per payload, NULL before its first copy; the
     * transport may keep there what lets the payload's later copies reuse what it did for
     * the first (sm: the payload written once into chunks that every destination on the host
     * reads). The payload's bytes must not change, and must stay the transport's, from the
     * first copy until share_release, which the caller calls once no copy of it is left to
     * send or to complete. Completion, ownership and errors as sendv. */
    int (*sendv_shared)(fm_tp *tp, int dest, const void *hdr, size_t hlen, fm_tp_mr *hmr,
                        const void *payload, size_t plen, fm_tp_mr *pmr, void **share, void *ctx);
    /* What sendv_shared kept in share (non-NULL) goes. */
    void (*share_release)(fm_tp *tp, void *share);
    /* Optional (NULL: nothing is ever lent): a loan (fm_tp_event.lend) comes back. */
    void (*lend_release)(fm_tp *tp, uint64_t lend);
    /* Give the transport a buffer to receive one packet (of at most len bytes) into. */
    int (*post_recv)(fm_tp *tp, void *buf, size_t len, fm_tp_mr *mr, void *ctx);
    /* Give the transport a region of len bytes that many messages land in, packed one after
     * the other, each taking its own length (only where info.multi_recv; FM_ERR_INVALID
     * otherwise). Each message comes back as a RECV_MULTI event (ctx, and where it landed:
     * buf, len); after the last of them, exactly one REGION_DONE says the provider has let
     * go of the region (less than fm_tp_config.multi_recv_min left). The region belongs to
     * the transport until then, and its bytes stay the caller's to read: the transport never
     * writes a message's bytes again once its RECV_MULTI came back. A message that arrives
     * while no region has room waits in the provider until one is posted. */
    int (*post_recv_multi)(fm_tp *tp, void *buf, size_t len, fm_tp_mr *mr, void *ctx);
    /* Tagged messages (only where info.tagged): a send of len bytes straight from buf that
     * lands in the one receive posted with the same tag, whatever its size. The provider
     * moves the bytes with its own large-message mechanism (shm: a single copy across
     * processes where the kernel allows it; tcp: straight into the posted buffer). Events
     * TSEND_DONE / TRECV_DONE; buffer ownership as send and post_recv. trecv names the rank
     * the message comes from (src): a transport with more than one path (hybrid) posts the
     * receive on that rank's; the others may match any sender. */
    int (*tsend)(fm_tp *tp, int dest, const void *buf, size_t len, fm_tp_mr *mr, uint64_t tag,
                 void *ctx);
    int (*trecv)(fm_tp *tp, int src, void *buf, size_t len, fm_tp_mr *mr, uint64_t tag, void *ctx);
    /* Retry queued sends, then read up to max completions into ev. Returns the count (>= 0)
     * or an FM_ERR_* code for a failure of the whole transport. Never blocks. A count below
     * max means nothing more was there when poll looked (callers skip a second, empty poll). */
    int (*poll)(fm_tp *tp, fm_tp_event *ev, int max);
    /* A file descriptor that becomes readable when poll has something, or -1 if the
     * provider has none (shm): then the caller backs off politely. */
    int (*wait_fd)(fm_tp *tp);
    /* FM_OK if it is safe to sleep on wait_fd now, FM_EAGAIN if poll has work. With no wait
     * fd, FM_OK only means no work is known: back off (sched_yield, a short nanosleep) and
     * poll again. */
    int (*trywait)(fm_tp *tp);
    /* Optional (NULL: idle waits sleep on wait_fd, or back off without one): wait inside the
     * transport until poll has something or timeout_s has passed, for a transport whose
     * waiting is no descriptor (mpi: under SimGrid, simulated time passes only while a
     * process is blocked in the simulator, so there it waits for a completion, whatever
     * timeout_s says). FM_OK or an FM_ERR_* code for a failure of the whole transport. */
    int (*block)(fm_tp *tp, double timeout_s);
    /* Optional (NULL: the caller counts the regions it has posted, and posts one more when
     * none is left): 1 when some path of the transport has no region to land messages in
     * while others may (hybrid: sm's or the network's), 0 otherwise. */
    int (*needs_region)(fm_tp *tp);
    /* Release everything; mem_dereg every registration first. */
    void (*close)(fm_tp *tp);
};

/* Datagram multicast, beside the reliable packets: unreliable datagrams of at most
 * FM_TP_DGRAM_MAX bytes to every endpoint that joined a group, on any host of the job's network
 * and on this one (each endpoint of this host that joined gets its own copy, the sender's
 * included). An endpoint receives only the groups it joined. No order, no completion events,
 * no flow control: a datagram may be lost, duplicated or reordered. Groups are IPv4 multicast
 * addresses (host byte order) sharing the endpoint's port. Used by the two-stage multicast
 * (runtime/mcast). */
#define FM_TP_DGRAM_MAX 1472 /* an Ethernet frame's UDP payload: 1500 - 20 (IPv4) - 8 (UDP) */

typedef struct fm_tp_dgram fm_tp_dgram;

typedef struct fm_tp_dgram_config {
    uint16_t port;     /* UDP port of every group, shared by every endpoint of a host */
    const char *iface; /* the interface to join and send on; "" or NULL: the kernel's route */
    size_t rcvbuf;     /* receive (and send) buffer wanted, bytes: datagrams the socket holds
                        * while its rank does not read */
} fm_tp_dgram_config;

struct fm_tp_dgram_ops {
    /* Join group (224.0.0.0/4): FM_OK, FM_ERR_INVALID (not a multicast address),
     * FM_ERR_PROVIDER (the kernel refused: no route, too many groups). Joined twice: two
     * leaves end it. */
    int (*join)(fm_tp_dgram *d, uint32_t group);
    int (*leave)(fm_tp_dgram *d, uint32_t group);
    /* Send len (<= FM_TP_DGRAM_MAX) bytes of buf to group (joined or not). FM_OK once sent
     * (buf is the caller's again), FM_EAGAIN when the socket cannot take it now (retry later:
     * never waits), FM_ERR_TOO_LONG, FM_ERR_PROVIDER. */
    int (*send)(fm_tp_dgram *d, uint32_t group, const void *buf, size_t len);
    /* The next datagram into buf (cap bytes; a longer one is cut and *len says its whole
     * length): FM_OK with *len, FM_EAGAIN when none is waiting, FM_ERR_PROVIDER. */
    int (*recv)(fm_tp_dgram *d, void *buf, size_t cap, size_t *len);
    /* Readable when recv has a datagram. */
    int (*fd)(const fm_tp_dgram *d);
    void (*close)(fm_tp_dgram *d);
};

struct fm_tp_dgram {
    const struct fm_tp_dgram_ops *ops;
    char where[64]; /* "port P on IFACE", for messages */
};

/* Open a datagram endpoint on cfg's port and interface: FM_OK and *d, or an FM_ERR_* code
 * (FM_ERR_PROVIDER: the interface is down or has no multicast, no route for multicast, ...)
 * with a one-line reason in err. providers/udp. */
int fm_tp_dgram_open(const fm_tp_dgram_config *cfg, fm_tp_dgram **d, char *err, size_t errlen);

struct fm_tp {
    const struct fm_tp_ops *ops;
    fm_tp_info info;
    uint64_t refused;   /* posts the network refused at first (queued and retried) */
    uint64_t shared;    /* copies sent from a shared payload (sendv_shared) */
    fm_tp_dgram *dgram; /* datagram multicast (info.dgram_mcast), NULL without; the runtime
                         * opens and closes it (fm_tp_dgram_open) */
};

/* Like FM_CHECK, but the reason goes into the err buffer of a provider's open (or check, fits)
 * for its caller to print: every provider's functions that fill err use it. */
#define FM_TP_CHECK(cond, status, ...)                                                             \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            rc = (status);                                                                         \
            snprintf(err, errlen, __VA_ARGS__);                                                    \
            goto error;                                                                            \
        }                                                                                          \
    } while (0)

/* Open the transport for cfg->provider. On failure returns an FM_ERR_* code and writes a
 * one-line reason into err. */
int fm_tp_open(const fm_tp_config *cfg, fm_tp **tp, char *err, size_t errlen);
/* Check cfg's settings before anything starts (fm_init): FM_OK, or FM_ERR_CONFIG with a
 * reason naming the variable (FM_IFACE="x": ...) in err. */
int fm_tp_check_config(const fm_tp_config *cfg, char *err, size_t errlen);
/* Whether cfg->provider can carry a job of `ranks` ranks with cfg->rx_depth receives posted
 * per process: FM_OK, or FM_ERR_PROVIDER with the limit it would pass, named, in err (e.g.
 * libfabric's shm holds 256 peers). Answers from the numbers alone, the same on every rank. */
int fm_tp_fits(const fm_tp_config *cfg, int ranks, char *err, size_t errlen);
/* What the providers can open, for fastmsg-info: one line per provider into buf. */
void fm_tp_list_providers(char *buf, size_t len);

/* One provider: the table in provider_table.c holds one line per provider. */
typedef struct fm_tp_provider {
    const char *name;
    /* 1 when this provider serves the FM_PROVIDER value. */
    int (*serves)(const char *provider);
    int (*check)(const fm_tp_config *cfg, char *err, size_t errlen);
    /* fm_tp_fits for this provider; NULL: no known limit. */
    int (*fits)(const fm_tp_config *cfg, int ranks, char *err, size_t errlen);
    int (*open)(const fm_tp_config *cfg, fm_tp **tp, char *err, size_t errlen);
    /* Appends what it can open to buf. */
    void (*list)(char *buf, size_t len);
} fm_tp_provider;

extern const fm_tp_provider fm_sm_provider;     /* providers/sm: fastmsg's shared memory */
extern const fm_tp_provider fm_hybrid_provider; /* providers/hybrid: sm + a network provider */
extern const fm_tp_provider fm_ofi_provider;    /* providers/ofi: libfabric RDM endpoints */
extern const fm_tp_provider fm_mpi_provider;    /* providers/mpi: MPI point-to-point (-Dmpi) */

#endif
