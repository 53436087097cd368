/* SPDX-License-Identifier: BSD-3-Clause */
/* Provider selection: map FM_PROVIDER to a libfabric provider string, pin the environment
 * before libfabric initialises, and ask fi_getinfo for an RDM endpoint of exactly that
 * provider. */
#include "ofi_internal.h"

#include "fastmsg.h"
#include "log.h"

#include <stdlib.h>
#include <string.h>

/* "shm" -> shm, "tcp" -> tcp;ofi_rxm, anything else as given. core is the same list with ','
 * for FI_PROVIDER, which filters core and utility providers by name alike. */
static int fm_ofi_names(const char *want, char *prov, size_t plen, char *core, size_t clen)
{
    if (!want || !*want || strcmp(want, "shm") == 0)
        want = "shm";
    else if (strcmp(want, "tcp") == 0)
        want = "tcp;ofi_rxm";
    if (strlen(want) >= plen || strlen(want) >= clen)
        return FM_ERR_TOO_LONG;
    strcpy(prov, want);
    strcpy(core, want);
    for (char *p = core; *p; p++)
        if (*p == ';')
            *p = ',';
    return FM_OK;
}

/* Before the first fi_getinfo: libfabric reads FI_PROVIDER once, at initialisation. Pinning
 * it keeps psm/psm2 from loading and installing their signal handlers. */
static void fm_ofi_pin_env(const fm_tp_config *cfg, const char *core)
{
    if (!getenv("FI_PROVIDER"))
        setenv("FI_PROVIDER", core, 0);
    if (!strstr(core, "tcp"))
        return;
    if (cfg->iface && *cfg->iface)
        setenv("FI_TCP_IFACE", cfg->iface, 1);
    else if (cfg->all_local)
        setenv("FI_TCP_IFACE", "lo", 0);
}

/* Hints for prov: RDM, messages (+ tagged when asked), AV table, one thread per domain. */
static struct fi_info *fm_ofi_hints(const char *prov, uint64_t caps)
{
    struct fi_info *h = fi_allocinfo();
    if (!h)
        return NULL;
    h->caps = caps;
    h->mode = FI_CONTEXT | FI_CONTEXT2; /* every op we post carries its own fi_context2 */
    h->ep_attr->type = FI_EP_RDM;
    h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    h->domain_attr->av_type = FI_AV_TABLE;
    /* One thread drives a context: lets providers drop their locks. */
    h->domain_attr->threading = FI_THREAD_DOMAIN;
    h->fabric_attr->prov_name = strdup(prov);
    if (!h->fabric_attr->prov_name) {
        fi_freeinfo(h);
        return NULL;
    }
    return h;
}

/* fi_getinfo for prov; FI_TAGGED is asked first (free where offered, for a later zero-copy
 * path) and dropped if the provider has no tagged messages. */
static int fm_ofi_getinfo(const char *prov, struct fi_info **info)
{
    static const uint64_t caps[] = {FI_MSG | FI_TAGGED, FI_MSG};
    int ret = -FI_ENOMEM;

    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
        struct fi_info *h = fm_ofi_hints(prov, caps[i]);
        if (!h)
            return -FI_ENOMEM;
        ret = fi_getinfo(FM_OFI_API, NULL, NULL, 0, h, info);
        fi_freeinfo(h);
        if (ret == 0)
            return 0;
    }
    return ret;
}

int fm_ofi_select(const fm_tp_config *cfg, struct fi_info **info, char *err, size_t errlen)
{
    int rc = FM_OK;
    char prov[64], core[64];
    const char *pinned;
    int ret;

    *info = NULL;
    FM_OFI_CHECK(fm_ofi_names(cfg->provider, prov, sizeof prov, core, sizeof core) == FM_OK,
                 FM_ERR_CONFIG, "provider name '%s' is too long", cfg->provider);
    fm_ofi_pin_env(cfg, core);
    ret = fm_ofi_getinfo(prov, info);
    pinned = getenv("FI_PROVIDER");
    FM_OFI_CHECK(ret == 0, FM_ERR_PROVIDER,
                 "provider '%s' not available: fi_getinfo: %s (%d) [FI_PROVIDER=%s]", prov,
                 fi_strerror(-ret), ret, pinned ? pinned : "");
error:
    return rc;
}
