/* SPDX-License-Identifier: BSD-3-Clause */
/* One row of fastmsg-bench-mcast and of bench/mpi's fastmsg-bench-mpi-bcast: reducing each
 * multicast's reports, the timed runs and their medians, and printing (mc.h). */
#include <stdio.h>

#include "mc.h"

mc_sample mc_summarize(const mc_opts *o, int n, int root, const mc_times *t)
{
    mc_sample s = {.done = 0, .lo = 1e300, .hi = -1e300, .cpu = t[root].cpu_us};
    for (int r = 0; r < n; r++) {
        if (r == root)
            continue;
        double us = o->common_clock ? t[r].at - t[root].at : t[r].us;
        s.lo = us < s.lo ? us : s.lo;
        s.hi = us > s.hi ? us : s.hi;
    }
    s.done = s.hi;
    return s;
}

int mc_warmup(const mc_opts *o, mc_one_fn one, void *arg)
{
    size_t size = o->sizes[o->nsizes - 1];
    if (!o->warmup || !o->nsizes)
        return 0;
    size_t count = size ? (o->warmup + size - 1) / size : MC_WARMUP_MAX;
    size_t row = (size_t)mc_iters(o, size) * (size_t)o->repeats; /* (never more than it times) */
    count = count > row ? row : count;
    count = count < 1 ? 1 : count > MC_WARMUP_MAX ? MC_WARMUP_MAX : count;
    mc_sample s = {0};
    int rc = 0;
    for (size_t i = 0; i < count && rc == 0; i++)
        rc = one(arg, size, 0, 0, &s);
    return rc;
}

int mc_run_row(const mc_opts *o, int me, size_t size, mc_one_fn one, void *arg, double *scratch,
               double row[MC_COLS])
{
    long iters = mc_iters(o, size), late = 0;
    double rep[MC_COLS][MC_MAX_REPEAT];
    mc_sample s = {0}; /* only rank 0's is filled */
    int rc = one(arg, size, 1, 0, &s);
    for (int r = 0; r < o->repeats && rc == 0; r++) {
        for (long i = 0; i < iters && rc == 0; i++) {
            double quiet = o->quiet > 0 ? o->quiet * s.done + MC_QUIET_PAD_US : 0;
            rc = one(arg, size, r == 0, quiet, &s);
            late += quiet > 0 && s.done > quiet;
            double v[MC_COLS] = {s.done, s.lo, s.hi, s.hi - s.lo, s.cpu};
            for (int c = 0; c < MC_COLS; c++)
                scratch[c * iters + i] = v[c];
        }
        for (int c = 0; c < MC_COLS && rc == 0 && me == 0; c++)
            rep[c][r] = bench_median(scratch + c * iters, iters);
    }
    for (int c = 0; c < MC_COLS && rc == 0 && me == 0; c++)
        row[c] = bench_median(rep[c], o->repeats);
    if (rc == 0 && me == 0 && late)
        printf("# %zu B: %ld of %ld timed samples outlasted the members' quiet time\n", size, late,
               iters * o->repeats);
    return rc;
}

void mc_print_head(const mc_opts *o, const char *method, const char *noun)
{
    if (o->csv) {
        fputs(MC_CSV_HEADER, stdout);
        return;
    }
    printf("# %s; medians of %d repeats; ", method, o->repeats);
    if (o->common_clock)
        printf("times from the root's start (one clock)\n");
    else
        printf("times from each rank's own barrier exit + %.0f us settle\n", o->settle_us);
    printf("# completion = slowest member; min/max = fastest/slowest member; skew = max - min; "
           "cpu = root's CPU time per %s\n",
           noun);
    fputs(MC_TABLE_HEADER, stdout);
    fflush(stdout);
}

/* v with fmt into buf, or "-" when v < 0. */
static const char *or_dash(char *buf, size_t len, const char *fmt, double v)
{
    if (v < 0)
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, fmt, v);
    return buf;
}

void mc_print_row(const mc_opts *o, const mc_label *lb, size_t size, const double row[MC_COLS],
                  const mc_extra *x)
{
    const bench_label *st = &lb->settings;
    long iters = mc_iters(o, size);
    char model[32], ratio[32] = "-", held[32], mheld[32], tree[32], visits[32], used[32];
    or_dash(model, sizeof model, "%.2f", x->model_us);
    if (x->model_us >= 0) /* (a completion below 0 is the barrier's skew: shown as it is) */
        snprintf(ratio, sizeof ratio, o->csv ? "%.3f" : "%.2f",
                 x->model_us > 0 ? row[0] / x->model_us : 0);
    or_dash(held, sizeof held, "%.0f", x->held);
    or_dash(mheld, sizeof mheld, "%.1f", x->model_held);
    or_dash(tree, sizeof tree, "%.2f", x->tree_us);
    or_dash(visits, sizeof visits, "%.0f", x->visits);
    or_dash(used, sizeof used, "%.0f", x->used);
    if (o->csv)
        printf("%s,%d,%s,%s,%s,%s,%s,%s,%zu,%.2f,%.2f,%.2f,%.2f,%.2f,%s,%s,%ld,%s,%s,%s,%s,%s\n",
               st->provider, lb->ranks, st->packet_size, st->credits, lb->calibrated, lb->tree,
               lb->resolved, lb->mode, size, row[0], row[1], row[2], row[3], row[4], model, ratio,
               iters, held, mheld, tree, visits, used);
    else
        printf("%-12s %-14s %-4s %9zu %11.2f %9.2f %9.2f %9.2f %9.2f %9s %6s %5ld %6s %6s %8s "
               "%6s %5s\n",
               lb->tree, lb->resolved, lb->mode, size, row[0], row[1], row[2], row[3], row[4],
               model, ratio, iters, held, mheld, tree, visits, used);
    fflush(stdout);
}
