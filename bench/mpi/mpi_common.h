/* SPDX-License-Identifier: BSD-3-Clause */
/* What bench/mpi's programs share: which MPI they are built for, the library's name, the
 * transport settings for the header, start-up and shutdown, and a watchdog for stalled runs. */
#ifndef MPI_COMMON_H
#define MPI_COMMON_H

#include <mpi.h>
#include <stddef.h>

/* MB_MPI: the CSV's provider column and the program names' suffix; MB_NAME for people;
 * MB_LAUNCH: how the usage text says to start the program. */
#if defined(FM_BENCH_SMPI) /* SimGrid's SMPI: bench/sim, built by smpicc */
#define MB_MPI    "smpi"
#define MB_NAME   "SMPI"
#define MB_LAUNCH "bench/sim/run --mpi, or smpirun -np"
#elif defined(OPEN_MPI)
#define MB_MPI    "openmpi"
#define MB_NAME   "Open MPI"
#define MB_LAUNCH "mpirun.openmpi -n"
#elif defined(MPICH)
#define MB_MPI    "mpich"
#define MB_NAME   "MPICH"
#define MB_LAUNCH "mpiexec.mpich -n"
#else
#error "bench/mpi builds against Open MPI or MPICH"
#endif

/* The first line of MPI_Get_library_version, e.g. "Open MPI v4.1.4" or "MPICH Version: 4.0.2". */
void mb_library(char *buf, size_t len);
/* 0 when the library loaded at run time is the MPI the program was compiled for; otherwise
 * an error on stderr and -1. */
int mb_check_library(const char *prog);
/* The transport settings the launcher passed, for the header: Open MPI's pml and btl
 * (OMPI_MCA_*), MPICH's UCX_TLS; "default" where unset. */
void mb_transport(char *buf, size_t len);
/* MPI_Init, this rank and the job's size, and the watchdog (mb_watchdog_init). 0; on rank 0,
 * 1 when the library is not the MPI the program was built for (mb_check_library). */
int mb_start(int *argc, char ***argv, const char *prog, double timeout_s, int *me, int *n);
/* Whether every rank's status is 0, so that all go on or none does, rather than leave the
 * others waiting in a collective; when not, a 0 *status becomes the worst of the others. */
int mb_all_ok(int *status);
/* MPI_Finalize under the watchdog. */
void mb_finish(void);

/* MPI calls cannot time out, so a stall ends the process instead: after mb_watchdog_init,
 * every mb_watchdog_arm gives the next step `seconds`; if it is not re-armed or stopped by
 * then, the process prints one line naming itself and exits 1, and the launcher ends the
 * others. */
void mb_watchdog_init(const char *prog, int rank, double seconds);
void mb_watchdog_arm(void);
void mb_watchdog_stop(void);

#endif
