/* SPDX-License-Identifier: BSD-3-Clause */
/* The environment a rank starts with. A fastmsg-run inside mpirun or srun must not let its
 * ranks see that launcher's variables, or they would bootstrap through it instead. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

extern char **environ;

static const char *const fm_run_env_drop[] = {"PMI_FD",   "PMI_PORT",  "PMI_ID",         "PMI_RANK",
                                              "PMI_SIZE", "PMIX_RANK", "PMIX_NAMESPACE", NULL};
static const char *const fm_run_env_drop_prefix[] = {"PMIX_SERVER_URI", "OMPI_", "FASTMSG_RUN_",
                                                     NULL};

static int fm_run_env_dropped(const char *entry)
{
    size_t name = strcspn(entry, "=");
    for (int i = 0; fm_run_env_drop[i]; i++)
        if (strlen(fm_run_env_drop[i]) == name && !strncmp(entry, fm_run_env_drop[i], name))
            return 1;
    for (int i = 0; fm_run_env_drop_prefix[i]; i++)
        if (!strncmp(entry, fm_run_env_drop_prefix[i], strlen(fm_run_env_drop_prefix[i])))
            return 1;
    return 0;
}

/* The four FASTMSG_RUN_* assignments for rank r, as heap strings. */
static int fm_run_env_ours(const struct fm_run_job *job, int r, char **out)
{
    int ok = asprintf(&out[0], "%s=%s", FM_RUN_ENV_ADDR, job->addr) > 0;
    ok &= asprintf(&out[1], "%s=%d", FM_RUN_ENV_RANK, r) > 0;
    ok &= asprintf(&out[2], "%s=%d", FM_RUN_ENV_SIZE, job->opts->n) > 0;
    ok &= asprintf(&out[3], "%s=%s", FM_RUN_ENV_JOBKEY, job->key) > 0;
    return ok ? 0 : -1;
}

int fm_run_env_build(const struct fm_run_job *job, int r, struct fm_run_env *e)
{
    size_t n = 0, k = 0;
    memset(e, 0, sizeof *e);
    while (environ[n])
        n++;
    e->env = calloc(n + 5, sizeof *e->env);
    if (!e->env || fm_run_env_ours(job, r, e->ours)) {
        fm_run_env_free(e);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if (!fm_run_env_dropped(environ[i]))
            e->env[k++] = environ[i];
    /* With an agent they travel on its command line ("env NAME=value ..."). */
    for (int i = 0; i < 4 && !job->opts->agent; i++)
        e->env[k++] = e->ours[i];
    return 0;
}

void fm_run_env_free(struct fm_run_env *e)
{
    for (int i = 0; i < 4; i++) {
        free(e->ours[i]);
        e->ours[i] = NULL;
    }
    free(e->env);
    e->env = NULL;
}
