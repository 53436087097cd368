/* fm-mcast: shared declarations of the benchmark's files.
 *
 *   mc_opts.c   command line, the lists of trees and sizes, iteration counts
 *   fm_mcast.c  main: the handlers, one timed multicast, the sweep and the report
 *
 * bench/mpi's mpi-bcast shares the command line and the column names. */
#ifndef MC_H
#define MC_H

#include <stddef.h>

#define MC_MAX_SIZES  64
#define MC_MAX_TREES  16
#define MC_MAX_REPEAT 101
#define MC_TREE_LEN   64

typedef struct mc_opts {
    char trees[MC_MAX_TREES][MC_TREE_LEN]; /* tree names as fm_mcast_begin takes them */
    int ntrees;
    size_t sizes[MC_MAX_SIZES]; /* ascending */
    int nsizes;
    int sf_too;       /* also every tree with FM_MCAST_STORE_FORWARD */
    int repeats;      /* timed runs per row; medians are reported (-r) */
    long iters;       /* multicasts per run for small sizes (-i); fewer for large */
    int calibrate;    /* fm_mcast_calibrate before the sweep */
    int csv;          /* CSV instead of the table */
    int root;         /* the multicasting rank */
    double timeout_s; /* give up a stalled wait after this long */
    double settle_us; /* root's pause after the barrier before it sends */
    int common_clock; /* every rank reads one CLOCK_MONOTONIC: time from the root's send */
} mc_opts;

/* What differs between the programs sharing the command line: the usage text and whether
 * fastmsg's tree options (--trees, --sf-too, --calibrate) exist. */
typedef struct mc_cli {
    const char *launch;  /* the usage line's launcher, e.g. "fastmsg-run -n N" */
    const char *what;    /* the usage's second line */
    const char *noun;    /* one timed operation: "multicast" */
    const char *timeout; /* --timeout's help, without the default */
    int trees;           /* the tree options exist */
} mc_cli;

/* Returns 0 and fills o, 1 after printing usage (-h), or -1 after printing an error. */
int mc_parse_cli(int argc, char **argv, const mc_cli *cli, mc_opts *o);
/* fm-mcast's command line. */
int mc_parse(int argc, char **argv, mc_opts *o);
/* Multicasts per timed run for one size: o->iters up to 64 KiB, then fewer, at least 3. */
long mc_iters(const mc_opts *o, size_t size);

/* The column names both programs print; a comparison parses them. */
#define MC_CSV_HEADER                                                                              \
    "provider,ranks,packet_size,credits,calibrated,tree,resolved,mode,size,completion_us,"         \
    "min_member_us,max_member_us,skew_us,root_cpu_us,model_us,ratio,iters\n"
#define MC_TABLE_HEADER                                                                            \
    "# tree       resolved       mode   size(B) complete_us    min_us    max_us   skew_us    "     \
    "cpu_us  model_us  ratio iters\n"

#endif
