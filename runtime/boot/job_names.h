/* SPDX-License-Identifier: BSD-3-Clause */
/* The name a rank gives what it leaves on its host (libfabric's shm region in /dev/shm):
 * "fastmsg-<job key, 16 hex digits>-<rank>-<pid>". The job key lets fastmsg-run remove, at the
 * job's end, the regions of ranks that died without removing their own (SIGKILL), and no other
 * job's; the pid lets anyone tell whether the owner is still alive. */
#ifndef FM_JOB_NAMES_H
#define FM_JOB_NAMES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define FM_JOB_NAME_PREFIX "fastmsg-"

static inline void fm_job_name(char *buf, size_t len, uint64_t key, int rank, pid_t pid)
{
    snprintf(buf, len, FM_JOB_NAME_PREFIX "%016llx-%d-%ld", (unsigned long long)key, rank,
             (long)pid);
}

#endif
