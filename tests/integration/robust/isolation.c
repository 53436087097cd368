/* SPDX-License-Identifier: BSD-3-Clause */
/* isolation: two jobs side by side; each one's rank 0 sends the other's rank 0 packets from
 * outside (through a second transport endpoint of its own), and each job must drop and count
 * every one of them while its own two ranks keep exchanging messages, every byte checked.
 *
 *   fastmsg-run -n 2 isolation --dir DIR --name A --peer B [--oversize 1]
 *   (and at once, --name B --peer A)
 *
 * Rank 0 publishes its job key and endpoint address in DIR/NAME.addr, reads the other job's,
 * opens a second endpoint (fm_tp_open, same provider), and sends it the flood: packets that
 * are well-formed but carry this job's key (data, credit, clear-to-send, zero-copy
 * announcement, multicast, a compact one-packet message, and a compact one whose key differs
 * from theirs only in its high half), and malformed ones, each with
 * exactly one defect, in the full header or the compact one (short, bad
 * version, type, flags, source rank or length, empty; those carry the other job's own key, so
 * that nothing but that defect is wrong), a valid one of theirs with a sequence number no
 * sender of theirs can have reached, and with --oversize 1 one larger than the receiver's
 * buffers (not over shm: libfabric 1.17's shm provider then loops forever in the receiver,
 * calling process_vm_readv for 0 bytes). DIR/NAME.sent then lists how many of each drop reason
 * were sent; the receiver's per-reason drop counters must reach exactly those numbers (and
 * fm_stats' dropped and dropped_foreign the totals) within the deadline. Meanwhile, and
 * before and after, the two ranks of each job exchange messages of 1 B to 300 KB (zero-copy
 * included) and check every byte. Rank 1 must drop nothing. Prints "PASS" per rank. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../stream/common.h"
#include "context.h"
#include "transport.h"
#include "wire.h"

#define DEADLINE_S 40
#define MAX_FLOOD  64

static fm_context *ctx;
static int me;
static const char *dir, *name, *peer_name;
static int oversize;

/* ---- the two ranks' own traffic ---- */

static const size_t round_sizes[] = {1, 100, 5000, 70000, 300000, 65536, 7};
static int round_no, got;
static int keep_going = -1;

/* Message m (byte 0 of round r is r & 255; a large message may complete after the next
 * round's small one, so each says which it is). */
static size_t round_size(int m)
{
    return round_sizes[m % (int)(sizeof round_sizes / sizeof round_sizes[0])];
}

static void on_delivered(void *buf, size_t len, int status, int sender, void *arg)
{
    if (status)
        st_fail("a delivered message from rank %d: %s", sender, fm_strerror(status));
    (void)arg;
    int m = len ? ((unsigned char *)buf)[0] : -1;
    if (m < 0 || len != round_size(m))
        st_fail("a %zu-byte message from rank %d (byte 0: %d)", len, sender, m);
    else if (st_mismatch(buf, len, sender, me, m, 0) != (size_t)-1)
        st_fail("message %d: wrong bytes from rank %d", m, sender);
    got++;
    free(buf);
}

static int on_data(fm_stream *s, int sender, void *arg)
{
    (void)sender;
    (void)arg;
    size_t len = fm_stream_length(s);
    fm_stream_deliver(s, malloc(len ? len : 1), len, on_delivered, NULL);
    return FM_DONE;
}

static int on_control(fm_stream *s, int sender, void *arg)
{
    (void)sender;
    (void)arg;
    unsigned char go;
    if (fm_receive(s, &go, 1) == 1)
        keep_going = go;
    return FM_DONE;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void give_up(const char *what, int rc)
{
    fprintf(stderr, "rank %d: FAIL: %s: %s\n", me, what, fm_strerror(rc));
    exit(1);
}

static void wait_for(const int *v, int want, const char *what)
{
    double end = now_s() + DEADLINE_S;
    while (*v < want) {
        long rc = fm_wait(ctx, 100);
        if (rc < 0)
            give_up(what, (int)rc);
        if (now_s() > end)
            give_up(what, FM_ERR_TIMEOUT);
    }
}

static void send_msg(int handler, const unsigned char *buf, size_t len)
{
    fm_stream *s;
    int rc = fm_begin_message(ctx, 1 - me, len, handler, &s);
    if (rc == FM_OK)
        rc = fm_send_piece(s, buf, len);
    if (rc == FM_OK)
        rc = fm_end_message(s);
    if (rc)
        give_up("sending", rc);
}

/* One message each way, checked. */
static void exchange(void)
{
    size_t len = round_size(round_no & 255);
    unsigned char *buf = malloc(len);
    st_fill(buf, len, me, 1 - me, round_no & 255, 0);
    send_msg(0, buf, len);
    free(buf);
    round_no++;
    wait_for(&got, round_no, "a message of our own job");
}

/* ---- the flood from outside ---- */

typedef struct flood_pkt {
    unsigned char *buf;
    size_t len;
    fm_tp_mr *mr;
} flood_pkt;

static struct {
    int state; /* 0 wait for the other's address, 1 sending, 2 sent, 3 counted, 4 done */
    fm_tp *tp;
    flood_pkt pkt[MAX_FLOOD];
    int n, pending;
    uint64_t their_key;
    uint64_t sent[FM_WIRE_NREASONS]; /* what we sent, by the reason it must be dropped for */
    uint64_t want[FM_WIRE_NREASONS]; /* what the other job says it sent us */
    int have_want;
} fl;

static void path_of(char *out, size_t len, const char *who, const char *what)
{
    snprintf(out, len, "%s/%s.%s", dir, who, what);
}

/* Written whole, then renamed: a reader never sees half a file. */
static void publish(const char *what, const void *data, size_t len)
{
    char tmp[520], path[512];
    path_of(path, sizeof path, name, what);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f || fwrite(data, 1, len, f) != len || fclose(f) || rename(tmp, path)) {
        fprintf(stderr, "rank %d: FAIL: cannot write %s: %s\n", me, path, strerror(errno));
        exit(1);
    }
}

/* The other job's file, or 0 bytes if it is not there yet. */
static size_t read_theirs(const char *what, void *data, size_t cap)
{
    char path[512];
    path_of(path, sizeof path, peer_name, what);
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = fread(data, 1, cap, f);
    fclose(f);
    return n;
}

/* payload (size_t)-1: a 20-byte packet; -2: an empty one. */
static void add(uint8_t version, uint8_t type, uint16_t flags, uint32_t src, uint64_t key,
                uint32_t payload_len, size_t payload, uint64_t msg_len, fm_wire_status why)
{
    size_t len = payload == (size_t)-1 ? 20 : payload == (size_t)-2 ? 0 : FM_WIRE_HDR_LEN + payload;
    flood_pkt *p = &fl.pkt[fl.n++];
    p->buf = calloc(1, len ? len : 1);
    p->len = len;
    fm_wire_hdr h = {.version = version,
                     .type = type,
                     .flags = flags,
                     .src = src,
                     .job_key = key,
                     .msg_id = (uint32_t)fl.n,
                     .seq = 0,
                     .payload_len = payload_len,
                     .handler = 0,
                     .credits = type == FM_PKT_CREDIT ? 7 : 2,
                     .msg_len = msg_len};
    if (len >= FM_WIRE_HDR_LEN)
        fm_wire_encode(&h, p->buf);
    if (type == FM_PKT_RNDV && payload == FM_WIRE_RNDV_LEN)
        fm_wire_rndv_encode(1 << 20, 77, p->buf + FM_WIRE_HDR_LEN);
    if (type == FM_PKT_MCAST)
        memset(p->buf + FM_WIRE_HDR_LEN, 0xff, payload);
    fl.sent[why]++;
}

/* A compact one-packet message (FM_PKT_SHORT) of payload bytes (its length is the packet's);
 * header_only sends just its first 10 bytes. */
static void add_short(uint32_t src, uint64_t key, size_t payload, int header_only,
                      fm_wire_status why)
{
    size_t len = header_only ? 10 : FM_WIRE_SHORT_LEN + payload;
    flood_pkt *p = &fl.pkt[fl.n++];
    p->buf = calloc(1, FM_WIRE_SHORT_LEN + payload + 1);
    p->len = len;
    fm_wire_hdr h = {.version = FM_WIRE_VERSION,
                     .src = src,
                     .job_key = key,
                     .msg_id = (uint32_t)fl.n,
                     .payload_len = (uint32_t)payload,
                     .credits = 2};
    fm_wire_encode_short(&h, p->buf);
    fl.sent[why]++;
}

/* A well-formed data packet with their key and no credits, whose sequence number lies far
 * beyond what rank 1's credits allow it to have sent of a message: dropped after the header
 * checks, and it must hold no buffer there. */
static void add_far_ahead(uint64_t key)
{
    flood_pkt *p = &fl.pkt[fl.n++];
    p->len = FM_WIRE_HDR_LEN + 100;
    p->buf = calloc(1, p->len);
    fm_wire_hdr h = {.version = FM_WIRE_VERSION,
                     .type = FM_PKT_DATA,
                     .src = 1,
                     .job_key = key,
                     .msg_id = 0xfffffff0u,
                     .seq = 1u << 20,
                     .payload_len = 100,
                     .msg_len = 1u << 30};
    fm_wire_encode(&h, p->buf);
    fl.sent[FM_WIRE_SEQ_BAD]++;
}

/* Each packet has one defect: ours is our key on an otherwise valid packet; theirs carry
 * their key and one malformed field. */
static void build_flood(void)
{
    const uint64_t ours = fm_job_key(ctx), theirs = fl.their_key;
    const uint8_t v = FM_WIRE_VERSION;
    const size_t max = ctx->packet_size;
    for (uint32_t i = 0; i < 16; i++)
        add(v, FM_PKT_DATA, FM_PKT_LAST, i % 2, ours, 100, 100, 100, FM_WIRE_KEY_BAD);
    add(v, FM_PKT_DATA, 0, 0, ours, (uint32_t)max, max, 10 * max, FM_WIRE_KEY_BAD);
    add(v, FM_PKT_CREDIT, 0, 1, ours, 0, 0, 0, FM_WIRE_KEY_BAD);
    add(v, FM_PKT_CREDIT, FM_PKT_CTS, 1, ours, 0, 0, 77, FM_WIRE_KEY_BAD);
    add(v, FM_PKT_RNDV, 0, 0, ours, FM_WIRE_RNDV_LEN, FM_WIRE_RNDV_LEN, 1 << 20, FM_WIRE_KEY_BAD);
    add(v, FM_PKT_MCAST, FM_PKT_LAST, 0, ours, 64, 64, 64, FM_WIRE_KEY_BAD);
    add(v, FM_PKT_DATA, FM_PKT_LAST, 0, theirs, 0, (size_t)-1, 0, FM_WIRE_SHORT);
    add(v, FM_PKT_DATA, FM_PKT_LAST, 0, theirs, 0, (size_t)-2, 0, FM_WIRE_SHORT);
    add(1, FM_PKT_DATA, FM_PKT_LAST, 0, theirs, 100, 100, 100, FM_WIRE_VERSION_BAD);
    add(0xff, FM_PKT_DATA, FM_PKT_LAST, 0, theirs, 100, 100, 100, FM_WIRE_VERSION_BAD);
    add(v, 0, 0, 0, theirs, 0, 0, 0, FM_WIRE_TYPE_BAD);
    add(v, 9, 0, 0, theirs, 0, 0, 0, FM_WIRE_TYPE_BAD);
    add(v, FM_PKT_CREDIT, FM_PKT_LAST, 1, theirs, 0, 0, 0, FM_WIRE_TYPE_BAD);
    add(v, FM_PKT_DATA, 0x80, 0, theirs, 100, 100, 100, FM_WIRE_TYPE_BAD);
    add(v, FM_PKT_DATA, FM_PKT_LAST, 2, theirs, 100, 100, 100, FM_WIRE_SRC_BAD);
    add(v, FM_PKT_DATA, FM_PKT_LAST, 0xffffffffu, theirs, 100, 100, 100, FM_WIRE_SRC_BAD);
    add(v, FM_PKT_DATA, FM_PKT_LAST, 0, theirs, 50, 100, 100, FM_WIRE_LEN_BAD);
    add(v, FM_PKT_CREDIT, 0, 1, theirs, 8, 8, 0, FM_WIRE_LEN_BAD);
    add(v, FM_PKT_DATA, FM_PKT_LAST, 0, theirs, 100, 100, 10, FM_WIRE_LEN_BAD);
    add(v, FM_PKT_RNDV, 0, 0, theirs, 8, 8, 1 << 20, FM_WIRE_LEN_BAD);
    add_short(0, ours, 8, 0, FM_WIRE_KEY_BAD);
    add_short(1, theirs ^ (1ULL << 63), 8, 0, FM_WIRE_KEY_BAD); /* the high half differs */
    add_short(1, theirs, 0, 1, FM_WIRE_SHORT);
    add_short(2, theirs, 8, 0, FM_WIRE_SRC_BAD);
    add_short(0, theirs, FM_WIRE_SHORT_MAX + 1, 0, FM_WIRE_LEN_BAD);
    add_far_ahead(theirs);
    /* Larger than a receive buffer: the provider reports it truncated. */
    if (oversize)
        add(v, FM_PKT_DATA, FM_PKT_LAST, 0, theirs, (uint32_t)max + 100, max + 100, max + 100,
            FM_WIRE_LEN_BAD);
}

static void flood_open(const unsigned char *file, size_t len)
{
    memcpy(&fl.their_key, file, sizeof fl.their_key);
    fm_tp_config tc = {.provider = ctx->cfg.provider,
                       .iface = ctx->cfg.iface,
                       .all_local = 1,
                       .verbose = (int)ctx->cfg.verbose,
                       .no_wait_fd = 1};
    char err[256] = "";
    int rc = fm_tp_open(&tc, &fl.tp, err, sizeof err);
    if (rc == FM_OK)
        rc = fl.tp->ops->connect(fl.tp, file + 8, len - 8, 1);
    if (rc) {
        fprintf(stderr, "rank %d: FAIL: a second endpoint: %s %s\n", me, fm_strerror(rc), err);
        exit(1);
    }
    build_flood();
    for (int i = 0; i < fl.n; i++) {
        flood_pkt *p = &fl.pkt[i];
        if (fl.tp->info.needs_mr && (rc = fl.tp->ops->mem_reg(fl.tp, p->buf, p->len, &p->mr)))
            give_up("registering a flood packet", rc);
        rc = fl.tp->ops->send(fl.tp, 0, p->buf, p->len, p->mr, p);
        if (rc < 0)
            give_up("sending a flood packet", rc);
        fl.pending += rc == FM_OK; /* FM_TP_SENT: done already, no event */
    }
    printf("rank %d: sent %d packets from outside to job %s\n", me, fl.n, peer_name);
}

static int counted(void)
{
    for (int r = 1; r < FM_WIRE_NREASONS; r++)
        if (ctx->drops[r] != fl.want[r])
            return 0;
    return 1;
}

/* One step of rank 0's part, between rounds; returns 1 once all is done. */
static int flood_step(void)
{
    unsigned char file[8 + 256];
    fm_tp_event ev[16];
    switch (fl.state) {
    case 0: {
        size_t n = read_theirs("addr", file, sizeof file);
        if (n > 8) {
            flood_open(file, n);
            fl.state = 1;
        }
        return 0;
    }
    case 1: {
        int n = fl.tp->ops->poll(fl.tp, ev, 16);
        if (n < 0)
            give_up("the second endpoint", n);
        for (int i = 0; i < n; i++)
            if (ev[i].status != FM_OK)
                give_up("a flood packet's send", ev[i].status);
        fl.pending -= n;
        if (fl.pending == 0) {
            publish("sent", fl.sent, sizeof fl.sent);
            fl.state = 2;
        }
        return 0;
    }
    case 2:
        if (!fl.have_want)
            fl.have_want = read_theirs("sent", fl.want, sizeof fl.want) == sizeof fl.want;
        if (fl.have_want && counted()) {
            publish("counted", "", 0);
            fl.state = 3;
        }
        return 0;
    case 3: { /* keep our endpoint until they have counted ours */
        char path[512];
        path_of(path, sizeof path, peer_name, "counted");
        if (access(path, F_OK) != 0)
            return 0;
        fl.state = 4;
        return 1;
    }
    }
    return 1;
}

static void flood_close(void)
{
    for (int i = 0; i < fl.n; i++) {
        if (fl.pkt[i].mr)
            fl.tp->ops->mem_dereg(fl.tp, fl.pkt[i].mr);
        free(fl.pkt[i].buf);
    }
    if (fl.tp)
        fl.tp->ops->close(fl.tp);
}

static void check_drops(void)
{
    fm_stats st;
    fm_get_stats(ctx, &st);
    uint64_t total = 0;
    for (int r = 1; r < FM_WIRE_NREASONS; r++) {
        total += me == 0 ? fl.want[r] : 0;
        if (ctx->drops[r])
            printf("rank %d: dropped %llu: %s\n", me, (unsigned long long)ctx->drops[r],
                   fm_wire_status_str((fm_wire_status)r));
    }
    uint64_t foreign = me == 0 ? fl.want[FM_WIRE_KEY_BAD] : 0;
    printf("rank %d: fm_stats dropped %llu (foreign %llu), expected %llu (foreign %llu)\n", me,
           (unsigned long long)st.dropped, (unsigned long long)st.dropped_foreign,
           (unsigned long long)total, (unsigned long long)foreign);
    if (st.dropped != total || st.dropped_foreign != foreign)
        st_fail("drop counters differ from what was sent");
    if (me == 0 && !counted())
        st_fail("per-reason drop counters differ from what was sent");
}

int main(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--dir"))
            dir = argv[i + 1];
        else if (!strcmp(argv[i], "--name"))
            name = argv[i + 1];
        else if (!strcmp(argv[i], "--peer"))
            peer_name = argv[i + 1];
        else if (!strcmp(argv[i], "--oversize"))
            oversize = atoi(argv[i + 1]);
    }
    if (!dir || !name || !peer_name) {
        fprintf(stderr, "usage: isolation --dir DIR --name NAME --peer NAME [--oversize 0|1]\n");
        return 2;
    }
    ctx = st_init();
    me = fm_rank(ctx);
    if (fm_size(ctx) != 2)
        give_up("isolation runs as 2 ranks", FM_ERR_INVALID);
    int rc = fm_register_handler(ctx, 0, on_data, NULL);
    if (rc == FM_OK)
        rc = fm_register_handler(ctx, 1, on_control, NULL);
    if (rc == FM_OK)
        rc = fm_barrier(ctx);
    if (rc)
        give_up("setup", rc);
    for (int i = 0; i < 3; i++)
        exchange();

    if (me == 0) {
        unsigned char file[8 + 256];
        size_t len = 256;
        uint64_t key = fm_job_key(ctx);
        if ((rc = ctx->tp->ops->addr(ctx->tp, file + 8, &len)))
            give_up("this endpoint's address", rc);
        memcpy(file, &key, 8);
        publish("addr", file, 8 + len);
    }
    /* Our own traffic goes on while the packets from outside come in; rank 0 says when
     * everything is counted. */
    double end = now_s() + DEADLINE_S;
    for (;;) {
        keep_going = -1; /* (rank 0's word may come while we wait for its message) */
        exchange();
        unsigned char go = 1;
        if (me == 0) {
            go = !flood_step();
            if (go && now_s() > end) {
                st_fail("after %d s: at step %d of 4, %d sends from outside pending, the other "
                        "job's list of what it sent %s",
                        DEADLINE_S, fl.state, fl.pending, fl.have_want ? "read" : "not there");
                go = 0;
            }
            send_msg(1, &go, 1);
        } else {
            double stop = now_s() + DEADLINE_S + 10;
            while (keep_going < 0 && now_s() < stop) {
                long w = fm_wait(ctx, 100);
                if (w < 0)
                    give_up("waiting for rank 0", (int)w);
            }
            if (keep_going < 0)
                st_fail("rank 0 never said whether to go on");
            go = keep_going == 1;
        }
        if (!go)
            break;
    }
    printf("rank %d: %d rounds of our own traffic\n", me, round_no);
    for (int i = 0; i < 3; i++)
        exchange();
    check_drops();
    if ((rc = fm_barrier(ctx)))
        give_up("fm_barrier", rc);
    flood_close();
    if ((rc = fm_finalize(ctx)))
        st_fail("fm_finalize: %s", fm_strerror(rc));
    printf("rank %d: %s isolation\n", me, st_failures ? "FAIL" : "PASS");
    return st_failures ? 1 : 0;
}
