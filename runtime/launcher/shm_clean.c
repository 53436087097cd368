/* SPDX-License-Identifier: BSD-3-Clause */
/* What the job's ranks left in /dev/shm. libfabric's shm unlinks an endpoint's region when the
 * endpoint closes, or when its process dies by SIGINT, SIGTERM, SIGBUS or SIGSEGV; a rank killed
 * by SIGKILL, or ending without closing it (fm_abort, exit without fm_finalize), leaves it
 * behind. Ranks name their regions after the job key (runtime/boot/job_names.h), so once the
 * ranks are gone whatever is left under the job's prefix is ours to remove. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "job_names.h"
#include "run.h"

void fm_run_shm_clean(const struct fm_run_job *job)
{
    char prefix[64];
    int len = snprintf(prefix, sizeof prefix, FM_JOB_NAME_PREFIX "%s-", job->key);
    DIR *dir = opendir("/dev/shm");
    int n = 0;
    if (!dir)
        return;
    for (struct dirent *e; (e = readdir(dir)) != NULL;)
        if (!strncmp(e->d_name, prefix, (size_t)len) && !unlinkat(dirfd(dir), e->d_name, 0))
            n++;
    closedir(dir);
    if (n && job->opts->verbose)
        fm_run_say("removed %d shared-memory region(s) its ranks left in /dev/shm", n);
}
