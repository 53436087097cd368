/* Transport selection. Every FM_PROVIDER value goes to libfabric for now; the in-process and
 * udp multicast transports will be chosen here too. */
#include "transport.h"

#include <stdio.h>

#include "fastmsg.h"

int fm_tp_open(const fm_tp_config *cfg, fm_tp **tp, char *err, size_t errlen)
{
    if (!cfg || !tp || !cfg->provider || !*cfg->provider) {
        snprintf(err, errlen, "FM_PROVIDER is empty");
        return FM_ERR_CONFIG;
    }
    return fm_ofi_open(cfg, tp, err, errlen);
}

/* For fastmsg-info: the libfabric version and the RDM providers it finds. */
#include <rdma/fabric.h>
#include <string.h>

void fm_tp_list_providers(char *buf, size_t len)
{
    struct fi_info *hints = fi_allocinfo(), *info = NULL;
    int o =
        snprintf(buf, len, "%u.%u, RDM providers:", FI_MAJOR(fi_version()), FI_MINOR(fi_version()));
    if (!hints)
        return;
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG;
    if (fi_getinfo(FI_VERSION(1, 14), NULL, NULL, 0, hints, &info) == 0) {
        for (struct fi_info *i = info; i && o > 0 && (size_t)o < len; i = i->next) {
            const char *name = i->fabric_attr->prov_name;
            char tok[80];
            snprintf(tok, sizeof tok, " %s", name);
            if (!strstr(buf, tok))
                o += snprintf(buf + o, len - (size_t)o, "%s", tok);
        }
        fi_freeinfo(info);
    }
    fi_freeinfo(hints);
}
