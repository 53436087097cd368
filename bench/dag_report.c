/* SPDX-License-Identifier: BSD-3-Clause */
/* The DAG benchmarks' output (dag_report.h). */
#include "dag_report.h"

#include <stdio.h>
#include <stdlib.h>

#include "common.h"

dag_stats dag_stats_of(const dag *d, int n)
{
    dag_stats s = {.cp_us = dag_critical_path_us(d), .work_us = dag_total_compute_us(d)};
    int *ranks = malloc(sizeof *ranks * (size_t)n);
    for (uint32_t t = 0; ranks && t < d->ntasks; t++) {
        uint32_t k;
        const uint32_t *dep = dag_dependents(d, t, &k);
        for (uint32_t i = 0; i < k; i++)
            s.remote_edges += dag_rank_of(dep[i], n) != dag_rank_of(t, n);
        uint64_t m = (uint64_t)dag_dest_ranks(d, t, n, ranks);
        s.messages += m;
        s.bytes_sent += m * d->t[t].bytes;
    }
    free(ranks);
    return s;
}

static const char *csv_head = "provider,ranks,tasks,width,degree,bytes_min,bytes_max,"
                              "compute_min_us,compute_max_us,seed,layers,edges,remote_edges,"
                              "messages,bytes_sent,cp_us,work_us,repeats,makespan_us,min_us,"
                              "max_us,checksum";

void dag_print_header(const dag *d, const dag_opts *o, int n, const char *who, const dag_stats *s)
{
    const dag_params *p = &d->p;
    if (o->csv) {
        puts(csv_head);
        return;
    }
    printf("# %s\n", who);
    printf("# DAG: %u tasks, width %u, %u layers, 1-%u inputs, outputs %u-%u B, compute %u-%u us"
           " of CPU, seed %llu; task i on rank i %% %d\n",
           p->tasks, p->width, d->nlayers, p->degree, p->bytes_min, p->bytes_max, p->compute_min_us,
           p->compute_max_us, (unsigned long long)p->seed, n);
    printf("# %u edges, %llu between ranks in %llu messages of %llu B in all; compute: critical"
           " path %llu us, total %llu us\n",
           d->nedges, (unsigned long long)s->remote_edges, (unsigned long long)s->messages,
           (unsigned long long)s->bytes_sent, (unsigned long long)s->cp_us,
           (unsigned long long)s->work_us);
    printf("# makespan: barrier exit to the slowest rank done; median, min, max of %d runs after"
           " %d warm-up\n",
           o->repeats, o->warmup);
    printf("%6s %5s %6s %6s %7s %8s %10s %8s %8s %11s %10s %10s %8s\n", "tasks", "ranks", "layers",
           "edges", "remote", "messages", "bytes_sent", "cp_us", "work_us", "makespan_us", "min_us",
           "max_us", "checksum");
}

void dag_print_row(const dag *d, const dag_opts *o, int n, const char *provider, const dag_stats *s,
                   double *ms, int ok)
{
    const dag_params *p = &d->p;
    int r = o->repeats;
    double lo = ms[0], hi = ms[0];
    for (int i = 1; i < r; i++) {
        lo = ms[i] < lo ? ms[i] : lo;
        hi = ms[i] > hi ? ms[i] : hi;
    }
    double med = bench_median(ms, r);
    const char *verdict = ok ? "OK" : "FAIL";
    if (o->csv)
        printf("%s,%d,%u,%u,%u,%u,%u,%u,%u,%llu,%u,%u,%llu,%llu,%llu,%llu,%llu,%d,%.1f,%.1f,%.1f,"
               "%s\n",
               provider, n, p->tasks, p->width, p->degree, p->bytes_min, p->bytes_max,
               p->compute_min_us, p->compute_max_us, (unsigned long long)p->seed, d->nlayers,
               d->nedges, (unsigned long long)s->remote_edges, (unsigned long long)s->messages,
               (unsigned long long)s->bytes_sent, (unsigned long long)s->cp_us,
               (unsigned long long)s->work_us, r, med, lo, hi, verdict);
    else
        printf("%6u %5d %6u %6u %7llu %8llu %10llu %8llu %8llu %11.1f %10.1f %10.1f %8s\n",
               p->tasks, n, d->nlayers, d->nedges, (unsigned long long)s->remote_edges,
               (unsigned long long)s->messages, (unsigned long long)s->bytes_sent,
               (unsigned long long)s->cp_us, (unsigned long long)s->work_us, med, lo, hi, verdict);
}

void dag_print_verdict(const dag *d, const dag_opts *o, int ok, long bad, uint64_t got,
                       uint64_t want)
{
    if (o->csv)
        return;
    printf("# checksum %s: %ld of %u task outputs x %d runs differed from the reference; last"
           " run's DAG checksum 0x%016llx, expected 0x%016llx\n",
           ok ? "OK" : "FAIL", bad, d->ntasks, o->warmup + o->repeats, (unsigned long long)got,
           (unsigned long long)want);
}
