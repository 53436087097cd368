/* SPDX-License-Identifier: BSD-3-Clause */
/* fastmsg: a streaming message layer in the spirit of Illinois Fast Messages, over libfabric.
 *
 * Overview
 *   A job is N processes started by fastmsg-run, mpirun (PMIx), mpiexec (PMI-1) or srun.
 *   fm_init() finds the other processes, opens one libfabric endpoint and connects it to
 *   every peer. Every call returns FM_OK (0) or a negative FM_ERR_* code; fm_strerror() turns
 *   a code into text. Calls are not thread-safe: one thread drives a context.
 *   (Threads: see "Threads" below: worker threads may start requests and wake the progress
 *   thread.)
 *   A bad argument is refused with its own code and changes nothing: the context stays
 *   usable. A context is valid from fm_init until fm_finalize. Calls taking one compare it
 *   with the process's live context before reading through it, so NULL, a finalized context
 *   or any other pointer gets FM_ERR_NOT_INIT (a later fm_init may return the same pointer
 *   again, valid again). Group calls look the group up the same way: FM_ERR_INVALID once it
 *   is destroyed, FM_ERR_NOT_INIT after fm_finalize. A stream pointer is not checked that way:
 *   using one after fm_end_message, or an inbound one after its handler is done, is undefined.
 *
 * Messages are streams (FM 2.x)
 *   The sender opens a message to one rank with fm_begin_message, writes it with any number of
 *   fm_send_piece calls of any size, and closes it with fm_end_message. fastmsg cuts the
 *   stream into packets of FM_PACKET_SIZE bytes and sends each as soon as it is full, so a
 *   receiver sees the first packet while the sender is still writing the rest.
 *   The receiver names a handler per message. The handler runs, from fm_extract or fm_wait
 *   (or any call that waits, outside handlers), as soon as the FIRST packet of the message
 *   arrives, and reads the message with fm_receive. Handlers are re-entrant rather than
 *   blocking: fm_receive returns the bytes that have arrived so far (possibly fewer than asked
 *   for); a handler that wants more returns FM_CONTINUE and is called again, with the same
 *   stream, when the next packet arrives. fm_stream_set_user keeps the handler's own state
 *   with the stream. This needs no thread or stack per inbound message (FM 2.x used threads),
 *   costs nothing when a message fits one packet, and lets any number of messages be in
 *   progress at once.
 *   The common case has a short path: fm_stream_deliver hands fastmsg a buffer, and a callback
 *   runs once the whole message is in it. A program that wants messages, not streams, registers
 *   a whole-message handler instead (fm_register_message_handler): one call per message, with
 *   all of it, in a buffer fastmsg keeps within FM_MESSAGE_BUFFER.
 *
 * Handlers: a complete message, deferred
 *   Once the whole message has arrived no packet is coming to call the handler again. A
 *   handler that returns FM_CONTINUE then is called again at once while it reads some of the
 *   message each time; when it reads nothing (or called fm_stream_defer) the message is
 *   deferred: the handler is called again, with the same stream, from the next fm_extract or
 *   fm_wait call (never from the call that deferred it; blocking calls such as fm_barrier do
 *   not run deferred messages), and again from each later one while it keeps returning
 *   FM_CONTINUE without finishing. A deferred message keeps its packets, and with them its
 *   sender's credits, so the budget is half the window: the deferred messages of one sender
 *   hold at most half its window here (FM_CREDITS / 2; with per-peer windows, half the
 *   window it has or is granted then: see "Flow control") (a one-packet message is one
 *   packet), and the
 *   sender always keeps credits for what it sends next. fm_stream_defer refuses beyond that
 *   (FM_EAGAIN: read or copy the message now); a handler that returns FM_CONTINUE without
 *   reading a complete message beyond the budget, without asking fm_stream_defer, loses it
 *   (said on stderr). fm_finalize frees deferred messages unread (and says so).
 *
 * Order
 *   The handlers of two messages from one sender start (their first call) in the order the
 *   sender sent them, whatever their kind: one packet or many, empty, with zero-copy pieces,
 *   multi-destination, multicast (it counts as a message from the member that sent it on to
 *   this rank), for one handler id or different ones. "Sent" is when the message's first
 *   packet leaves: for messages written one after the other (fm_begin_message ...
 *   fm_end_message, then the next) that is the order of the calls; of two streams open at
 *   once, the one whose first packet fills (or which ends) first. fastmsg keeps this order
 *   itself (the network need not: over tcp;ofi_rxm a small packet can overtake a large one
 *   sent before it). The exceptions are messages that wait at the receiver: one for a
 *   handler id not registered there yet, or a multicast for a group not created there yet,
 *   starts when that happens, after later messages for other ids or groups have run; such
 *   messages still start in send order among themselves and before any later message for
 *   the same id. Only the first call is ordered: later calls follow their packets (a short
 *   message can finish before a long one that started first), and a deferred message runs
 *   again after later messages have started. Messages from different senders are not
 *   ordered with respect to each other.
 *
 * Flow control
 *   One credit is room for one packet that a receiver keeps for one sender. In a small job
 *   it is a packet buffer per credit, and every sender has FM_CREDITS of every receiver from
 *   fm_init. Once FM_CREDITS + 1 buffers per rank would take more than FM_RECV_POOL, the room
 *   is in a few receive regions that every sender's packets land in, packed (FM_RECV_POOL
 *   bytes, whatever the job's size), and windows are per peer: a sender starts with 2
 *   credits of each receiver; when one of its packets has to wait for a credit, or takes its
 *   last one, it asks for more, and the receiver grants up to FM_CREDITS out of a budget of
 *   FM_RECV_POOL / (40 + FM_PACKET_SIZE) credits (at least FM_CREDITS - 2, one sender's whole
 *   window) that all its senders share. When that budget is spent, the
 *   peer holding the largest window is asked to shrink to halfway between its window and the
 *   asker's (only if it is more than one larger), and gives back its credits as it has them
 *   (an idle peer at once). So a receiver holds at most 2 packets per sender plus the budget,
 *   however slow it is; the first message of more than two packets to a receiver waits one
 *   round trip for its grant. Packets a receiver holds (a message waiting for its handler, its
 *   group, or a deferred one) keep their region from being reused; when every region is held
 *   so, the held packets are copied out into memory of their own (each its own length) and
 *   the regions reused; a region with a packet that cannot move (one still being forwarded
 *   to a multicast child, a zero-copy announcement, or any where the provider needs
 *   registered buffers) stays, and if no region comes free one more is made. FM_RECV_POOL,
 * FM_CREDITS and FM_PACKET_SIZE must be the same on every rank. (tcp with packets above about 16
 * KiB: buffers per peer and full windows at any size.) A sender never sends a packet without a
 * credit; credits come back piggybacked on any packet going the other way, or in a credit packet
 * once half the window is owed. Outside handlers, sending waits for credits while driving progress
 * (so handlers keep running). Inside a handler nothing may wait (the peer may be waiting for us):
 * packets without credit are queued in memory (at most FM_OVERFLOW bytes) and leave as credits come
 * back; fm_begin_message returns FM_EAGAIN when that budget is used up.
 *
 * Large pieces
 *   A piece of at least FM_ZCOPY bytes (default 32 KiB) given to fm_send_piece outside a
 *   handler is not cut into packets: a small announcement packet takes its place in the stream
 *   (and one credit); once the receiver has posted the buffer the piece goes into (it
 *   answers with a clear-to-send), the bytes travel as one tagged message straight from the
 *   sender's buffer into the buffer the receiver named with fm_stream_deliver, moved by the
 *   provider's own large-message mechanism (shm: one copy across processes where the kernel
 *   allows it).
 *   A handler that reads with fm_receive gets them through a bounce buffer instead. Pieces
 *   sent inside handlers are always copied through packets, since zero-copy means waiting.
 *
 * Progress from an event loop
 *   fastmsg_ev.h (library fastmsg_ev, pkg-config fastmsg-ev) attaches a context's progress
 *   to an application's libev loop; fm_wait_fd and fm_trywait serve any other loop.
 *
 * Environment
 *   Every FM_* variable is listed by `fastmsg-info` and in the README. A bad value makes
 *   fm_init() fail with FM_ERR_CONFIG and a message naming the variable and the value; an
 *   FM_PROVIDER that libfabric does not offer on this machine fails with FM_ERR_PROVIDER.
 */
#ifndef FASTMSG_H
#define FASTMSG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Only these calls are exported; the library builds with hidden visibility. */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#define FM_VERSION_MAJOR 0
#define FM_VERSION_MINOR 1
#define FM_VERSION_PATCH 0

/* Status codes. Every call that can fail returns one of these; FM_OK is 0, errors are < 0. */
#define FM_OK               0
#define FM_EAGAIN           (-1)  /* cannot proceed now; retry after progress */
#define FM_ERR_INVALID      (-2)  /* a NULL or otherwise invalid argument */
#define FM_ERR_RANK         (-3)  /* rank out of range */
#define FM_ERR_NOMEM        (-4)  /* out of memory */
#define FM_ERR_NOT_INIT     (-5)  /* call before fm_init or after fm_finalize */
#define FM_ERR_ALREADY_INIT (-6)  /* fm_init called twice */
#define FM_ERR_CONFIG       (-7)  /* a bad FM_* environment value */
#define FM_ERR_BOOTSTRAP    (-8)  /* the launcher/PMI exchange failed */
#define FM_ERR_PROVIDER     (-9)  /* libfabric failed or the provider is unavailable */
#define FM_ERR_TIMEOUT      (-10) /* a peer owed something sent nothing for FM_TIMEOUT s */
#define FM_ERR_PEER         (-11) /* a peer died or became unreachable */
#define FM_ERR_TOO_LONG     (-12) /* a value larger than the call allows */
#define FM_ERR_HANDLER      (-13) /* handler id out of range, or no id free */
#define FM_ERR_OVERFLOW     (-14) /* more bytes sent than the message declared */
#define FM_ERR_UNDERFLOW    (-15) /* more bytes asked for than the message holds */
#define FM_ERR_INTERNAL     (-16) /* a bug: please report it */
#define FM_ERR_IN_HANDLER   (-17) /* call not allowed inside a handler */
#define FM_ERR_STATE        (-18) /* stream used in the wrong state (e.g. after end) */
#define FM_ERR_EMPTY        (-19) /* an empty destination or member list */
#define FM_ERR_SELF         (-20) /* the calling rank among a message's destinations */
#define FM_ERR_DUPLICATE    (-21) /* a rank listed twice */
#define FM_ERR_TREE         (-22) /* unknown tree name or bad tree parameter */
#define FM_ERR_NOT_MEMBER   (-23) /* the calling rank is not a member of the multicast */
#define FM_ERR_REGISTERED   (-24) /* a handler is already registered under this id */
#define FM_ERR_TRUNCATED                                                                           \
    (-25) /* a message ended before its declared end: its sender or a                              \
           * forwarding member failed (the log says which) */

/* Handler return values. */
#define FM_DONE     0 /* finished with this message; unread bytes are discarded */
#define FM_CONTINUE 1 /* call me again: when more arrives, or (complete) later (see above) */

#define FM_MAX_HANDLERS 256 /* user handler ids are 0..FM_MAX_HANDLERS-1 */

typedef struct fm_context fm_context;
typedef struct fm_stream fm_stream;

/* A message handler: runs when the first packet of a message for it arrives (see Overview).
 * sender is the sending rank, arg the pointer given at registration. Returns FM_DONE or
 * FM_CONTINUE. It may send messages (fm_begin_message never blocks inside a handler) but
 * may not wait: fm_extract, fm_wait, fm_barrier, fm_mcast_calibrate and fm_finalize return
 * FM_ERR_IN_HANDLER there (and in fm_stream_deliver's callback). */
typedef int (*fm_handler_fn)(fm_stream *stream, int sender, void *arg);

/* Called once a message given to fm_stream_deliver is over, with the buffer and arg given to
 * it: buf holds len bytes of the message (those delivered by that call and after). status is
 * FM_OK (len is the rest of the message), FM_ERR_TOO_LONG (the message was longer than the
 * buffer: buf holds its first bytes, len = cap, and the bytes dropped are counted in
 * fm_stats.deliver_overflow) or FM_ERR_TRUNCATED (the message ended before its declared end:
 * its sender or a forwarding member failed; buf holds what came). sender as for the handler.
 * It runs as part of the handler: the same calls are allowed and refused in it. */
typedef void (*fm_deliver_fn)(void *buf, size_t len, int status, int sender, void *arg);

/* Text for a status code; never NULL, a static string. */
const char *fm_strerror(int status);

/* Version string "MAJOR.MINOR.PATCH". */
const char *fm_version(void);

/* Start fastmsg in this process: read FM_* settings, join the job through the bootstrap the
 * environment names, open the endpoint and connect to every rank. Blocks until every rank of
 * the job has called fm_init (at most FM_TIMEOUT seconds). One context per process.
 * Errors: FM_ERR_INVALID (ctx NULL), FM_ERR_ALREADY_INIT, FM_ERR_CONFIG (a bad FM_* value, or
 * ranks started with different FM_PROVIDER, FM_PACKET_SIZE or FM_CREDITS), FM_ERR_BOOTSTRAP,
 * FM_ERR_PROVIDER, FM_ERR_TIMEOUT, FM_ERR_NOMEM. On error *ctx is NULL and the reason is
 * printed on stderr. */
int fm_init(fm_context **ctx);

/* Synchronise with every rank, then release everything fm_init created. Blocks until every
 * rank has called fm_finalize. ctx is invalid afterwards, whatever it returns (calls given it
 * return FM_ERR_NOT_INIT). Messages still held for a handler id this rank never registered
 * or a group it never created, deferred messages, and whole messages whose function has not
 * run (waiting for FM_MESSAGE_BUFFER, incomplete, or behind one of those), are freed unread,
 * and said so on stderr. Everything sent before the call leaves first; what handlers,
 * callbacks or requests start while it runs and cannot leave once every rank is past its
 * barrier (waiting for credits or send buffers) is dropped, requests not yet written ending
 * with FM_ERR_TRUNCATED (FM_VERBOSE=1 says how many). When the last blocking call on ctx failed
 * with FM_ERR_TIMEOUT or FM_ERR_PEER (none has succeeded since), the job is taken as broken:
 * fm_finalize then releases everything at once and returns that error, without waiting for outgoing
 * packets or for the other ranks. Errors: FM_ERR_NOT_INIT (also when called twice),
 * FM_ERR_IN_HANDLER (nothing is released then), FM_ERR_TIMEOUT, FM_ERR_PEER, FM_ERR_BOOTSTRAP. */
int fm_finalize(fm_context *ctx);

/* This process's rank in 0..size-1, and the job's size; FM_ERR_NOT_INIT if ctx is not the
 * live context. */
int fm_rank(const fm_context *ctx);
int fm_size(const fm_context *ctx);

/* The 64-bit key every rank of this job shares (drawn at random once per job). Packets carry
 * it so that another job's packets are recognised and dropped. 0 if ctx is not the live
 * context. */
uint64_t fm_job_key(const fm_context *ctx);

/* Block until every rank has entered fm_barrier. Runs over the network (a dissemination
 * barrier) while progress goes on, so handlers keep running and credits keep flowing.
 * Not from inside a handler. FM_ERR_TIMEOUT when a rank it waits for has not come within
 * FM_TIMEOUT seconds, however busy other ranks keep this one. Errors: FM_ERR_NOT_INIT,
 * FM_ERR_IN_HANDLER, FM_ERR_TIMEOUT, FM_ERR_PEER. */
int fm_barrier(fm_context *ctx);

/* Register fn as handler id (0..FM_MAX_HANDLERS-1) with its argument. Every rank that may
 * receive messages for id should register it before such a message arrives (before
 * fm_barrier, or before any message is sent, to be safe): a message for an id with no handler
 * waits at the receiver, holding its sender's credits, until one is registered (the sender
 * is not told; at most its window there, FM_CREDITS packets or less, can wait so: see "Flow
 * control"). Messages that waited
 * start inside this call, in the order each sender sent them; called inside a handler, the
 * registration takes effect at the next progress round, which starts them first (messages
 * for id that come meanwhile wait behind them). An id is registered once, for the
 * context's lifetime.
 * Errors: FM_ERR_NOT_INIT, FM_ERR_INVALID (fn NULL), FM_ERR_HANDLER (id out of range),
 * FM_ERR_REGISTERED (id already has a handler; that one stays). */
int fm_register_handler(fm_context *ctx, int id, fm_handler_fn fn, void *arg);

/* Register fn under the lowest free id and return that id (>= 0), or FM_ERR_HANDLER when all
 * ids are taken. Deterministic: ranks that add handlers in the same order get the same ids.
 * Other errors: FM_ERR_NOT_INIT, FM_ERR_INVALID (fn NULL). */
int fm_add_handler(fm_context *ctx, fm_handler_fn fn, void *arg);

/* Whole-message handlers
 *   For a program that wants messages, not streams: fastmsg reassembles the message and calls
 *   a message function once, with all of it. The message function runs in handler context,
 *   from the same calls as handlers: it may send (fm_begin_message never blocks there) and
 *   may not wait (the calls that wait return FM_ERR_IN_HANDLER). The ids are the handlers'
 *   (one id space, registered once); senders cannot tell the two kinds apart.
 *   A message whose bytes are all in one packet (a message of up to FM_PACKET_SIZE bytes, as
 *   a rule) is handed over straight from its receive buffer: no copy, no budget. A longer one
 *   is copied, as its packets arrive (a zero-copy piece straight from the sender's buffer),
 *   into a buffer of its declared length (fm_begin_message's len, until the last packet says
 *   the exact length) taken from the context's budget of FM_MESSAGE_BUFFER bytes (16 MiB by
 *   default; in fm_stats.mem_message_bytes while held). A message that does not fit the
 *   budget now waits, its packets and with them its sender's credits held (so that sender
 *   slows down; a zero-copy piece of it comes through packets), and starts, in the order
 *   messages came to wait, from a progress call (fm_extract, fm_wait, any call that waits)
 *   once earlier messages' buffers have gone back. A message declared longer than the whole
 *   budget can never fit: its function is called with FM_ERR_TOO_LONG and the message is
 *   dropped (counted in fm_stats.message_too_long and message_too_long_bytes; said on stderr
 *   the first time).
 *   Order: the message functions of one sender's messages (for any whole-message ids) run in
 *   the order their handlers would start (see "Order"): a message complete before an earlier
 *   one of its sender waits for it (its buffer kept, or its packet held).
 *   fm_finalize frees messages still waiting, undelivered, and says so on stderr.
 *   Budget waits hold credits as a message for an unregistered id does: a sender that writes
 *   two messages to one receiver at once (both open) can fill its window there with the
 *   second while the first, which must finish first, waits for its credits; write messages
 *   for whole-message handlers one after the other, or give FM_MESSAGE_BUFFER room for them. */

/* A whole-message handler: called once per message with all of it. buf holds len bytes; it is
 * fastmsg's (a receive buffer or a budget buffer) and valid only during the call: copy what you
 * keep. status: FM_OK (len is the message's length); FM_ERR_TRUNCATED (the message ended before
 * its declared end, its sender or a forwarding member failed: buf holds what came);
 * FM_ERR_TOO_LONG (declared longer than FM_MESSAGE_BUFFER: it could never fit; buf is NULL,
 * len the declared length, and the message is dropped); FM_ERR_NOMEM (no memory for its
 * buffer or bookkeeping: buf NULL, len the declared length, dropped). sender is the sending
 * rank (a multicast's root), arg the pointer given at registration. */
typedef void (*fm_message_fn)(const void *buf, size_t len, int status, int sender, void *arg);

/* Register fn as the whole-message handler of id (0..FM_MAX_HANDLERS-1), with its argument:
 * as fm_register_handler in every other respect (messages that waited for id start here, or
 * at the next progress round when called inside a handler or message function; an id is
 * registered once, whether for a handler or a message function). Never blocks; no
 * communication. Errors: FM_ERR_NOT_INIT, FM_ERR_INVALID (fn NULL), FM_ERR_HANDLER (id out
 * of range), FM_ERR_REGISTERED (id already has a handler or message function; it stays). */
int fm_register_message_handler(fm_context *ctx, int id, fm_message_fn fn, void *arg);

/* Register fn as a whole-message handler under the lowest free id and return that id (>= 0),
 * or FM_ERR_HANDLER when all ids are taken; as fm_add_handler (deterministic ids). Other
 * errors: FM_ERR_NOT_INIT, FM_ERR_INVALID (fn NULL). */
int fm_add_message_handler(fm_context *ctx, fm_message_fn fn, void *arg);

/* Open a message of at most len bytes to rank dest (which may be this rank), for the
 * receiver's handler id. On FM_OK *stream is the sending stream until fm_end_message; on an
 * error *stream is NULL (when stream is not) and nothing was sent.
 * Inside a handler it never blocks: the message is promised all its packet buffers at once,
 * from the FM_OVERFLOW budget for queued packets (FM_CREDITS x ranks packets plus FM_OVERFLOW
 * bytes): FM_EAGAIN when too much of that is in use now (retry from a later handler call or
 * from the main program), FM_ERR_TOO_LONG when the message needs more packets than the whole
 * budget (no retry inside a handler can succeed: send it from the main program).
 * A message travels in at most 2^32 packets (their sequence numbers are 32 bits): with
 * FM_PACKET_SIZE below 64 KiB, len may be at most FM_PACKET_SIZE x 2^32 bytes.
 * Errors: FM_ERR_NOT_INIT, FM_ERR_INVALID (stream NULL), FM_ERR_RANK (dest not in
 * 0..size-1), FM_ERR_HANDLER (id out of range), FM_ERR_TOO_LONG (len over 2^48, over 2^32
 * packets, or in a handler over the budget), FM_EAGAIN, FM_ERR_NOMEM. */
int fm_begin_message(fm_context *ctx, int dest, size_t len, int handler, fm_stream **stream);

/* Open a message of at most len bytes to each of the n ranks in dests, for handler id on
 * each of them. Every packet is written once and sent to every destination from that one
 * buffer, each copy as soon as its destination has a credit. Outside handlers the writer
 * runs ahead of destinations slower than the others while the packets kept for them take at
 * most FM_MCAST_BUFFER bytes, then waits (bounded by FM_TIMEOUT) for them to catch up;
 * fm_end_message waits until every copy has left. Each destination receives an ordinary
 * message from this rank. dests is read during the call only. When a copy cannot be made
 * (out of memory), that destination's message ends there with FM_ERR_TRUNCATED (its handler
 * sees fm_stream_status), the others go on, and fm_end_message returns FM_ERR_TRUNCATED.
 * Errors: as fm_begin_message, and FM_ERR_EMPTY (n = 0), FM_ERR_INVALID (dests NULL or
 * n < 0), FM_ERR_RANK (a rank out of range), FM_ERR_SELF (this rank listed),
 * FM_ERR_DUPLICATE (a rank listed twice). Large pieces are copied through packets: a
 * multi-destination stream never goes zero-copy. Inside a handler the packet buffers are
 * promised as for fm_begin_message (FM_EAGAIN, FM_ERR_TOO_LONG); the stream, its errors and
 * fm_end_message are as for fm_begin_message's. */
int fm_begin_message_multi(fm_context *ctx, const int *dests, int n, size_t len, int handler,
                           fm_stream **stream);

/* Multicast down a tree
 *   A multicast goes from a root to an ordered list of members (the root among them), down
 *   a tree whose shape is named by a builder: "flat" (the root sends to all), "chain",
 *   "binomial", "kbinomial[:k]" (k >= 1; absent: the best k for this message), "postal[:L]"
 *   (L = lambda in steps, >= 1; absent: from the job's costs), "prefix[:b]" (topology-id prefix
 *   routing, base b in 2..256, absent: FM_PREFIX_BASE: every rank's id from its rack (a topology
 * file's first coordinate), host and place on the host, so a rack or host gets one copy from
 * outside; each member splits its part with its own routing table (FM_PREFIX_CHOICE), relays
 * only through members, in FM_PREFIX_SEGMENT packets), "ipmc" (not a tree: the two-stage
 * multicast, where the job has datagram multicast (FM_MCAST_DGRAM): the root sends each chunk
 * of at most 1424 bytes once as an IP multicast datagram to the job's group, and the members,
 * in ring order from the root (the group's order, or ascending ranks for a list), each ask
 * their predecessor for what they lost; the root keeps the whole message, and every member its
 * copy, until the next member on the ring has it, within FM_MCAST_BUFFER (a longer message:
 * FM_ERR_TOO_LONG; no datagram multicast here: FM_ERR_TREE; with FM_MCAST_STORE_FORWARD or
 * FM_MCAST_FCFS: FM_ERR_INVALID; runtime/mcast/ipmc/README.md), "twotree" (two binary trees
 * over the members but the root, each member forwarding in at most one: the root sends every
 * other packet down each, every member forwards each half as it comes and gets the two joined
 * into one ordinary message, so each member sends about the message once in all, not twice as
 * down one binary tree; a message of one packet, or with FM_MCAST_STORE_FORWARD, FM_MCAST_FCFS or
 * FM_MCAST_ACK, goes down the first tree alone; packets that come ahead of their turn are copied
 * out within FM_MCAST_BUFFER, beyond which they wait in their receive buffers; runtime/mcast/
 * join.c), or "auto": the tree and parameter
 * the model predicts fastest for this member count, message size and mode. The model simulates each
 * member's sends, receives and copies packet by packet as forwarding does, with credits, wake-ups
 * and members sharing cores, from the costs fm_mcast_calibrate measured (or FM_MCAST_COSTS_FILE,
 * FM_MCAST_COSTS, or an estimate); auto also picks the multicast's packet size (FM_PACKET_SIZE or a
 * power-of-two fraction of it, at least 1 KiB): smaller packets pipeline deeper down a tree, each
 * costs a header and a completion. NULL = FM_TREE. Every member computes its own children from a
 * small descriptor in the message's first packet; no rank holds the whole tree. An inner member
 * sends each packet on to its children as soon as it arrives, straight from its receive buffer,
 * while its own handler reads the same packets: each member's handler gets an ordinary message
 * whose sender is the root. Members must register the handler (or the message waits, like any
 * message for an unregistered handler, while forwarding goes on). Memory is bounded, not speed: a
 * child slower than its siblings gets copies of the packets it lags behind, at most FM_MCAST_BUFFER
 * bytes per member (fm_stats.fwd_copied); beyond that its parent keeps the packets in their receive
 * buffers, which holds back the credits of the rank sending to it, so the whole tree slows to the
 * slowest child instead of buffering for it. A member that cannot forward a packet (out of memory)
 * ends its children's messages with FM_ERR_TRUNCATED rather than leaving them waiting. Members are
 * named either by a group (fm_group_create: every member creates it with the same list; messages
 * then carry only its id) or by a list carried in the first packet (fm_mcast_begin_list: at most
 * 4096 members, and 32 + 4 x n bytes must fit in FM_PACKET_SIZE; a list in ascending rank order
 * travels instead as a set of ranks, gaps or a bitmap, when that is shorter: then any member count
 * fits whose set does, e.g. every rank of a 16-rank job in 64-byte packets, or up to 4000 ranks in
 * 1 KiB ones). A destination set from any root with the nearest copies first: an ascending list and
 * tree "prefix". */
typedef struct fm_group fm_group;

/* Send every packet on only once the whole message has arrived (store-and-forward), instead
 * of packet by packet: for comparisons. Every forwarding member then holds a copy of the
 * whole message, promised from its FM_MCAST_BUFFER when the message's first packet arrives:
 * fm_mcast_begin refuses a longer message (FM_ERR_TOO_LONG), and a member whose budget
 * cannot take it (set lower there, or taken by other multicasts) forwards the first packet
 * only, then ends its children's messages with FM_ERR_TRUNCATED (fm_stream_status). */
#define FM_MCAST_STORE_FORWARD 1u

/* First-Child-First-Served (Kesavan & Panda), for comparisons: an inner member sends each
 * packet on to its first child as it arrives, keeps a copy, and once the last packet is in
 * sends the whole message to its second child, then its third, and so on. The copies are
 * promised from FM_MCAST_BUFFER as for FM_MCAST_STORE_FORWARD, with the same limits and
 * errors. The root sends packet by packet in every mode (it streams the caller's pieces).
 * Not with FM_MCAST_STORE_FORWARD (FM_ERR_INVALID). */
#define FM_MCAST_FCFS 2u

/* Delivery acknowledgement, for the multicast requests (fm_imcast, fm_imcast_list) only: the
 * request completes only once every member has the whole message (its last packet has
 * arrived there; its handler may not have read it yet). Each member acknowledges to the rank
 * it received the multicast from, once its own copy is complete and each of its children has
 * acknowledged, so the root receives one acknowledgement per child, not one per member. A
 * member whose copy was cut short makes the request's status FM_ERR_TRUNCATED. A member that
 * dies leaves the request incomplete: a wait for it then fails (FM_ERR_PEER or
 * FM_ERR_TIMEOUT). With the streaming calls (fm_mcast_begin, fm_mcast_begin_list):
 * FM_ERR_INVALID. Combines with the forwarding modes. fm_mcast_predict_time and
 * fm_mcast_predict accept it and predict the data's completion (without the
 * acknowledgements' way back). */
#define FM_MCAST_ACK 4u

/* Create a group of the n ranks in members (in that order; this rank need not be one).
 * Local: no communication. A multicast on the group that reaches a member before it has
 * created the group waits there, neither forwarded nor handled, holding its sender's credits
 * like a message for an unregistered handler (so at most one sender's window, FM_CREDITS
 * packets or less, waits so), until the member creates the group: then it starts,
 * forwarding included, inside this call (or, called inside a handler, at the next progress
 * round). members is copied.
 * Errors: FM_ERR_NOT_INIT, FM_ERR_INVALID, FM_ERR_EMPTY, FM_ERR_RANK, FM_ERR_DUPLICATE,
 * FM_ERR_NOMEM. */
int fm_group_create(fm_context *ctx, const int *members, int n, fm_group **group);
/* Free a group (multicasts on it that arrive later wait, as for a group not created yet).
 * fm_finalize frees every group still there, and multicasts still waiting for one (said on
 * stderr). Errors: FM_ERR_INVALID (NULL, or not a group of the live context: e.g. already
 * destroyed), FM_ERR_NOT_INIT (after fm_finalize). */
int fm_group_destroy(fm_group *group);
/* Members, and this rank's position among them (-1: not a member); errors as
 * fm_group_destroy. */
int fm_group_size(const fm_group *group);
int fm_group_position(const fm_group *group);

/* Open a multicast of at most len bytes from this rank (which must be a member) to every
 * other member of group, for handler id, down tree (see above) with flags (0,
 * FM_MCAST_STORE_FORWARD or FM_MCAST_FCFS; auto chooses for FCFS as for FPFS). Write it with
 * fm_send_piece and fm_end_message; they wait as for fm_begin_message_multi to this rank's
 * children. Inside a handler it never blocks (FM_EAGAIN and FM_ERR_TOO_LONG as fm_begin_message).
 * Errors: FM_ERR_INVALID (group or stream NULL, group destroyed, unknown flags, both forwarding
 * modes, FM_MCAST_ACK), FM_ERR_NOT_INIT (after fm_finalize), FM_ERR_NOT_MEMBER, FM_ERR_TREE
 * (unknown tree or bad parameter), FM_ERR_HANDLER, FM_ERR_TOO_LONG (len over 2^48, over 2^32
 * packets of the multicast's packet size, its descriptor included, in a handler over the budget, or
 * store-and-forward or FCFS beyond this rank's FM_MCAST_BUFFER), FM_EAGAIN, FM_ERR_NOMEM. */
int fm_mcast_begin(fm_group *group, const char *tree, unsigned flags, size_t len, int handler,
                   fm_stream **stream);
/* The same to the n ranks of members (this rank among them), the list carried in the
 * message. Errors: as fm_mcast_begin and fm_group_create; FM_ERR_TOO_LONG when the list (or,
 * in ascending order, its set form) does not fit in a packet, or is longer than 4096 (not as a
 * set). */
int fm_mcast_begin_list(fm_context *ctx, const int *members, int n, const char *tree,
                        unsigned flags, size_t len, int handler, fm_stream **stream);

/* Collective over all ranks: measure the costs the model needs for FM_TREE=auto, in LogGP
 * terms (a sender's cost per message, per packet and per byte, the root's fill, the link's gap
 * per byte, a receiver's cost per packet and per byte, the copy into the caller's buffer,
 * latency, and the wake-up of a member that napped in its wait), between rank 0 and one or two
 * partners (one on another host when there is one), at three packet sizes, medians of repeats;
 * then give every rank rank 0's figures. Takes well under a second (bench/README.md). When
 * FM_MCAST_COSTS_FILE names an existing file, rank 0's copy of it is used instead of measuring;
 * when it names none, rank 0 writes what was measured there. FM_MCAST_COSTS's keys win over
 * both. Blocks (at most FM_TIMEOUT). Errors: FM_ERR_NOT_INIT, FM_ERR_IN_HANDLER,
 * FM_ERR_TIMEOUT, FM_ERR_PEER, FM_ERR_NOMEM. */
int fm_mcast_calibrate(fm_context *ctx);

/* The model's predicted completion time, in seconds, of a multicast of len bytes from root
 * position root to n members of a group down tree (as fm_mcast_begin resolves it, "auto"
 * included; packet 0 carries the multicast's descriptor before the bytes, as it does),
 * from the costs in use; *chosen (if not NULL, 64 bytes) gets the tree's resolved name, e.g.
 * "kbinomial:3", followed by "@N" when auto chose packets of N payload bytes, fewer than
 * FM_PACKET_SIZE (e.g. "chain@16384"). flags: as fm_mcast_begin's, the mode the model
 * sends in. Never blocks and sends nothing, but "auto"'s first choice for a member count, size
 * and mode simulates every candidate (then it is cached): up to seconds for large messages on
 * a loaded machine, during which this rank drives no progress, so multicasts it forwards wait
 * (their members past FM_TIMEOUT time out). Ask where this rank forwards nothing (for example
 * right after a barrier), or name the tree; fm_mcast_begin with "auto" chooses the same way.
 * Errors: FM_ERR_NOT_INIT, FM_ERR_INVALID (also "ipmc" with a mode it has not: it sends FPFS
 * only), FM_ERR_TREE (also "ipmc" where this rank has no datagram multicast). */
int fm_mcast_predict_time(fm_context *ctx, int n, int root, const char *tree, unsigned flags,
                          size_t len, double *seconds, char *chosen);

/* Everything the model predicts for one multicast (fm_mcast_predict). */
typedef struct fm_mcast_prediction {
    double seconds;        /* completion: the slowest member's copy complete */
    char resolved[64];     /* the tree as fm_mcast_predict_time's chosen names it */
    size_t packet_size;    /* payload bytes per packet (auto may choose below FM_PACKET_SIZE) */
    uint64_t packets;      /* packets of the message, its descriptor included */
    double held_packets;   /* most packets any member holds at once for its children, from a
                            * packet's arrival until its last copy has left (compare with
                            * fm_stats.fwd_held_peak / buffer_bytes) */
    uint64_t buffer_bytes; /* bytes of one packet buffer as fm_stats counts them */
    /* On a torus of hosts (FM_TOPOLOGY=torus:..., one position per host): the links the
     * tree's copies cross under dimension-ordered routing, summed (link visits) and distinct
     * (links used); link concentration is their ratio (a split multicast, FM_TREE=twotree:
     * both trees' routes, each carrying half the packets). 0 elsewhere. */
    uint32_t link_visits, links_used;
    double tree_seconds; /* tree creation: what the root takes here to work out its children
                          * (the builder run once; measured, median of 5) */
} fm_mcast_prediction;

/* fm_mcast_predict_time's prediction with its details into *out (the same arguments; out not
 * NULL). Errors: as fm_mcast_predict_time's. Never blocks; no communication. */
int fm_mcast_predict(fm_context *ctx, int n, int root, const char *tree, unsigned flags, size_t len,
                     fm_mcast_prediction *out);

/* Append len bytes of buf to the message. buf is the caller's again when the call returns,
 * whatever it returns. Outside handlers it may block while driving progress until credits
 * let the full packets leave (FM_ERR_TIMEOUT when the destination sends no credit back for
 * FM_TIMEOUT seconds, however busy other peers keep this rank). A piece of at least FM_ZCOPY bytes
 * outside handlers goes zero-copy (see "Large pieces" above): the call then returns once the
 * receiver has taken the bytes, which needs the receiver to drive progress (any fastmsg call
 * that does). If the receiver does not ask for the piece within FM_TIMEOUT, the call fails
 * with FM_ERR_TIMEOUT and the piece is withdrawn: the receiver's message ends before it.
 * Errors: FM_ERR_INVALID (stream NULL, or buf NULL with len > 0), FM_ERR_STATE (not a
 * sending stream, e.g. a handler's inbound one), FM_ERR_OVERFLOW (more bytes than
 * fm_begin_message declared; nothing of this piece is sent, the stream stays usable),
 * FM_EAGAIN (in a handler, a stream opened outside one that needs a packet buffer),
 * FM_ERR_TIMEOUT, FM_ERR_PEER, FM_ERR_NOMEM.
 * The stream stays open whatever this returns (only fm_end_message releases it). After
 * FM_EAGAIN, FM_ERR_TIMEOUT, FM_ERR_PEER or FM_ERR_NOMEM the bytes of the piece that filled
 * packets before the failure are in the message and the rest is not (none, for a piece that
 * fits in the packet being filled; all, for one that ends exactly where a packet fills). */
int fm_send_piece(fm_stream *stream, const void *buf, size_t len);

/* Send what is left of the message (its last packet) and release the stream. Outside
 * handlers it blocks, driving progress, until the message's packets have left (as
 * fm_send_piece); inside a handler it never blocks. What happens to the stream:
 *   FM_OK: released (the pointer is invalid afterwards).
 *   FM_EAGAIN (in a handler: no packet buffer for the last packet; nothing was sent),
 *   FM_ERR_TIMEOUT (no credit came back for FM_TIMEOUT seconds: the last packets still wait,
 *   queued) and FM_ERR_NOMEM: still open. Call fm_end_message again (later, or outside the
 *   handler) to go on from where it stopped: the last packet is sent once.
 *   FM_ERR_TRUNCATED (several destinations, or a multicast root: a destination's copy could
 *   not be made and its message was cut short, the others' are whole): released.
 *   Any other error (FM_ERR_PEER, FM_ERR_PROVIDER: the job is broken): released; packets
 *   already queued may or may not arrive.
 *   FM_ERR_INVALID (stream NULL), FM_ERR_STATE (not an open sending stream): unchanged.
 * The receiver's handler sees the message complete when its last packet arrives. */
int fm_end_message(fm_stream *stream);

/* In a handler: copy up to len bytes of the message that have arrived into buf. Returns the
 * number copied (0 when nothing more has arrived yet: return FM_CONTINUE; fewer than len
 * when fewer are there), or FM_ERR_UNDERFLOW when the whole message has already been read
 * and len > 0 (FM_ERR_TRUNCATED instead when the message was cut short, see
 * fm_stream_status), FM_ERR_INVALID (stream NULL or a sending stream, buf NULL with len > 0). */
ssize_t fm_receive(fm_stream *stream, void *buf, size_t len);

/* In a handler: bytes of the message not read yet, counting only those that have arrived. */
size_t fm_stream_available(const fm_stream *stream);
/* In a handler: the length the sender declared, an upper bound; exact once
 * fm_stream_complete is true. */
size_t fm_stream_length(const fm_stream *stream);
/* In a handler: 1 when every packet of the message has arrived, else 0. */
int fm_stream_complete(const fm_stream *stream);
/* In a handler: FM_OK, or FM_ERR_TRUNCATED once the message is known to end before its
 * declared end (a multi-destination sender or a multicast's forwarding member could not send
 * the rest; the log of that rank says why): the bytes that did arrive can still be read, and
 * fm_stream_complete is 1 with fm_stream_length counting only them. FM_ERR_INVALID for NULL
 * or a sending stream. */
int fm_stream_status(const fm_stream *stream);
/* In a handler: per-stream storage for the handler's own state (NULL at first). */
void fm_stream_set_user(fm_stream *stream, void *user);
void *fm_stream_user(const fm_stream *stream);

/* In a handler: deliver the rest of the message into buf (capacity cap bytes) and call
 * done(buf, total, status, sender, arg) once it is over; total counts only bytes copied by
 * this call and after. The handler then returns (its return value is ignored) and is not
 * called again for this message. buf stays the caller's: fastmsg writes into it until done
 * runs, and it must stay valid until then. status (see fm_deliver_fn): FM_OK;
 * FM_ERR_TOO_LONG when the message was longer than cap (done gets the first cap bytes, the
 * bytes dropped are counted in fm_stats.deliver_overflow); FM_ERR_TRUNCATED when it ended
 * before its declared end. done runs inside the handler's bracket: it may send, not wait.
 * Errors: FM_ERR_INVALID (stream NULL or a sending stream, done NULL, buf NULL with cap > 0),
 * FM_ERR_STATE (deliver already set). */
int fm_stream_deliver(fm_stream *stream, void *buf, size_t cap, fm_deliver_fn done, void *arg);

/* In a handler, on a complete message: ask to be called again, with the same stream, from the
 * next fm_extract or fm_wait call (not the one running now), then return FM_CONTINUE (the
 * request is forgotten if it returns FM_DONE). The message, read or not, stays where it is
 * (its packets hold its sender's credits). See "Handlers: a complete message, deferred".
 * Errors: FM_ERR_INVALID (stream NULL or a sending stream), FM_ERR_STATE (the message is not
 * complete: FM_CONTINUE alone waits for the rest; or it is being delivered), FM_EAGAIN (the
 * deferred messages of its sender already hold half its window (FM_CREDITS / 2 packets, or
 * fewer: see "Flow control"), or would with this one: read or copy the message now). */
int fm_stream_defer(fm_stream *stream);

/* Run progress without blocking: call the handlers of deferred messages again, complete
 * sends, return credits, and run handlers for arrived packets, until about maxbytes of
 * payload were handed to handlers or nothing is left (0 = no limit). Returns the payload
 * bytes of this program's messages that its handlers read (fm_receive) or that were
 * delivered (fm_stream_deliver, or handed to a whole-message function) during the call (>= 0;
 * fastmsg's own messages, such as fm_barrier's, are not counted), or an error (FM_ERR_NOT_INIT,
 * FM_ERR_IN_HANDLER, FM_ERR_PEER, FM_ERR_PROVIDER, FM_ERR_NOMEM: no memory for an arriving
 * message). Never fails with FM_ERR_TIMEOUT. */
long fm_extract(fm_context *ctx, size_t maxbytes);

/* Block until progress does something (a packet arrives, a send completes, a handler reads)
 * or timeout_ms passes (-1: no limit), running handlers; deferred messages are called again
 * first. Sleeps on the provider's file descriptor where there is one, otherwise backs off
 * politely (yields the core, then short sleeps), so many processes can share few cores.
 * Returns the bytes as fm_extract (0 when timeout_ms passed with nothing done) or an error:
 * those of fm_extract, and FM_ERR_TIMEOUT when a peer that owes this rank something has sent
 * nothing at all for FM_TIMEOUT seconds of waiting. A peer owes: credits, while packets of
 * this rank wait for them; the rest of a message it has begun (or the first packet of one
 * it sent before another that came), while it has a credit to send it with. A peer that owes
 * nothing is never timed out: an idle job may wait forever. The seconds add up across
 * fm_wait calls (another peer's message ending one wait does not restart the count), but
 * not over gaps of more than a second between them (the program was busy elsewhere). After
 * FM_ERR_TIMEOUT the context stays usable: a later wait may succeed (and that peer gets
 * FM_TIMEOUT seconds again). */
long fm_wait(fm_context *ctx, int timeout_ms);

/* For event loops: a file descriptor that becomes readable when progress has work, or -1
 * when the provider has none (shm): then poll fm_extract from an idle or timer callback.
 * With datagram multicast open (FM_MCAST_DGRAM) it is an epoll descriptor over the
 * provider's and the datagram socket's, so datagrams wake the loop too. The same descriptor
 * from fm_init to fm_finalize. The two-stage multicast's repair timers (FM_MCAST_REPAIR_WAIT)
 * run only in progress calls: a loop that sleeps for long stretches delays repairs of lost
 * datagrams until something else wakes it. Errors: FM_ERR_NOT_INIT. */
int fm_wait_fd(const fm_context *ctx);

/* FM_OK when it is safe to sleep on fm_wait_fd until it is readable; FM_EAGAIN when progress
 * has work now (call fm_extract first; also while a two-stage multicast's root has datagrams
 * its socket could not take yet). Never blocks. Errors: FM_ERR_NOT_INIT. */
int fm_trywait(fm_context *ctx);

/* Requests
 *   Non-blocking whole-buffer operations beside the streaming calls: fm_isend (to one rank),
 *   fm_isend_multi (one buffer to several ranks, as fm_begin_message_multi), fm_imcast and
 *   fm_imcast_list (a multicast down any tree, as fm_mcast_begin and fm_mcast_begin_list; a
 *   destination set of any shape with its nearest copies first: tree "prefix"). Each starts the
 *   message and returns at once, never waiting and never running a handler or a callback, from
 *   the main program or inside a handler alike. Progress then copies the buffer into packets as
 *   send buffers free up (any call that drives progress: fm_extract, fm_wait, the fm_request_*
 *   calls, blocking sends), a packet leaving as soon as it has a credit. The request completes
 *   once the last byte is in a packet: buf is the caller's again from then on (not before:
 *   it must stay valid and unchanged until completion); packets may still be on their way
 *   (fm_finalize sends them). The receiver sees an ordinary message: its handler cannot tell.
 *   Requests are copied through packets, never zero-copy.
 *   Completion is learnt by fm_request_test, fm_request_wait, fm_request_waitany,
 *   fm_request_waitsome, or the callback given at the start: it runs once, from progress
 *   outside handlers (never inside the starting call), as a handler does (it may start
 *   requests and send, not wait). A request is freed when a test or wait reports it (which
 *   sets the caller's pointer to NULL), or, started with req NULL or given to
 *   fm_request_free, right after its callback.
 *   Order: requests start (their first packet leaves) in the order they were made, so two
 *   requests to one rank start its handlers in that order. A request that cannot start yet
 *   holds back the ones made after it (the send buffers it waits for are theirs too); a
 *   streaming message begun meanwhile can go first.
 *   Bounds: queued packets come out of the send buffers of "Flow control" (FM_OVERFLOW) and,
 *   for several destinations and multicasts, FM_MCAST_BUFFER; a request beyond them waits
 *   as a request (its buffer not copied yet). At most FM_REQUESTS requests exist at once (not
 *   yet freed): starting one more gets FM_EAGAIN.
 *   Status of a completed request: FM_OK; FM_ERR_TRUNCATED (several destinations or a
 *   multicast: a copy could not be made, that destination's message was cut short, the others
 *   are whole); FM_ERR_PEER or FM_ERR_PROVIDER (the job is broken). */
typedef struct fm_request fm_request;

/* A request's completion callback: status as above, arg as given at the start. */
typedef void (*fm_request_fn)(int status, void *arg);

/* Start sending len bytes of buf to rank dest (which may be this rank), for its handler id
 * (see "Requests" above). done (may be NULL) runs once at completion with arg. *req gets the
 * request (req NULL: nobody tests it; it is freed after its callback). On an error nothing
 * was started and *req is NULL. Never blocks; never runs a handler.
 * Errors: FM_ERR_NOT_INIT, FM_ERR_INVALID (buf NULL with len > 0), FM_ERR_RANK,
 * FM_ERR_HANDLER, FM_ERR_TOO_LONG (as fm_begin_message, outside handlers), FM_EAGAIN
 * (FM_REQUESTS requests exist), FM_ERR_NOMEM. */
int fm_isend(fm_context *ctx, int dest, const void *buf, size_t len, int handler,
             fm_request_fn done, void *arg, fm_request **req);

/* The same to each of the n ranks in dests, every packet written once (as
 * fm_begin_message_multi; dests is read during the call only). Errors: as fm_isend's, and
 * FM_ERR_EMPTY, FM_ERR_INVALID (dests NULL, n < 0), FM_ERR_SELF, FM_ERR_DUPLICATE. */
int fm_isend_multi(fm_context *ctx, const int *dests, int n, const void *buf, size_t len,
                   int handler, fm_request_fn done, void *arg, fm_request **req);

/* A multicast of len bytes of buf from this rank to every other member of group, down tree
 * with flags, as fm_mcast_begin (its tree is chosen during this call); flags may also hold
 * FM_MCAST_ACK: the request then completes once every member has the message. Errors: as
 * fm_mcast_begin's (store-and-forward and FCFS limits included) and fm_isend's. */
int fm_imcast(fm_group *group, const char *tree, unsigned flags, const void *buf, size_t len,
              int handler, fm_request_fn done, void *arg, fm_request **req);

/* The same to the n ranks of members (this rank among them; members is read during the call
 * only), as fm_mcast_begin_list. Errors: as fm_mcast_begin_list's and fm_isend's. */
int fm_imcast_list(fm_context *ctx, const int *members, int n, const char *tree, unsigned flags,
                   const void *buf, size_t len, int handler, fm_request_fn done, void *arg,
                   fm_request **req);

/* A multicast from this rank to the n ranks of dests (a destination set, any order; this rank
 * not in it; dests is read during the call only): the members are this rank and dests in
 * ascending rank order, which travel as a compact set of ranks (see "Multicast down a tree"),
 * so the set may hold up to every rank of the job. With tree "prefix" (prefix routing) every
 * rack and host on the way gets one copy from outside, whichever rank is the root. Otherwise
 * as fm_imcast_list. Errors: as fm_imcast_list's, and FM_ERR_EMPTY, FM_ERR_SELF,
 * FM_ERR_DUPLICATE. */
int fm_imcast_dests(fm_context *ctx, const int *dests, int n, const char *tree, unsigned flags,
                    const void *buf, size_t len, int handler, fm_request_fn done, void *arg,
                    fm_request **req);

/* Whether *req has completed: FM_EAGAIN while it has not (*req unchanged); else its status
 * (FM_OK or an error, see "Requests"), the request freed and *req set to NULL, its callback
 * having run first. Outside handlers it drives one round of progress first (handlers and
 * callbacks may run); inside a handler it only looks. Never blocks.
 * Errors: FM_ERR_INVALID (req or *req NULL, or not a live request), FM_ERR_NOT_INIT (its
 * context finalized), FM_ERR_PEER, FM_ERR_PROVIDER (progress failed; *req unchanged). */
int fm_request_test(fm_request **req);

/* Block, driving progress, until *req completes; then as fm_request_test. A wait that fails
 * leaves *req (the request goes on): FM_ERR_TIMEOUT when a peer this rank waits for has sent
 * nothing for FM_TIMEOUT seconds, FM_ERR_PEER, FM_ERR_PROVIDER. So *req NULL on return means
 * the request is over, whatever the status; not NULL, that the wait failed.
 * Errors: those, FM_ERR_INVALID, FM_ERR_NOT_INIT, FM_ERR_IN_HANDLER. */
int fm_request_wait(fm_request **req);

/* Block until one of the n requests in reqs has completed (NULL entries are skipped); *index
 * gets its position, reqs[*index] is set to NULL and its status returned. With no request
 * (every entry NULL, or n = 0) *index is -1 and it returns FM_OK at once. A failed wait:
 * *index -1, as fm_request_wait. Errors: FM_ERR_INVALID (reqs or index NULL, n < 0, an entry
 * not a live request), and as fm_request_wait. */
int fm_request_waitany(fm_request **reqs, int n, int *index);

/* Block until at least one of the n requests in reqs has completed, then report every one
 * that has: *count of them, their positions in indices[0..*count-1] and statuses in
 * statuses[] (statuses may be NULL), each reqs[] entry set to NULL. No request: *count 0 at
 * once. Returns FM_OK, or a failed wait's error (*count 0). Errors: FM_ERR_INVALID (reqs,
 * indices or count NULL, n < 0, an entry not a live request), and as fm_request_wait. */
int fm_request_waitsome(fm_request **reqs, int n, int *indices, int *statuses, int *count);

/* Let go of *req without waiting: it goes on, its callback still runs, and it is freed then
 * (at once if it has completed). *req is set to NULL. Errors: FM_ERR_INVALID, FM_ERR_NOT_INIT. */
int fm_request_free(fm_request **req);

/* Threads
 *   One thread drives a context: its progress thread, the one that called fm_init (or
 *   fm_set_progress_thread). Every call is made from it, except these, which any thread may
 *   make at any time between fm_init and fm_finalize:
 *   - fm_isend, fm_isend_multi, fm_imcast, fm_imcast_list, fm_imcast_dests with req NULL: on
 *     a worker thread
 *     the arguments are checked as far as they can be without the context (ranks in range,
 *     buf, handler id), copied (destination and member lists, the tree name) and queued, and
 *     the progress thread is woken; its next progress round starts the request as if it had
 *     started it itself, in queue order. Completion (or an error found then: a bad tree, a
 *     destroyed group) is told by the callback only, which runs on the progress thread: the
 *     buffer stays the caller's until then, and the callback is where a worker learns it may
 *     reuse it. req not NULL: FM_ERR_INVALID. At most FM_REQUESTS queued requests: then
 *     FM_EAGAIN. A group named from a worker must not be destroyed before its requests start.
 *   - fm_wake, fm_wake_fd, fm_rank, fm_size, fm_job_key, fm_strerror, fm_version.
 *   fm_finalize must come after the workers have stopped calling. Handlers and callbacks run
 *   on the progress thread, inside its fastmsg calls. */

/* Wake the progress thread: a fm_wait in progress returns (the next one at once, if none is),
 * and fm_wake_fd becomes readable. Any thread; never blocks. Starting a request on a worker
 * thread wakes it already. Errors: FM_ERR_NOT_INIT. */
int fm_wake(fm_context *ctx);

/* For event loops whose progress thread is woken by workers: an eventfd that fm_wake makes
 * readable (read by the next fm_wait or fm_extract; the loop only polls it). Any thread.
 * Errors: FM_ERR_NOT_INIT. */
int fm_wake_fd(const fm_context *ctx);

/* Make the calling thread the context's progress thread (for a runtime that starts its
 * communication thread after fm_init): call it when no other thread is inside a fastmsg call
 * on ctx. Errors: FM_ERR_NOT_INIT, FM_ERR_IN_HANDLER. */
int fm_set_progress_thread(fm_context *ctx);

/* Counters of one context. */
typedef struct fm_stats {
    uint64_t packets_sent, bytes_sent; /* data packets and payload bytes */
    uint64_t packets_received, bytes_received;
    uint64_t messages_sent, messages_received;
    uint64_t credit_packets_sent, credit_packets_received;
    uint64_t credit_stalls;   /* packets that had to wait for a credit */
    uint64_t dropped;         /* malformed or foreign packets dropped (all reasons; of one
                               * returning more credits than its sender held, only those) */
    uint64_t dropped_foreign; /* of those: packets carrying another job's key */
    uint64_t eagain_retries;  /* sends and receives the network refused at first and retried */
    uint64_t zcopy_sent, zcopy_received; /* large pieces moved zero-copy (their bytes are in
                                          * bytes_sent / bytes_received too) */
    /* Multicast packets this rank sent on to its children: straight from the receive buffer
     * (one header per child, the payload shared) or copied into a buffer of its own (a child
     * was slower than its siblings; at most FM_MCAST_BUFFER bytes at a time). */
    uint64_t fwd_by_reference, fwd_copied;
    uint64_t mcast_held_peak;  /* most bytes of packet buffers held at once for slow multicast
                                * destinations and children: FM_MCAST_BUFFER at most (a root: one
                                * packet more) */
    uint64_t truncated;        /* messages that reached this rank cut short (FM_ERR_TRUNCATED) */
    uint64_t deliver_overflow; /* bytes dropped because a message was longer than the buffer
                                * given to fm_stream_deliver */
    /* Packet buffers this context holds now, in bytes (each buffer is a packet's header and
     * FM_PACKET_SIZE payload bytes, rounded up to 64; a copy header is 64 bytes); their
     * bookkeeping, and zero-copy bounce buffers (FM_ZCOPY_BOUNCE), are not counted. Receive:
     * FM_CREDITS + 1 buffers per rank, all posted from fm_init to fm_finalize, while they take
     * no more than FM_RECV_POOL (or FM_RECV_POOL is 0, or the provider has no multi-receive
     * regions for packets of this size: tcp with FM_PACKET_SIZE above about 16 KiB); beyond,
     * receive regions, whatever the job's size: each of four packets (header and
     * FM_PACKET_SIZE) or 256 KiB, whichever is more, rounded up to 64 bytes, plus 64 bytes;
     * fm_init makes as many as FM_RECV_POOL needs, at least two; when every one holds packets
     * this rank has not released, those packets are copied out (a 40-byte header's room and
     * their payload each, counted here until released), from every region all of whose
     * packets can move; if none can (packets being forwarded, or registration needed), one
     * more region is made (it goes again once it comes back empty).
     * Send: 2 x FM_CREDITS buffers from fm_init whatever the job's size (fewer when
     * the budget of fm_begin_message is smaller), more while writers need them, within that
     * budget and FM_MCAST_BUFFER, given back after every send buffer has stayed free for 4096
     * progress rounds. Copy: per-destination headers of multi-destination and forwarded
     * packets, made on demand and kept. These are the bytes allocated: pages the provider and
     * the peers never write may take no physical memory. */
    uint64_t mem_recv_bytes, mem_send_bytes, mem_copy_bytes;
    uint64_t mem_registered_bytes; /* of those, registered with the provider (0 where it
                                    * needs no registration of local buffers) */
    uint64_t mem_peak_bytes;       /* most of the three together at any time since fm_init */
    /* Most bytes of packet buffers this rank held at once for forwarding multicasts, in every
     * mode: receive buffers kept until every child's send of that packet has completed, and
     * the copies made for slow children, store-and-forward and FCFS (the buffer a member of a
     * k-binomial tree needs, per member). Counted as whole packet buffers (header and
     * FM_PACKET_SIZE payload, rounded up to 64: as mem_* counts them) whatever the packets'
     * lengths. A root's own packets are not counted (mcast_held_peak); a leaf holds none. */
    uint64_t fwd_held_peak;
    /* Whole-message handlers (fm_register_message_handler): bytes of their buffers held now
     * (each a message's declared length, from FM_MESSAGE_BUFFER; not in mem_* above, which
     * count packet buffers; a message in one packet takes none), and the most at once. */
    uint64_t mem_message_bytes, mem_message_peak_bytes;
    /* Messages for whole-message handlers dropped because their declared length exceeds
     * FM_MESSAGE_BUFFER (their function got FM_ERR_TOO_LONG), and their declared bytes. */
    uint64_t message_too_long, message_too_long_bytes;
    uint64_t message_waited; /* messages that waited for FM_MESSAGE_BUFFER to have room */
    /* The two-stage multicast (tree "ipmc"): datagrams this rank sent as a root (stage 1),
     * those it received for multicasts it is a member of, those it dropped (malformed,
     * another job's, another group's or member set's, a group not created here yet; not in
     * dropped above, which counts packets of the job's provider; repeats of a multicast over
     * here are not counted), those dropped on purpose (FM_MCAST_DROP),
     * and over the ring (stage 2): the requests it sent its predecessor (NACKs), the offers
     * it made its successor, and the payload bytes it sent and received as repairs. */
    uint64_t dgram_sent, dgram_received, dgram_dropped, dgram_drop_injected;
    uint64_t ring_nacks, ring_offers, ring_repair_bytes_sent, ring_repair_bytes_received;
    /* Copies of multicast and multi-destination packets (this rank's own and forwarded ones)
     * that went to a rank of this host from a payload written once for all of them (sm's
     * shared payloads, FM_SM_SHARE), instead of a copy each. */
    uint64_t shared_copies;
    /* Packets from a rank of this host whose payload was read where their sender wrote it,
     * not copied into a receive buffer first (sm's loans, FM_SM_LEND), and of those, the ones
     * copied into a receive buffer after all because something still held them once their
     * handler had run (a message waiting for more of itself or for its turn, a deferred or
     * parked one, a packet forwarded to multicast children). */
    uint64_t lent_packets, lent_copied;
} fm_stats;

/* Copy the context's counters into *stats. Errors: FM_ERR_NOT_INIT, FM_ERR_INVALID. */
int fm_get_stats(const fm_context *ctx, fm_stats *stats);
/* Start the peaks (mcast_held_peak, mem_peak_bytes, fwd_held_peak, mem_message_peak_bytes)
 * again from what is held now, so that a program can read the most one phase of it held.
 * Errors: FM_ERR_NOT_INIT. */
int fm_reset_peaks(fm_context *ctx);

/* End the whole job now: every process exits with a non-zero status. Prints msg (may be NULL)
 * naming this rank. Does not return. */
void fm_abort(fm_context *ctx, int code, const char *msg);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif
