/* SPDX-License-Identifier: BSD-3-Clause */
/* dead_peer: one rank dies (or stops) in the middle of a transfer; every other rank must
 * come out of its blocking call with an error instead of waiting forever.
 *
 *   dead_peer --mode stream|sink|mcast [--victim R] [--signal kill|stop] [--size S]
 *       [--piece S] [--tree T] [--tag TEXT]
 *
 *   stream  the victim sends a --size message to rank victim+1 in --piece pieces and dies
 *           once half of it is written; the receiver's handler reads it piece by piece.
 *   sink    every other rank streams --size bytes to the victim, whose handler reads them
 *           piece by piece and dies once a quarter of the total has arrived.
 *   mcast   rank 0 multicasts --size bytes down --tree to every rank (members 0..n-1); the
 *           victim (pick an inner member: it has children) dies once a quarter has arrived.
 *   Ranks with nothing to do wait in fm_barrier. --victim -1: nobody dies, the job passes.
 *   --signal stop raises SIGSTOP instead of SIGKILL: the victim stays alive but silent, and
 *   the others must give up after FM_TIMEOUT; once continued it exits with status 2.
 *   --tag is ignored: a marker the test script finds the job's processes by.
 *
 * The victim prints "dead_peer: rank R raising SIGKILL at NS" (CLOCK_REALTIME ns) just before
 * the signal, also into the file DEAD_PEER_LOG names, if any; a survivor whose call fails prints
 * "dead_peer: rank R: CALL failed at NS: ...", calls fm_finalize (which must not hang either),
 * prints "dead_peer: rank R exiting at NS" and exits 1 (bench/dead-rank.sh times these). */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../stream/common.h"

#define ALL 255 /* the "receiver" in a multicast's byte pattern */

enum { MODE_STREAM, MODE_SINK, MODE_MCAST };

static struct {
    int mode, victim, sig;
    size_t size, piece;
    const char *tree;
} opt = {MODE_STREAM, 1, SIGKILL, 64u << 20, 16u << 10, "binomial"};

static fm_context *ctx;
static int me, nranks;
static size_t got_total, die_after = (size_t)-1;
static int messages_done, messages_expected;

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void die(void)
{
    char line[128];
    snprintf(line, sizeof line, "dead_peer: rank %d raising %s at %lld\n", me,
             opt.sig == SIGKILL ? "SIGKILL" : "SIGSTOP", now_ns());
    fputs(line, stdout);
    fflush(stdout);
    /* Also where no launcher forwards it: mpiexec.mpich's proxy may lose a killed job's output
     * (it did once, its PMI socket broken, every rank's line gone). */
    const char *log = getenv("DEAD_PEER_LOG");
    FILE *f = log ? fopen(log, "a") : NULL;
    if (f) {
        fputs(line, f);
        fclose(f);
    }
    raise(opt.sig);
    /* Only a stopped victim gets here, once continued. */
    _exit(2);
}

/* A blocking call failed: the expected outcome whenever a victim is named. */
static void failed(const char *call, int rc)
{
    printf("dead_peer: rank %d: %s failed at %lld: %s\n", me, call, now_ns(), fm_strerror(rc));
    fflush(stdout);
    int f = fm_finalize(ctx);
    printf("dead_peer: rank %d: fm_finalize: %s\n", me, fm_strerror(f));
    printf("dead_peer: rank %d exiting at %lld\n", me, now_ns());
    fflush(stdout);
    exit(1);
}

/* Reads whatever has arrived in odd chunks, checking every byte. */
static int on_data(fm_stream *s, int sender, void *arg)
{
    (void)arg;
    static unsigned char chunk[16411];
    /* The offset so far rides on the user pointer: nothing to free when a peer dies. */
    size_t off = (size_t)(uintptr_t)fm_stream_user(s);
    int d = opt.mode == MODE_MCAST ? ALL : me;
    for (unsigned i = 0;; i++) {
        ssize_t n = fm_stream_available(s) ? fm_receive(s, chunk, st_odd_size(i)) : 0;
        if (n <= 0)
            break;
        size_t bad = st_mismatch(chunk, (size_t)n, sender, d, 0, off);
        if (bad != (size_t)-1)
            st_fail("message from rank %d: wrong byte at offset %zu", sender, bad);
        off += (size_t)n;
        fm_stream_set_user(s, (void *)(uintptr_t)off);
        got_total += (size_t)n;
        if (got_total >= die_after)
            die();
    }
    if (!fm_stream_complete(s) || fm_stream_available(s))
        return FM_CONTINUE;
    if (off != fm_stream_length(s))
        st_fail("message from rank %d: %zu of %zu bytes", sender, off, fm_stream_length(s));
    messages_done++;
    return FM_DONE;
}

/* Write the whole message to s in --piece pieces; the victim dies once die_at bytes are in. */
static void send_body(fm_stream *s, int d, size_t die_at)
{
    unsigned char *buf = malloc(opt.piece);
    for (size_t off = 0; off < opt.size;) {
        if (off >= die_at)
            die();
        size_t n = opt.size - off < opt.piece ? opt.size - off : opt.piece;
        st_fill(buf, n, me, d, 0, off);
        int rc = fm_send_piece(s, buf, n);
        if (rc)
            failed("fm_send_piece", rc);
        off += n;
    }
    free(buf);
    int rc = fm_end_message(s);
    if (rc)
        failed("fm_end_message", rc);
}

static void send_to(int dest, size_t die_at)
{
    fm_stream *s;
    int rc = fm_begin_message(ctx, dest, opt.size, 0, &s);
    if (rc)
        failed("fm_begin_message", rc);
    send_body(s, dest, die_at);
}

static void wait_messages(void)
{
    while (messages_done < messages_expected) {
        long rc = fm_wait(ctx, -1);
        if (rc < 0)
            failed("fm_wait", (int)rc);
    }
}

static void run_stream(void)
{
    int target = (opt.victim + 1) % nranks;
    if (me == opt.victim)
        send_to(target, opt.size / 2);
    else if (opt.victim < 0 && me == 0)
        send_to(1, (size_t)-1);
    messages_expected = me == (opt.victim < 0 ? 1 : target);
}

static void run_sink(void)
{
    int sink = opt.victim < 0 ? 0 : opt.victim;
    if (me == sink) {
        messages_expected = nranks - 1;
        if (opt.victim >= 0)
            die_after = opt.size * (size_t)(nranks - 1) / 4;
    } else {
        send_to(sink, (size_t)-1);
    }
}

static void run_mcast(void)
{
    int *members = malloc(sizeof(int) * (size_t)nranks);
    for (int r = 0; r < nranks; r++)
        members[r] = r;
    if (me == 0) {
        fm_stream *s;
        int rc = fm_mcast_begin_list(ctx, members, nranks, opt.tree, 0, opt.size, 0, &s);
        if (rc)
            failed("fm_mcast_begin_list", rc);
        send_body(s, ALL, (size_t)-1);
    } else {
        messages_expected = 1;
        if (me == opt.victim)
            die_after = opt.size / 4;
    }
    free(members);
}

static void usage(void)
{
    fprintf(stderr, "usage: dead_peer --mode stream|sink|mcast [--victim R] [--signal kill|stop]"
                    " [--size S] [--piece S] [--tree T] [--tag TEXT]\n");
    exit(2);
}

static size_t size_arg(const char *s)
{
    int ok;
    size_t v = st_parse_size(s, &ok);
    if (!ok || v == 0)
        usage();
    return v;
}

static void parse(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            usage();
        i++;
        if (!strcmp(a, "--mode"))
            opt.mode = !strcmp(v, "stream")  ? MODE_STREAM
                       : !strcmp(v, "sink")  ? MODE_SINK
                       : !strcmp(v, "mcast") ? MODE_MCAST
                                             : (usage(), 0);
        else if (!strcmp(a, "--victim"))
            opt.victim = atoi(v);
        else if (!strcmp(a, "--signal"))
            opt.sig = !strcmp(v, "kill") ? SIGKILL : !strcmp(v, "stop") ? SIGSTOP : (usage(), 0);
        else if (!strcmp(a, "--size"))
            opt.size = size_arg(v);
        else if (!strcmp(a, "--piece"))
            opt.piece = size_arg(v);
        else if (!strcmp(a, "--tree"))
            opt.tree = v;
        else if (strcmp(a, "--tag"))
            usage();
    }
}

int main(int argc, char **argv)
{
    parse(argc, argv);
    ctx = st_init();
    me = fm_rank(ctx);
    nranks = fm_size(ctx);
    if (nranks < 2 || opt.victim >= nranks || (opt.mode == MODE_MCAST && opt.victim == 0)) {
        fprintf(stderr, "dead_peer: needs 2+ ranks and a victim in 1..n-1 (or -1)\n");
        return 2;
    }
    int rc = fm_register_handler(ctx, 0, on_data, NULL);
    if (rc == FM_OK)
        rc = fm_barrier(ctx);
    if (rc)
        failed("setup", rc);
    if (opt.mode == MODE_STREAM)
        run_stream();
    else if (opt.mode == MODE_SINK)
        run_sink();
    else
        run_mcast();
    wait_messages();
    if ((rc = fm_barrier(ctx)))
        failed("fm_barrier", rc);
    return st_finish(ctx, "dead_peer");
}
