/* SPDX-License-Identifier: BSD-3-Clause */
/* fastmsg-bench-mpi-dag-openmpi, fastmsg-bench-mpi-dag-mpich: the DAG scheduler a user would
 * write over MPI point-to-point, as the baseline for the fastmsg version (issue 18): the
 * makespan of one layered random DAG (bench/dag_gen.h) run by every rank together.
 *
 *   mpirun.openmpi -n N fastmsg-bench-mpi-dag-openmpi [options]     (-h lists them)
 *   mpiexec.mpich -n N fastmsg-bench-mpi-dag-mpich [options]
 *
 * Every rank builds the same DAG from the options and the sequential reference of every
 * task's output checksum (before any timing). Rank r owns the tasks t with t % N == r. A run:
 * MPI_Barrier; each rank reads its clock, posts one MPI_Irecv per remote input it needs (one
 * per (producer, this rank): tag = the producer's id, source = its rank), then loops: run the
 * oldest ready task, then MPI_Testsome over all its receives and sends. A task is ready when
 * all its inputs are here (local inputs count down as local producers finish, remote ones as
 * their receives complete). Running it: hash each input's bytes, spin its compute time of CPU
 * (dag_compute), write its output (dag_task_output), compare the output's checksum with the
 * reference, then MPI_Isend the output once to each other rank that runs a dependent (not
 * once per dependent). A rank is done when all its tasks ran and all its requests completed;
 * its time is from its barrier exit to then. The run's makespan is the slowest rank's time
 * (MPI_Reduce MAX; clocks of different processes are not compared, so barrier exit skew is
 * in it). --warmup untimed runs, then -r timed runs: the median makespan, min and max.
 *
 * Every run of every rank checks all its tasks; the failure count is summed over ranks and
 * the ranks' combined checksums (dag_combine) XORed on rank 0 against dag_expected_checksum.
 * Any failure: "checksum FAIL" and exit status 1 on every rank. Receive buffers are cleared
 * before each run, so a message that never arrived cannot pass with last run's bytes. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common.h"
#include "dag_gen.h"
#include "dag_opts.h"
#include "dag_report.h"
#include "mpi_common.h"

#define PROG "fastmsg-bench-mpi-dag-" MB_MPI

/* This rank's share of the DAG, laid out once for every run. Arrays indexed by task id are
 * filled only for the tasks this rank runs or receives. */
typedef struct plan {
    const dag *d;
    const dag_opts *o;
    int me, n;
    uint64_t *ref;         /* every task's reference output checksum */
    unsigned char **buf;   /* output of each task this rank runs or receives */
    uint32_t *mine, nmine; /* the tasks this rank runs, ascending */
    uint32_t *prod, nrecv; /* the remote producers whose outputs this rank receives */
    int *dest;             /* each task's destination ranks, from dest_off[t] */
    uint32_t *dest_off, *ndest;
    uint32_t nsend;              /* messages this rank sends per run */
    uint32_t *missing;           /* inputs each task still waits for */
    uint32_t *ready, head, tail; /* ready tasks, FIFO; each is queued once a run */
    MPI_Request *req;            /* receives [0, nrecv), then sends in posting order */
    uint32_t posted;             /* sends posted this run */
    long bad;                    /* task outputs that differed from the reference */
    uint64_t combined;           /* dag_combine of this rank's outputs, this run */
} plan;

static void *alloc0(size_t n, size_t size)
{
    return calloc(n ? n : 1, size);
}

/* Whether this rank needs producer p's output from another rank. */
static int needs_remote(const plan *pl, uint32_t p)
{
    if (dag_rank_of(p, pl->n) == pl->me)
        return 0;
    uint32_t k;
    const uint32_t *dep = dag_dependents(pl->d, p, &k);
    for (uint32_t i = 0; i < k; i++)
        if (dag_rank_of(dep[i], pl->n) == pl->me)
            return 1;
    return 0;
}

/* The tasks this rank runs and receives, their buffers and destinations. 0, or -1 when
 * out of memory. */
static int plan_layout(plan *pl)
{
    const dag *d = pl->d;
    uint32_t T = d->ntasks;
    pl->buf = alloc0(T, sizeof *pl->buf);
    pl->mine = alloc0(T, sizeof *pl->mine);
    pl->prod = alloc0(T, sizeof *pl->prod);
    pl->dest_off = alloc0(T, sizeof *pl->dest_off);
    pl->ndest = alloc0(T, sizeof *pl->ndest);
    pl->missing = alloc0(T, sizeof *pl->missing);
    pl->ready = alloc0(T, sizeof *pl->ready);
    pl->dest = alloc0((size_t)T / (uint32_t)pl->n + 1, sizeof *pl->dest * (size_t)pl->n);
    if (!pl->buf || !pl->mine || !pl->prod || !pl->dest_off || !pl->ndest || !pl->missing ||
        !pl->ready || !pl->dest)
        return -1;
    uint32_t off = 0;
    for (uint32_t t = 0; t < T; t++) {
        int own = dag_rank_of(t, pl->n) == pl->me;
        if (own) {
            pl->mine[pl->nmine++] = t;
            pl->dest_off[t] = off;
            pl->ndest[t] = (uint32_t)dag_dest_ranks(d, t, pl->n, pl->dest + off);
            off += pl->ndest[t];
        } else if (needs_remote(pl, t)) {
            pl->prod[pl->nrecv++] = t;
        } else {
            continue;
        }
        if (!(pl->buf[t] = malloc(d->t[t].bytes ? d->t[t].bytes : 1)))
            return -1;
    }
    pl->nsend = off;
    pl->req = alloc0((size_t)pl->nrecv + pl->nsend, sizeof *pl->req);
    return pl->req ? 0 : -1;
}

static int plan_init(plan *pl)
{
    int ok;
    pl->ref = alloc0(pl->d->ntasks, sizeof *pl->ref);
    if (!pl->ref || plan_layout(pl))
        return -1;
    dag_reference(pl->d, pl->ref, NULL, NULL, &ok);
    return ok ? 0 : -1;
}

static void plan_free(plan *pl)
{
    for (uint32_t t = 0; pl->buf && t < pl->d->ntasks; t++)
        free(pl->buf[t]);
    free(pl->buf);
    free(pl->ref);
    free(pl->mine);
    free(pl->prod);
    free(pl->dest);
    free(pl->dest_off);
    free(pl->ndest);
    free(pl->missing);
    free(pl->ready);
    free(pl->req);
}

/* One input of task u has arrived. */
static void input_arrived(plan *pl, uint32_t u)
{
    if (--pl->missing[u] == 0)
        pl->ready[pl->tail++] = u;
}

/* Producer p's output is here (run locally or received): its dependents on this rank. */
static void output_here(plan *pl, uint32_t p)
{
    uint32_t k;
    const uint32_t *dep = dag_dependents(pl->d, p, &k);
    for (uint32_t i = 0; i < k; i++)
        if (dag_rank_of(dep[i], pl->n) == pl->me)
            input_arrived(pl, dep[i]);
}

static void run_task(plan *pl, uint32_t t)
{
    const dag *d = pl->d;
    uint64_t sums[DAG_MAX_DEGREE];
    uint32_t nin;
    const uint32_t *in = dag_inputs(d, t, &nin);
    for (uint32_t i = 0; i < nin; i++)
        sums[i] = dag_checksum(pl->buf[in[i]], d->t[in[i]].bytes);
    dag_compute(d->t[t].compute_us);
    uint64_t sum = dag_task_output(d, t, sums, pl->buf[t]);
    pl->bad += sum != pl->ref[t];
    pl->combined ^= dag_combine(t, sum);
    if ((long)t == pl->o->corrupt && d->t[t].bytes)
        pl->buf[t][0] ^= 1;
    /* Remote dependents first: their ranks may be idle waiting for it. */
    for (uint32_t i = 0; i < pl->ndest[t]; i++)
        MPI_Isend(pl->buf[t], (int)d->t[t].bytes, MPI_BYTE, pl->dest[pl->dest_off[t] + i], (int)t,
                  MPI_COMM_WORLD, &pl->req[pl->nrecv + pl->posted++]);
    output_here(pl, t);
}

/* Before the clock starts: counts, queue and cleared buffers. */
static void reset(plan *pl)
{
    const dag *d = pl->d;
    pl->head = pl->tail = pl->posted = 0;
    pl->combined = 0;
    for (uint32_t i = 0; i < pl->nmine; i++) {
        uint32_t t = pl->mine[i];
        pl->missing[t] = d->t[t].nin;
        if (!pl->missing[t])
            pl->ready[pl->tail++] = t;
        memset(pl->buf[t], 0, d->t[t].bytes);
    }
    for (uint32_t i = 0; i < pl->nrecv; i++)
        memset(pl->buf[pl->prod[i]], 0, d->t[pl->prod[i]].bytes);
}

/* MPI_Testsome's outputs, room for every request of a run. */
typedef struct done_list {
    int *idx;
    MPI_Status *st;
} done_list;

/* The receives and sends that completed since the last call. */
static uint32_t poll_requests(plan *pl, done_list *dl)
{
    int count = (int)(pl->nrecv + pl->posted), done = 0;
    if (count == 0)
        return 0;
    MPI_Testsome(count, pl->req, &done, dl->idx, dl->st);
    if (done == MPI_UNDEFINED)
        return 0;
    for (int i = 0; i < done; i++)
        if ((uint32_t)dl->idx[i] < pl->nrecv)
            output_here(pl, pl->prod[dl->idx[i]]);
    return (uint32_t)done;
}

/* One run of the DAG on this rank; its time from the barrier's exit, us. */
static double run_once(plan *pl, done_list *dl)
{
    const dag *d = pl->d;
    reset(pl);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = bench_now_us(CLOCK_MONOTONIC);
    for (uint32_t i = 0; i < pl->nrecv; i++) {
        uint32_t p = pl->prod[i];
        MPI_Irecv(pl->buf[p], (int)d->t[p].bytes, MPI_BYTE, dag_rank_of(p, pl->n), (int)p,
                  MPI_COMM_WORLD, &pl->req[i]);
    }
    uint32_t ran = 0, open = pl->nrecv;
    while (ran < pl->nmine || open > 0) {
        if (pl->head < pl->tail) {
            uint32_t before = pl->posted;
            run_task(pl, pl->ready[pl->head++]);
            ran++;
            open += pl->posted - before;
        }
        open -= poll_requests(pl, dl);
    }
    return bench_now_us(CLOCK_MONOTONIC) - t0;
}

/* Every run; rank 0 gets the slowest rank's time of each timed run into ms[]. */
static void run_all(plan *pl, double *ms)
{
    size_t nreq = (size_t)pl->nrecv + pl->nsend + 1;
    done_list dl = {malloc(sizeof *dl.idx * nreq), malloc(sizeof *dl.st * nreq)};
    if (!dl.idx || !dl.st) {
        fprintf(stderr, PROG ": rank %d: no memory\n", pl->me);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int r = 0; r < pl->o->warmup + pl->o->repeats; r++) {
        mb_watchdog_arm();
        double us = run_once(pl, &dl), worst = 0;
        MPI_Reduce(&us, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (r >= pl->o->warmup)
            ms[r - pl->o->warmup] = worst;
    }
    mb_watchdog_stop();
    free(dl.idx);
    free(dl.st);
}

/* What the runs computed, against the reference. */
typedef struct verdict {
    long bad;      /* task outputs that differed, every rank and run */
    uint64_t got;  /* the last run's combined checksum (rank 0) */
    uint64_t want; /* dag_expected_checksum (rank 0) */
    int ok;
} verdict;

/* Failures summed over ranks (every rank learns them, so that all exit alike) and the last
 * run's checksums combined on rank 0. */
static verdict verify(plan *pl)
{
    verdict v = {0};
    MPI_Allreduce(&pl->bad, &v.bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Reduce(&pl->combined, &v.got, 1, MPI_UINT64_T, MPI_BXOR, 0, MPI_COMM_WORLD);
    if (pl->bad)
        fprintf(stderr, PROG ": rank %d: %ld task outputs differed from the reference\n", pl->me,
                pl->bad);
    v.ok = v.bad == 0;
    if (pl->me == 0) {
        v.want = dag_expected_checksum(pl->d);
        v.ok = v.ok && v.got == v.want;
    }
    return v;
}

/* The options against this job: 0, or 2 after saying why on rank 0. */
static int check_job(const dag_opts *o, int me)
{
    int *tag_ub = NULL, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    long ub = flag && tag_ub ? *tag_ub : 32767;
    if ((long)o->p.tasks - 1 <= ub)
        return 0;
    if (me == 0)
        fprintf(stderr,
                PROG ": tags are task ids, and this MPI's tags end at %ld: --tasks %ld"
                     " at most\n",
                ub, ub + 1);
    return 2;
}

int main(int argc, char **argv)
{
    static const dag_cli cli = {
        .launch = MB_LAUNCH " N",
        .what = "Makespan of a layered random DAG of tasks run over MPI point-to-point\n"
                "(MPI_Irecv per remote input, MPI_Isend per destination rank, MPI_Testsome).",
    };
    dag_opts o;
    int prc = dag_parse_cli(argc, argv, &cli, &o);
    if (prc)
        return prc > 0 ? 0 : 2;
    int me, n, status = mb_start(&argc, &argv, PROG, o.timeout_s, &me, &n);
    dag d = {0};
    plan pl = {.d = &d, .o = &o};
    double *ms = calloc((size_t)o.repeats, sizeof *ms);
    if (status == 0)
        status = check_job(&o, me);
    if (status == 0) {
        pl.me = me;
        pl.n = n;
        if (!ms || dag_build(&o.p, &d) || plan_init(&pl)) {
            fprintf(stderr, PROG ": rank %d: no memory for the DAG\n", me);
            status = 1;
        }
    }
    if (mb_all_ok(&status)) {
        dag_stats s = dag_stats_of(&d, n);
        if (me == 0) {
            char lib[256], tp[256], who[600];
            mb_library(lib, sizeof lib);
            mb_transport(tp, sizeof tp);
            snprintf(who, sizeof who, PROG " (%s): %d ranks, %s", lib, n, tp);
            dag_print_header(&d, &o, n, who, &s);
        }
        run_all(&pl, ms);
        verdict v = verify(&pl);
        if (me == 0) {
            dag_print_row(&d, &o, n, MB_MPI, &s, ms, v.ok);
            dag_print_verdict(&d, &o, v.ok, v.bad, v.got, v.want);
        }
        status = v.ok ? 0 : 1;
    }
    if (d.t)
        plan_free(&pl);
    dag_free(&d);
    free(ms);
    mb_finish();
    return status;
}
