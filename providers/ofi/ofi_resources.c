/* SPDX-License-Identifier: BSD-3-Clause */
/* The libfabric objects of one transport: fabric, domain, one CQ for sends and receives, an
 * AV table and the RDM endpoint; opened in dependency order and closed in reverse. */
#include "ofi_internal.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fastmsg.h"
#include "log.h"

/* Open the CQ with a wait fd where the provider has one (tcp;ofi_rxm), else without (shm in
 * 1.17 answers FI_WAIT_FD with -FI_ENOSYS). Sets t->wait_fd, -1 for none. The wait object is
 * not free: tcp;ofi_rxm then progresses through epoll, ~0.9 us more per one-way 64 B packet
 * here, so want_fd 0 skips it. */
static int fm_ofi_cq_open(fm_ofi_tp *t, int want_fd)
{
    struct fi_cq_attr attr = {
        /* flags and len: enough for RECV_DONE. Regions need buf too (FI_CQ_FORMAT_DATA). */
        .format = t->multi_recv ? FI_CQ_FORMAT_DATA : FI_CQ_FORMAT_MSG,
        .wait_obj = FI_WAIT_FD,
        /* Room for every op the endpoint can have posted, so the CQ never overruns. */
        .size = t->info->tx_attr->size + t->info->rx_attr->size,
    };
    int ret = want_fd ? fi_cq_open(t->domain, &attr, &t->cq, NULL) : -FI_ENOSYS;

    if (ret == 0) {
        ret = fi_control(&t->cq->fid, FI_GETWAIT, &t->wait_fd);
        if (ret == 0)
            return 0;
        fi_close(&t->cq->fid);
        t->cq = NULL;
        t->wait_fd = -1;
    }
    attr.wait_obj = FI_WAIT_NONE;
    return fi_cq_open(t->domain, &attr, &t->cq, NULL);
}

/* shm names its region in /dev/shm after the process id ("<pid>:<domain>:<ep>") and unlinks
 * it at close. A process that died without closing leaves it behind, and the next process
 * that gets the same pid then fails fi_enable with -FI_EBUSY. Before this process's first shm
 * endpoint, a region named after our own pid can only be such a leftover: remove it. (Later
 * endpoints of the same process are left alone: the regions are then its own.) */
static void fm_ofi_shm_remove_stale(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    char prefix[32];
    int len = snprintf(prefix, sizeof prefix, "%ld:", (long)getpid());
    DIR *dir = opendir("/dev/shm");
    if (!dir)
        return;
    for (struct dirent *e; (e = readdir(dir)) != NULL;)
        if (!strncmp(e->d_name, prefix, (size_t)len) && !unlinkat(dirfd(dir), e->d_name, 0))
            fm_log(1, "ofi shm: removed /dev/shm/%s, left by an earlier process %s", e->d_name,
                   "with our pid");
    closedir(dir);
}

int fm_ofi_resources_open(fm_ofi_tp *t, int want_fd, char *err, size_t errlen)
{
    int rc = FM_OK;
    const char *prov = t->info->fabric_attr->prov_name;
    struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
    const char *call;
    int ret;

    call = "fi_fabric";
    ret = fi_fabric(t->info->fabric_attr, &t->fabric, NULL);
    FM_CHECK_QUIET(ret == 0, FM_ERR_PROVIDER);
    call = "fi_domain";
    ret = fi_domain(t->fabric, t->info, &t->domain, NULL);
    FM_CHECK_QUIET(ret == 0, FM_ERR_PROVIDER);
    call = "fi_cq_open";
    ret = fm_ofi_cq_open(t, want_fd);
    FM_CHECK_QUIET(ret == 0, FM_ERR_PROVIDER);
    call = "fi_av_open";
    ret = fi_av_open(t->domain, &av_attr, &t->av, NULL);
    FM_CHECK_QUIET(ret == 0, FM_ERR_PROVIDER);
    if (!strcmp(prov, "shm"))
        fm_ofi_shm_remove_stale();
    call = "fi_endpoint";
    ret = fi_endpoint(t->domain, t->info, &t->ep, NULL);
    FM_CHECK_QUIET(ret == 0, FM_ERR_PROVIDER);
    call = "fi_ep_bind(av)";
    ret = fi_ep_bind(t->ep, &t->av->fid, 0);
    FM_CHECK_QUIET(ret == 0, FM_ERR_PROVIDER);
    call = "fi_ep_bind(cq)";
    ret = fi_ep_bind(t->ep, &t->cq->fid, FI_TRANSMIT | FI_RECV);
    FM_CHECK_QUIET(ret == 0, FM_ERR_PROVIDER);
    call = "fi_enable";
    ret = fi_enable(t->ep);
    FM_CHECK_QUIET(ret == 0, FM_ERR_PROVIDER);
    /* The release threshold of multi-receive regions (after fi_enable: shm 1.17 keeps it in
     * an object fi_enable makes, and crashes before; defaults: shm 4096, rxm 16384). */
    call = "fi_setopt(FI_OPT_MIN_MULTI_RECV)";
    ret = t->multi_recv ? fi_setopt(&t->ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV,
                                    &t->multi_recv_min, sizeof t->multi_recv_min)
                        : 0;
    FM_CHECK_QUIET(ret == 0, FM_ERR_PROVIDER);
    return FM_OK;
error:
    snprintf(err, errlen, "provider '%s': %s: %s (%d)", prov, call, fi_strerror(-ret), ret);
    return rc;
}

/* Close one object, logging (not failing) on error: close must release everything. */
static void fm_ofi_close_fid(const char *prov, const char *what, struct fid *fid)
{
    int ret = fi_close(fid);
    if (ret != 0)
        fm_log(0, "ofi %s: fi_close(%s): %s (%d)", prov, what, fi_strerror(-ret), ret);
}

void fm_ofi_resources_close(fm_ofi_tp *t)
{
    const char *prov = t->base.info.provider;

    if (t->ep)
        fm_ofi_close_fid(prov, "endpoint", &t->ep->fid);
    if (t->av)
        fm_ofi_close_fid(prov, "av", &t->av->fid);
    if (t->cq)
        fm_ofi_close_fid(prov, "cq", &t->cq->fid);
    if (t->domain)
        fm_ofi_close_fid(prov, "domain", &t->domain->fid);
    if (t->fabric)
        fm_ofi_close_fid(prov, "fabric", &t->fabric->fid);
    t->ep = NULL;
    t->av = NULL;
    t->cq = NULL;
    t->domain = NULL;
    t->fabric = NULL;
    t->wait_fd = -1;
}
