/* SPDX-License-Identifier: BSD-3-Clause */
/* dag: a DAG scheduler on the public fastmsg API only (README.md next to this file).
 *
 *   fastmsg-run -n 4 ./dag [options]      (-h lists them; the same as the MPI baseline's,
 *                                          bench/mpi/mpi_dag.c, plus --tree, --die-at and
 *                                          --workers)
 *
 * Every rank builds the same layered random DAG (bench/dag_gen.h) and the sequential
 * reference of every task's output. Rank t % N runs task t once all its inputs are here, and
 * sends its output ONCE to the other ranks that run its dependents: fm_isend to one rank,
 * fm_imcast_dests down a tree (--tree, default prefix) to several. A message is
 * [u32 task id][output bytes]; a whole-message handler copies it into that task's input
 * buffer and counts down the inputs its dependents miss. The main loop runs a ready task when
 * there is one, else sleeps in fm_wait: ranks never spin, so 16 ranks share 2 cores.
 * With --workers N it is a task runtime's communication thread instead: it only drives
 * progress (fm_wait, handlers, callbacks) and hands ready tasks to N worker threads, which run
 * them and start their sends themselves (fastmsg's submission path for other threads).
 * Each run is timed from fm_barrier's exit; every task's output is checked on every run; the
 * ranks' results go to rank 0 as fastmsg messages, which prints the makespan (the slowest
 * rank; median, min and max of -r runs) in the MPI baseline's format. */
#include <fastmsg.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "dag_gen.h"
#include "dag_opts.h"
#include "dag_report.h"
#include "opt_parse.h"

#define HDR 4 /* a message's task id before the output: host byte order, one job one ABI */
enum { H_OUTPUT, H_REPORT, H_VERDICT }; /* handler ids, the same on every rank */
#define MAX_WORKERS 256

typedef struct report {        /* a rank's results, sent to rank 0 at the end */
    int64_t bad;               /* its task outputs that differed from the reference, every run */
    uint64_t combined;         /* dag_combine of its outputs, last run */
    double us[DAG_MAX_REPEAT]; /* its time of each timed run */
} report;

typedef struct sched {
    fm_context *ctx;
    const dag *d;
    const dag_opts *o;
    int me, n;
    uint64_t *ref;               /* every task's reference output checksum */
    unsigned char **buf;         /* HDR + output of each task this rank runs or needs */
    uint32_t *missing;           /* inputs each of its tasks still waits for */
    uint32_t *ready, head, tail; /* ready tasks, FIFO */
    uint32_t nmine, ran;         /* tasks this rank runs, and ran this run */
    uint32_t nneed, arrived;     /* remote outputs it needs per run, and got this run */
    atomic_int open;             /* requests started, not completed (workers start some) */
    int failed;                  /* a message or request failed (an FM_ERR_*) */
    int *dests;                  /* room for n ranks */
    report mine;                 /* this rank's results */
    report *all;                 /* rank 0: every rank's */
    int reports, verdicts;       /* reports rank 0 has; verdicts the others got (one) */
    int verdict;                 /* 1: every check passed */
    struct pool *pool;           /* --workers; NULL: the main thread runs the tasks */
} sched;

/* --workers: N threads that run tasks, and the two queues between them and the progress
 * thread under one lock, which orders every buffer's hand-over: a task goes to a worker (todo)
 * after the handler wrote its remote inputs; the worker writes its output, starts its send and
 * puts the task in done; the progress thread counts it there, and then its dependents here
 * read that output. Nobody writes an output again before the next run, after its send
 * completed (the callback). */
typedef struct finished {
    uint32_t t;
    int rc;       /* starting its send: FM_OK or an error */
    uint64_t sum; /* its output's checksum */
} finished;

typedef struct worker {
    sched *s;
    pthread_t thread;
    int *dests; /* room for n ranks: its own, as it starts requests at any time */
} worker;

typedef struct pool {
    pthread_mutex_t lock;
    pthread_cond_t work;          /* a task was handed out, or stop was set */
    uint32_t *todo, given, taken; /* this run's tasks handed out, and taken by workers */
    finished *done;               /* this run's finished tasks: appended by workers, */
    uint32_t ndone, counted;      /*   and those the progress thread counted (its own) */
    int stop;                     /* the workers are to return */
    int n;
    worker *w;
} pool;

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "dag: a run lasted longer than --timeout\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(1);
}

/* Producer p's output is here (run here or received): count down its dependents here. */
static void output_here(sched *s, uint32_t p)
{
    uint32_t k;
    const uint32_t *dep = dag_dependents(s->d, p, &k);
    for (uint32_t i = 0; i < k; i++)
        if (dag_rank_of(dep[i], s->n) == s->me && --s->missing[dep[i]] == 0)
            s->ready[s->tail++] = dep[i];
}

/* Whole-message handler: another rank's output. buf is fastmsg's, valid during the call. */
static void on_output(const void *buf, size_t len, int status, int sender, void *arg)
{
    sched *s = arg;
    uint32_t t = UINT32_MAX;
    if (status == FM_OK && len >= HDR)
        memcpy(&t, buf, HDR);
    if (t >= s->d->ntasks || !s->buf[t] || len != HDR + (size_t)s->d->t[t].bytes ||
        dag_rank_of(t, s->n) == s->me) {
        fprintf(stderr, "dag: rank %d: bad message from rank %d (%s, %zu B)\n", s->me, sender,
                fm_strerror(status), len);
        s->failed = status ? status : FM_ERR_INVALID;
        return;
    }
    memcpy(s->buf[t] + HDR, (const char *)buf + HDR, len - HDR);
    s->arrived++;
    output_here(s, t);
}

/* A request's completion callback (on the progress thread): its output buffer is ours again. */
static void sent(int status, void *arg)
{
    sched *s = arg;
    atomic_fetch_sub(&s->open, 1);
    if (status != FM_OK)
        s->failed = status;
}

/* Start the one request that sends task t's output to the other ranks that need it, if any:
 * fm_isend to one, fm_imcast_dests down --tree to several. dests: room for n ranks. From a
 * worker (req NULL) the request is queued for the progress thread, where its callback runs. */
static int start_send(sched *s, uint32_t t, int *dests)
{
    int nd = dag_dest_ranks(s->d, t, s->n, dests), rc;
    size_t len = HDR + (size_t)s->d->t[t].bytes;
    if (nd == 0)
        return FM_OK;
    atomic_fetch_add(&s->open, 1); /* first: a worker's request may complete before we return */
    if (nd == 1)
        rc = fm_isend(s->ctx, dests[0], s->buf[t], len, H_OUTPUT, sent, s, NULL);
    else /* a destination set from this root: it travels compactly, whatever its size */
        rc = fm_imcast_dests(s->ctx, dests, nd, s->o->tree, 0, s->buf[t], len, H_OUTPUT, sent, s,
                             NULL);
    if (rc != FM_OK)
        atomic_fetch_sub(&s->open, 1);
    return rc;
}

/* Task t's output into its buffer, from its inputs' buffers; its checksum. */
static uint64_t compute(sched *s, uint32_t t)
{
    const dag *d = s->d;
    if ((long)t == s->o->die_at) {
        printf("dag: rank %d dies (SIGKILL) at task %u\n", s->me, t);
        fflush(stdout);
        raise(SIGKILL);
    }
    uint64_t sums[DAG_MAX_DEGREE];
    uint32_t nin;
    const uint32_t *in = dag_inputs(d, t, &nin);
    for (uint32_t i = 0; i < nin; i++)
        sums[i] = dag_checksum(s->buf[in[i]] + HDR, d->t[in[i]].bytes);
    dag_compute(d->t[t].compute_us);
    uint64_t sum = dag_task_output(d, t, sums, s->buf[t] + HDR);
    if ((long)t == s->o->corrupt && d->t[t].bytes)
        s->buf[t][HDR] ^= 1; /* after its own checksum: its dependents must fail theirs */
    return sum;
}

/* Task t ran here (output checksum sum): check it, count down its dependents here. */
static void task_ran(sched *s, uint32_t t, uint64_t sum)
{
    s->mine.bad += sum != s->ref[t];
    s->mine.combined ^= dag_combine(t, sum);
    s->ran++;
    output_here(s, t);
}

/* Without workers: run task t on this thread and send its output. */
static int run_task(sched *s, uint32_t t)
{
    uint64_t sum = compute(s, t);
    int rc;
    /* FM_EAGAIN: FM_REQUESTS requests are out. Waiting completes some; rare, so block. */
    while ((rc = start_send(s, t, s->dests)) == FM_EAGAIN && (rc = (int)fm_wait(s->ctx, -1)) >= 0)
        ;
    task_ran(s, t, sum); /* after the send: remote dependents' ranks may be idle */
    return rc;
}

/* A worker's next task; 0 when it is to stop. */
static int take_task(pool *p, uint32_t *t)
{
    pthread_mutex_lock(&p->lock);
    while (!p->stop && p->taken == p->given)
        pthread_cond_wait(&p->work, &p->lock);
    int got = !p->stop;
    if (got)
        *t = p->todo[p->taken++];
    pthread_mutex_unlock(&p->lock);
    return got;
}

static int stopping(pool *p)
{
    pthread_mutex_lock(&p->lock);
    int stop = p->stop;
    pthread_mutex_unlock(&p->lock);
    return stop;
}

/* A worker's send. FM_EAGAIN (FM_REQUESTS requests queued) passes once the progress thread
 * has started some: nap and retry, unless the pool stops (a failed run: nobody drains). */
static int worker_send(sched *s, uint32_t t, int *dests)
{
    int rc;
    while ((rc = start_send(s, t, dests)) == FM_EAGAIN && !stopping(s->pool))
        nanosleep((&(struct timespec){0, 100 * 1000}), NULL);
    return rc;
}

/* A worker: task t is done; the progress thread, woken, counts it. */
static void finish(sched *s, finished f)
{
    pool *p = s->pool;
    pthread_mutex_lock(&p->lock);
    p->done[p->ndone++] = f;
    pthread_mutex_unlock(&p->lock);
    fm_wake(s->ctx);
}

/* A worker thread: take a ready task, compute it, start its send, hand it back. */
static void *worker_main(void *arg)
{
    worker *w = arg;
    sched *s = w->s;
    uint32_t t;
    while (take_task(s->pool, &t)) {
        uint64_t sum = compute(s, t);
        int rc = worker_send(s, t, w->dests);
        finish(s, (finished){.t = t, .rc = rc, .sum = sum});
    }
    return NULL;
}

/* The progress thread: its ready tasks to the workers. */
static void hand_out(sched *s)
{
    pool *p = s->pool;
    if (s->head == s->tail)
        return;
    pthread_mutex_lock(&p->lock);
    while (s->head < s->tail)
        p->todo[p->given++] = s->ready[s->head++];
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->lock);
}

/* The progress thread: count the tasks the workers finished since the last call. */
static void count_finished(sched *s)
{
    pool *p = s->pool;
    pthread_mutex_lock(&p->lock);
    uint32_t end = p->ndone; /* the entries before it are complete: workers only append */
    pthread_mutex_unlock(&p->lock);
    for (; p->counted < end; p->counted++) {
        finished f = p->done[p->counted];
        if (f.rc != FM_OK)
            s->failed = f.rc;
        task_ran(s, f.t, f.sum);
    }
}

/* Between runs (every task handed out was counted: the workers wait for the next). */
static void pool_reset(pool *p)
{
    pthread_mutex_lock(&p->lock);
    p->given = p->taken = p->ndone = 0;
    pthread_mutex_unlock(&p->lock);
    p->counted = 0;
}

/* n worker threads, waiting for tasks. 0, or -1 (no memory or no thread). */
static int pool_start(sched *s, int n)
{
    pool *p = s->pool = calloc(1, sizeof *p);
    if (!p || !(p->todo = calloc(s->d->ntasks, sizeof *p->todo)) ||
        !(p->done = calloc(s->d->ntasks, sizeof *p->done)) ||
        !(p->w = calloc((size_t)n, sizeof *p->w)))
        return -1;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->work, NULL);
    for (; p->n < n; p->n++) {
        worker *w = &p->w[p->n];
        w->s = s;
        if (!(w->dests = calloc((size_t)s->n, sizeof *w->dests)) ||
            pthread_create(&w->thread, NULL, worker_main, w))
            return -1;
    }
    return 0;
}

/* Before fm_finalize: a worker finishes its task (its send starts), then returns. */
static void pool_stop(sched *s)
{
    pool *p = s->pool;
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->n; i++) {
        pthread_join(p->w[i].thread, NULL);
        free(p->w[i].dests);
    }
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->work);
    free(p->w);
    free(p->todo);
    free(p->done);
    free(p);
    s->pool = NULL;
}

/* This run goes on here: tasks to run, remote outputs to come, sends to complete. */
static int running(sched *s)
{
    return s->ran < s->nmine || s->arrived < s->nneed || atomic_load(&s->open) > 0;
}

/* Without workers: run the oldest ready task, else sleep until a message or a completion. */
static int drive_alone(sched *s)
{
    int rc = FM_OK;
    while (rc == FM_OK && !s->failed && running(s)) {
        long w;
        if (s->head < s->tail) {
            rc = run_task(s, s->ready[s->head++]);
            w = fm_extract(s->ctx, 0); /* push its output out, take what came */
        } else {
            w = fm_wait(s->ctx, -1); /* sleep until a message or a send completes */
        }
        if (rc == FM_OK && w < 0)
            rc = (int)w;
    }
    return rc;
}

/* With workers: count what they finished, hand out what is ready, then sleep until a
 * message, a completion or a worker's fm_wake (one sent after the count ends the next
 * fm_wait at once: no finished task goes unseen). */
static int drive_workers(sched *s)
{
    for (;;) {
        count_finished(s);
        hand_out(s);
        if (s->failed || !running(s))
            return FM_OK;
        long w = fm_wait(s->ctx, -1);
        if (w < 0)
            return (int)w;
    }
}

/* One run; this rank's time from the barrier's exit, us, into *us. */
static int run_once(sched *s, double *us)
{
    const dag *d = s->d;
    s->head = s->tail = s->ran = s->arrived = 0;
    s->mine.combined = 0;
    if (s->pool)
        pool_reset(s->pool);
    for (uint32_t t = 0; t < d->ntasks; t++) {
        if (!s->buf[t])
            continue;
        memset(s->buf[t] + HDR, 0, d->t[t].bytes); /* no pass with last run's bytes */
        if (dag_rank_of(t, s->n) == s->me && (s->missing[t] = d->t[t].nin) == 0)
            s->ready[s->tail++] = t;
    }
    alarm((unsigned)s->o->timeout_s);
    int rc = fm_barrier(s->ctx); /* every rank reset: no message of this run comes early */
    double t0 = bench_now_us(CLOCK_MONOTONIC);
    if (rc == FM_OK) /* (the workers get this run's first tasks only now) */
        rc = s->pool ? drive_workers(s) : drive_alone(s);
    *us = bench_now_us(CLOCK_MONOTONIC) - t0;
    alarm(0);
    return rc ? rc : s->failed;
}

/* Rank 0 collects the reports; the others wait for its verdict. */
static void on_report(const void *buf, size_t len, int status, int sender, void *arg)
{
    sched *s = arg;
    if (status == FM_OK && len == sizeof(report))
        memcpy(&s->all[sender], buf, len);
    else
        s->failed = status ? status : FM_ERR_INVALID;
    s->reports++;
}

static void on_verdict(const void *buf, size_t len, int status, int sender, void *arg)
{
    (void)sender;
    sched *s = arg;
    s->verdict = status == FM_OK && len == 1 && *(const unsigned char *)buf == 1;
    s->verdicts++;
}

/* Drive progress (handlers run) until *count reaches want. */
static int wait_for(sched *s, const int *count, int want)
{
    while (*count < want && !s->failed) {
        long w = fm_wait(s->ctx, -1);
        if (w < 0)
            return (int)w;
    }
    return s->failed;
}

/* Every rank's results to rank 0, which prints them and tells every rank whether to fail. */
static int gather(sched *s, const dag_stats *st)
{
    const dag_opts *o = s->o;
    fm_request *req = NULL;
    int rc;
    if (s->me != 0) {
        rc = fm_isend(s->ctx, 0, &s->mine, sizeof s->mine, H_REPORT, NULL, NULL, &req);
        if (rc == FM_OK)
            rc = fm_request_wait(&req);
        return rc ? rc : wait_for(s, &s->verdicts, 1);
    }
    s->all[0] = s->mine;
    rc = wait_for(s, &s->reports, s->n - 1);
    uint64_t got = 0, want = dag_expected_checksum(s->d);
    long bad = 0;
    double ms[DAG_MAX_REPEAT] = {0};
    for (int r = 0; r < s->n; r++) { /* a run's makespan is its slowest rank's time */
        bad += (long)s->all[r].bad;
        got ^= s->all[r].combined;
        for (int i = 0; i < o->repeats; i++)
            ms[i] = s->all[r].us[i] > ms[i] ? s->all[r].us[i] : ms[i];
    }
    s->verdict = rc == FM_OK && bad == 0 && got == want;
    dag_print_row(s->d, o, s->n, "fastmsg", st, ms, s->verdict);
    dag_print_verdict(s->d, o, s->verdict, bad, got, want);
    unsigned char v = (unsigned char)s->verdict;
    for (int r = 1; r < s->n; r++)
        s->dests[r - 1] = r;
    if (rc == FM_OK && s->n > 1)
        rc = fm_isend_multi(s->ctx, s->dests, s->n - 1, &v, 1, H_VERDICT, NULL, NULL, &req);
    return rc == FM_OK && req ? fm_request_wait(&req) : rc;
}

/* Buffers for the tasks this rank runs and the remote outputs it needs; the reference. */
static int setup(sched *s)
{
    const dag *d = s->d;
    uint32_t T = d->ntasks;
    s->ref = calloc(T, sizeof *s->ref);
    s->buf = calloc(T, sizeof *s->buf);
    s->missing = calloc(T, sizeof *s->missing);
    s->ready = calloc(T, sizeof *s->ready);
    s->dests = calloc((size_t)s->n, sizeof *s->dests);
    s->all = s->me == 0 ? calloc((size_t)s->n, sizeof *s->all) : NULL;
    if (!s->ref || !s->buf || !s->missing || !s->ready || !s->dests || (s->me == 0 && !s->all))
        return -1;
    for (uint32_t t = 0; t < T; t++) {
        int own = dag_rank_of(t, s->n) == s->me, need = 0;
        uint32_t k;
        const uint32_t *dep = dag_dependents(d, t, &k);
        for (uint32_t i = 0; i < k && !own && !need; i++)
            need = dag_rank_of(dep[i], s->n) == s->me;
        s->nmine += own;
        s->nneed += need;
        if ((own || need) && !(s->buf[t] = malloc(HDR + (size_t)d->t[t].bytes)))
            return -1;
        if (s->buf[t])
            memcpy(s->buf[t], &t, HDR); /* the header once: a message is the whole buffer */
    }
    int ok;
    dag_reference(d, s->ref, NULL, NULL, &ok);
    return ok ? 0 : -1;
}

static void teardown(sched *s)
{
    for (uint32_t t = 0; s->buf && t < s->d->ntasks; t++)
        free(s->buf[t]);
    free(s->buf);
    free(s->ref);
    free(s->missing);
    free(s->ready);
    free(s->dests);
    free(s->all);
}

/* --workers N, this example's own option (bench/dag_opts.c reads those it shares with the
 * MPI baseline): taken out of argv before them. 0, or -1 after saying why. */
static int take_workers(int *argc, char **argv, int *workers)
{
    int kept = 1;
    for (int i = 1; i < *argc; i++) {
        const char *v;
        if (!strcmp(argv[i], "--workers"))
            v = i + 1 < *argc ? argv[++i] : "";
        else if (!strncmp(argv[i], "--workers=", 10))
            v = argv[i] + 10;
        else {
            argv[kept++] = argv[i];
            continue;
        }
        long n;
        if (bench_parse_long(v, 0, MAX_WORKERS, &n)) {
            fprintf(stderr, "dag: bad value '%s' for --workers (0 to %d)\n", v, MAX_WORKERS);
            return -1;
        }
        *workers = (int)n;
    }
    *argc = kept;
    argv[kept] = NULL;
    return 0;
}

static void usage_workers(FILE *f)
{
    fprintf(f, "      --workers N     run the tasks on N worker threads, which start their\n"
               "                      sends; the main thread only drives progress (default 0:\n"
               "                      it runs them itself)\n");
}

int main(int argc, char **argv)
{
    static const dag_cli cli = {
        .launch = "fastmsg-run -n N",
        .what = "Makespan of a layered random DAG of tasks run over fastmsg requests\n"
                "(fm_isend / fm_imcast_dests per output, whole-message handlers, fm_wait).",
        .fastmsg = 1,
    };
    dag_opts o;
    int workers = 0, rc;
    if (take_workers(&argc, argv, &workers))
        return 2;
    if ((rc = dag_parse_cli(argc, argv, &cli, &o))) {
        usage_workers(rc > 0 ? stdout : stderr); /* after the shared options' usage */
        return rc > 0 ? 0 : 2;
    }
    dag d;
    sched s = {.d = &d, .o = &o};
    if ((rc = fm_init(&s.ctx)) != FM_OK)
        return 1; /* fm_init said why */
    s.me = fm_rank(s.ctx);
    s.n = fm_size(s.ctx);
    signal(SIGALRM, on_alarm);
    if (dag_build(&o.p, &d) || setup(&s))
        fm_abort(s.ctx, 1, "no memory for the DAG");
    double sec; /* a bad --tree now, not at the first multicast mid-run */
    if ((rc = fm_mcast_predict_time(s.ctx, 3, 0, o.tree, 0, 1, &sec, NULL)) != FM_OK) {
        fprintf(stderr, "dag: --tree %s: %s\n", o.tree, fm_strerror(rc));
        fm_finalize(s.ctx);
        teardown(&s);
        dag_free(&d);
        return 2;
    }
    /* Registered before the first barrier, so no message waits for its handler. */
    fm_register_message_handler(s.ctx, H_OUTPUT, on_output, &s);
    fm_register_message_handler(s.ctx, H_REPORT, on_report, &s);
    fm_register_message_handler(s.ctx, H_VERDICT, on_verdict, &s);
    if (workers && pool_start(&s, workers))
        fm_abort(s.ctx, 1, "no memory or no thread for the workers");
    dag_stats st = dag_stats_of(&d, s.n);
    if (s.me == 0) {
        char who[256], thr[32] = "";
        if (workers)
            snprintf(thr, sizeof thr, ", %d workers", workers);
        snprintf(who, sizeof who, "dag (fastmsg %s, FM_PROVIDER %s): %d ranks, tree %s%s",
                 fm_version(), getenv("FM_PROVIDER") ? getenv("FM_PROVIDER") : "default", s.n,
                 o.tree, thr);
        dag_print_header(&d, &o, s.n, who, &st);
        fflush(stdout);
    }
    for (int r = 0; r < o.warmup + o.repeats && rc == FM_OK; r++) {
        double us;
        if ((rc = run_once(&s, &us)) != FM_OK) {
            fprintf(stderr, "dag: rank %d: run %d failed: %s\n", s.me, r, fm_strerror(rc));
            if (rc != FM_ERR_PEER) /* the others may wait for us forever: end the job */
                fm_abort(s.ctx, 1, NULL);
        } else if (r >= o.warmup) {
            s.mine.us[r - o.warmup] = us;
        }
    }
    if (s.mine.bad)
        fprintf(stderr, "dag: rank %d: %lld task outputs differed from the reference\n", s.me,
                (long long)s.mine.bad);
    if (rc == FM_OK && (rc = gather(&s, &st)) != FM_OK)
        fprintf(stderr, "dag: rank %d: %s\n", s.me, fm_strerror(rc));
    pool_stop(&s); /* no worker calls fastmsg from now on */
    int frc = fm_finalize(s.ctx);
    teardown(&s);
    dag_free(&d);
    return rc == FM_OK && frc == FM_OK && s.verdict ? 0 : 1;
}
