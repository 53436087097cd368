/* SPDX-License-Identifier: BSD-3-Clause */
/* Dead peers on this machine (see liveness.h).
 *
 * A pidfd becomes readable when its process exits, whether or not its launcher has reaped it
 * yet; the helper thread sleeps on all of them at once. Without pidfds (old kernels, or out of
 * descriptors) a peer is looked at instead: kill(pid, 0) still succeeds on a zombie, so a
 * live-looking pid is also read in /proc: state Z or X, or PF_EXITING, set as soon as the
 * kernel starts tearing the process down, before its memory and sockets go (which is what
 * makes a transfer with it fail, and fm_liveness_blame look). A pid reused between two looks
 * would hide a death; within half a second that does not happen in practice. */
#include "liveness.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fm_build_config.h"
#include "log.h"

#define FM_LIVENESS_INTERVAL 0.5 /* seconds between looks at peers without a pidfd */
#define FM_PF_EXITING        0x4 /* linux/sched.h */

typedef struct fm_liveness_peer {
    int rank;
    pid_t pid;
    int pidfd;         /* -1: looked at from idle waits instead */
    atomic_int logged; /* its death has been logged (by either thread) */
} fm_liveness_peer;

static struct {
    fm_liveness_peer *peers; /* the watched ones */
    int n, nlooked;          /* how many; how many without a pidfd */
    double next;             /* time of the next look */
    atomic_int dead;         /* a watched peer has died */
    int wake_fd;             /* eventfd that stops the thread */
    pthread_t thread;
    int thread_up;
} live = {.wake_fd = -1};

unsigned fm_liveness_ticks;

void fm_liveness_self(fm_liveness_id *id)
{
    struct stat st;
    memset(id, 0, sizeof *id);
#if FM_HAVE_SMPI
    return; /* simulated processes are no processes: nobody watches them (SimGrid reports a
             * deadlock, and a simulated process does not die alone) */
#endif
    id->pid = (int32_t)getpid();
    id->pidns = stat("/proc/self/ns/pid", &st) == 0 ? (uint64_t)st.st_ino : 0;
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(id->boot_id, sizeof id->boot_id, f))
            id->boot_id[0] = '\0';
        id->boot_id[strcspn(id->boot_id, "\n")] = '\0';
        fclose(f);
    }
}

static int pidfd_of(pid_t pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0); /* close-on-exec by itself */
#else
    (void)pid;
    return -1;
#endif
}

void fm_liveness_watch(int self, int size, int rank, const fm_liveness_id *theirs,
                       const fm_liveness_id *mine)
{
    if (rank == self || !mine->boot_id[0] || !mine->pidns || theirs->pid <= 0 ||
        strncmp(theirs->boot_id, mine->boot_id, sizeof mine->boot_id) ||
        theirs->pidns != mine->pidns)
        return;
    if (!live.peers && !(live.peers = calloc((size_t)size, sizeof *live.peers)))
        return; /* no watching; transport errors and FM_TIMEOUT remain */
    fm_liveness_peer *p = &live.peers[live.n++];
    p->rank = rank;
    p->pid = (pid_t)theirs->pid;
    p->pidfd = pidfd_of(p->pid);
    live.nlooked += p->pidfd < 0;
}

static void report(fm_liveness_peer *p)
{
    if (atomic_exchange(&p->logged, 1))
        return;
    fm_log(0, "rank %d (pid %d) has died; waits now fail with FM_ERR_PEER", p->rank, (int)p->pid);
    atomic_store(&live.dead, 1);
}

static void *watcher(void *arg)
{
    struct pollfd *fds = arg;
    int n = 0;
    for (int i = 0; i < live.n; i++)
        if (live.peers[i].pidfd >= 0)
            fds[n++] = (struct pollfd){.fd = live.peers[i].pidfd, .events = POLLIN};
    fds[n++] = (struct pollfd){.fd = live.wake_fd, .events = POLLIN};
    for (;;) {
        if (poll(fds, (nfds_t)n, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (fds[n - 1].revents)
            break;
        for (int i = 0, k = 0; i < live.n; i++) {
            if (live.peers[i].pidfd < 0)
                continue;
            if (fds[k].revents) {
                report(&live.peers[i]);
                fds[k].fd = -1; /* poll skips it from now on */
            }
            k++;
        }
    }
    free(fds);
    return NULL;
}

void fm_liveness_start(void)
{
    if (live.n == live.nlooked || live.thread_up)
        return;
    struct pollfd *fds = calloc((size_t)live.n + 1, sizeof *fds);
    live.wake_fd = eventfd(0, EFD_CLOEXEC);
    sigset_t all, old;
    sigfillset(&all);
    /* Signals are the program's: the thread takes none. */
    pthread_sigmask(SIG_SETMASK, &all, &old);
    live.thread_up = fds && live.wake_fd >= 0 && !pthread_create(&live.thread, NULL, watcher, fds);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (live.thread_up)
        return;
    free(fds);
    fm_log(1, "no thread to watch the peers' processes: looking at them from idle waits");
    live.nlooked = live.n;
    for (int i = 0; i < live.n; i++) {
        if (live.peers[i].pidfd >= 0)
            close(live.peers[i].pidfd);
        live.peers[i].pidfd = -1;
    }
}

void fm_liveness_fini(void)
{
    if (live.thread_up) {
        uint64_t one = 1;
        if (write(live.wake_fd, &one, sizeof one) == sizeof one)
            pthread_join(live.thread, NULL);
        else
            pthread_detach(live.thread);
    }
    if (live.wake_fd >= 0)
        close(live.wake_fd);
    for (int i = 0; i < live.n; i++)
        if (live.peers[i].pidfd >= 0)
            close(live.peers[i].pidfd);
    free(live.peers);
    live.peers = NULL;
    live.n = live.nlooked = live.thread_up = 0;
    live.next = 0;
    live.wake_fd = -1;
    atomic_store(&live.dead, 0);
}

static int gone(pid_t pid)
{
    char path[40], buf[512];
    if (kill(pid, 0) == -1 && errno == ESRCH)
        return 1;
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT || errno == ESRCH; /* reaped meanwhile; else: no /proc */
    ssize_t len = read(fd, buf, sizeof buf - 1);
    int err = errno;
    close(fd);
    if (len <= 0)
        return len < 0 && err == ESRCH;
    buf[len] = '\0';
    /* "pid (comm) state ppid pgrp session tty_nr tpgid flags ...": comm may hold anything. */
    const char *p = strrchr(buf, ')');
    char state;
    unsigned flags;
    if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %u", &state, &flags) != 2)
        return 0;
    return state == 'Z' || state == 'X' || (flags & FM_PF_EXITING);
}

/* Every dead one is named: by the time we look, a survivor that saw the death first may
 * have exited too. all: the peers with a pidfd as well. */
static int look(int all)
{
    for (int i = 0; i < live.n; i++)
        if ((all || live.peers[i].pidfd < 0) && gone(live.peers[i].pid))
            report(&live.peers[i]);
    return atomic_load(&live.dead) ? FM_ERR_PEER : FM_OK;
}

int fm_liveness_check(void)
{
    if (atomic_load_explicit(&live.dead, memory_order_relaxed))
        return FM_ERR_PEER;
    if (!live.nlooked)
        return FM_OK;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
    double now = (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
    if (now < live.next)
        return FM_OK;
    live.next = now + FM_LIVENESS_INTERVAL;
    return look(0);
}

int fm_liveness_blame(int status)
{
    if (status == FM_OK)
        return FM_OK;
    return atomic_load(&live.dead) || look(1) == FM_ERR_PEER ? FM_ERR_PEER : status;
}
