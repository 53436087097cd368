/* SPDX-License-Identifier: BSD-3-Clause */
/* The ofi provider's line in the provider table (transport.c): every FM_PROVIDER value is a
 * libfabric provider name for now, its settings checks, and fastmsg-info's listing. */
#include "ofi_internal.h"

#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include "fastmsg.h"

static int ofi_serves(const char *provider)
{
    (void)provider;
    return 1; /* "shm", "tcp", or any RDM provider string libfabric may know */
}

/* Only tcp reads FM_IFACE (fm_ofi_select pins FI_TCP_IFACE to it): it must exist here. */
static int ofi_check(const fm_tp_config *cfg, char *err, size_t errlen)
{
    if (cfg->iface && cfg->iface[0] && strstr(cfg->provider, "tcp") &&
        !if_nametoindex(cfg->iface)) {
        snprintf(err, errlen, "FM_IFACE=\"%.60s\": no such network interface here", cfg->iface);
        return FM_ERR_CONFIG;
    }
    return FM_OK;
}

/* libfabric's shm cannot be configured past its constants (ofi_internal.h). */
static int ofi_fits(const fm_tp_config *cfg, int ranks, char *err, size_t errlen)
{
    if (!fm_ofi_is_shm(cfg->provider))
        return FM_OK;
    if (ranks > FM_OFI_SHM_MAX_PEERS) {
        snprintf(
            err, errlen,
            "libfabric's shm connects at most %d processes (SMR_MAX_PEERS in libfabric %u.%u), "
            "this job has %d ranks",
            FM_OFI_SHM_MAX_PEERS, FI_MAJOR(fi_version()), FI_MINOR(fi_version()), ranks);
        return FM_ERR_PROVIDER;
    }
    if (cfg->rx_depth > FM_OFI_SHM_RX_MAX) {
        snprintf(err, errlen,
                 "libfabric's shm queues at most %d posted receives (FI_SHM_RX_SIZE), this job "
                 "posts up to %zu per process",
                 FM_OFI_SHM_RX_MAX, cfg->rx_depth);
        return FM_ERR_PROVIDER;
    }
    return FM_OK;
}

/* "libfabric X.Y, RDM providers: prov1 prov2 ..." */
static void ofi_list(char *buf, size_t len)
{
    struct fi_info *hints = fi_allocinfo(), *info = NULL;
    int o = snprintf(buf, len, "libfabric %u.%u, RDM providers:", FI_MAJOR(fi_version()),
                     FI_MINOR(fi_version()));
    if (!hints)
        return;
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG;
    if (fi_getinfo(FI_VERSION(1, 14), NULL, NULL, 0, hints, &info) == 0) {
        for (struct fi_info *i = info; i && o > 0 && (size_t)o < len; i = i->next) {
            char tok[80];
            snprintf(tok, sizeof tok, " %s", i->fabric_attr->prov_name);
            if (!strstr(buf, tok))
                o += snprintf(buf + o, len - (size_t)o, "%s", tok);
        }
        fi_freeinfo(info);
    }
    fi_freeinfo(hints);
}

const fm_tp_provider fm_ofi_provider = {
    .name = "ofi",
    .serves = ofi_serves,
    .check = ofi_check,
    .fits = ofi_fits,
    .open = fm_ofi_open,
    .list = ofi_list,
};
