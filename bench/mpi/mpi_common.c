/* SPDX-License-Identifier: BSD-3-Clause */
#include "mpi_common.h"

#include "common.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void mb_library(char *buf, size_t len)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int n = 0;
    MPI_Get_library_version(v, &n);
    /* Open MPI's first line goes on with the package and build date after a comma; MPICH's
     * lines are "Key:\tvalue". One line, tabs as spaces, is enough to name it. */
    v[strcspn(v, "\n,")] = '\0';
    for (char *p = v; *p; p++)
        if (*p == '\t')
            *p = ' ';
    snprintf(buf, len, "%s", v);
}

int mb_check_library(const char *prog)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    mb_library(v, sizeof v);
    if (strstr(v, MB_NAME))
        return 0;
    fprintf(stderr, "%s: built for %s but running with '%s'\n", prog, MB_NAME, v);
    return -1;
}

void mb_transport(char *buf, size_t len)
{
#if defined(FM_BENCH_SMPI)
    snprintf(buf, len, "simulated");
#elif defined(OPEN_MPI)
    snprintf(buf, len, "pml %s, btl %s", bench_env("OMPI_MCA_pml", "default"),
             bench_env("OMPI_MCA_btl", "default"));
#else
    snprintf(buf, len, "UCX_TLS %s", bench_env("UCX_TLS", "default"));
#endif
}

int mb_start(int *argc, char ***argv, const char *prog, double timeout_s, int *me, int *n)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, me);
    MPI_Comm_size(MPI_COMM_WORLD, n);
    mb_watchdog_init(prog, *me, timeout_s);
    return *me == 0 && mb_check_library(prog) ? 1 : 0;
}

int mb_all_ok(int *status)
{
    int worst = 0;
    MPI_Allreduce(status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (*status == 0)
        *status = worst;
    return worst == 0;
}

void mb_finish(void)
{
    mb_watchdog_arm();
    MPI_Finalize();
    mb_watchdog_stop();
}

static char wd_msg[256];
static size_t wd_len;
static unsigned wd_secs;

static void on_alarm(int sig)
{
    (void)sig;
    /* Only async-signal-safe calls here: the message was formatted beforehand. */
    ssize_t w = write(STDERR_FILENO, wd_msg, wd_len);
    (void)w;
    _exit(1);
}

void mb_watchdog_init(const char *prog, int rank, double seconds)
{
    int n = snprintf(wd_msg, sizeof wd_msg,
                     "%s: rank %d: one step outlasted --timeout %.0f s, giving up\n", prog, rank,
                     seconds);
    wd_len = n > 0 && (size_t)n < sizeof wd_msg ? (size_t)n : 0;
    wd_secs = seconds < 1 ? 1 : (unsigned)seconds;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
}

void mb_watchdog_arm(void)
{
#if !defined(FM_BENCH_SMPI) /* a simulation's real time is not the program's: SimGrid reports      \
                             * a deadlock itself */
    alarm(wd_secs);
#endif
}

void mb_watchdog_stop(void)
{
    alarm(0);
}
