/* SPDX-License-Identifier: BSD-3-Clause */
/* Every FM_* environment variable, once. This table drives parsing, validation, defaults,
 * fastmsg-info's printout and the README's variable list (fastmsg-info --markdown).
 *
 * FM_CONFIG_VAR(NAME, field, type, default, min, max, doc)
 *   type: INT (decimal, bounded by min..max), SIZE (INT with an optional K/M/G suffix),
 *         BOOL (0/1/yes/no/true/false/on/off), STR (any text, min/max unused).
 *   default is a string parsed exactly like a user's value, so defaults are validated too. */
#ifndef FM_CONFIG_TABLE_H
#define FM_CONFIG_TABLE_H

#define FM_CONFIG_TABLE(X)                                                                         \
    X(FM_PROVIDER, provider, STR, "sm", 0, 0,                                                      \
      "sm (fastmsg's own shared memory, one host), or a libfabric provider: shm, tcp (= "          \
      "tcp;ofi_rxm), or any RDM provider string such as \"verbs;ofi_rxm\"; left unset, a job "     \
      "that spans hosts runs over tcp (with sm between the ranks of a host: FM_SM)")               \
    X(FM_SM, sm, BOOL, "1", 0, 0,                                                                  \
      "in a job that spans hosts, ranks of the same host exchange packets through sm and the "     \
      "others through FM_PROVIDER's network provider (the hybrid provider, sm+tcp); 0 = the "      \
      "network provider carries every packet")                                                     \
    X(FM_SM_SHARE, sm_share, BOOL, "1", 0, 0,                                                      \
      "a packet that a multicast or fm_begin_message_multi sends to several ranks of this host "   \
      "is written once into shared memory, where each of them reads it (sm); 0 = a copy each")     \
    X(FM_SM_LEND, sm_lend, BOOL, "1", 0, 0,                                                        \
      "a rank reads a shared payload (FM_SM_SHARE) where its sender wrote it, not from a copy "    \
      "in a receive buffer (sm); 0 = copied in first")                                             \
    X(FM_IFACE, iface, STR, "", 0, 0,                                                              \
      "network interface for tcp; empty = lo when all ranks share one host, else libfabric's "     \
      "choice")                                                                                    \
    X(FM_BOOTSTRAP, bootstrap, STR, "auto", 0, 0,                                                  \
      "bootstrap back end: auto, pmix, pmi1, run (fastmsg-run), singleton, or mpi (MPI's "         \
      "own, in a build with -Dmpi=enabled, where auto means mpi)")                                 \
    X(FM_TIMEOUT, timeout, INT, "60", 1, 86400,                                                    \
      "seconds a blocking call waits for a peer that owes it something (credits, the rest of a "   \
      "message, a barrier, the bootstrap exchange) before it fails with FM_ERR_TIMEOUT; a wait "   \
      "with nothing owed (an idle fm_wait(ctx, -1)) has no limit")                                 \
    X(FM_PACKET_SIZE, packet_size, SIZE, "64K", 64, 1048576,                                       \
      "payload bytes per packet (64K measured fastest on shm and tcp, bench/README.md)")           \
    X(FM_CREDITS, credits, INT, "8", 1, 4096,                                                      \
      "packets a sender may have in flight to one receiver (receive buffers reserved per peer)")   \
    X(FM_RECV_POOL, recv_pool, SIZE, "8M", 0, 1L << 40,                                            \
      "receive memory: while FM_CREDITS + 1 packet buffers per rank fit in it, those; beyond, "    \
      "this many bytes of receive regions that every sender's packets land in, packed, whatever "  \
      "the job's size (where the provider has FI_MULTI_RECV for packets this large; at least two " \
      "regions of four packets), more only while packets held here pin them all; then a sender's " \
      "window starts at 2 credits and grows, when it asks, out of this many bytes' worth of "      \
      "credits (at least FM_CREDITS - 2) shared by all senders; 0 = always a buffer per credit "   \
      "per rank")                                                                                  \
    X(FM_ZCOPY, zcopy, SIZE, "32K", 0, 1L << 40,                                                   \
      "pieces of at least this many bytes travel zero-copy, as one tagged message from the "       \
      "sender's buffer into the receiver's, where the provider has tagged messages; 0 = never")    \
    X(FM_ZCOPY_BOUNCE, zcopy_bounce, SIZE, "4M", 0, 1L << 40,                                      \
      "bytes of bounce buffers one sender's zero-copy pieces may hold at a receiver whose "        \
      "handler reads with fm_receive (fm_stream_deliver's buffer needs none); a piece that "       \
      "does not fit, or that arrives before its handler reads, comes through packets instead")     \
    X(FM_OVERFLOW, overflow, SIZE, "64M", 0, 1L << 40,                                             \
      "bytes of packets a handler may queue for peers that have no credit before "                 \
      "fm_begin_message returns FM_EAGAIN (FM_ERR_TOO_LONG for a message that could never fit)")   \
    X(FM_MCAST_BUFFER, mcast_buffer, SIZE, "16M", 0, 1L << 40,                                     \
      "bytes of packets a multicast root or forwarding member may hold for children slower than "  \
      "their siblings; beyond it the root waits and a member keeps its parent's packets (and "     \
      "credits) until the slow child catches up; store-and-forward and FCFS hold whole messages "  \
      "within it; 0 = no child runs ahead of another")                                             \
    X(FM_REQUESTS, requests, INT, "65536", 1, 1 << 24,                                             \
      "requests (fm_isend, fm_imcast, ...) that may exist at once, not yet freed; starting one "   \
      "more returns FM_EAGAIN")                                                                    \
    X(FM_MESSAGE_BUFFER, message_buffer, SIZE, "16M", 0, 1L << 40,                                 \
      "bytes of buffers whole-message handlers (fm_register_message_handler) may hold at once: "   \
      "a message not all in one packet takes its declared length until its function has run; "     \
      "one that does not fit now waits, its packets and its sender's credits held, until "         \
      "earlier ones give theirs back; one declared longer than this is dropped "                   \
      "(FM_ERR_TOO_LONG); 0 = only messages that come in one packet (those need no buffer)")       \
    X(FM_WAIT_FD, wait_fd, BOOL, "1", 0, 0,                                                        \
      "sleep on the provider's wait fd where it has one (tcp); 0 = no wait fd: about 1 us less "   \
      "per tcp packet, and idle waits back off with sched_yield and short sleeps instead")         \
    X(FM_TREE, tree, STR, "auto", 0, 0,                                                            \
      "multicast tree when the caller names none: auto (the model's fastest tree and packet "      \
      "size for each message), "                                                                   \
      "flat, chain, binomial, kbinomial[:k], postal[:lambda], prefix[:b], node[:k] (one copy "     \
      "per host, to a leader, then within each host), ipmc (the two-stage multicast over IP "      \
      "multicast: FM_MCAST_DGRAM), twotree (every other packet down each of two binary trees), "   \
      "and the torus trees sepaddr, utorus, storus, mdtorus, mutorus[:r] (over FM_TOPOLOGY's "     \
      "coordinates)")                                                                              \
    X(FM_MCAST_COSTS, mcast_costs, STR, "", 0, 0,                                                  \
      "the model's costs for FM_TREE=auto, as key=value items (send_msg_ns, send_pkt_ns, "         \
      "send_ns_per_kib, fill_ns_per_kib, gap_ns_per_kib, recv_pkt_ns, recv_ns_per_kib, "           \
      "copy_ns_per_kib, latency_ns, latency_ns_per_kib, wake_ns, spin_ns, poll_ns, burst_bytes, "  \
      "link_fair, far_latency_x, and gap_ns_per_kib@BYTES, latency_ns_per_kib@BYTES; "             \
      "runtime/mcast/README.md) or "                                                               \
      "the older "                                                                                 \
      "SEND_PKT_NS:NS_PER_KIB:LATENCY_NS; the keys given win over the cost file and "              \
      "fm_mcast_calibrate, the others come from them, else from estimates for the provider")       \
    X(FM_MCAST_COSTS_FILE, mcast_costs_file, STR, "", 0, 0,                                        \
      "file of the model's costs (key=value lines): every rank loads it when it exists, and "      \
      "fm_mcast_calibrate then uses it instead of measuring; when it does not exist, "             \
      "fm_mcast_calibrate measures and rank 0 writes it, so a site calibrates once")               \
    X(FM_PREFIX_BASE, prefix_base, INT, "2", 2, 256,                                               \
      "base of the topology ids of prefix trees named without one (FM_TREE=prefix): the digits "   \
      "of a rack, a host and a place on the host; 2 gives a binomial-like tree inside each "       \
      "(the fewest copies from each member: measured fastest for 1 MiB, as fast as 4 for small "   \
      "messages), larger bases flatter ones")                                                      \
    X(FM_PREFIX_CHOICE, prefix_choice, STR, "nearest", 0, 0,                                       \
      "which rank a prefix routing table keeps when several qualify for an entry: nearest (the "   \
      "one whose remaining id digits match this rank's longest, so a host's ranks send to "        \
      "different ranks of another host) or random (uniform, the same in every run)")               \
    X(FM_PREFIX_SEGMENT, prefix_segment, SIZE, "8K", 0, 1048576,                                   \
      "packet payload of prefix-routed multicasts (FM_TREE=prefix): the DAG-scheduling paper "     \
      "measured 8K segments fastest; capped by FM_PACKET_SIZE; 0 = FM_PACKET_SIZE")                \
    X(FM_MCAST_DGRAM, mcast_dgram, STR, "auto", 0, 0,                                              \
      "datagram multicast for the two-stage multicast (tree ipmc): on (fm_init fails without "     \
      "it), off, or auto (on when the job spans hosts and FM_PROVIDER is not shm; left off, "      \
      "saying why at FM_VERBOSE=1, where it cannot open)")                                         \
    X(FM_MCAST_GROUP, mcast_group, STR, "", 0, 0,                                                  \
      "the job's IPv4 multicast group and UDP port, A.B.C.D:PORT; empty = drawn from the job's "   \
      "key (239.X.Y.Z, port 20000-59999)")                                                         \
    X(FM_MCAST_RATE, mcast_rate, SIZE, "0", 0, 1L << 40,                                           \
      "bytes per second a two-stage multicast's root sends datagrams at; 0 = as fast as its "      \
      "socket takes them (the link's shaper paces them)")                                          \
    X(FM_MCAST_REPAIR_WAIT, mcast_repair_wait, INT, "2000", 1, 10000000,                           \
      "microseconds a two-stage multicast's member waits without news before it asks its "         \
      "predecessor on the ring for what it misses, and a member that has everything waits for "    \
      "its successor's word before offering; doubled at each retry, up to 64 times")               \
    X(FM_MCAST_REPAIR, mcast_repair, STR, "nack", 0, 0,                                            \
      "two-stage multicast repair: nack (a member asks its predecessor for what it misses) or "    \
      "forward (the paper's: each member sends the whole message on to its successor)")            \
    X(FM_MCAST_ROOT_DELAY, mcast_root_delay, INT, "0", 0, 10000000,                                \
      "microseconds a two-stage multicast's root waits before its datagrams (so that receivers "   \
      "are ready)")                                                                                \
    X(FM_MCAST_SYNC, mcast_sync, BOOL, "0", 0, 0,                                                  \
      "a two-stage multicast's root first waits for one member, drawn at random, to answer")       \
    X(FM_MCAST_DROP, mcast_drop, STR, "0", 0, 0,                                                   \
      "a test aid: the fraction (0 to 1) of received two-stage multicast datagrams dropped on "    \
      "purpose, before they are read")                                                             \
    X(FM_MCAST_CORES, mcast_cores, INT, "0", 0, 65536,                                             \
      "cores the model lets members share: 0 = each host's online cores, shared by the ranks on "  \
      "it; N = the whole job's ranks share N cores (emulated hosts on one machine)")               \
    X(FM_TOPOLOGY, topology, STR, "", 0, 0,                                                        \
      "coordinates for the topology layer: torus:AxB or torus:AxBxC (one position per host, or "   \
      "per rank when the job has that many ranks but not hosts; :uni after it: a unidirectional "  \
      "torus, for the multicast model's routes), file:PATH (lines NAME X [Y "                      \
      "[Z]], "                                                                                     \
      "one per host), empty = none (hosts and positions on them are always known)")                \
    X(FM_VERBOSE, verbose, INT, "0", 0, 3,                                                         \
      "diagnostics on stderr: 0 errors only, 1 setup, 2-3 more")                                   \
    X(FM_MPI_COSTS, mpi_costs, STR, "", 0, 0,                                                      \
      "the mpi provider under SimGrid: send=S,recv=S charges S seconds of simulated compute per "  \
      "packet sent or received (the host's per-packet cost; empty = none)")                        \
    X(FM_STATS, stats, BOOL, "0", 0, 0, "print per-context counters at fm_finalize")

#endif
