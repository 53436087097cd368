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

int fm_ofi_is_shm(const char *provider)
{
    return !provider || !*provider || !strcmp(provider, "shm");
}

/* The least power of two >= n (the queues round their sizes so anyway). */
static size_t fm_ofi_pow2(size_t n)
{
    size_t p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

/* Size a provider's receive queue for rx_depth posted receives through its variable, unless
 * the user set it: shm refuses one receive more than its queue holds (-FI_ENOMEM), rxm makes
 * it wait (-FI_EAGAIN). */
static void fm_ofi_pin_rx_size(const char *var, size_t dflt, size_t max, size_t rx_depth)
{
    char val[32];
    if (rx_depth <= dflt || getenv(var))
        return;
    size_t want = fm_ofi_pow2(rx_depth);
    snprintf(val, sizeof val, "%zu", want < max ? want : max);
    setenv(var, val, 0);
    fm_log(1, "ofi: %s=%s, for %zu receives posted at once", var, val, rx_depth);
}

/* Before the first fi_getinfo: libfabric reads FI_PROVIDER once, at initialisation. Pinning
 * it keeps psm/psm2 from loading and installing their signal handlers. The providers read
 * their queue sizes then too. */
static void fm_ofi_pin_env(const fm_tp_config *cfg, const char *core)
{
    if (!getenv("FI_PROVIDER"))
        setenv("FI_PROVIDER", core, 0);
    if (!strcmp(core, "shm"))
        fm_ofi_pin_rx_size("FI_SHM_RX_SIZE", FM_OFI_SHM_RX_DEFAULT, FM_OFI_SHM_RX_MAX,
                           cfg->rx_depth);
    if (strstr(core, "ofi_rxm"))
        fm_ofi_pin_rx_size("FI_OFI_RXM_RX_SIZE", FM_OFI_RXM_RX_DEFAULT, SIZE_MAX, cfg->rx_depth);
    if (strstr(core, "ofi_rxm") && cfg->host_ranks > FM_OFI_RXM_CROWD &&
        !getenv("FI_OFI_RXM_MSG_RX_SIZE")) {
        setenv("FI_OFI_RXM_MSG_RX_SIZE", FM_OFI_RXM_CROWD_SRX, 0);
        fm_log(1, "ofi: FI_OFI_RXM_MSG_RX_SIZE=%s, for %d ranks on this host", FM_OFI_RXM_CROWD_SRX,
               cfg->host_ranks);
    }
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
 * path) and dropped if the provider has no tagged messages. extra (FI_MULTI_RECV when the
 * caller wants regions, else 0) is asked first and dropped the same way. */
static int fm_ofi_getinfo(const char *prov, uint64_t extra, struct fi_info **info)
{
    const uint64_t caps[] = {FI_MSG | FI_TAGGED | extra, FI_MSG | extra, FI_MSG | FI_TAGGED,
                             FI_MSG};
    int ret = -FI_ENOMEM;

    for (size_t i = extra ? 0 : 2; i < sizeof caps / sizeof caps[0]; i++) {
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

/* shm's endpoint address is a name ("fi_shm://NAME"; it adds ":<uid>:<n>") and its region
 * is /dev/shm/NAME:<uid>:<n>. fi_getinfo gives the pid as NAME; name it ourselves instead. */
static int fm_ofi_shm_name(struct fi_info *info, const char *name)
{
    size_t len = strlen("fi_shm://") + strlen(name) + 1;
    char *addr = malloc(len);
    if (!addr)
        return -FI_ENOMEM;
    snprintf(addr, len, "fi_shm://%s", name);
    free(info->src_addr); /* fi_freeinfo frees it with free() */
    info->src_addr = addr;
    info->src_addrlen = len;
    return 0;
}

/* Of rxm's eager buffer, what its own header may take (measured: 16040-byte messages pass
 * with the default 16 KiB; its header is under 100 bytes). */
#define FM_OFI_RXM_HDR_ROOM 256

/* Whether multi-receive regions carry messages of up to len bytes. rxm (1.17) writes a
 * message above its eager size (FI_OFI_RXM_BUFFER_SIZE, 16 KiB by default: it then moves by
 * segments or rendezvous) into a region wrongly: over other messages, or truncated (README,
 * "Known problems"). */
int fm_ofi_multi_recv_fits(const char *prov, size_t len)
{
    if (!strstr(prov, "ofi_rxm"))
        return 1;
    const char *v = getenv("FI_OFI_RXM_BUFFER_SIZE");
    size_t eager = v && *v ? strtoul(v, NULL, 0) : 16384;
    return len + FM_OFI_RXM_HDR_ROOM <= eager;
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
    /* FI_MULTI_RECV only where regions will be used: asked of rxm it changes how rxm
     * receives into ordinary buffers too (held packets went missing). */
    ret = fm_ofi_getinfo(prov,
                         cfg->multi_recv_min && fm_ofi_multi_recv_fits(prov, cfg->multi_recv_min)
                             ? FI_MULTI_RECV
                             : 0,
                         info);
    pinned = getenv("FI_PROVIDER");
    FM_OFI_CHECK(ret == 0, FM_ERR_PROVIDER,
                 "provider '%s' not available: fi_getinfo: %s (%d) [FI_PROVIDER=%s]", prov,
                 fi_strerror(-ret), ret, pinned ? pinned : "");
    /* Fatal on shm only: one receive beyond its queue fails. */
    pinned = getenv("FI_SHM_RX_SIZE");
    FM_OFI_CHECK(!fm_ofi_is_shm(prov) || cfg->rx_depth <= (*info)->rx_attr->size, FM_ERR_PROVIDER,
                 "libfabric's shm queues at most %zu posted receives (rx_attr.size; "
                 "FI_SHM_RX_SIZE=%s, read once per process), this process posts up to %zu",
                 (*info)->rx_attr->size, pinned ? pinned : "(unset)", cfg->rx_depth);
    FM_OFI_CHECK(!fm_ofi_is_shm(prov) || !cfg->name || !fm_ofi_shm_name(*info, cfg->name),
                 FM_ERR_NOMEM, "out of memory for the endpoint's name");
error:
    return rc;
}
