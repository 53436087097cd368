/* SPDX-License-Identifier: BSD-3-Clause */
/* The benchmarks' layered random DAG and its sequential reference (dag_gen.h). */
#include "dag_gen.h"

#include "common.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* splitmix64 (bench_mix64 is its finalizer): a tiny generator whose stream is fixed by its
 * seed, on every platform. */
static uint64_t next64(uint64_t *s)
{
    *s += 0x9e3779b97f4a7c15ULL;
    return bench_mix64(*s);
}

/* Uniform in [lo, hi] (the modulo's bias is below 2^-32 for the ranges used here). */
static uint32_t draw(uint64_t *s, uint32_t lo, uint32_t hi)
{
    return lo + (uint32_t)(next64(s) % ((uint64_t)hi - lo + 1));
}

const char *dag_check_params(const dag_params *p)
{
    if (p->tasks < 1 || p->tasks > DAG_MAX_TASKS)
        return "--tasks is 1 .. 16777216";
    if (p->width < 1 || p->width > p->tasks)
        return "--width is 1 .. --tasks";
    if (p->degree < 1 || p->degree > DAG_MAX_DEGREE)
        return "--degree is 1 .. 64";
    if (p->bytes_min > p->bytes_max || p->bytes_max > DAG_MAX_BYTES)
        return "--bytes is MIN[-MAX], MIN <= MAX <= 1G";
    if (p->compute_min_us > p->compute_max_us)
        return "--compute-us is MIN[-MAX], MIN <= MAX";
    return NULL;
}

void dag_free(dag *d)
{
    free(d->t);
    free(d->in);
    free(d->out);
    memset(d, 0, sizeof *d);
}

static int has(const uint32_t *v, uint32_t n, uint32_t x)
{
    for (uint32_t i = 0; i < n; i++)
        if (v[i] == x)
            return 1;
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Task t's inputs into in[] (room for degree); their count. */
static uint32_t draw_inputs(const dag_params *p, uint32_t layer, uint64_t *s, uint32_t *in)
{
    uint32_t earlier = layer * p->width; /* tasks in layers 0 .. layer-1 */
    uint32_t k = draw(s, 1, p->degree);
    if (k > earlier)
        k = earlier;
    in[0] = draw(s, earlier - p->width, earlier - 1);
    for (uint32_t n = 1; n < k;) {
        uint32_t c = draw(s, 0, earlier - 1);
        if (!has(in, n, c))
            in[n++] = c;
    }
    qsort(in, k, sizeof *in, cmp_u32);
    return k;
}

/* Every task's layer, size, compute time and inputs; d->in holds up to degree a task. */
static void draw_tasks(dag *d)
{
    const dag_params *p = &d->p;
    uint64_t s = p->seed;
    uint32_t off = 0;
    for (uint32_t t = 0; t < d->ntasks; t++) {
        dag_task *k = &d->t[t];
        k->layer = t / p->width;
        k->bytes = draw(&s, p->bytes_min, p->bytes_max);
        k->compute_us = draw(&s, p->compute_min_us, p->compute_max_us);
        k->in_off = off;
        k->nin = k->layer ? draw_inputs(p, k->layer, &s, d->in + off) : 0;
        off += k->nin;
    }
    d->nedges = off;
}

/* The dependents' lists from the inputs' (counting sort: ascending per task). */
static void link_dependents(dag *d)
{
    for (uint32_t t = 0; t < d->ntasks; t++)
        for (uint32_t i = 0; i < d->t[t].nin; i++)
            d->t[d->in[d->t[t].in_off + i]].nout++;
    uint32_t off = 0;
    for (uint32_t t = 0; t < d->ntasks; t++) {
        d->t[t].out_off = off;
        off += d->t[t].nout;
        d->t[t].nout = 0;
    }
    for (uint32_t t = 0; t < d->ntasks; t++)
        for (uint32_t i = 0; i < d->t[t].nin; i++) {
            dag_task *src = &d->t[d->in[d->t[t].in_off + i]];
            d->out[src->out_off + src->nout++] = t;
        }
}

int dag_build(const dag_params *p, dag *d)
{
    memset(d, 0, sizeof *d);
    if (dag_check_params(p))
        return -1;
    d->p = *p;
    d->ntasks = p->tasks;
    d->nlayers = (p->tasks + p->width - 1) / p->width;
    size_t max_edges = (size_t)p->tasks * p->degree;
    d->t = calloc(p->tasks, sizeof *d->t);
    d->in = malloc(max_edges * sizeof *d->in);
    if (!d->t || !d->in) {
        dag_free(d);
        return -1;
    }
    draw_tasks(d);
    /* Shrink to the edges drawn; a failed shrink keeps the larger block. */
    uint32_t *in = realloc(d->in, (d->nedges ? d->nedges : 1) * sizeof *d->in);
    if (in)
        d->in = in;
    d->out = malloc((d->nedges ? d->nedges : 1) * sizeof *d->out);
    if (!d->out) {
        dag_free(d);
        return -1;
    }
    link_dependents(d);
    return 0;
}

const uint32_t *dag_inputs(const dag *d, uint32_t t, uint32_t *n)
{
    *n = d->t[t].nin;
    return d->in + d->t[t].in_off;
}

const uint32_t *dag_dependents(const dag *d, uint32_t t, uint32_t *n)
{
    *n = d->t[t].nout;
    return d->out + d->t[t].out_off;
}

int dag_dest_ranks(const dag *d, uint32_t t, int nranks, int *ranks)
{
    uint32_t n;
    const uint32_t *dep = dag_dependents(d, t, &n);
    int self = dag_rank_of(t, nranks), count = 0;
    /* Dependents ascend, so one rank's come in no particular order: a scan of the short
     * list found so far is enough (at most nranks - 1 long). */
    for (uint32_t i = 0; i < n; i++) {
        int r = dag_rank_of(dep[i], nranks), seen = r == self;
        for (int j = 0; j < count && !seen; j++)
            seen = ranks[j] == r;
        if (!seen)
            ranks[count++] = r;
    }
    qsort(ranks, (size_t)count, sizeof *ranks, cmp_int);
    return count;
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t dag_checksum(const void *buf, size_t len)
{
    /* Each step h -> rotl(h ^ w, 29) * odd is a bijection of h for a fixed word w, and of w
     * for a fixed h, so one changed word (hence byte) always changes the result. */
    const unsigned char *b = buf;
    uint64_t h = 0x6a09e667f3bcc909ULL ^ len;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = rotl(h ^ w, 29) * 0x9e3779b97f4a7c15ULL;
    }
    uint64_t tail = 0;
    for (size_t j = 0; i + j < len; j++)
        tail |= (uint64_t)b[i + j] << (8 * j);
    h = rotl(h ^ tail, 29) * 0x9e3779b97f4a7c15ULL;
    return bench_mix64(h);
}

uint64_t dag_task_output(const dag *d, uint32_t t, const uint64_t *in_sums, unsigned char *out)
{
    uint64_t s = bench_mix64(d->p.seed ^ bench_mix64((uint64_t)t + 1));
    for (uint32_t i = 0; i < d->t[t].nin; i++)
        s = bench_mix64(s ^ in_sums[i]) + i;
    size_t len = d->t[t].bytes, i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w = next64(&s);
        memcpy(out + i, &w, 8);
    }
    if (i < len) {
        uint64_t w = next64(&s);
        memcpy(out + i, &w, len - i);
    }
    return dag_checksum(out, len);
}

uint64_t dag_combine(uint32_t t, uint64_t sum)
{
    return bench_mix64(sum ^ bench_mix64((uint64_t)t + 0x51ed27));
}

uint64_t dag_reference(const dag *d, uint64_t *sums, dag_output_hook *hook, void *arg, int *ok)
{
    /* An input's bytes hash to its producer's recorded sum, so the reference keeps sums
     * only, and one output buffer. */
    uint64_t *all = malloc((d->ntasks ? d->ntasks : 1) * sizeof *all);
    uint32_t maxb = d->p.bytes_max;
    unsigned char *buf = malloc(maxb ? maxb : 1);
    uint64_t in_sums[DAG_MAX_DEGREE], total = 0;
    *ok = all && buf;
    for (uint32_t t = 0; *ok && t < d->ntasks; t++) {
        uint32_t n;
        const uint32_t *in = dag_inputs(d, t, &n);
        for (uint32_t i = 0; i < n; i++)
            in_sums[i] = all[in[i]];
        dag_task_output(d, t, in_sums, buf);
        if (hook)
            hook(t, buf, d->t[t].bytes, arg);
        all[t] = dag_checksum(buf, d->t[t].bytes);
        total ^= dag_combine(t, all[t]);
    }
    if (*ok && sums)
        memcpy(sums, all, d->ntasks * sizeof *sums);
    free(all);
    free(buf);
    return *ok ? total : 0;
}

uint64_t dag_expected_checksum(const dag *d)
{
    int ok;
    return dag_reference(d, NULL, NULL, NULL, &ok);
}

uint64_t dag_critical_path_us(const dag *d)
{
    /* Id order is a topological order: one pass of earliest finish times. */
    uint64_t *finish = malloc((d->ntasks ? d->ntasks : 1) * sizeof *finish), best = 0;
    if (!finish)
        return 0;
    for (uint32_t t = 0; t < d->ntasks; t++) {
        uint32_t n;
        const uint32_t *in = dag_inputs(d, t, &n);
        uint64_t start = 0;
        for (uint32_t i = 0; i < n; i++)
            if (finish[in[i]] > start)
                start = finish[in[i]];
        finish[t] = start + d->t[t].compute_us;
        if (finish[t] > best)
            best = finish[t];
    }
    free(finish);
    return best;
}

uint64_t dag_total_compute_us(const dag *d)
{
    uint64_t sum = 0;
    for (uint32_t t = 0; t < d->ntasks; t++)
        sum += d->t[t].compute_us;
    return sum;
}

static double cpu_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

void dag_compute(uint32_t us)
{
    if (!us)
        return;
    double end = cpu_us() + us;
    while (cpu_us() < end)
        ;
}
