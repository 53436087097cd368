/* SPDX-License-Identifier: BSD-3-Clause */
/* Bootstrap: how the processes of a job find each other before the network is up.
 *
 * One small interface with one back end per launcher, chosen from the environment:
 *   pmix       PMIX_RANK and PMIX_NAMESPACE set (Open MPI mpirun, srun --mpi=pmix)
 *   pmi1       PMI_FD, or PMI_PORT + PMI_ID set (MPICH hydra mpiexec, srun --mpi=pmi2)
 *   run        FASTMSG_RUN_ADDR set (fastmsg-run, see run_protocol.h)
 *   singleton  nothing set: rank 0 of 1
 * FM_BOOTSTRAP forces one by name.
 *
 * Back ends move short printable strings, or bytes (put_bin/get_bin: run). For the former,
 * the generic layer (bootstrap.c) above them takes binary values of any length, hex-encodes
 * them and splits them into chunks of at most FM_BOOT_VALUE_MAX characters (Slurm's PMI-1
 * line limit is 1024 bytes). It hands every process the same random 64-bit job key. */
#ifndef FM_BOOTSTRAP_H
#define FM_BOOTSTRAP_H

#include <stddef.h>
#include <stdint.h>

#include "boot_backend.h"

extern const struct fm_boot_ops fm_boot_pmix_ops; /* only when built with PMIx */
extern const struct fm_boot_ops fm_boot_pmi1_ops;
extern const struct fm_boot_ops fm_boot_run_ops;
extern const struct fm_boot_ops fm_boot_singleton_ops;
extern const struct fm_boot_ops fm_boot_mpi_ops; /* only when built with MPI (-Dmpi) */

/* Choose a back end (which = "auto" or a name), join the job, agree on the job key.
 * Returns FM_OK or FM_ERR_CONFIG / FM_ERR_BOOTSTRAP / FM_ERR_TIMEOUT with b->err set. */
int fm_boot_init(fm_boot *b, const char *which, int timeout_s);
/* The back end "auto" would choose in this environment. */
const struct fm_boot_ops *fm_boot_detect(void);

int fm_boot_put(fm_boot *b, const char *key, const void *val, size_t len);
int fm_boot_fence(fm_boot *b);
/* Read rank's value for key into val (capacity *len); *len becomes its length.
 * FM_ERR_TOO_LONG if it does not fit. */
int fm_boot_get(fm_boot *b, int rank, const char *key, void *val, size_t *len);
/* This rank's host name where the back end knows it better than the host itself (a
 * simulated host under SimGrid): 1 and the name in buf; 0 when it does not. */
int fm_boot_host(fm_boot *b, char *buf, size_t len);
void fm_boot_abort(fm_boot *b, int code, const char *msg);
void fm_boot_fini(fm_boot *b);

#endif
