/* SPDX-License-Identifier: BSD-3-Clause */
/* fastmsg-bench-mcast: multicast completion time from one root to every rank of the job, per tree,
 * mode (FPFS, store-and-forward or FCFS) and message size, next to the model's prediction
 * (none for a mode the model does not know: "-").
 *
 *   fastmsg-run -n N fastmsg-bench-mcast [options]      (-h lists them)
 *
 * Method, per multicast: every rank leaves an fm_barrier (the common start) and reads its own
 * clock. The root lets --settle microseconds pass (driving progress), so that the other ranks
 * have left the barrier too, then multicasts one message to a group of all ranks. Every other
 * member notes when its copy is complete (the fm_stream_deliver callback), measured from its
 * own return from the barrier plus the settle time: clocks of different processes cannot be
 * compared, so each member uses its own. The barrier's exit skew is therefore in the figures
 * (either way; a member that leaves the barrier more than --settle after the root can even
 * show a negative time). Once the quiet time has passed (--quiet: rank 0 sends it to every rank
 * before the barrier), each rank sends its time to rank 0 (the root sends its CPU time
 * for the send, CLOCK_PROCESS_CPUTIME_ID around begin..end), and the slowest member's time is
 * that multicast's completion time. A run is ITERS such multicasts; each row gives medians
 * over the iterations, then over the runs. Waiting is by fm_wait, so many ranks can share few
 * cores (its back-off is included in the times). Every rank also reports its
 * fm_stats.fwd_held_peak, restarted at each row (fm_reset_peaks): held is the most packet
 * buffers any member held at once for forwarding in the row, mheld the model's most for one
 * multicast (fm_mcast_predict).
 * With --common-clock (every rank on one kernel: one machine, or emulated hosts that are
 * network namespaces) CLOCK_MONOTONIC is the same clock everywhere, so each member is timed
 * from the root's start instead: the barrier's exit skew leaves the figures.
 * Rank 0 prints; every rank reports its own errors on stderr and exits non-zero. */
#include <fastmsg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fm_common.h"
#include "mc.h"

#define PROG "fastmsg-bench-mcast"

typedef struct report { /* member -> rank 0, once per multicast */
    int32_t iter;
    int32_t pad;
    mc_times t;
    double held; /* fm_stats.fwd_held_peak since the row began */
} report;

typedef struct mc {
    fm_context *ctx;
    fm_group *group;
    const mc_opts *o;
    int me, n, root, h_data, h_report, h_quiet;
    unsigned char *sbuf, *rbuf;
    size_t cap, expect;
    const char *tree; /* the row's tree and flags, for one_mcast */
    unsigned flags;
    int iter, got;   /* the current multicast; its copy is complete here */
    double t_start;  /* this rank's return from the barrier */
    double t_done;   /* the delivery callback's time */
    mc_times *times; /* rank 0: every rank's, for the current multicast */
    int nreports;
    double held;     /* rank 0: the row's most fwd_held_peak of any rank */
    int nquiet;      /* quiet times received from rank 0 */
    double quiet_us; /* this multicast's: nothing is sent until t_start + quiet_us */
    double *scratch; /* mc_run_row's */
    double *each;    /* rank 0, --each: each rank's time in each multicast of the row */
    long neach, each_cap;
    int *others; /* ranks 1..n-1 */
    long bad;    /* wrong copies or reports */
    int check;   /* this multicast's copies are checked byte by byte */
} mc;

static void delivered(void *buf, size_t len, int status, int sender, void *arg)
{
    mc *m = arg;
    const unsigned char *p = buf;
    m->t_done = bench_now_us(CLOCK_MONOTONIC);
    if (status != FM_OK || len != m->expect || sender != m->root ||
        (!m->o->shared && (p[0] != mc_pattern(0) || p[len - 1] != mc_pattern(len - 1))))
        m->bad++;
    /* The row's checked multicast (its warm-up): every byte, after the time was taken, against
     * sbuf (every rank holds the pattern there). */
    else if (m->check && memcmp(p, m->sbuf, len) != 0)
        m->bad++;
    m->got = 1;
}

static int on_data(fm_stream *s, int sender, void *arg)
{
    (void)sender;
    mc *m = arg;
    fm_stream_deliver(s, m->rbuf, m->cap, delivered, m);
    return FM_CONTINUE;
}

static int on_report(fm_stream *s, int sender, void *arg)
{
    mc *m = arg;
    report r;
    if (fm_receive(s, &r, sizeof r) != (ssize_t)sizeof r || r.iter != m->iter) {
        m->bad++;
    } else {
        m->times[sender] = r.t;
        m->held = r.held > m->held ? r.held : m->held;
    }
    m->nreports++;
    return FM_DONE;
}

static int on_quiet(fm_stream *s, int sender, void *arg)
{
    mc *m = arg;
    if (sender != 0 || fm_receive(s, &m->quiet_us, sizeof m->quiet_us) != sizeof m->quiet_us)
        m->bad++;
    m->nquiet++;
    return FM_DONE;
}

/* fm_wait until *flag reaches want, or fail after the --timeout without progress. */
static int await(mc *m, const int *flag, int want)
{
    return bench_fm_await(m->ctx, flag, want, m->o->timeout_s);
}

/* Rank 0 gives every rank this multicast's quiet time; the others wait for it (it may have
 * come already, while they sent their last report). */
static int share_quiet(mc *m, double quiet_us)
{
    if (!(m->o->quiet > 0)) /* (every rank has the same command line) */
        return FM_OK;
    if (m->me != 0)
        return await(m, &m->nquiet, m->iter);
    m->quiet_us = quiet_us;
    fm_stream *s;
    int rc = fm_begin_message_multi(m->ctx, m->others, m->n - 1, sizeof quiet_us, m->h_quiet, &s);
    return bench_fm_write(rc, s, &quiet_us, sizeof quiet_us);
}

/* Drive progress without sending until t_start + the quiet time. Under SimGrid a wait ends
 * only when a request completes (the mpi provider's block has no timeout: simulated time
 * passes only while every rank is blocked), so a wait for the clock would end in the
 * simulator's deadlock: there a quiet member polls (free in simulated time) and sleeps between
 * polls, a quarter of a microsecond after work, twice as long after each empty poll, at most
 * MC_SIM_QUIET_SLICE_US, so that what is left of its forwarding (a credit that lets a queued
 * copy go) waits at most that long. */
#define MC_SIM_QUIET_SLICE_US 2.0
static int stay_quiet(mc *m)
{
    double until = m->t_start + m->quiet_us;
#if defined(FM_BENCH_SIMGRID)
    double slice = 0.25;
#endif
    for (double t = bench_now_us(CLOCK_MONOTONIC); t < until; t = bench_now_us(CLOCK_MONOTONIC)) {
#if defined(FM_BENCH_SIMGRID)
        long rc = fm_extract(m->ctx, 0);
        if (rc == 0) {
            bench_sleep_until_us(t + slice < until ? t + slice : until);
            slice = slice * 2 < MC_SIM_QUIET_SLICE_US ? slice * 2 : MC_SIM_QUIET_SLICE_US;
        } else {
            slice = 0.25;
        }
#else
        long rc = fm_wait(m->ctx, (int)((until - t) / 1000) + 1);
#endif
        if (rc < 0)
            return (int)rc;
    }
    return FM_OK;
}

static int send_report(mc *m, const report *r)
{
    fm_stream *s;
    int rc = fm_begin_message(m->ctx, 0, sizeof *r, m->h_report, &s);
    return bench_fm_write(rc, s, r, sizeof *r);
}

/* One multicast of size bytes down the row's tree (mc_one_fn); rank 0 gets *out. The check
 * is every copy's, in delivered. */
static int one_mcast(void *arg, size_t size, int check, double quiet_us, mc_sample *out)
{
    mc *m = arg;
    m->check = check && !m->o->shared;
    report mine = {.iter = ++m->iter, .t.us = -1};
    m->got = 0;
    m->nreports = 0;
    m->expect = size;
    /* A checked copy lands on bytes that differ from the pattern everywhere, so a byte that
     * fastmsg failed to write cannot pass for a copy of an earlier row. */
    if (m->check && m->me != m->root)
        mc_fill(m->rbuf, size, 0xff);
    int rc = share_quiet(m, quiet_us);
    if (rc == FM_OK)
        rc = fm_barrier(m->ctx);
    if (rc != FM_OK)
        return rc;
    m->t_start = bench_now_us(CLOCK_MONOTONIC) + m->o->settle_us;
    if (m->me == m->root) {
        if (m->o->settle_sleep)
            bench_sleep_until_us(m->t_start);
        while (rc >= 0 && bench_now_us(CLOCK_MONOTONIC) < m->t_start)
            rc = (int)fm_extract(m->ctx, 0);
        if (rc < 0)
            return rc;
        double c0 = bench_now_us(CLOCK_PROCESS_CPUTIME_ID);
        mine.t.at = bench_now_us(CLOCK_MONOTONIC);
        fm_stream *s;
        rc = fm_mcast_begin(m->group, m->tree, m->flags, size, m->h_data, &s);
        if (rc == FM_OK)
            rc = fm_send_piece(s, m->sbuf, size);
        if (rc == FM_OK)
            rc = fm_end_message(s);
        mine.t.cpu_us = bench_now_us(CLOCK_PROCESS_CPUTIME_ID) - c0;
    } else {
        rc = await(m, &m->got, 1);
        mine.t.us = m->t_done - m->t_start;
        mine.t.at = m->t_done;
    }
    if (rc == FM_OK)
        rc = stay_quiet(m);
    fm_stats st;
    if (rc == FM_OK)
        rc = fm_get_stats(m->ctx, &st);
    if (rc != FM_OK)
        return rc;
    mine.held = (double)st.fwd_held_peak;
    if (mine.held > m->held)
        m->held = mine.held;
    if (m->me != 0)
        return send_report(m, &mine);
    m->times[0] = mine.t;
    if ((rc = await(m, &m->nreports, m->n - 1)) != FM_OK)
        return rc;
    *out = mc_summarize(m->o, m->n, m->root, m->times);
    for (int r = 0; m->each && m->neach < m->each_cap && r < m->n; r++)
        m->each[r * m->each_cap + m->neach] =
            m->o->common_clock ? m->times[r].at - m->times[m->root].at : m->times[r].us;
    m->neach += m->each != NULL;
    return FM_OK;
}

/* --each: room for a row's multicasts (its warm-up one included) per rank; FM_OK or
 * FM_ERR_NOMEM. */
static int each_reset(mc *m, size_t size)
{
    long cap = mc_iters(m->o, size) * m->o->repeats + 1;
    m->neach = 0;
    if (!m->o->each || m->me != 0 || cap <= m->each_cap)
        return FM_OK;
    double *p = realloc(m->each, (size_t)cap * (size_t)m->n * sizeof *p);
    if (!p)
        return FM_ERR_NOMEM;
    m->each = p;
    m->each_cap = cap;
    return FM_OK;
}

/* --each: every member's median over the row's timed multicasts (the first, its warm-up,
 * left out), a comment line so that --csv stays a table. */
static void each_print(mc *m, const char *mode, size_t size)
{
    printf("# each %s %s %zu:", m->tree, mode, size);
    for (int r = 0; r < m->n; r++)
        if (r != m->root && m->neach > 1)
            printf(" %d=%.1f", r, bench_median(m->each + r * m->each_cap + 1, m->neach - 1));
    putchar('\n');
    fflush(stdout);
}

static void print_header(const mc *m)
{
    const mc_opts *o = m->o;
    const char *costs = bench_env("FM_MCAST_COSTS", NULL) ? "FM_MCAST_COSTS"
                        : o->calibrate                    ? "calibrated"
                                                          : "estimated (not calibrated)";
    if (!o->csv) {
        bench_label st = bench_fm_label();
        printf("# " PROG " (fastmsg %s): %d ranks, root %d, provider %s, FM_PACKET_SIZE %s, "
               "FM_CREDITS %s\n",
               fm_version(), m->n, m->root, st.provider, st.packet_size, st.credits);
    }
    char method[128];
    snprintf(method, sizeof method, "model costs: %s", costs);
    mc_print_head(o, method, "multicast");
}

/* --project N: the model's completion for N members (beyond the job: each a host of its
 * own, no core shared), every tree and size, from the costs this job uses; the tree "auto"
 * resolves among all. Comment lines, so that the CSV stays a table. */
static void project(const mc *m)
{
    const mc_opts *o = m->o;
    printf("# model's projection to %d members (no core or link shared), every tree in FPFS:\n",
           o->project);
    for (int t = 0; t < o->ntrees; t++)
        for (int i = 0; i < o->nsizes; i++) {
            fm_mcast_prediction p;
            int rc = fm_mcast_predict(m->ctx, o->project, 0, o->trees[t], 0, o->sizes[i], &p);
            if (rc == FM_OK)
                printf("# projection %d members %-10s %-14s %9zu B %12.2f us\n", o->project,
                       o->trees[t], p.resolved, o->sizes[i], p.seconds * 1e6);
            else
                printf("# projection %d members %-10s %9zu B: %s\n", o->project, o->trees[t],
                       o->sizes[i], fm_strerror(rc));
        }
}

static int sweep(mc *m)
{
    const mc_opts *o = m->o;
    int rc = FM_OK;
    static const unsigned flags[] = {
        [MC_FPFS] = 0, [MC_SF] = FM_MCAST_STORE_FORWARD, [MC_FCFS] = FM_MCAST_FCFS};
    m->tree = o->trees[0]; /* (the warm-up's: the first row's tree, packet by packet) */
    m->flags = 0;
    rc = fm_barrier(m->ctx);
    if (rc == FM_OK)
        rc = mc_warmup(o, one_mcast, m);
    for (int t = 0; t < o->ntrees && rc == FM_OK; t++)
        for (int k = 0; k < o->nmodes && rc == FM_OK; k++)
            for (int i = 0; i < o->nsizes && rc == FM_OK; i++) {
                const char *mode = mc_mode_name(o->modes[k]);
                m->tree = o->trees[t];
                m->flags = flags[o->modes[k]];
                size_t size = o->sizes[i];
                double row[MC_COLS];
                fm_mcast_prediction p = {0};
                /* A member leaves a row once its own copy is in, its children's maybe not yet
                 * sent; auto's first choice for a size can take seconds here, with no progress
                 * driven meanwhile (fastmsg.h), so every copy is through before any rank
                 * predicts (they timed out at FM_TIMEOUT without this). Rank 0 prints the
                 * prediction; the others need it only to skip a mode a tree lacks as rank 0
                 * does (every FPFS row runs), which spares a simulation of 1024 ranks 1023
                 * runs of the model (auto's: minutes of real time each row). */
                rc = fm_barrier(m->ctx);
                if (rc == FM_OK && (m->me == 0 || m->flags))
                    rc = fm_mcast_predict(m->ctx, m->n, m->root, m->tree, m->flags, size, &p);
                if (rc == FM_ERR_INVALID && m->flags) { /* (the same on every rank) */
                    if (m->me == 0 && i == 0 && !o->csv)
                        printf("# %s has no %s mode\n", m->tree, mode);
                    rc = FM_OK;
                    continue;
                }
                m->held = 0;
                if (rc == FM_OK)
                    rc = fm_reset_peaks(m->ctx);
                if (rc == FM_OK)
                    rc = each_reset(m, size);
                if (rc == FM_OK)
                    rc = mc_run_row(o, m->me, size, one_mcast, m, m->scratch, row);
                if (rc == FM_OK && m->me == 0) {
                    mc_label lb = {bench_fm_label(), m->n,       o->calibrate ? "1" : "0",
                                   m->tree,          p.resolved, mode};
                    mc_extra x = {p.seconds * 1e6, m->held / (double)p.buffer_bytes,
                                  p.held_packets,  p.tree_seconds * 1e6,
                                  p.link_visits,   p.links_used};
                    mc_print_row(o, &lb, size, row, &x);
                    if (m->each)
                        each_print(m, mode, size);
                }
                if (rc != FM_OK)
                    fprintf(stderr, PROG ": rank %d: %s %s, %zu B: %s\n", m->me, m->tree, mode,
                            size, fm_strerror(rc));
            }
    return rc;
}

static int setup(mc *m, fm_context *ctx, const mc_opts *o)
{
    *m = (mc){.ctx = ctx, .o = o, .me = fm_rank(ctx), .n = fm_size(ctx), .root = o->root};
    m->cap = o->sizes[o->nsizes - 1];
    m->sbuf = MC_PAYLOAD(o, m->cap);
    m->rbuf = MC_PAYLOAD(o, m->cap);
    m->times = calloc((size_t)m->n, sizeof *m->times);
    m->scratch = malloc(sizeof *m->scratch * MC_COLS * (size_t)o->iters);
    int *all = malloc(sizeof *all * (size_t)m->n);
    m->others = malloc(sizeof *m->others * (size_t)m->n);
    int rc =
        m->sbuf && m->rbuf && m->times && m->scratch && all && m->others ? FM_OK : FM_ERR_NOMEM;
    for (int r = 1; rc == FM_OK && r < m->n; r++)
        m->others[r - 1] = r;
    if (rc == FM_OK)
        mc_fill(m->sbuf, m->cap, 0);
    for (int r = 0; rc == FM_OK && r < m->n; r++)
        all[r] = r;
    if (rc == FM_OK)
        rc = fm_group_create(ctx, all, m->n, &m->group);
    free(all);
    if (rc == FM_OK && (m->h_data = fm_add_handler(ctx, on_data, m)) < 0)
        rc = m->h_data;
    if (rc == FM_OK && (m->h_report = fm_add_handler(ctx, on_report, m)) < 0)
        rc = m->h_report;
    if (rc == FM_OK && (m->h_quiet = fm_add_handler(ctx, on_quiet, m)) < 0)
        rc = m->h_quiet;
    if (rc == FM_OK && o->calibrate)
        rc = fm_mcast_calibrate(ctx);
    return rc;
}

/* Every tree name resolves (the same on every rank); rank 0 names a bad one. */
static int check_trees(fm_context *ctx, const mc_opts *o)
{
    for (int t = 0; t < o->ntrees; t++) {
        double secs;
        int rc = fm_mcast_predict_time(ctx, fm_size(ctx), o->root, o->trees[t], 0, 1, &secs, NULL);
        if (rc != FM_OK) {
            if (fm_rank(ctx) == 0)
                fprintf(stderr, PROG ": tree '%s': %s\n", o->trees[t],
                        strcmp(o->trees[t], "ipmc") ? fm_strerror(rc)
                                                    : "no datagram multicast here (FM_MCAST_DGRAM; "
                                                      "a job on one host has none)");
            return rc;
        }
    }
    return FM_OK;
}

static void teardown(mc *m)
{
    if (m->group)
        fm_group_destroy(m->group);
    if (m->sbuf)
        MC_PAYLOAD_FREE(m->o, m->sbuf);
    if (m->rbuf)
        MC_PAYLOAD_FREE(m->o, m->rbuf);
    free(m->times);
    free(m->scratch);
    free(m->each);
    free(m->others);
}

int main(int argc, char **argv)
{
    mc_opts o;
    int prc = mc_parse(argc, argv, &o);
    if (prc)
        return prc > 0 ? 0 : 2;
    fm_context *ctx = bench_fm_init(PROG);
    if (!ctx)
        return 1;
    int rc, status = 0;
    mc m = {0};
    if (fm_size(ctx) < 2 || o.root >= fm_size(ctx)) {
        if (fm_rank(ctx) == 0)
            fprintf(stderr, PROG ": needs at least 2 ranks and --root below %d\n", fm_size(ctx));
        status = 2;
    } else if ((rc = check_trees(ctx, &o)) != FM_OK) {
        status = 2;
    } else if ((rc = setup(&m, ctx, &o)) != FM_OK) {
        fprintf(stderr, PROG ": rank %d: setup: %s\n", fm_rank(ctx), fm_strerror(rc));
        status = 1;
    } else if (o.concurrent) {
        if (mc_concurrent(ctx, &o) != FM_OK)
            status = 1;
    } else {
        if (m.me == 0)
            print_header(&m);
        if (sweep(&m) != FM_OK)
            status = 1;
        else if (o.project && fm_barrier(ctx) == FM_OK && m.me == 0) /* (as in sweep) */
            project(&m);
        if (m.bad) {
            fprintf(stderr, PROG ": rank %d: %ld wrong copies or reports\n", m.me, m.bad);
            status = 1;
        }
    }
    teardown(&m);
    return bench_fm_finalize(PROG, ctx, status);
}
