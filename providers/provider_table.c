/* SPDX-License-Identifier: BSD-3-Clause */
/* The provider table: which provider serves an FM_PROVIDER value. Every provider's code
 * lives in its own folder; nothing here knows libfabric. */
#include "transport.h"

#include <stdio.h>
#include <string.h>

#include "fastmsg.h"
#include "fm_build_config.h"

/* In order: the first provider that serves a name gets it. */
static const fm_tp_provider *const providers[] = {
#if FM_HAVE_MPI
    &fm_mpi_provider,
#endif
    &fm_sm_provider,
    &fm_hybrid_provider,
    &fm_ofi_provider,
};
#define NPROVIDERS (sizeof providers / sizeof providers[0])

static const fm_tp_provider *provider_for(const char *name, char *err, size_t errlen)
{
    if (!name || !*name) {
        snprintf(err, errlen, "FM_PROVIDER is empty");
        return NULL;
    }
    for (size_t i = 0; i < NPROVIDERS; i++)
        if (providers[i]->serves(name))
            return providers[i];
    snprintf(err, errlen, "no provider serves \"%.60s\"", name);
    return NULL;
}

int fm_tp_open(const fm_tp_config *cfg, fm_tp **tp, char *err, size_t errlen)
{
    const fm_tp_provider *p = cfg && tp ? provider_for(cfg->provider, err, errlen) : NULL;
    return p ? p->open(cfg, tp, err, errlen) : FM_ERR_CONFIG;
}

int fm_tp_check_config(const fm_tp_config *cfg, char *err, size_t errlen)
{
    const fm_tp_provider *p = cfg ? provider_for(cfg->provider, err, errlen) : NULL;
    if (!p)
        return FM_ERR_CONFIG;
    return p->check ? p->check(cfg, err, errlen) : FM_OK;
}

int fm_tp_fits(const fm_tp_config *cfg, int ranks, char *err, size_t errlen)
{
    const fm_tp_provider *p = cfg ? provider_for(cfg->provider, err, errlen) : NULL;
    if (!p)
        return FM_ERR_CONFIG;
    return p->fits ? p->fits(cfg, ranks, err, errlen) : FM_OK;
}

void fm_tp_list_providers(char *buf, size_t len)
{
    if (!len)
        return;
    buf[0] = '\0';
    for (size_t i = 0; i < NPROVIDERS; i++) {
        size_t used = strlen(buf);
        if (used + 1 < len)
            snprintf(buf + used, len - used, "%s%s: ", i ? "; " : "", providers[i]->name);
        used = strlen(buf);
        providers[i]->list(buf + used, len - used);
    }
}
