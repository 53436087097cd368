/* SPDX-License-Identifier: BSD-3-Clause */
/* The DAG benchmarks' command line (bench/mpi/mpi_dag.c and the fastmsg version,
 * examples/dag/dag.c): the DAG's parameters (dag_gen.h), repeats, output and the watchdog, and
 * the fastmsg version's own options (--tree, --die-at). */
#ifndef BENCH_DAG_OPTS_H
#define BENCH_DAG_OPTS_H

#include "dag_gen.h"

#define DAG_MAX_REPEAT 1000

typedef struct dag_opts {
    dag_params p;
    int repeats;      /* timed runs; the median is reported */
    int warmup;       /* untimed runs first */
    int csv;          /* a header and one comma-separated row */
    double timeout_s; /* the watchdog's limit for one run */
    long corrupt;     /* a task whose output gets one byte flipped after its own check, so
                       * that its dependents must fail (the tests' proof that checking
                       * works); -1: none */
    /* The fastmsg version's (dag_cli.fastmsg; the MPI programs refuse them): */
    const char *tree; /* the multicast tree of an output going to several ranks ("prefix") */
    long die_at;      /* the rank that runs this task kills itself (SIGKILL) just before it,
                       * so that tests see a job lose a rank mid-DAG; -1: none */
} dag_opts;

/* How the usage text names the launcher, e.g. "mpirun.openmpi -n N". */
typedef struct dag_cli {
    const char *launch;
    const char *what;
    int fastmsg; /* take --tree and --die-at */
} dag_cli;

/* Reads argv into o (defaults first: DAG_DEFAULT_PARAMS, -r 5, --warmup 1, --timeout 60,
 * --tree prefix).
 * 0; 1 after printing usage (-h); -1 after printing an error and usage. */
int dag_parse_cli(int argc, char **argv, const dag_cli *cli, dag_opts *o);

#endif
