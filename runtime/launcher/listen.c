/* SPDX-License-Identifier: BSD-3-Clause */
/* The listener the ranks connect to: 127.0.0.1 or --addr, on a port the kernel picks. */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fastmsg.h"
#include "log.h"
#include "run.h"

#define FM_RUN_LISTEN_PAUSE 0.5 /* seconds to stop accepting when out of descriptors */

static void fm_run_listen_resume_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct fm_run_job *job = w->data;
    (void)revents;
    if (!job->ending)
        ev_io_start(loop, &job->listen_w);
}

static void fm_run_listen_accept_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    struct fm_run_job *job = w->data;
    (void)revents;
    for (;;) {
        int fd = accept4(job->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0 && errno == EINTR)
            continue;
        if (fd < 0 && (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)) {
            /* Pending connections would wake us at once: pause instead of spinning. */
            fm_run_say("cannot accept a connection: %s", strerror(errno));
            ev_io_stop(loop, w);
            ev_timer_start(loop, &job->listen_pause);
            return;
        }
        if (fd < 0)
            return;
        if (!fm_run_conn_new(job, fd, &fm_run_exchange_ops))
            close(fd);
    }
}

/* Bind one of host's addresses on an ephemeral port; returns the fd or -1. */
static int fm_run_listen_bind(const char *host, int *gai)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *res;
    int fd = -1;
    if ((*gai = getaddrinfo(host, "0", &hints, &res)))
        return -1;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd >= 0 && (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, SOMAXCONN))) {
            int e = errno;
            close(fd);
            fd = -1;
            errno = e;
        }
    }
    freeaddrinfo(res);
    return fd;
}

int fm_run_listen(struct fm_run_job *job)
{
    const char *host = job->opts->addr ? job->opts->addr : "127.0.0.1";
    struct sockaddr_storage sa;
    socklen_t len = sizeof sa;
    char port[16];
    int gai = 0, rc;
    job->listen_fd = fm_run_listen_bind(host, &gai);
    FM_CHECK_QUIET(job->listen_fd >= 0, fm_run_fail(-1, "cannot listen on %s: %s", host,
                                                    gai ? gai_strerror(gai) : strerror(errno)));
    FM_CHECK_QUIET(
        !getsockname(job->listen_fd, (struct sockaddr *)&sa, &len) &&
            !getnameinfo((struct sockaddr *)&sa, len, NULL, 0, port, sizeof port, NI_NUMERICSERV),
        fm_run_fail(-1, "cannot learn the port of the listener: %s", strerror(errno)));
    snprintf(job->addr, sizeof job->addr, "%s:%s", host, port);
    ev_io_init(&job->listen_w, fm_run_listen_accept_cb, job->listen_fd, EV_READ);
    ev_timer_init(&job->listen_pause, fm_run_listen_resume_cb, FM_RUN_LISTEN_PAUSE, 0.);
    job->listen_w.data = job;
    job->listen_pause.data = job;
    ev_io_start(job->loop, &job->listen_w);
    return 0;
error:
    return rc;
}
