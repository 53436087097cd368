/* SPDX-License-Identifier: BSD-3-Clause */
/* A layered random DAG of tasks for the DAG-scheduler benchmarks (bench/README.md, "DAG
 * scheduler"): the MPI baseline (bench/mpi/mpi_dag.c) and the fastmsg version build the same
 * DAG from the same parameters, run it, and check every task's output against the sequential
 * reference computed here. Plain C: no MPI, no fastmsg.
 *
 * The DAG, for parameters {tasks T, width W, degree D, bytes, compute, seed}:
 * - task ids 0..T-1; layer L holds tasks L*W .. min((L+1)*W, T)-1 (the last may be smaller);
 * - each task of layer L > 0 has k inputs, k uniform in 1..D (at most the number of earlier
 *   tasks): the first uniform in layer L-1, the others distinct and uniform over all earlier
 *   layers; inputs are listed in ascending id, so every edge goes to a higher id (acyclic, and
 *   id order is a topological order);
 * - each task's output size and compute time are uniform in their [min, max];
 * - task t runs on rank t % nranks (dag_rank_of), so a layer whose width is a multiple of
 *   the rank count is spread evenly.
 * Every random draw comes from one splitmix64 stream seeded with the seed, in this order:
 * per task in id order, its size, its compute time, then (layer > 0) k, the first input and
 * the others (a duplicate is drawn again). Results therefore do not depend on libc.
 *
 * A task's output: it hashes each input's bytes (dag_checksum), folds those sums in input
 * order with its id and the seed into a digest, and fills its output from a splitmix64 stream
 * seeded with the digest (dag_task_output). A wrong or missing input byte anywhere thus
 * changes the output of every task downstream of it. */
#ifndef BENCH_DAG_GEN_H
#define BENCH_DAG_GEN_H

#include <stddef.h>
#include <stdint.h>

/* Limits that keep every count in a uint32_t and every output within an MPI int count. */
#define DAG_MAX_TASKS  (1u << 24)
#define DAG_MAX_DEGREE 64u
#define DAG_MAX_BYTES  (1u << 30)

typedef struct dag_params {
    uint32_t tasks;                          /* T >= 1 */
    uint32_t width;                          /* W >= 1: tasks per layer */
    uint32_t degree;                         /* D in 1..DAG_MAX_DEGREE: most inputs of a task */
    uint32_t bytes_min, bytes_max;           /* output size per task, bytes */
    uint32_t compute_min_us, compute_max_us; /* compute per task, microseconds */
    uint64_t seed;
} dag_params;

/* The defaults the programs start from (bench/README.md lists them). */
#define DAG_DEFAULT_PARAMS                                                                         \
    ((dag_params){.tasks = 1000,                                                                   \
                  .width = 16,                                                                     \
                  .degree = 4,                                                                     \
                  .bytes_min = 64,                                                                 \
                  .bytes_max = 4096,                                                               \
                  .compute_min_us = 10,                                                            \
                  .compute_max_us = 100,                                                           \
                  .seed = 1})

typedef struct dag_task {
    uint32_t layer;
    uint32_t bytes;         /* output size */
    uint32_t compute_us;    /* compute time */
    uint32_t in_off, nin;   /* inputs: dag.in[in_off .. in_off + nin), ascending */
    uint32_t out_off, nout; /* dependents: dag.out[out_off .. out_off + nout), ascending */
} dag_task;

typedef struct dag {
    dag_params p;
    uint32_t ntasks, nlayers, nedges;
    dag_task *t;
    uint32_t *in, *out; /* every task's inputs, and dependents, back to back */
} dag;

/* NULL when p is usable, else why not (for an error message). */
const char *dag_check_params(const dag_params *p);
/* Builds the DAG of p into d: 0; -1 for bad parameters (dag_check_params) or no memory, with
 * d left empty. */
int dag_build(const dag_params *p, dag *d);
void dag_free(dag *d);

/* Task t's inputs (ascending ids) and their count. */
const uint32_t *dag_inputs(const dag *d, uint32_t t, uint32_t *n);
/* Task t's dependents (ascending ids) and their count. */
const uint32_t *dag_dependents(const dag *d, uint32_t t, uint32_t *n);
/* The rank that runs task t among nranks: t % nranks. */
static inline int dag_rank_of(uint32_t t, int nranks)
{
    return (int)(t % (uint32_t)nranks);
}

/* The ranks other than the task's own that run at least one of its dependents, ascending,
 * into ranks[] (room for nranks): the messages its output needs. Their count. */
int dag_dest_ranks(const dag *d, uint32_t t, int nranks, int *ranks);

/* A 64-bit hash of buf[0..len): changing any one byte always changes it. */
uint64_t dag_checksum(const void *buf, size_t len);
/* Fills out (d->t[t].bytes bytes) with task t's output, given the checksums of its inputs'
 * bytes in input order (NULL when it has none); returns the output's dag_checksum. */
uint64_t dag_task_output(const dag *d, uint32_t t, const uint64_t *in_sums, unsigned char *out);

/* Called by dag_reference on each output before its checksum is taken; it may change the
 * bytes (tests use it to show that one changed byte changes the result). */
typedef void dag_output_hook(uint32_t t, unsigned char *out, size_t len, void *arg);
/* Runs the DAG sequentially in id order: every task's output checksum into sums[] (room for
 * d->ntasks; may be NULL), and the DAG's checksum (dag_combine of them) returned; 0 with
 * *ok = 0 when out of memory. hook may be NULL. */
uint64_t dag_reference(const dag *d, uint64_t *sums, dag_output_hook *hook, void *arg, int *ok);
/* dag_reference without a hook: the value a correct run must produce. */
uint64_t dag_expected_checksum(const dag *d);
/* One task's share of the DAG's checksum; the DAG's is the XOR of every task's, so ranks can
 * combine theirs in any order (MPI_BXOR). */
uint64_t dag_combine(uint32_t t, uint64_t sum);

/* The longest path in compute time (no communication): the makespan with unlimited ranks
 * and free messages. */
uint64_t dag_critical_path_us(const dag *d);
/* The sum of every task's compute time. */
uint64_t dag_total_compute_us(const dag *d);

/* Busy-waits until this thread has used us microseconds of CPU time (CLOCK_THREAD_CPUTIME_ID),
 * so that a task's compute costs the same CPU whether or not its core is shared. */
void dag_compute(uint32_t us);

#endif
