/* SPDX-License-Identifier: BSD-3-Clause */
/* fastmsg-run: start N ranks, serve their bootstrap exchange, end the job as one. */
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <unistd.h>

#include "fastmsg.h"
#include "log.h"
#include "run.h"

/* Descriptors 0-2 must exist, or our sockets and pipes would take their numbers. */
static void fm_run_main_stdio(void)
{
    for (int fd = 0; fd < 3; fd++)
        if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", fd ? O_WRONLY : O_RDONLY) != fd)
            _exit(1);
}

/* A socket and two pipes per rank: 4096 ranks need more than the usual 1024. */
static void fm_run_main_limits(void)
{
    struct rlimit rl;
    if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static int fm_run_main_key(struct fm_run_job *job)
{
    uint64_t key = 0;
    while (key == 0)
        if (getrandom(&key, sizeof key, 0) != sizeof key)
            return fm_run_fail(-1, "getrandom failed for the job key");
    snprintf(job->key, sizeof job->key, "%016" PRIx64, key);
    return 0;
}

/* Writing to a rank that died must give EPIPE, not kill us; ranks get the old action. */
static void fm_run_main_sigpipe(struct fm_run_job *job)
{
    struct sigaction ign = {.sa_handler = SIG_IGN};
    sigaction(SIGPIPE, &ign, &job->orig_pipe);
}

int main(int argc, char **argv)
{
    static struct fm_run_opts o;
    static struct fm_run_job job;
    int rc;
    fm_run_main_stdio();
    rc = fm_run_args_parse(argc, argv, &o);
    if (rc >= 0)
        return rc;
    fm_run_main_limits();
    FM_CHECK_QUIET(!fm_run_job_init(&job, &o), 1);
    job.on_settle = fm_run_exchange_check_fence;
    fm_run_main_sigpipe(&job);
    fm_run_job_signals(&job);
    FM_CHECK_QUIET(!fm_run_main_key(&job) && !fm_run_listen(&job), 1);
    job.stdin_fd = fm_run_relay_start(&job);
    if (o.verbose)
        fm_run_say("%d rank(s), listening on %s, job key %s", o.n, job.addr, job.key);
    FM_CHECK_QUIET(!fm_run_spawn_all(&job), 1);
    ev_run(job.loop, 0);
    /* Only reached if every watcher stopped without the job ending: a bug. */
    return fm_run_fail(1, "internal error: the event loop ran dry");
error:
    return rc;
}
