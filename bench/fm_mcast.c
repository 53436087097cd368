/* fm-mcast: multicast completion time from one root to every rank of the job, per tree, mode
 * (FPFS or store-and-forward) and message size, next to the FPFS model's prediction.
 *
 *   fastmsg-run -n N fm-mcast [options]      (-h lists them)
 *
 * Method, per multicast: every rank leaves an fm_barrier (the common start) and reads its own
 * clock. The root lets --settle microseconds pass (driving progress), so that the other ranks
 * have left the barrier too, then multicasts one message to a group of all ranks. Every other
 * member notes when its copy is complete (the fm_stream_deliver callback), measured from its
 * own return from the barrier plus the settle time: clocks of different processes cannot be
 * compared, so each member uses its own. The barrier's exit skew is therefore in the figures
 * (either way; a member that leaves the barrier more than --settle after the root can even
 * show a negative time). Each rank then sends its time to rank 0 (the root sends its CPU time
 * for the send, CLOCK_PROCESS_CPUTIME_ID around begin..end), and the slowest member's time is
 * that multicast's completion time. A run is ITERS such multicasts; each row gives medians
 * over the iterations, then over the runs. Waiting is by fm_wait, so many ranks can share few
 * cores (its back-off is included in the times).
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

#include "mc.h"
#include "stats.h"

typedef struct report { /* member -> rank 0, once per multicast */
    int32_t iter;
    int32_t pad;
    double us;     /* member: until its copy was complete; root: -1 */
    double cpu_us; /* root: CPU time for the send; others: 0 */
    double at;     /* CLOCK_MONOTONIC: member: its copy complete; root: its send began */
} report;

typedef struct mc {
    fm_context *ctx;
    fm_group *group;
    const mc_opts *o;
    int me, n, root, h_data, h_report;
    unsigned char *sbuf, *rbuf;
    size_t cap, expect;
    int iter, got;   /* the current multicast; its copy is complete here */
    double t_start;  /* this rank's return from the barrier */
    double t_done;   /* the delivery callback's time */
    report *reports; /* rank 0: one per rank for the current multicast */
    int nreports;
    long bad; /* wrong copies or reports */
} mc;

static double now_us(int clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

static unsigned char pattern(size_t i)
{
    return (unsigned char)(i * 131 + 7);
}

static void delivered(void *buf, size_t len, int sender, void *arg)
{
    mc *m = arg;
    const unsigned char *p = buf;
    m->t_done = now_us(CLOCK_MONOTONIC);
    if (len != m->expect || sender != m->root || p[0] != pattern(0) ||
        p[len - 1] != pattern(len - 1))
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
    if (fm_receive(s, &r, sizeof r) != (ssize_t)sizeof r || r.iter != m->iter)
        m->bad++;
    else
        m->reports[sender] = r;
    m->nreports++;
    return FM_DONE;
}

/* fm_wait until *flag reaches want, or fail after the --timeout without progress. */
static int await(mc *m, const int *flag, int want)
{
    double last = now_us(CLOCK_MONOTONIC);
    while (*flag < want) {
        long rc = fm_wait(m->ctx, 100);
        if (rc < 0)
            return (int)rc;
        double t = now_us(CLOCK_MONOTONIC);
        if (rc > 0)
            last = t;
        else if (t - last > m->o->timeout_s * 1e6)
            return FM_ERR_TIMEOUT;
    }
    return FM_OK;
}

static int send_report(mc *m, const report *r)
{
    fm_stream *s;
    int rc = fm_begin_message(m->ctx, 0, sizeof *r, m->h_report, &s);
    if (rc == FM_OK)
        rc = fm_send_piece(s, r, sizeof *r);
    if (rc == FM_OK)
        rc = fm_end_message(s);
    return rc;
}

/* The figures of one multicast, on rank 0. */
typedef struct sample {
    double done, lo, hi, cpu; /* slowest, fastest member; root CPU time; us */
} sample;

/* One multicast of size bytes down tree; rank 0 gets *out. */
static int one_mcast(mc *m, const char *tree, unsigned flags, size_t size, sample *out)
{
    report mine = {.iter = ++m->iter, .us = -1};
    m->got = 0;
    m->nreports = 0;
    m->expect = size;
    int rc = fm_barrier(m->ctx);
    if (rc != FM_OK)
        return rc;
    m->t_start = now_us(CLOCK_MONOTONIC) + m->o->settle_us;
    if (m->me == m->root) {
        while (rc >= 0 && now_us(CLOCK_MONOTONIC) < m->t_start)
            rc = (int)fm_extract(m->ctx, 0);
        if (rc < 0)
            return rc;
        double c0 = now_us(CLOCK_PROCESS_CPUTIME_ID);
        mine.at = now_us(CLOCK_MONOTONIC);
        fm_stream *s;
        rc = fm_mcast_begin(m->group, tree, flags, size, m->h_data, &s);
        if (rc == FM_OK)
            rc = fm_send_piece(s, m->sbuf, size);
        if (rc == FM_OK)
            rc = fm_end_message(s);
        mine.cpu_us = now_us(CLOCK_PROCESS_CPUTIME_ID) - c0;
    } else {
        rc = await(m, &m->got, 1);
        mine.us = m->t_done - m->t_start;
        mine.at = m->t_done;
    }
    if (rc != FM_OK)
        return rc;
    if (m->me != 0)
        return send_report(m, &mine);
    m->reports[0] = mine;
    if ((rc = await(m, &m->nreports, m->n - 1)) != FM_OK)
        return rc;
    *out = (sample){.done = 0, .lo = 1e300, .hi = -1e300, .cpu = m->reports[m->root].cpu_us};
    for (int r = 0; r < m->n; r++) {
        if (r == m->root)
            continue;
        double us = m->reports[r].us;
        if (m->o->common_clock)
            us = m->reports[r].at - m->reports[m->root].at;
        out->lo = us < out->lo ? us : out->lo;
        out->hi = us > out->hi ? us : out->hi;
    }
    out->done = out->hi;
    return FM_OK;
}

/* A row: medians of completion, fastest and slowest member, skew and root CPU time. */
#define MC_COLS 5

static int run_row(mc *m, const char *tree, unsigned flags, size_t size, double *row)
{
    long iters = mc_iters(m->o, size);
    double *it = malloc(sizeof *it * (size_t)iters * MC_COLS);
    double rep[MC_COLS][MC_MAX_REPEAT];
    if (!it)
        return FM_ERR_NOMEM;
    sample s;
    int rc = one_mcast(m, tree, flags, size, &s); /* warm-up: pages, connections, caches */
    for (int r = 0; r < m->o->repeats && rc == FM_OK; r++) {
        for (long i = 0; i < iters && rc == FM_OK; i++) {
            rc = one_mcast(m, tree, flags, size, &s);
            double v[MC_COLS] = {s.done, s.lo, s.hi, s.hi - s.lo, s.cpu};
            for (int c = 0; c < MC_COLS; c++)
                it[c * iters + i] = v[c];
        }
        for (int c = 0; c < MC_COLS && rc == FM_OK && m->me == 0; c++)
            rep[c][r] = bench_median(it + c * iters, iters);
    }
    for (int c = 0; c < MC_COLS && rc == FM_OK && m->me == 0; c++)
        row[c] = bench_median(rep[c], m->o->repeats);
    free(it);
    return rc;
}

static const char *setting(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

static void print_header(const mc *m)
{
    const mc_opts *o = m->o;
    const char *costs = setting("FM_MCAST_COSTS", NULL) ? "FM_MCAST_COSTS"
                        : o->calibrate                  ? "calibrated"
                                                        : "estimated (not calibrated)";
    if (o->csv) {
        fputs(MC_CSV_HEADER, stdout);
        return;
    }
    printf("# fm-mcast (fastmsg %s): %d ranks, root %d, provider %s, FM_PACKET_SIZE %s, "
           "FM_CREDITS %s\n",
           fm_version(), m->n, m->root, setting("FM_PROVIDER", "shm"),
           setting("FM_PACKET_SIZE", "default"), setting("FM_CREDITS", "default"));
    if (o->common_clock)
        printf("# model costs: %s; medians of %d repeats; times from the root's start (one "
               "clock)\n",
               costs, o->repeats);
    else
        printf("# model costs: %s; medians of %d repeats; times from each rank's own barrier "
               "exit + %.0f us settle\n",
               costs, o->repeats, o->settle_us);
    printf("# completion = slowest member; min/max = fastest/slowest member; skew = max - min; "
           "cpu = root's CPU time per multicast\n");
    fputs(MC_TABLE_HEADER, stdout);
    fflush(stdout);
}

static void print_row(const mc *m, const char *tree, const char *resolved, int sf, size_t size,
                      const double *row, double model_us)
{
    const char *mode = sf ? "sf" : "fpfs";
    double ratio = model_us > 0 ? row[0] / model_us : 0;
    long iters = mc_iters(m->o, size);
    if (m->o->csv)
        printf("%s,%d,%s,%s,%d,%s,%s,%s,%zu,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.3f,%ld\n",
               setting("FM_PROVIDER", "shm"), m->n, setting("FM_PACKET_SIZE", "default"),
               setting("FM_CREDITS", "default"), m->o->calibrate, tree, resolved, mode, size,
               row[0], row[1], row[2], row[3], row[4], model_us, ratio, iters);
    else
        printf("%-12s %-14s %-4s %9zu %11.2f %9.2f %9.2f %9.2f %9.2f %9.2f %6.2f %5ld\n", tree,
               resolved, mode, size, row[0], row[1], row[2], row[3], row[4], model_us, ratio,
               iters);
    fflush(stdout);
}

static int sweep(mc *m)
{
    const mc_opts *o = m->o;
    int rc = FM_OK;
    for (int t = 0; t < o->ntrees && rc == FM_OK; t++)
        for (int sf = 0; sf <= o->sf_too && rc == FM_OK; sf++)
            for (int i = 0; i < o->nsizes && rc == FM_OK; i++) {
                unsigned flags = sf ? FM_MCAST_STORE_FORWARD : 0;
                size_t size = o->sizes[i];
                double secs = 0, row[MC_COLS];
                char chosen[64] = "?";
                rc = fm_mcast_predict_time(m->ctx, m->n, m->root, o->trees[t], flags, size, &secs,
                                           chosen);
                if (rc == FM_OK)
                    rc = run_row(m, o->trees[t], flags, size, row);
                if (rc == FM_OK && m->me == 0)
                    print_row(m, o->trees[t], chosen, sf, size, row, secs * 1e6);
                if (rc != FM_OK)
                    fprintf(stderr, "fm-mcast: rank %d: %s %s, %zu B: %s\n", m->me, o->trees[t],
                            sf ? "sf" : "fpfs", size, fm_strerror(rc));
            }
    return rc;
}

static int setup(mc *m, fm_context *ctx, const mc_opts *o)
{
    *m = (mc){.ctx = ctx, .o = o, .me = fm_rank(ctx), .n = fm_size(ctx), .root = o->root};
    m->cap = o->sizes[o->nsizes - 1];
    m->sbuf = malloc(m->cap);
    m->rbuf = malloc(m->cap);
    m->reports = calloc((size_t)m->n, sizeof *m->reports);
    int *all = malloc(sizeof *all * (size_t)m->n);
    int rc = m->sbuf && m->rbuf && m->reports && all ? FM_OK : FM_ERR_NOMEM;
    for (size_t i = 0; rc == FM_OK && i < m->cap; i++)
        m->sbuf[i] = pattern(i);
    for (int r = 0; rc == FM_OK && r < m->n; r++)
        all[r] = r;
    if (rc == FM_OK)
        rc = fm_group_create(ctx, all, m->n, &m->group);
    free(all);
    if (rc == FM_OK && (m->h_data = fm_add_handler(ctx, on_data, m)) < 0)
        rc = m->h_data;
    if (rc == FM_OK && (m->h_report = fm_add_handler(ctx, on_report, m)) < 0)
        rc = m->h_report;
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
                fprintf(stderr, "fm-mcast: tree '%s': %s\n", o->trees[t], fm_strerror(rc));
            return rc;
        }
    }
    return FM_OK;
}

static void teardown(mc *m)
{
    if (m->group)
        fm_group_destroy(m->group);
    free(m->sbuf);
    free(m->rbuf);
    free(m->reports);
}

int main(int argc, char **argv)
{
    mc_opts o;
    int prc = mc_parse(argc, argv, &o);
    if (prc)
        return prc > 0 ? 0 : 2;
    fm_context *ctx;
    int rc = fm_init(&ctx);
    if (rc) {
        fprintf(stderr, "fm-mcast: fm_init: %s\n", fm_strerror(rc));
        return 1;
    }
    int status = 0;
    mc m = {0};
    if (fm_size(ctx) < 2 || o.root >= fm_size(ctx)) {
        if (fm_rank(ctx) == 0)
            fprintf(stderr, "fm-mcast: needs at least 2 ranks and --root below %d\n", fm_size(ctx));
        status = 2;
    } else if ((rc = check_trees(ctx, &o)) != FM_OK) {
        status = 2;
    } else if ((rc = setup(&m, ctx, &o)) != FM_OK) {
        fprintf(stderr, "fm-mcast: rank %d: setup: %s\n", fm_rank(ctx), fm_strerror(rc));
        status = 1;
    } else {
        if (m.me == 0)
            print_header(&m);
        if (sweep(&m) != FM_OK)
            status = 1;
        if (m.bad) {
            fprintf(stderr, "fm-mcast: rank %d: %ld wrong copies or reports\n", m.me, m.bad);
            status = 1;
        }
    }
    teardown(&m);
    rc = fm_finalize(ctx);
    if (rc != FM_OK) {
        fprintf(stderr, "fm-mcast: fm_finalize: %s\n", fm_strerror(rc));
        status = status ? status : 1;
    }
    return status;
}
