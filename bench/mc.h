/* SPDX-License-Identifier: BSD-3-Clause */
/* fastmsg-bench-mcast: shared declarations of the benchmark's files.
 *
 *   mc_opts.c   command line, the lists of trees and sizes, iteration counts
 *   mc_row.c    one row: the timed runs and their medians; the header's end and the row
 *   fm_mcast.c  main: the handlers, one timed multicast, the sweep over trees and sizes
 *
 * bench/mpi's fastmsg-bench-mpi-bcast shares all but fm_mcast.c, so both measure, reduce and print
 * alike. */
#ifndef MC_H
#define MC_H

#include <stddef.h>
#include <stdlib.h>

#include "common.h"

#define MC_MAX_SIZES  64
#define MC_MAX_TREES  16
#define MC_MAX_REPEAT 101
#define MC_TREE_LEN   64
#define MC_MAX_MODES  3

/* Forwarding modes (--modes): FPFS, store-and-forward (FM_MCAST_STORE_FORWARD),
 * First-Child-First-Served (FM_MCAST_FCFS). */
enum mc_mode { MC_FPFS, MC_SF, MC_FCFS };
/* The mode's name in --modes and in the mode column: "fpfs", "sf", "fcfs". */
const char *mc_mode_name(int mode);

typedef struct mc_opts {
    char trees[MC_MAX_TREES][MC_TREE_LEN]; /* tree names as fm_mcast_begin takes them */
    int ntrees;
    size_t sizes[MC_MAX_SIZES]; /* ascending */
    int nsizes;
    int modes[MC_MAX_MODES]; /* forwarding modes (mc_mode) to run every tree in, in order */
    int nmodes;
    int repeats;      /* timed runs per row; medians are reported (-r) */
    long iters;       /* multicasts per run for small sizes (-i); fewer for large */
    int calibrate;    /* fm_mcast_calibrate before the sweep */
    int csv;          /* CSV instead of the table */
    int root;         /* the multicasting rank */
    double timeout_s; /* give up a stalled wait after this long */
    double settle_us; /* root's pause after the barrier before it sends */
    int settle_sleep; /* ... slept through (--settle-sleep) */
    double quiet;     /* members' quiet time: this x the previous completion (--quiet) */
    int concurrent;   /* --concurrent K: every rank a root at once to K random others; 0: off */
    int roots;        /* --roots R: with --concurrent, only R roots a round, drawn per round;
                       * 0: every rank */
    int common_clock; /* every rank reads one CLOCK_MONOTONIC: time from the root's send */
    int project;      /* --project N: the model's times for N members after the rows; 0 off */
    int each;         /* --each: after each row, every member's median time */
    int shared;       /* --shared-payload: one payload buffer for all simulated ranks */
    size_t warmup;    /* --warmup BYTES: untimed multicasts of the largest size first, until
                       * each member received this many bytes (0: none) */
} mc_opts;

/* Payload buffers (the message, and where copies land). Under SimGrid (the bench/sim build)
 * --shared-payload takes them from SMPI_SHARED_MALLOC, which maps one block of memory for
 * every rank: thousands of simulated ranks do not hold a message each, and copies cannot be
 * checked (each call site is its own buffer, hence macros). */
#if defined(FM_BENCH_SIMGRID)
#include <smpi/smpi.h>
#define MC_HAVE_SHARED        1
#define MC_PAYLOAD(o, n)      ((o)->shared ? SMPI_SHARED_MALLOC(n) : malloc(n))
#define MC_PAYLOAD_FREE(o, p) ((o)->shared ? SMPI_SHARED_FREE(p) : free(p))
#else
#define MC_HAVE_SHARED        0
#define MC_PAYLOAD(o, n)      malloc(n)
#define MC_PAYLOAD_FREE(o, p) free(p)
#endif

/* What differs between the programs sharing the command line: the usage text, whether
 * fastmsg's tree options (--trees, --modes, --sf-too, --calibrate, --concurrent, --roots)
 * exist, and
 * bench/mpi's --methods. */
typedef struct mc_cli {
    const char *launch;  /* the usage line's launcher, e.g. "fastmsg-run -n N" */
    const char *what;    /* the usage's second line */
    const char *noun;    /* one timed operation: "multicast" */
    const char *timeout; /* --timeout's help, without the default */
    int trees;           /* the tree options exist */
    int concurrent;      /* --concurrent and --roots exist without them (bench/mpi's concurrent
                          * program) */
    /* The names --methods takes, comma-separated (also its default, every one): the methods to
     * run, into mc_opts.trees in the order given; NULL: no --methods. */
    const char *methods;
} mc_cli;

/* Returns 0 and fills o, 1 after printing usage (-h), or -1 after printing an error. */
int mc_parse_cli(int argc, char **argv, const mc_cli *cli, mc_opts *o);
/* fastmsg-bench-mcast's command line. */
int mc_parse(int argc, char **argv, mc_opts *o);
/* Multicasts per timed run for one size: o->iters up to 64 KiB, then fewer, at least 3. */
long mc_iters(const mc_opts *o, size_t size);

/* The column names both programs print; a comparison parses them. */
#define MC_CSV_HEADER                                                                              \
    "provider,ranks,packet_size,credits,calibrated,tree,resolved,mode,size,completion_us,"         \
    "min_member_us,max_member_us,skew_us,root_cpu_us,model_us,ratio,iters,held_pkts,"              \
    "model_held_pkts,tree_us,model_link_visits,model_links_used\n"
#define MC_TABLE_HEADER                                                                            \
    "# tree       resolved       mode   size(B) complete_us    min_us    max_us   skew_us    "     \
    "cpu_us  model_us  ratio iters   held  mheld  tree_us  lvisit lused\n"

/* The byte at offset i of every multicast message; receivers check their copies with it. */
static inline unsigned char mc_pattern(size_t i)
{
    return (unsigned char)(i * 131 + 7);
}

/* buf[i] = mc_pattern(i) ^ flip: flip 0 writes the pattern, 0xff bytes that differ from it
 * everywhere. (A loop on a local pointer: stores through a struct's pointer would make the
 * compiler reload the struct every byte.) */
static inline void mc_fill(unsigned char *buf, size_t len, unsigned char flip)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = mc_pattern(i) ^ flip;
}

/* --concurrent's CSV columns (mc_concurrent.c). */
#define MC_CONCURRENT_CSV_HEADER                                                                   \
    "provider,ranks,packet_size,credits,tree,size,dests,each_us,each_max_us,round_us,"             \
    "aggregate_MBps,rounds\n"

/* --concurrent: the whole run (fastmsg-bench-mcast's trees and sizes); FM_OK or an error after
 * saying it on stderr. */
struct fm_context;
int mc_concurrent(struct fm_context *ctx, const mc_opts *o);

/* What each rank reports to rank 0 after one multicast. */
typedef struct mc_times {
    double us;     /* member: until its copy was complete; root: -1 */
    double cpu_us; /* root: CPU time for the send; others: 0 */
    double at;     /* CLOCK_MONOTONIC: member: its copy complete; root: its send began */
} mc_times;

/* The figures of one multicast, on rank 0. */
typedef struct mc_sample {
    double done, lo, hi, cpu; /* slowest, fastest member; root CPU time; us */
} mc_sample;

/* One multicast's sample from every rank's times (t[rank]): each member timed from its own
 * start, or with --common-clock from the root's send. */
mc_sample mc_summarize(const mc_opts *o, int n, int root, const mc_times *t);

/* A row's figures: medians of completion, fastest and slowest member, skew and root CPU. */
#define MC_COLS 5

/* Added to every quiet time: the wake-ups and barrier that start the next multicast. */
#define MC_QUIET_PAD_US 100.0

/* One timed multicast of size bytes, every rank; fills *out on rank 0. check: verify the
 * copy (asked for the warm-up and the first run). quiet_us (rank 0's value; the program gives
 * it to every rank before the start): a member sends nothing (no report, no barrier) until
 * quiet_us after its start, so that what follows a member's copy does not take cores or the
 * root's time from members still receiving. 0, or an error code that ends the row. */
typedef int (*mc_one_fn)(void *arg, size_t size, int check, double quiet_us, mc_sample *out);

/* One row: a warm-up multicast (pages, connections, caches), then o->repeats runs of
 * mc_iters(o, size) multicasts; medians over each run's multicasts, then over the runs, into
 * row on rank 0 (me). Each multicast's quiet time is o->quiet x the previous one's completion +
 * MC_QUIET_PAD_US (the warm-up's: 0); rank 0 says in a comment line before the row how many
 * outlasted theirs. scratch
 * holds MC_COLS * o->iters doubles. 0, or one's error. */
int mc_run_row(const mc_opts *o, int me, size_t size, mc_one_fn one, void *arg, double *scratch,
               double row[MC_COLS]);

/* Before the first row: untimed multicasts of the largest size, until every member has
 * received o->warmup bytes (at least one; at most MC_WARMUP_MAX, and at most as many as that
 * size's row times; none when o->warmup is 0).
 * The first rows otherwise pay what a job does once: a member's first pass through its
 * receive memory (page faults: 8 MiB a rank by default), growing credit windows. */
#define MC_WARMUP_MAX 256
int mc_warmup(const mc_opts *o, mc_one_fn one, void *arg);

/* A row's label: the columns before the figures; "-" for what a program does not have. */
typedef struct mc_label {
    bench_label settings;
    int ranks;
    const char *calibrated, *tree, *resolved, *mode;
} mc_label;

/* The end of the header both programs share: the CSV header, or the table's line on how the
 * figures were taken (after `method`, the program's own words on its model), the column key
 * and names. noun names one operation in the key ("multicast"). */
void mc_print_head(const mc_opts *o, const char *method, const char *noun);
/* What a row shows besides the timed figures; each < 0 when the program has none ("-"). */
typedef struct mc_extra {
    double model_us;   /* the model's completion (model_us; ratio = completion / it) */
    double held;       /* packets a member held at once for forwarding, the most over the row's
                        * multicasts and members (fm_stats.fwd_held_peak) */
    double model_held; /* the model's most for one multicast */
    double tree_us;    /* tree creation at the root (fm_mcast_prediction.tree_seconds) */
    double visits;     /* the model's link visits and links used on a torus (0: none) */
    double used;
} mc_extra;

/* One row. */
void mc_print_row(const mc_opts *o, const mc_label *lb, size_t size, const double row[MC_COLS],
                  const mc_extra *x);

#endif
