/* SPDX-License-Identifier: BSD-3-Clause */
/* A rank's life as the launcher sees it, and the end of the job: the first rank to end
 * abnormally (or a signal to the launcher) is named on one line, then every rank's process
 * group gets SIGTERM and, FM_RUN_KILL_AFTER later, SIGKILL. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "run.h"

static void fm_run_job_grace_cb(struct ev_loop *loop, ev_timer *w, int revents);
static void fm_run_job_blame_cb(struct ev_loop *loop, ev_timer *w, int revents);

int fm_run_job_init(struct fm_run_job *job, const struct fm_run_opts *o)
{
    memset(job, 0, sizeof *job);
    job->opts = o;
    job->listen_fd = -1;
    job->stdin_fd = -1;
    job->loop = EV_DEFAULT;
    job->blame_rank = -1;
    ev_timer_init(&job->blame_timer, fm_run_job_blame_cb, FM_RUN_BLAME_WAIT, 0.);
    job->blame_timer.data = job;
    job->rank = calloc((size_t)o->n, sizeof *job->rank);
    job->kv = fm_run_store_new(o->n);
    if (!job->loop || !job->rank || !job->kv)
        return fm_run_fail(-1, "cannot set up: %s", job->loop ? "out of memory" : "libev failed");
    for (int r = 0; r < o->n; r++) {
        struct fm_run_rank *rk = &job->rank[r];
        rk->job = job;
        rk->index = r;
        ev_timer_init(&rk->grace, fm_run_job_grace_cb, FM_RUN_GRACE, 0.);
        rk->grace.data = rk;
    }
    return 0;
}

/* Signal the groups of the ranks still running (and mark them for the SIGKILL later). */
static void fm_run_job_signal_all(struct fm_run_job *job, int sig)
{
    for (int r = 0; r < job->opts->n; r++) {
        struct fm_run_rank *rk = &job->rank[r];
        if (sig == SIGTERM && rk->pid > 0 && !rk->reaped)
            rk->signalled = 1;
        /* Reaped leaders too: their group may outlive them. */
        if (rk->signalled)
            kill(-rk->pid, sig);
    }
}

void fm_run_job_finish(struct fm_run_job *job)
{
    const struct fm_run_store_stats *st = fm_run_store_stats(job->kv);
    if (job->opts->verbose)
        fm_run_say("exchange: %llu puts, %llu fences, %llu gets answered with %llu values in "
                   "%llu bytes",
                   st->puts, st->fences, st->gets, st->values, st->bytes);
    for (int r = 0; r < job->opts->n; r++) {
        if (job->rank[r].out)
            fm_run_label_drain(job->rank[r].out);
        if (job->rank[r].err)
            fm_run_label_drain(job->rank[r].err);
    }
    if (job->ending)
        fm_run_job_signal_all(job, SIGKILL);
    fm_run_shm_clean(job);
    exit(job->exit_code);
}

static void fm_run_job_kill_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    fm_run_job_signal_all(w->data, SIGKILL);
}

static void fm_run_job_give_up_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct fm_run_job *job = w->data;
    (void)loop;
    (void)revents;
    fm_run_say("%d rank(s) did not die after SIGKILL; exiting anyway",
               job->nstarted - job->nreaped);
    fm_run_job_finish(job);
}

static void fm_run_job_end(struct fm_run_job *job, int code)
{
    job->ending = 1;
    job->exit_code = code;
    ev_timer_stop(job->loop, &job->blame_timer);
    if (job->listen_fd >= 0)
        ev_io_stop(job->loop, &job->listen_w);
    fm_run_job_signal_all(job, SIGTERM);
    ev_timer_init(&job->kill_timer, fm_run_job_kill_cb, FM_RUN_KILL_AFTER, 0.);
    ev_timer_init(&job->give_up_timer, fm_run_job_give_up_cb, FM_RUN_GIVE_UP, 0.);
    job->kill_timer.data = job;
    job->give_up_timer.data = job;
    ev_timer_start(job->loop, &job->kill_timer);
    ev_timer_start(job->loop, &job->give_up_timer);
    if (job->nreaped == job->nstarted)
        fm_run_job_finish(job);
}

void fm_run_job_fail(struct fm_run_job *job, int code, const char *fmt, ...)
{
    char what[800];
    va_list ap;
    if (job->ending)
        return;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    fm_run_say("%s; ending the job", what);
    fm_run_job_end(job, code);
}

static void fm_run_job_settle(struct fm_run_job *job, int r)
{
    struct fm_run_rank *rk = &job->rank[r];
    ev_timer_stop(job->loop, &rk->grace);
    rk->settled = 1;
    job->nsettled++;
    if (job->on_settle)
        job->on_settle(job);
    if (job->nsettled == job->opts->n && !job->ending)
        fm_run_job_finish(job);
}

/* Exit and connection are seen apart (and over ssh the connection may lag): wait a little
 * for the other before judging. */
static void fm_run_job_grace(struct fm_run_job *job, int r)
{
    if (!ev_is_active(&job->rank[r].grace))
        ev_timer_start(job->loop, &job->rank[r].grace);
}

static void fm_run_job_review_exited(struct fm_run_job *job, int r)
{
    struct fm_run_rank *rk = &job->rank[r];
    int st = rk->status;
    if (WIFSIGNALED(st))
        fm_run_job_fail(job, 128 + WTERMSIG(st), "rank %d (pid %d) killed by signal %d (%s)", r,
                        (int)rk->pid, WTERMSIG(st), strsignal(WTERMSIG(st)));
    else if (WEXITSTATUS(st) != 0) {
        if (job->blame_rank < 0) { /* a rank killed meanwhile is named instead */
            job->blame_rank = r;
            ev_timer_start(job->loop, &job->blame_timer);
        }
    } else if (rk->hello && !rk->fini && rk->conn && !rk->grace_over)
        fm_run_job_grace(job, r);
    else if (rk->hello && !rk->fini)
        fm_run_job_fail(job, 1, "rank %d exited without calling fm_finalize", r);
    else
        fm_run_job_settle(job, r);
}

void fm_run_job_review(struct fm_run_job *job, int r)
{
    struct fm_run_rank *rk = &job->rank[r];
    if (job->ending || rk->settled)
        return;
    if (rk->reaped)
        fm_run_job_review_exited(job, r);
    else if (rk->lost && !rk->grace_over)
        fm_run_job_grace(job, r);
    else if (rk->lost)
        fm_run_job_fail(job, 1,
                        "rank %d (pid %d) closed its connection without calling fm_finalize", r,
                        (int)rk->pid);
}

static void fm_run_job_blame_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct fm_run_job *job = w->data;
    int r = job->blame_rank;
    (void)loop;
    (void)revents;
    fm_run_job_fail(job, WEXITSTATUS(job->rank[r].status), "rank %d exited with status %d", r,
                    WEXITSTATUS(job->rank[r].status));
}

static void fm_run_job_grace_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct fm_run_rank *rk = w->data;
    (void)loop;
    (void)revents;
    rk->grace_over = 1;
    fm_run_job_review(rk->job, rk->index);
}

static void fm_run_job_child_cb(struct ev_loop *loop, ev_child *w, int revents)
{
    struct fm_run_rank *rk = w->data;
    struct fm_run_job *job = rk->job;
    (void)revents;
    ev_child_stop(loop, w);
    rk->reaped = 1;
    rk->status = w->rstatus;
    job->nreaped++;
    /* Whatever it said before dying (fini, abort) is in the socket: read it first. */
    if (rk->conn)
        fm_run_conn_drain(rk->conn);
    fm_run_job_review(job, rk->index);
    if (job->ending && job->nreaped == job->nstarted)
        fm_run_job_finish(job);
}

void fm_run_job_watch(struct fm_run_job *job, int r)
{
    struct fm_run_rank *rk = &job->rank[r];
    ev_child_init(&rk->child, fm_run_job_child_cb, rk->pid, 0);
    rk->child.data = rk;
    ev_child_start(job->loop, &rk->child);
}

static void fm_run_job_signal_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
    (void)loop;
    (void)revents;
    fm_run_job_fail(w->data, 128 + w->signum, "caught signal %d (%s)", w->signum,
                    strsignal(w->signum));
}

static const int fm_run_job_sigs[3] = {SIGINT, SIGTERM, SIGHUP};

void fm_run_job_signals(struct fm_run_job *job)
{
    for (int i = 0; i < 3; i++) {
        sigaction(fm_run_job_sigs[i], NULL, &job->orig_sig[i]);
        /* Under nohup, a hangup is not ours to act on. */
        if (fm_run_job_sigs[i] == SIGHUP && job->orig_sig[i].sa_handler == SIG_IGN)
            continue;
        ev_signal_init(&job->sig[i], fm_run_job_signal_cb, fm_run_job_sigs[i]);
        job->sig[i].data = job;
        ev_signal_start(job->loop, &job->sig[i]);
    }
}

void fm_run_job_child_signals(const struct fm_run_job *job)
{
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigset_t none;
    for (int i = 0; i < 3; i++)
        sigaction(fm_run_job_sigs[i], &job->orig_sig[i], NULL);
    sigaction(SIGCHLD, &dfl, NULL);
    sigaction(SIGPIPE, &job->orig_pipe, NULL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}
