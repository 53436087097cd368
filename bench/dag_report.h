/* SPDX-License-Identifier: BSD-3-Clause */
/* The DAG benchmarks' output (bench/mpi/mpi_dag.c and examples/dag/dag.c print the same
 * lines, so that bench tools compare them): the DAG's totals, the header, the table or CSV
 * row and the checksum verdict. Plain C: no MPI, no fastmsg. */
#ifndef BENCH_DAG_REPORT_H
#define BENCH_DAG_REPORT_H

#include <stdint.h>

#include "dag_gen.h"
#include "dag_opts.h"

/* The DAG's totals on n ranks, which do not depend on a run. */
typedef struct dag_stats {
    uint64_t remote_edges, messages, bytes_sent, cp_us, work_us;
} dag_stats;

dag_stats dag_stats_of(const dag *d, int n);

/* The header on stdout (the CSV's header line with --csv). who is the first line's text
 * after "# ": the program, its library and transport. */
void dag_print_header(const dag *d, const dag_opts *o, int n, const char *who, const dag_stats *s);
/* The row of o->repeats makespans ms[] (us; sorted by the median): median, min, max.
 * provider is the CSV's first column. */
void dag_print_row(const dag *d, const dag_opts *o, int n, const char *provider, const dag_stats *s,
                   double *ms, int ok);
/* "# checksum OK|FAIL: ..." (nothing with --csv). */
void dag_print_verdict(const dag *d, const dag_opts *o, int ok, long bad, uint64_t got,
                       uint64_t want);

#endif
