/* SPDX-License-Identifier: BSD-3-Clause */
/* Bootstrap over PMIx: Open MPI's mpirun, srun --mpi=pmix, prterun.
 *
 * Values are published with global scope and committed at the fence, which collects them
 * (PMIX_COLLECT_DATA), so later gets are answered from the local store. Waits carry
 * PMIX_TIMEOUT; servers that do not support it ignore it, as it is not marked required. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pmix.h>

#include "boot_backend.h"
#include "fastmsg.h"
#include "log.h"

struct fm_pmix {
    pmix_proc_t self;
};

/* PMIx status to fastmsg status, keeping timeouts distinguishable. */
__attribute__((format(printf, 3, 4))) static int fm_pmix_fail(fm_boot *b, pmix_status_t st,
                                                              const char *fmt, ...)
{
    char what[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return fm_boot_fail(b, st == PMIX_ERR_TIMEOUT ? FM_ERR_TIMEOUT : FM_ERR_BOOTSTRAP,
                        "PMIx: %s: %s", what, PMIx_Error_string(st));
}

static int fm_pmix_timeout(const fm_boot *b)
{
    return b->timeout_s > 0 ? b->timeout_s : 60;
}

static int fm_pmix_job_size(fm_boot *b)
{
    struct fm_pmix *p = b->priv;
    pmix_proc_t job;
    pmix_value_t *val = NULL;
    pmix_status_t st;
    int rc;
    PMIX_PROC_LOAD(&job, p->self.nspace, PMIX_RANK_WILDCARD);
    st = PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &val);
    FM_CHECK_QUIET(st == PMIX_SUCCESS, fm_pmix_fail(b, st, "PMIx_Get(PMIX_JOB_SIZE)"));
    FM_CHECK_QUIET(val->type == PMIX_UINT32 && val->data.uint32 >= 1 &&
                       val->data.uint32 <= (uint32_t)INT32_MAX,
                   fm_boot_fail(b, FM_ERR_BOOTSTRAP, "PMIx: PMIX_JOB_SIZE is not a valid size"));
    b->size = (int)val->data.uint32;
    rc = FM_OK;
error:
    if (val)
        PMIX_VALUE_RELEASE(val);
    return rc;
}

static int fm_pmix_init(fm_boot *b)
{
    struct fm_pmix *p = calloc(1, sizeof *p);
    pmix_status_t st;
    bool joined = false;
    int rc;
    FM_CHECK_QUIET(p, fm_boot_fail(b, FM_ERR_NOMEM, "PMIx: out of memory"));
    b->priv = p;
    st = PMIx_Init(&p->self, NULL, 0);
    FM_CHECK_QUIET(st == PMIX_SUCCESS, fm_pmix_fail(b, st, "PMIx_Init"));
    joined = true;
    FM_CHECK_QUIET(
        p->self.rank <= (pmix_rank_t)INT32_MAX,
        fm_boot_fail(b, FM_ERR_BOOTSTRAP, "PMIx: rank %u out of range", (unsigned)p->self.rank));
    b->rank = (int)p->self.rank;
    rc = fm_pmix_job_size(b);
    FM_CHECK_QUIET(rc == FM_OK, rc);
    return FM_OK;
error:
    if (joined)
        PMIx_Finalize(NULL, 0);
    free(p);
    b->priv = NULL;
    return rc;
}

static int fm_pmix_put(fm_boot *b, const char *key, const char *value)
{
    pmix_value_t v;
    pmix_status_t st;
    int rc = FM_OK;
    v.type = PMIX_STRING;
    v.data.string = (char *)value; /* PMIx_Put copies it */
    st = PMIx_Put(PMIX_GLOBAL, key, &v);
    FM_CHECK_QUIET(st == PMIX_SUCCESS, fm_pmix_fail(b, st, "PMIx_Put"));
error:
    return rc;
}

static int fm_pmix_fence(fm_boot *b)
{
    pmix_info_t info[2];
    bool collect = true;
    int timeout = fm_pmix_timeout(b);
    pmix_status_t st;
    int rc = FM_OK;
    PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &timeout, PMIX_INT);
    st = PMIx_Commit();
    FM_CHECK_QUIET(st == PMIX_SUCCESS, fm_pmix_fail(b, st, "PMIx_Commit"));
    /* No procs: every process of our namespace takes part. */
    st = PMIx_Fence(NULL, 0, info, 2);
    FM_CHECK_QUIET(st == PMIX_SUCCESS, fm_pmix_fail(b, st, "PMIx_Fence"));
error:
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    return rc;
}

static int fm_pmix_get(fm_boot *b, int rank, const char *key, char *value, size_t len)
{
    struct fm_pmix *p = b->priv;
    pmix_proc_t peer;
    pmix_info_t info;
    pmix_value_t *val = NULL;
    int timeout = fm_pmix_timeout(b);
    pmix_status_t st;
    int rc = FM_OK;
    PMIX_PROC_LOAD(&peer, p->self.nspace, (pmix_rank_t)rank);
    PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &timeout, PMIX_INT);
    st = PMIx_Get(&peer, key, &info, 1, &val);
    FM_CHECK_QUIET(st == PMIX_SUCCESS, fm_pmix_fail(b, st, "PMIx_Get(%s of rank %d)", key, rank));
    FM_CHECK_QUIET(
        val->type == PMIX_STRING && val->data.string,
        fm_boot_fail(b, FM_ERR_BOOTSTRAP, "PMIx: %s of rank %d is not a string", key, rank));
    size_t n = strlen(val->data.string);
    FM_CHECK_QUIET(n < len, fm_boot_fail(b, FM_ERR_TOO_LONG,
                                         "PMIx: %s of rank %d is %zu chars, buffer holds %zu", key,
                                         rank, n, len ? len - 1 : 0));
    memcpy(value, val->data.string, n + 1);
error:
    if (val)
        PMIX_VALUE_RELEASE(val);
    PMIX_INFO_DESTRUCT(&info);
    return rc;
}

static void fm_pmix_abort(fm_boot *b, int code, const char *msg)
{
    fprintf(stderr, "fastmsg[%d]: abort(%d): %s\n", b->rank, code, msg ? msg : "");
    fflush(stderr);
    /* No procs: abort the whole namespace. Returns only if the server could not. */
    if (b->priv)
        PMIx_Abort(code ? code : 1, msg ? msg : "fastmsg abort", NULL, 0);
    _exit(code ? code : 1);
}

static void fm_pmix_fini(fm_boot *b)
{
    if (!b->priv)
        return;
    pmix_status_t st = PMIx_Finalize(NULL, 0);
    if (st != PMIX_SUCCESS)
        fm_pmix_fail(b, st, "PMIx_Finalize");
    free(b->priv);
    b->priv = NULL;
}

const struct fm_boot_ops fm_boot_pmix_ops = {
    .name = "pmix",
    .init = fm_pmix_init,
    .put = fm_pmix_put,
    .fence = fm_pmix_fence,
    .get = fm_pmix_get,
    .abort = fm_pmix_abort,
    .fini = fm_pmix_fini,
};
