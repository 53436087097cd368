/* SPDX-License-Identifier: BSD-3-Clause */
/* Addresses and memory registration: fi_getname, fi_av_insert in rank order, fi_mr_reg where
 * the provider demands FI_MR_LOCAL. */
#include "ofi_internal.h"

#include <string.h>

#include "fastmsg.h"
#include "log.h"

int fm_ofi_addr(fm_tp *tp, void *buf, size_t *len)
{
    fm_ofi_tp *t = fm_ofi_tp_of(tp);
    int rc = FM_OK;
    size_t cap;
    int ret;

    FM_CHECK(buf && len, FM_ERR_INVALID, "ofi addr: NULL buffer or length");
    cap = *len;
    ret = fi_getname(&t->ep->fid, buf, len);
    FM_CHECK(ret != -FI_ETOOSMALL, FM_ERR_TOO_LONG,
             "ofi %s: address needs %zu bytes, buffer has %zu", tp->info.provider, *len, cap);
    FM_CHECK(ret == 0, FM_ERR_PROVIDER, "ofi %s: fi_getname: %s (%d)", tp->info.provider,
             fi_strerror(-ret), ret);
error:
    return rc;
}

/* Why shm may refuse an address or misplace it. In libfabric 1.17 an insert whose region
 * cannot be opened (shm_open fails: its process has exited) is accepted but leaves its slot
 * free, and the next address then gets that slot's fi_addr ("addr already in AV"). */
static const char *fm_ofi_av_hint(const fm_ofi_tp *t, int ret, fi_addr_t fa, int r)
{
    if (strcmp(t->base.info.provider, "shm"))
        return "";
    if (ret == 1 && fa < (fi_addr_t)r)
        return "; shm could not open the earlier rank's region (has that rank exited?)";
    if (ret == 0 && r >= FM_OFI_SHM_MAX_PEERS)
        return "; shm holds at most " FM_OFI_STR(FM_OFI_SHM_MAX_PEERS) " addresses";
    return "";
}

/* One at a time, so the AV index of each address can be checked against its rank and a
 * failure names the rank. */
int fm_ofi_connect(fm_tp *tp, const void *addrs, size_t addrlen, int n)
{
    fm_ofi_tp *t = fm_ofi_tp_of(tp);
    const char *prov = tp->info.provider;
    int rc = FM_OK;
    int r = 0;
    int ret = 0;
    fi_addr_t fa = FI_ADDR_NOTAVAIL;

    FM_CHECK(addrs && addrlen > 0 && n > 0, FM_ERR_INVALID, "ofi %s: connect: no addresses", prov);
    FM_CHECK(t->nranks == 0, FM_ERR_INVALID, "ofi %s: connect called twice", prov);
    for (r = 0; r < n; r++) {
        fa = FI_ADDR_NOTAVAIL;
        ret = fi_av_insert(t->av, (const char *)addrs + (size_t)r * addrlen, 1, &fa, 0, NULL);
        FM_CHECK(ret == 1 && fa == (fi_addr_t)r, FM_ERR_PROVIDER,
                 "ofi %s: fi_av_insert of rank %d's address: %s (%d, fi_addr %lld)%s", prov, r,
                 ret < 0    ? fi_strerror(-ret)
                 : ret == 0 ? "address rejected"
                            : "not in rank order",
                 ret, fa == FI_ADDR_NOTAVAIL ? -1LL : (long long)fa, fm_ofi_av_hint(t, ret, fa, r));
    }
    t->nranks = n;
error:
    return rc;
}

int fm_ofi_mem_reg(fm_tp *tp, void *buf, size_t len, fm_tp_mr **mr)
{
    fm_ofi_tp *t = fm_ofi_tp_of(tp);
    struct fid_mr *fmr = NULL;
    uint64_t key = 0;
    int rc = FM_OK;
    int ret;

    FM_CHECK(mr, FM_ERR_INVALID, "ofi mem_reg: NULL result pointer");
    *mr = NULL;
    if (!t->needs_mr)
        return FM_OK;
    /* Without FI_MR_PROV_KEY the keys are ours to keep unique. */
    if (!(t->info->domain_attr->mr_mode & FI_MR_PROV_KEY))
        key = t->mr_key++;
    ret = fi_mr_reg(t->domain, buf, len, FI_SEND | FI_RECV, 0, key, 0, &fmr, NULL);
    FM_CHECK(ret == 0, FM_ERR_PROVIDER, "ofi %s: fi_mr_reg of %zu bytes: %s (%d)",
             tp->info.provider, len, fi_strerror(-ret), ret);
    *mr = (fm_tp_mr *)fmr;
error:
    return rc;
}

void fm_ofi_mem_dereg(fm_tp *tp, fm_tp_mr *mr)
{
    int ret;

    if (!mr)
        return;
    ret = fi_close(&((struct fid_mr *)mr)->fid);
    if (ret != 0)
        fm_log(0, "ofi %s: fi_close(mr): %s (%d)", tp->info.provider, fi_strerror(-ret), ret);
}
