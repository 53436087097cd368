/* SPDX-License-Identifier: BSD-3-Clause */
/* fm_mcast_calibrate: measure the model's LogGP costs (costs.h) on the live job and give every
 * rank rank 0's figures, so that every root choosing "auto" agrees with the model the
 * benchmarks print.
 *
 * Rank 0 measures against one or two partners in turn (rank 1, and a rank on another host
 * when there is one, else the last rank), each measurement repeated and its median taken, at
 * three packet sizes; the costs are the medians over the partners:
 *   fill, copy     a memcpy of B bytes here (the root's fill, a member's copy-out)
 *   send           posting a burst of one-packet messages (within the window: no waits) ->
 *                  send_pkt + B x send_byte (+ fill), a line through the sizes; send_msg from
 *                  the same bytes as one message of many packets
 *   receive        the partner sleeps while the burst arrives, then times taking it in (its
 *                  handler copies it out), and times taking the stream below in; the cheaper
 *                  -> recv_pkt + B x (recv_byte + copy)
 *   gap            a stream of many packets to the partner, and (two partners) to both at once
 *                  (at the largest size, each the faster of two):
 *                  when it is slower than sending and receiving allow, the link paces it
 *                  (a simulated transport, whose network makes every message a flow that
 *                  shares the link with those under way: the gap at which the model takes
 *                  as long as a train of full packets sent at once did; and so, with a
 *                  round trip, at every smaller packet size auto weighs)
 *   latency        half the round trip of small messages, less send and receive; how it
 *                  grows per byte: a full packet out and a small one back, less the small
 *                  one's half, the full one's send, link time and receive, less the latency
 *   wake           what a hop of a ring through every rank (each asleep, all of them sharing
 *                  the machine as in a multicast) takes beyond a hot one-way trip
 *   spin, poll     how long a wait polls (and yields) before it sleeps, and of that the CPU
 *                  time it keeps the core
 * Messages go through packets (never zero-copy), as multicast packets do. The partner follows
 * the same schedule, counting messages; nothing else is exchanged but its receive timings. The
 * receive timing counts only the partner's progress rounds that did work, so a slow link
 * (which the stream measures) does not pass for receive cost. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "barrier.h"
#include "calibrate.h"
#include "handlers.h"
#include "log.h"
#include "multi.h"
#include "progress.h"
#include "mcast_state.h"
#include "model.h"
#include "topo.h"
#include "tree_choice.h"

#define PINGS       21 /* small round trips (odd: a true median) */
#define REPEATS     5  /* of each burst and receive measurement */
#define RING_ROUNDS 11 /* rounds of the ring (wake) */
#define BURST       4  /* messages per burst: within a window, so no credit waits */
#define STREAM      24 /* messages per stream: several windows */
/* Fewer at the largest size, and to both partners: a slow link keeps calibration short. */
#define STREAM_LAST  (STREAM / 2)
#define STREAM_MULTI (STREAM / 3)
/* Of the largest size's stream and of the stream to both: a stall (a late acknowledgement, a
 * descheduled rank) only ever lengthens a stream, so the faster of two is the link's pace. */
#define STREAM_TRIES 2
#define SIZES        3
#define SLEEP_MS     3 /* a partner's pause: long enough for its wait to nap */
#define PARTNERS     2

/* How many times the stream of one size runs (both sides follow it). */
static int stream_tries(int last)
{
    return last ? STREAM_TRIES : 1;
}

static int on_count(fm_stream *s, int sender, void *arg)
{
    (void)sender;
    fm_context *ctx = arg;
    struct fm_mcast *mc = ctx->mcast;
    while (fm_stream_available(s) > 0) /* copied out, as a member's handler does */
        fm_receive(s, mc->calib_sink, ctx->packet_size);
    if (!fm_stream_complete(s))
        return FM_CONTINUE;
    mc->calib_count++;
    return FM_DONE;
}

/* A partner's timing, or rank 0's costs: doubles. */
static int on_values(fm_stream *s, int sender, void *arg)
{
    fm_context *ctx = arg;
    struct fm_mcast *mc = ctx->mcast;
    union {
        double v;
        struct fm_costs c;
    } got;
    size_t len = fm_stream_length(s);
    if (!fm_stream_complete(s))
        return FM_CONTINUE;
    if ((len != sizeof(double) && len != sizeof(struct fm_costs)) ||
        fm_receive(s, &got, len) != (ssize_t)len) {
        fm_log(0, "malformed calibration message from rank %d", sender);
        return FM_DONE;
    }
    if (len == sizeof(double)) {
        mc->calib_value = got.v;
        mc->calib_count++;
    } else {
        fm_mcast_set_costs(ctx, &got.c, "calibrated");
        mc->calib_have = 1;
    }
    return FM_DONE;
}

int fm_calibrate_init(fm_context *ctx)
{
    struct fm_mcast *mc = ctx->mcast;
    mc->calib_sink = malloc(ctx->packet_size);
    if (!mc->calib_sink)
        return FM_ERR_NOMEM;
    mc->calib_count_handler = fm_handlers_add_internal(ctx, on_count, ctx);
    mc->calib_result_handler = fm_handlers_add_internal(ctx, on_values, ctx);
    return mc->calib_count_handler < 0    ? mc->calib_count_handler
           : mc->calib_result_handler < 0 ? mc->calib_result_handler
                                          : FM_OK;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void nap_ms(int ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int count_reached(fm_context *ctx, void *arg)
{
    return ctx->mcast->calib_count >= *(uint64_t *)arg;
}

/* Wait until n more messages than *seen have come, then count them as seen. */
static int wait_more(fm_context *ctx, uint64_t *seen, uint64_t n)
{
    *seen += n;
    return fm_progress_until(ctx, count_reached, seen, "calibration messages");
}

/* One message of len bytes (through packets of at most ctx's packet size) to dests. */
static int send_msg(fm_context *ctx, const int *dests, int n, int handler, const void *buf,
                    size_t len)
{
    fm_stream *s;
    int rc = fm_multi_open(ctx, dests, n, len, ctx->packet_size, handler, NULL, 0, &s);
    if (rc == FM_OK && len)
        rc = fm_send_piece(s, buf, len);
    if (rc == FM_OK)
        rc = fm_end_message(s);
    return rc;
}

static int send_count(fm_context *ctx, int dest, const void *buf, size_t len)
{
    return send_msg(ctx, &dest, 1, ctx->mcast->calib_count_handler, buf, len);
}

static int send_value(fm_context *ctx, int dest, double v)
{
    return send_msg(ctx, &dest, 1, ctx->mcast->calib_result_handler, &v, sizeof v);
}

/* What rank 0 measured against one partner. */
struct pair {
    double rtt, rtt_big; /* small both ways; a full packet there, a small one back */
    double send[SIZES], recv[SIZES], stream[SIZES];
    double multi, one_msg; /* (the largest size) per copy to both partners; as one message */
    double train; /* BURST full packets at once until the partner has them all and answers */
    /* the same round trip and train at each of the plan's smaller sizes */
    double rtt_at[FM_MCAST_PACKET_CHOICES], train_at[FM_MCAST_PACKET_CHOICES];
};

struct plan {
    size_t sizes[SIZES];
    /* Where the transport is simulated (SMPI's costs change with the size in steps): the
     * smaller packet sizes auto weighs, the link measured at each too. */
    size_t smaller[FM_MCAST_PACKET_CHOICES];
    int nsmaller;
    int partners[PARTNERS], npartners;
    int far; /* the second partner is in another rack (FM_TOPOLOGY's file: "HOST RACK ...") */
    const unsigned char *buf;
};

/* Round trips: len bytes to p (buf; 0: an empty message), an empty message back. */
static int round_trips(fm_context *ctx, int p, int n, const void *buf, size_t len, uint64_t *seen,
                       double *rtt)
{
    double t[PINGS];
    int rc = FM_OK;
    for (int i = 0; i < n && rc == FM_OK; i++) {
        double t0 = now_s();
        rc = send_count(ctx, p, buf, len);
        if (rc == FM_OK)
            rc = wait_more(ctx, seen, 1);
        t[i] = now_s() - t0;
    }
    *rtt = rc == FM_OK ? median(t, n) : 0;
    return rc;
}

/* Nothing arrived: nap ns (0: yield). A simulated transport (mpi under SimGrid) waits for the
 * message itself instead: polling and yielding move no simulated time, so a loop of them
 * never ends, and a simulated nap would add the rest of itself to what is measured. */
static void rest(fm_context *ctx, long ns)
{
    if (ctx->tp->info.simulated && ctx->tp->ops->block) {
        ctx->tp->ops->block(ctx->tp, 0.002);
    } else if (ns) {
        struct timespec ts = {0, ns};
        nanosleep(&ts, NULL);
    } else {
        sched_yield();
    }
}

/* A rank with nothing to measure until its next message sleeps meanwhile: a waiting rank
 * polls and yields for milliseconds (progress.c), and on a few shared cores that would slow
 * the pair being measured. */
static int doze(fm_context *ctx, const uint64_t *seen)
{
    double deadline = now_s() + (double)ctx->cfg.timeout;
    int rc = FM_OK;
    while (rc >= 0 && ctx->mcast->calib_count <= *seen) {
        rc = fm_progress_once(ctx);
        if (rc >= 0 && ctx->mcast->calib_count <= *seen) {
            rest(ctx, 500000);
            if (now_s() > deadline)
                rc = FM_ERR_TIMEOUT;
        }
    }
    return rc < 0 ? rc : FM_OK;
}

static int answer_trips(fm_context *ctx, int n, uint64_t *seen)
{
    int rc = FM_OK;
    for (int i = 0; i < n && rc == FM_OK; i++) {
        rc = wait_more(ctx, seen, 1);
        if (rc == FM_OK)
            rc = send_count(ctx, 0, NULL, 0);
    }
    return rc;
}

/* Rank 0, size B against partner p: bursts (send cost), the partner's receive timings, a
 * stream; one message of BURST packets at the largest size. */
static int measure_size(fm_context *ctx, const struct plan *pl, int p, int si, uint64_t *seen,
                        struct pair *r)
{
    size_t B = pl->sizes[si];
    int last = si == SIZES - 1;
    double send[REPEATS], recv[REPEATS];
    int rc = FM_OK, stream = last ? STREAM_LAST : STREAM;
    for (int k = 0; k < REPEATS && rc == FM_OK; k++) {
        rc = wait_more(ctx, seen, 1); /* the partner is about to sleep */
        double t0 = now_s();
        for (int i = 0; i < BURST && rc == FM_OK; i++)
            rc = send_count(ctx, p, pl->buf, B);
        send[k] = (now_s() - t0) / BURST;
        if (rc == FM_OK)
            rc = wait_more(ctx, seen, 1); /* its receive time */
        recv[k] = ctx->mcast->calib_value / BURST;
    }
    if (rc == FM_OK && last) { /* the same bytes as one message of BURST packets */
        rc = wait_more(ctx, seen, 1);
        double t0 = now_s();
        fm_stream *s;
        if (rc == FM_OK)
            rc = fm_multi_open(ctx, &p, 1, B * BURST, ctx->packet_size,
                               ctx->mcast->calib_count_handler, NULL, 0, &s);
        for (int i = 0; i < BURST && rc == FM_OK; i++)
            rc = fm_send_piece(s, pl->buf, B);
        if (rc == FM_OK)
            rc = fm_end_message(s);
        r->one_msg = (now_s() - t0) / BURST;
        if (rc == FM_OK)
            rc = wait_more(ctx, seen, 1);
    }
    r->send[si] = median(send, REPEATS);
    /* Receiving a burst after a pause, or a stream while the sender works: the cheaper is
     * the warm receive cost (a paused partner's first packet may find cold caches). */
    r->recv[si] = median(recv, REPEATS);
    r->stream[si] = -1;
    for (int k = 0; k < stream_tries(last) && rc == FM_OK; k++) {
        double t0 = now_s();
        for (int i = 0; i < stream && rc == FM_OK; i++)
            rc = send_count(ctx, p, pl->buf, B);
        if (rc == FM_OK)
            rc = wait_more(ctx, seen, 1);
        double t = (now_s() - t0 - r->rtt) / stream;
        if (r->stream[si] < 0 || t < r->stream[si])
            r->stream[si] = t;
        if (rc == FM_OK && ctx->mcast->calib_value / stream < r->recv[si])
            r->recv[si] = ctx->mcast->calib_value / stream;
    }
    return rc;
}

/* Wait for n more messages, returning in *busy the time of the progress rounds that did
 * work: the receive costs, whatever the link's pace. */
static int drain(fm_context *ctx, uint64_t *seen, uint64_t n, double *busy)
{
    int rc = FM_OK;
    double deadline = now_s() + (double)ctx->cfg.timeout;
    *seen += n;
    *busy = 0;
    while (rc >= 0 && ctx->mcast->calib_count < *seen) {
        double t0 = now_s();
        rc = fm_progress_once(ctx);
        double t1 = now_s();
        if (rc > 0)
            *busy += t1 - t0;
        else if (rc == 0 && t1 > deadline)
            rc = FM_ERR_TIMEOUT;
        else if (rc == 0)
            rest(ctx, 0);
    }
    return rc < 0 ? rc : FM_OK;
}

/* The partner's side of measure_size. */
static int answer_size(fm_context *ctx, int last, uint64_t *seen)
{
    int rc = FM_OK, stream = last ? STREAM_LAST : STREAM;
    for (int k = 0; k < REPEATS && rc == FM_OK; k++) {
        rc = send_count(ctx, 0, NULL, 0);
        nap_ms(SLEEP_MS); /* the burst arrives meanwhile */
        double t = 0;
        if (rc == FM_OK)
            rc = drain(ctx, seen, BURST, &t);
        if (rc == FM_OK)
            rc = send_value(ctx, 0, t);
    }
    if (rc == FM_OK && last) {
        rc = send_count(ctx, 0, NULL, 0);
        if (rc == FM_OK)
            rc = wait_more(ctx, seen, 1);
        if (rc == FM_OK)
            rc = send_count(ctx, 0, NULL, 0);
    }
    for (int k = 0; k < stream_tries(last) && rc == FM_OK; k++) {
        double busy = 0;
        rc = drain(ctx, seen, stream, &busy);
        if (rc == FM_OK)
            rc = send_value(ctx, 0, busy); /* (also the stream's end) */
    }
    return rc;
}

/* Rank 0: a stream to both partners at once, per copy (the partners each ack); the faster of
 * STREAM_TRIES. */
static int measure_multi(fm_context *ctx, const struct plan *pl, size_t B, uint64_t *seen,
                         double *per_copy)
{
    int rc = FM_OK;
    *per_copy = -1;
    for (int k = 0; k < STREAM_TRIES && rc == FM_OK; k++) {
        double t0 = now_s();
        for (int i = 0; i < STREAM_MULTI && rc == FM_OK; i++)
            rc = send_msg(ctx, pl->partners, 2, ctx->mcast->calib_count_handler, pl->buf, B);
        if (rc == FM_OK)
            rc = wait_more(ctx, seen, 2);
        double t = (now_s() - t0) / (2.0 * STREAM_MULTI);
        if (*per_copy < 0 || t < *per_copy)
            *per_copy = t;
    }
    return rc;
}

/* y = a + b x through the smallest and the largest size: a is then the small packet's own
 * cost, which a least-squares line dominated by large packets would misstate. */
static void fit(const size_t *x, const double *y, int n, double *a, double *b)
{
    double dx = (double)x[n - 1] - (double)x[0];
    *b = dx > 0 ? (y[n - 1] - y[0]) / dx : 0;
    *a = y[0] - *b * (double)x[0];
}

/* Seconds per byte of a memcpy of B bytes here (median of several). */
static double memcpy_per_byte(size_t B)
{
    unsigned char *a = malloc(B), *b = malloc(B);
    double t[9];
    if (!a || !b) {
        free(a);
        free(b);
        return 0;
    }
    memset(a, 1, B);
    memset(b, 2, B);
    for (int i = 0; i < 9; i++) {
        double t0 = now_s();
        memcpy(i % 2 ? a : b, i % 2 ? b : a, B);
        t[i] = (now_s() - t0) / (double)B;
    }
    volatile unsigned char keep = a[B / 2] ^ b[B / 3]; /* the copies are used */
    (void)keep;
    free(a);
    free(b);
    return median(t, 9);
}

/* How long a wait polls before it naps: the rounds of progress (and yields) that fm_wait and
 * every blocking call make (progress.c's idle steps) before they sleep on the provider's wait
 * fd, or without one, before their first nap. *poll: the part that keeps the core (the rounds
 * before any yield). */
static double spin_time(fm_context *ctx, double *poll)
{
    /* (a provider with local peers, sm, yields before it sleeps on its fd, as without one) */
    int fd_first = ctx->tp->ops->wait_fd(ctx->tp) >= 0 && !ctx->tp->info.local_peers;
    int spins = fd_first ? FM_PROGRESS_FD_SPINS : ctx->idle_spins;
    int rounds = fd_first ? spins : spins + FM_PROGRESS_YIELDS;
    double t0 = now_s();
    for (int i = 0; i < rounds; i++) {
        fm_progress_once(ctx);
        if (i == spins - 1)
            *poll = now_s() - t0;
        if (i >= spins)
            sched_yield();
    }
    return now_s() - t0;
}

static double positive(double v)
{
    return v > 0 ? v : 0;
}

/* What a full packet's latency grows by per byte, given the link's gap: its one-way trip
 * (rtt_big less a small message's way back) beyond its send, link time, receive and the
 * latency. */
static double lat_per_byte(const struct fm_costs *c, double B, double rtt, double rtt_big,
                           double send, double recv, double gap)
{
    return positive(rtt_big - rtt / 2 - send - B * gap - recv - c->latency) / B;
}

/* The model's time for a train of BURST packets of B bytes to one partner, and its answer
 * back (half a small round trip), at gap g. */
static double train_model(const struct fm_costs *c, double B, double rtt, double rtt_big,
                          double send, double recv, double g)
{
    int first[3] = {0, 1, 1}, kids[1] = {1};
    struct fm_model_tree t = {2, 0, first, kids, NULL, NULL};
    struct fm_costs at = *c;
    memset(at.at_bytes, 0, sizeof at.at_bytes);
    at.gap_byte = g;
    at.lat_byte = lat_per_byte(c, B, rtt, rtt_big, send, recv, g);
    struct fm_model_out out = {0};
    if (fm_model_sim(&t, BURST, (size_t)B, (size_t)B * BURST, FM_MODEL_FPFS, &at, NULL, &out))
        return 0;
    return out.T + rtt / 2;
}

/* The link's gap (seconds per byte) at which the model takes a train as long as measured:
 * its copies share the link (c->link_fair), so when they arrive, and how much of the
 * partner's receiving overlaps the link, is the model's to say. Bisection: the train's
 * time grows with the gap. */
static double train_gap(const struct fm_costs *c, double B, const struct pair *r, double rtt_big,
                        double train, double send, double recv)
{
    double lo = 0, hi = train / B;
    if (!(hi > 0) || train_model(c, B, r->rtt, rtt_big, send, recv, hi) < train)
        return hi > 0 ? hi : 0;
    for (int i = 0; i < 60; i++) {
        double mid = (lo + hi) / 2;
        if (train_model(c, B, r->rtt, rtt_big, send, recv, mid) < train)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

/* The link at the plan's smaller sizes, as at the largest: its rate from the train where the
 * link paced it (else the nearest larger size's holds), the latency's growth from the round
 * trip; send and receive from the lines through the sizes measured. */
static void sized_costs(const struct plan *pl, const struct pair *r, struct fm_costs *c)
{
    double sa, sb, ra, rb;
    fit(pl->sizes, r->send, SIZES, &sa, &sb);
    fit(pl->sizes, r->recv, SIZES, &ra, &rb);
    memset(c->at_bytes, 0, sizeof c->at_bytes);
    fm_costs_set_at(c, (double)pl->sizes[SIZES - 1], c->gap_byte, c->lat_byte);
    for (int i = 0; i < pl->nsmaller; i++) {
        double B = (double)pl->smaller[i], send = sa + sb * B, recv = ra + rb * B;
        double gap = train_gap(c, B, r, r->rtt_at[i], r->train_at[i], send, recv);
        if (!(gap * B > 1.15 * (send > recv ? send : recv)))
            continue;
        fm_costs_set_at(c, B, gap, lat_per_byte(c, B, r->rtt, r->rtt_at[i], send, recv, gap));
    }
}

/* The costs from one partner's figures. local: shared memory, where no link paces a stream:
 * a stream slower than both ends there shows waits (for credits, for a core), not a gap. */
static void costs_of(const struct plan *pl, const struct pair *r, double byte_copy, int local,
                     int fair, struct fm_costs *c)
{
    double a, b;
    size_t Bmax = pl->sizes[SIZES - 1];
    *c = (struct fm_costs){0};
    fit(pl->sizes, r->send, SIZES, &a, &b);
    c->fill_byte = byte_copy;
    c->copy_byte = byte_copy;
    c->send_msg = positive(r->send[SIZES - 1] - r->one_msg);
    c->send_pkt = positive(a - c->send_msg);
    c->send_byte = positive(b - byte_copy);
    fit(pl->sizes, r->recv, SIZES, &a, &b);
    c->recv_pkt = positive(a);
    c->recv_byte = positive(b - byte_copy);
    /* The link paces a stream that is slower than both ends allow (15 % margin for noise). */
    double ends = r->send[SIZES - 1] > r->recv[SIZES - 1] ? r->send[SIZES - 1] : r->recv[SIZES - 1];
    double gap = r->stream[SIZES - 1] > 1.15 * ends ? r->stream[SIZES - 1] : 0;
    double send_only = r->send[SIZES - 1];
    if (r->multi > 1.15 * send_only && r->multi > gap)
        gap = r->multi;
    c->gap_byte = local ? 0 : gap / (double)Bmax;
    c->burst = 0;
    c->latency = positive(r->rtt / 2 - r->send[0] - r->recv[0]);
    /* What the latency grows by with the bytes, if anything. */
    c->lat_byte = Bmax > pl->sizes[0]
                      ? lat_per_byte(c, (double)Bmax, r->rtt, r->rtt_big, r->send[SIZES - 1],
                                     r->recv[SIZES - 1], c->gap_byte)
                      : 0;
    /* A network that makes every message a flow of its own, sharing the link with the others
     * under way (SimGrid's, under which the transport runs simulated): the rate at which the
     * model takes as long as a train of full packets sent at once did (one stream's pace,
     * with each packet's latency spent alone, understates it). */
    c->link_fair = fair && !local;
    if (c->link_fair > 0) {
        double g = train_gap(c, (double)Bmax, r, r->rtt_big, r->train, r->send[SIZES - 1],
                             r->recv[SIZES - 1]);
        if (g * (double)Bmax > 1.15 * ends) { /* (the link paces it, as for the stream above) */
            c->gap_byte = g;
            c->lat_byte = lat_per_byte(c, (double)Bmax, r->rtt, r->rtt_big, r->send[SIZES - 1],
                                       r->recv[SIZES - 1], g);
        }
    }
    if (pl->nsmaller > 0)
        sized_costs(pl, r, c);
}

/* Rank 0: rounds of a ring through every rank, one after another, so that each hop wakes a
 * rank that slept since its last turn (as a chain's members do, each idle until its packet
 * comes); *hop: the median round over the ranks. Round 0, after a pause, ends every rank's
 * doze and is not counted. */
static int ring(fm_context *ctx, uint64_t *seen, double *hop)
{
    double t[RING_ROUNDS + 1];
    int rc = FM_OK;
    for (int k = 0; k <= RING_ROUNDS && rc == FM_OK; k++) {
        if (k == 0)
            nap_ms(SLEEP_MS);
        double t0 = now_s();
        rc = send_count(ctx, 1, NULL, 0);
        if (rc == FM_OK)
            rc = wait_more(ctx, seen, 1);
        t[k] = now_s() - t0;
    }
    *hop = rc == FM_OK ? median(t + 1, RING_ROUNDS) / ctx->size : 0;
    return rc;
}

/* Every rank but 0: pass the ring's message on. */
static int pass_ring(fm_context *ctx, uint64_t *seen)
{
    int rc = doze(ctx, seen);
    for (int k = 0; k <= RING_ROUNDS && rc == FM_OK; k++) {
        rc = wait_more(ctx, seen, 1);
        if (rc == FM_OK)
            rc = send_count(ctx, (ctx->rank + 1) % ctx->size, NULL, 0);
    }
    return rc;
}

/* Medians over the partners, field by field. */
static void median_costs(struct fm_costs *each, int n, struct fm_costs *out)
{
    for (int i = 0; i < FM_COSTS_NFIELDS; i++) {
        double v[PARTNERS];
        for (int p = 0; p < n; p++)
            v[p] = *fm_costs_field(&each[p], i);
        *fm_costs_field(out, i) = median(v, n);
    }
    /* per size: over the partners that have the size (the first partner's sizes) */
    memset(out->at_bytes, 0, sizeof out->at_bytes);
    for (int i = 0; i < FM_COSTS_SIZES && each[0].at_bytes[i] > 0; i++) {
        double g[PARTNERS], l[PARTNERS];
        int k = 0;
        for (int p = 0; p < n; p++)
            for (int j = 0; j < FM_COSTS_SIZES; j++)
                if (each[p].at_bytes[j] == each[0].at_bytes[i]) {
                    g[k] = each[p].at_gap[j];
                    l[k++] = each[p].at_lat[j];
                }
        fm_costs_set_at(out, each[0].at_bytes[i], median(g, k), median(l, k));
    }
}

/* Rank 0: trains of BURST full packets sent at once, each answered once the partner has
 * them all (costs_of says what for). */
static int measure_train(fm_context *ctx, const struct plan *pl, int p, size_t B, uint64_t *seen,
                         double *train)
{
    double t[REPEATS];
    int rc = FM_OK;
    for (int k = 0; k < REPEATS && rc == FM_OK; k++) {
        rc = wait_more(ctx, seen, 1); /* the partner is ready */
        double t0 = now_s();
        for (int i = 0; i < BURST && rc == FM_OK; i++)
            rc = send_count(ctx, p, pl->buf, B);
        if (rc == FM_OK)
            rc = wait_more(ctx, seen, 1); /* it has them all */
        t[k] = now_s() - t0;
    }
    *train = median(t, REPEATS);
    return rc;
}

/* The partner's side of measure_train. */
static int answer_train(fm_context *ctx, uint64_t *seen)
{
    int rc = FM_OK;
    for (int k = 0; k < REPEATS && rc == FM_OK; k++) {
        rc = send_count(ctx, 0, NULL, 0);
        if (rc == FM_OK)
            rc = wait_more(ctx, seen, BURST);
        if (rc == FM_OK)
            rc = send_count(ctx, 0, NULL, 0);
    }
    return rc;
}

/* Rank 0's whole schedule against partner pl->partners[w]. */
static int measure_pair(fm_context *ctx, const struct plan *pl, int w, uint64_t *seen,
                        struct pair *r)
{
    int p = pl->partners[w];
    int rc = round_trips(ctx, p, PINGS, NULL, 0, seen, &r->rtt);
    for (int si = 0; si < SIZES && rc == FM_OK; si++)
        rc = measure_size(ctx, pl, p, si, seen, r);
    if (rc == FM_OK)
        rc = round_trips(ctx, p, PINGS, pl->buf, pl->sizes[SIZES - 1], seen, &r->rtt_big);
    if (rc == FM_OK && ctx->tp->info.simulated) /* (costs_of uses it there only) */
        rc = measure_train(ctx, pl, p, pl->sizes[SIZES - 1], seen, &r->train);
    for (int i = 0; i < pl->nsmaller && rc == FM_OK; i++) {
        rc = round_trips(ctx, p, PINGS, pl->buf, pl->smaller[i], seen, &r->rtt_at[i]);
        if (rc == FM_OK)
            rc = measure_train(ctx, pl, p, pl->smaller[i], seen, &r->train_at[i]);
    }
    return rc;
}

static int answer_pair(fm_context *ctx, const struct plan *pl, uint64_t *seen)
{
    int rc = answer_trips(ctx, PINGS, seen);
    for (int si = 0; si < SIZES && rc == FM_OK; si++)
        rc = answer_size(ctx, si == SIZES - 1, seen);
    if (rc == FM_OK)
        rc = answer_trips(ctx, PINGS, seen);
    if (rc == FM_OK && ctx->tp->info.simulated)
        rc = answer_train(ctx, seen);
    for (int i = 0; i < pl->nsmaller && rc == FM_OK; i++) {
        rc = answer_trips(ctx, PINGS, seen);
        if (rc == FM_OK)
            rc = answer_train(ctx, seen);
    }
    return rc;
}

/* Rank r's rack (FM_TOPOLOGY's file, "HOST RACK POSITION"); -1 without racks. */
static int rack_of(fm_context *ctx, int r)
{
    int at[3];
    if (!ctx->topo || fm_topo_kind(ctx->topo) != FM_TOPO_FILE || fm_topo_ndims(ctx->topo) < 2 ||
        fm_topo_coord(ctx->topo, r, at) != FM_OK)
        return -1;
    return at[0];
}

/* Where FM_TOPOLOGY names racks: the first rank in rank 0's rack and the first in another
 * (pl->far). Else rank 1, and a rank on another host than rank 0, else the last rank. */
static void partners_of(fm_context *ctx, struct plan *pl)
{
    int near = -1, far = -1, r0 = rack_of(ctx, 0);
    for (int r = 1; r < ctx->size && r0 >= 0; r++) {
        int rr = rack_of(ctx, r);
        near = near < 0 && rr == r0 ? r : near;
        far = far < 0 && rr >= 0 && rr != r0 ? r : far;
    }
    pl->far = near > 0 && far > 0;
    pl->npartners = 1;
    pl->partners[0] = pl->far ? near : 1;
    int other = pl->far ? far : -1;
    for (int r = 2; r < ctx->size && other < 0 && ctx->topo; r++)
        if (!fm_topo_same_host(ctx->topo, 0, r))
            other = r;
    if (other < 0 && ctx->size > 2)
        other = ctx->size - 1;
    if (other > 0)
        pl->partners[pl->npartners++] = other;
}
static void plan_of(fm_context *ctx, struct plan *pl)
{
    size_t P = ctx->packet_size;
    pl->sizes[0] = 64 < P ? 64 : P;
    pl->sizes[1] = P / 8 > pl->sizes[0] ? P / 8 : P;
    pl->sizes[2] = P;
    pl->nsmaller = 0;
    for (int i = 1; ctx->tp->info.simulated && i <= FM_MCAST_PACKET_CHOICES; i++)
        if ((P >> i) >= FM_MCAST_MIN_PACKET)
            pl->smaller[pl->nsmaller++] = P >> i;
    partners_of(ctx, pl);
}

static int measure(fm_context *ctx, const struct plan *pl, uint64_t *seen, struct fm_costs *out)
{
    struct pair r[PARTNERS] = {0};
    struct fm_costs each[PARTNERS];
    double t0 = now_s();
    double poll = 0, byte_copy = memcpy_per_byte(pl->sizes[SIZES - 1]);
    double spin = spin_time(ctx, &poll);
    int rc = FM_OK;
    for (int w = 0; w < pl->npartners && rc == FM_OK; w++)
        rc = measure_pair(ctx, pl, w, seen, &r[w]);
    if (pl->npartners == 2 && rc == FM_OK) {
        rc = measure_multi(ctx, pl, pl->sizes[SIZES - 1], seen, &r[0].multi);
        r[1].multi = r[0].multi;
    }
    for (int w = 0; w < pl->npartners && rc == FM_OK; w++)
        fm_log(2, "calibration: %zu-byte stream to rank %d: %.3f ms a message",
               pl->sizes[SIZES - 1], pl->partners[w], r[w].stream[SIZES - 1] * 1e3);
    if (pl->npartners == 2 && rc == FM_OK)
        fm_log(2, "calibration: %zu-byte stream to both: %.3f ms a copy", pl->sizes[SIZES - 1],
               r[0].multi * 1e3);
    double hop = 0, hot[PARTNERS];
    if (rc == FM_OK)
        rc = ring(ctx, seen, &hop);
    for (int w = 0; w < pl->npartners; w++) {
        costs_of(pl, &r[w], byte_copy, ctx->tp->info.local_only, ctx->tp->info.simulated, &each[w]);
        hot[w] = r[w].rtt / 2;
    }
    if (pl->far && pl->npartners == 2) {
        /* racks: rank 1's costs (within rank 0's rack), and how much longer the other
         * partner's small messages take to arrive */
        *out = each[0];
        out->far_latency = each[0].latency > 0 ? each[1].latency / each[0].latency : 0;
    } else {
        median_costs(each, pl->npartners, out);
    }
    if (out->far_latency > 0)
        fm_log(1, "calibrated latency to rank %d's rack %.2fx that within rank 0's",
               pl->partners[1], out->far_latency);
    for (int i = 0; i < FM_COSTS_SIZES && out->at_bytes[i] > 0; i++)
        fm_log(1, "calibrated at %.0f-byte packets: gap %.3f ns/KiB, latency + %.3f ns/KiB",
               out->at_bytes[i], out->at_gap[i] * 1e9 * 1024, out->at_lat[i] * 1e9 * 1024);
    out->spin = spin;
    out->poll = poll;
    /* A ring hop wakes one sleeping rank while the job shares the machine as a multicast
     * does; the wake-up is what it takes beyond a hot one-way trip (whose waits poll). */
    out->wake = positive(hop - median(hot, pl->npartners));
    fm_log(1,
           "calibrated in %.0f ms against %d partner(s): send %.3f us + %.3f ns/KiB (message "
           "%.3f us), receive %.3f us + %.3f ns/KiB, copy %.3f ns/KiB, gap %.3f ns/KiB%s, "
           "latency %.3f us + %.3f ns/KiB, wake %.3f us after %.3f us of polling (%.3f us "
           "busy)",
           (now_s() - t0) * 1e3, pl->npartners, out->send_pkt * 1e6, out->send_byte * 1e9 * 1024,
           out->send_msg * 1e6, out->recv_pkt * 1e6, out->recv_byte * 1e9 * 1024,
           out->copy_byte * 1e9 * 1024, out->gap_byte * 1e9 * 1024,
           out->link_fair > 0 ? " (copies share the link)" : "", out->latency * 1e6,
           out->lat_byte * 1e9 * 1024, out->wake * 1e6, out->spin * 1e6, out->poll * 1e6);
    return rc;
}

static int have_result(fm_context *ctx, void *arg)
{
    (void)arg;
    return ctx->mcast->calib_have;
}

/* A partner: answer rank 0's schedule, then (both partners) the stream to both. */
static int answer(fm_context *ctx, const struct plan *pl, uint64_t *seen)
{
    int rc = doze(ctx, seen); /* until rank 0 turns to this partner */
    if (rc == FM_OK)
        rc = answer_pair(ctx, pl, seen);
    if (rc == FM_OK && pl->npartners == 2)
        rc = doze(ctx, seen); /* while rank 0 measures the other partner */
    for (int k = 0; k < STREAM_TRIES && rc == FM_OK && pl->npartners == 2; k++) {
        rc = wait_more(ctx, seen, STREAM_MULTI);
        if (rc == FM_OK)
            rc = send_count(ctx, 0, NULL, 0);
    }
    return rc;
}

/* Rank 0: the costs from FM_MCAST_COSTS_FILE when it exists, else measured (and saved there).
 * *measured says which. */
static int rank0_costs(fm_context *ctx, const struct plan *pl, uint64_t *seen, struct fm_costs *c,
                       int *measured)
{
    const char *source, *file = ctx->cfg.mcast_costs_file;
    *c = *fm_mcast_costs(ctx, &source);
    *measured = strcmp(source, "FM_MCAST_COSTS_FILE") != 0;
    int go = *measured, rc = FM_OK;
    for (int r = 1; r < ctx->size && rc == FM_OK; r++) /* tell every rank */
        rc = send_value(ctx, r, go);
    if (rc != FM_OK || !go)
        return rc;
    rc = measure(ctx, pl, seen, c);
    char err[160], note[200];
    snprintf(note, sizeof note,
             "measured by fm_mcast_calibrate: %d ranks, provider %s, %zu-byte "
             "packets",
             ctx->size, ctx->cfg.provider, ctx->packet_size);
    if (rc == FM_OK && file[0] && fm_costs_save(file, c, note, err, sizeof err))
        fm_log(0, "FM_MCAST_COSTS_FILE %s: not written: %s", file, err);
    return rc;
}

int fm_mcast_calibrate(fm_context *ctx)
{
    if (!fm_ctx_live(ctx))
        return FM_ERR_NOT_INIT;
    if (ctx->in_handler)
        return FM_ERR_IN_HANDLER;
    if (ctx->size < 2 || !fm_mcast_costs(ctx, NULL))
        return ctx->size < 2 ? FM_OK : FM_ERR_NOMEM; /* nothing to measure: estimates stay */
    struct plan pl;
    unsigned char *buf = calloc(1, ctx->packet_size);
    if (!buf)
        return FM_ERR_NOMEM;
    pl.buf = buf;
    plan_of(ctx, &pl);
    /* Counted and cleared before the barrier: rank 0 may send as soon as it leaves it, while
     * the others are still inside, so a message (or, when rank 0 loads the cost file, the
     * result) can arrive before they start waiting. */
    uint64_t seen = ctx->mcast->calib_count;
    ctx->mcast->calib_have = 0;
    int rc = fm_barrier_internal(ctx);
    int partner = 0;
    for (int w = 0; w < pl.npartners; w++)
        partner |= ctx->rank == pl.partners[w];
    if (rc == FM_OK && ctx->rank != 0) {
        rc = wait_more(ctx, &seen, 1); /* go (1) or not (0: rank 0 loaded the cost file) */
        int go = ctx->mcast->calib_value > 0.5;
        if (rc == FM_OK && go && partner)
            rc = answer(ctx, &pl, &seen);
        if (rc == FM_OK && go)
            rc = pass_ring(ctx, &seen);
    }
    if (rc == FM_OK && ctx->rank == 0) {
        struct fm_costs c;
        int measured;
        rc = rank0_costs(ctx, &pl, &seen, &c, &measured);
        for (int r = 1; r < ctx->size && rc == FM_OK; r++)
            rc = send_msg(ctx, &r, 1, ctx->mcast->calib_result_handler, &c, sizeof c);
        if (rc == FM_OK)
            fm_mcast_set_costs(ctx, &c, measured ? "calibrated" : "FM_MCAST_COSTS_FILE");
    } else if (rc == FM_OK) {
        rc = fm_progress_until(ctx, have_result, NULL, "the calibration result");
    }
    free(buf);
    return rc;
}
