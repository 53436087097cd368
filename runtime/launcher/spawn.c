/* SPDX-License-Identifier: BSD-3-Clause */
/* Starting the ranks: each in its own process group (so a signal to the group reaches
 * whatever the rank starts), with its stdio and environment set up, directly or through an
 * agent such as ssh. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fastmsg.h"
#include "log.h"
#include "run.h"

struct fm_run_child {
    int rank;
    char **argv, **env;
    int in, out, err; /* fds to put on 0, 1 and 2; -1 inherits ours */
};

static void fm_run_spawn_exec(const struct fm_run_job *job, const struct fm_run_child *c)
    __attribute__((noreturn));

/* In the child: undo what the launcher set up for itself, then exec. */
static void fm_run_spawn_exec(const struct fm_run_job *job, const struct fm_run_child *c)
{
    setpgid(0, 0);
    /* A SIGTERM that came since fork is pending, and kills us here rather than reaching
     * the launcher's handler. */
    fm_run_job_child_signals(job);
    if (c->in >= 0)
        dup2(c->in, 0);
    if (c->out >= 0)
        dup2(c->out, 1);
    if (c->err >= 0)
        dup2(c->err, 2);
    execvpe(c->argv[0], c->argv, c->env);
    dprintf(2, "fastmsg-run: rank %d: cannot run '%s': %s\n", c->rank, c->argv[0], strerror(errno));
    _exit(127);
}

/* The command line of rank r: prog args, or AGENT... HOST env FASTMSG_RUN_...=... prog args.
 * Entries are borrowed; free only the array, and only when it is not opts->prog. */
static char **fm_run_spawn_argv(const struct fm_run_job *job, int r, const struct fm_run_env *e)
{
    const struct fm_run_opts *o = job->opts;
    if (!o->agent)
        return o->prog;
    size_t na = 0, np = 0, k = 0;
    while (o->agent[na])
        na++;
    while (o->prog[np])
        np++;
    char **argv = calloc(na + 2 + 4 + np + 1, sizeof *argv);
    if (!argv)
        return NULL;
    for (size_t i = 0; i < na; i++)
        argv[k++] = o->agent[i];
    argv[k++] = o->hosts[r % o->nhosts];
    argv[k++] = "env";
    for (int i = 0; i < 4; i++)
        argv[k++] = e->ours[i];
    for (size_t i = 0; i < np; i++)
        argv[k++] = o->prog[i];
    return argv;
}

static void fm_run_spawn_say(const struct fm_run_job *job, int r, char **argv)
{
    char cmd[900];
    size_t n = 0;
    cmd[0] = '\0';
    for (int i = 0; argv[i] && n < sizeof cmd - 1; i++)
        n += (size_t)snprintf(cmd + n, sizeof cmd - n, "%s%s", i ? " " : "", argv[i]);
    const char *host = job->opts->agent ? job->opts->hosts[r % job->opts->nhosts] : "localhost";
    fm_run_say("rank %d (pid %d) on %s: %s", r, (int)job->rank[r].pid, host, cmd);
}

/* A pipe for a rank's output: the write end for the child, the read end non-blocking. */
static int fm_run_spawn_pipe(int p[2])
{
    if (pipe2(p, O_CLOEXEC))
        return -1;
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    return 0;
}

static void fm_run_spawn_close(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* Fork rank r; the parent keeps the read ends of its output pipes. */
static int fm_run_spawn_fork(struct fm_run_job *job, struct fm_run_child *c, int pout[2],
                             int perr[2])
{
    struct fm_run_rank *rk = &job->rank[c->rank];
    int rc;
    FM_CHECK_QUIET(!job->opts->label || (!fm_run_spawn_pipe(pout) && !fm_run_spawn_pipe(perr)), -1);
    c->out = pout[1];
    c->err = perr[1];
    /* Until the child has its own signal actions, signals must wait. */
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &old);
    pid_t pid = fork();
    if (pid == 0)
        fm_run_spawn_exec(job, c);
    rc = errno;
    sigprocmask(SIG_SETMASK, &old, NULL);
    errno = rc;
    FM_CHECK_QUIET(pid > 0, -1);
    /* Both sides set the group, so that neither can signal it before it exists. */
    setpgid(pid, pid);
    rk->pid = pid;
    job->nstarted++;
    fm_run_job_watch(job, c->rank);
    fm_run_spawn_close(&pout[1]);
    fm_run_spawn_close(&perr[1]);
    if (job->opts->label) {
        rk->out = fm_run_label_new(job, c->rank, pout[0], 1);
        rk->err = fm_run_label_new(job, c->rank, perr[0], 2);
    }
    return 0;
error:
    rc = errno;
    for (int i = 0; i < 2; i++) {
        fm_run_spawn_close(&pout[i]);
        fm_run_spawn_close(&perr[i]);
    }
    errno = rc;
    return -1;
}

static int fm_run_spawn_rank(struct fm_run_job *job, int r, int devnull)
{
    struct fm_run_env e;
    struct fm_run_child c = {.rank = r, .in = r == 0 ? job->stdin_fd : devnull};
    int pout[2] = {-1, -1}, perr[2] = {-1, -1}, rc = -1;
    FM_CHECK_QUIET(!fm_run_env_build(job, r, &e), -1);
    c.env = e.env;
    c.argv = fm_run_spawn_argv(job, r, &e);
    if (c.argv && !fm_run_spawn_fork(job, &c, pout, perr))
        rc = 0;
    if (rc == 0 && job->opts->verbose)
        fm_run_spawn_say(job, r, c.argv);
    if (c.argv != job->opts->prog)
        free(c.argv);
    fm_run_env_free(&e);
error:
    return rc;
}

int fm_run_spawn_all(struct fm_run_job *job)
{
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (devnull < 0)
        return fm_run_fail(-1, "cannot open /dev/null: %s", strerror(errno));
    for (int r = 0; r < job->opts->n; r++)
        if (fm_run_spawn_rank(job, r, devnull)) {
            fm_run_job_fail(job, 1, "cannot start rank %d: %s", r, strerror(errno));
            break;
        }
    close(devnull);
    fm_run_spawn_close(&job->stdin_fd); /* rank 0 has it now */
    return 0;
}
