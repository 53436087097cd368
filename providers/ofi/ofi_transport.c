/* SPDX-License-Identifier: BSD-3-Clause */
/* The libfabric transport: fm_ofi_open assembles one from the pieces in this directory
 * (selection, resources, op pool) and fills in what the runtime needs to know about it. */
#include "ofi_internal.h"

#include "fastmsg.h"
#include "log.h"

#include <stdlib.h>
#include <string.h>

/* Ops allocated per pool chunk when the provider reports no queue sizes. */
#define FM_OFI_MIN_CHUNK 256

static void fm_ofi_close(fm_tp *tp);

/* The two tables differ only in poll: with multi-receive regions the CQ has
 * FI_CQ_FORMAT_DATA entries (they carry where a message landed), read by their own poll; the
 * ordinary table keeps the smaller format. */
#define FM_OFI_OPS(poll_fn)                                                                        \
    {                                                                                              \
        .name = "ofi", .addr = fm_ofi_addr, .connect = fm_ofi_connect, .mem_reg = fm_ofi_mem_reg,  \
        .mem_dereg = fm_ofi_mem_dereg, .send = fm_ofi_send, .post_recv = fm_ofi_post_recv,         \
        .post_recv_multi = fm_ofi_post_recv_multi, .sendv = fm_ofi_sendv, .tsend = fm_ofi_tsend,   \
        .trecv = fm_ofi_trecv, .poll = poll_fn, .wait_fd = fm_ofi_wait_fd,                         \
        .trywait = fm_ofi_trywait, .close = fm_ofi_close,                                          \
    }
static const struct fm_tp_ops fm_ofi_ops = FM_OFI_OPS(fm_ofi_poll);
static const struct fm_tp_ops fm_ofi_multi_ops = FM_OFI_OPS(fm_ofi_poll_data);

/* What the runtime sees of the chosen fi_info, and the copies the packet path reads. */
static void fm_ofi_describe(fm_ofi_tp *t, const fm_tp_config *cfg)
{
    const struct fi_info *fi = t->info;
    fm_tp_info *in = &t->base.info;
    const uint64_t sas = FI_ORDER_SAS;

    snprintf(in->provider, sizeof in->provider, "%s", fi->fabric_attr->prov_name);
    snprintf(in->fabric, sizeof in->fabric, "%s", fi->fabric_attr->name);
    in->inject_size = fi->tx_attr->inject_size;
    in->max_msg_size = fi->ep_attr->max_msg_size;
    in->needs_mr = (fi->domain_attr->mr_mode & FI_MR_LOCAL) != 0;
    in->ordered = (fi->tx_attr->msg_order & sas) && (fi->rx_attr->msg_order & sas);
    in->tagged = (fi->caps & FI_TAGGED) != 0;
    in->sendv = fi->tx_attr->iov_limit >= 2;
    /* rxm builds its RDM endpoint from connected (msg) endpoints; tcp's own is one too. */
    in->connected = strstr(fi->fabric_attr->prov_name, "ofi_rxm") != NULL ||
                    strstr(fi->fabric_attr->prov_name, "tcp") != NULL;
    in->local_only = !strcmp(fi->fabric_attr->prov_name, "shm") ||
                     ((fi->caps & FI_LOCAL_COMM) && !(fi->caps & FI_REMOTE_COMM));
    in->local_peers = in->local_only;
    in->dgram_mcast = 0;
    in->multi_recv = cfg->multi_recv_min && (fi->caps & FI_MULTI_RECV) &&
                     fm_ofi_multi_recv_fits(fi->fabric_attr->prov_name, cfg->multi_recv_min);
    t->multi_recv = in->multi_recv;
    t->multi_recv_min = in->multi_recv ? cfg->multi_recv_min : 0;
    if (t->multi_recv)
        t->base.ops = &fm_ofi_multi_ops;
    t->inject_end = in->inject_size ? in->inject_size + 1 : 0;
    t->needs_mr = in->needs_mr;
    t->chunk_ops = fi->tx_attr->size + fi->rx_attr->size;
    if (t->chunk_ops < FM_OFI_MIN_CHUNK)
        t->chunk_ops = FM_OFI_MIN_CHUNK;
}

/* Release whatever exists; safe on a half-open transport. */
static void fm_ofi_destroy(fm_ofi_tp *t)
{
    fm_ofi_resources_close(t);
    fm_ofi_pool_fini(t);
    if (t->info)
        fi_freeinfo(t->info);
    free(t);
}

int fm_ofi_open(const fm_tp_config *cfg, fm_tp **tp, char *err, size_t errlen)
{
    fm_ofi_tp *t = NULL;
    int rc = FM_OK;

    FM_OFI_CHECK(cfg && tp, FM_ERR_INVALID, "ofi: open needs a config and a result pointer");
    *tp = NULL;
    /* Cheap, and it links ofi_signals.c with its constructor into static programs. */
    fm_ofi_restore_signals();
    t = calloc(1, sizeof *t);
    FM_OFI_CHECK(t, FM_ERR_NOMEM, "ofi: out of memory");
    t->base.ops = &fm_ofi_ops;
    t->wait_fd = -1;
    rc = fm_ofi_select(cfg, &t->info, err, errlen);
    FM_CHECK_QUIET(rc == FM_OK, rc);
    fm_ofi_describe(t, cfg);
    rc = fm_ofi_resources_open(t, !cfg->no_wait_fd, err, errlen);
    FM_CHECK_QUIET(rc == FM_OK, rc);
    t->base.info.wait_fd = t->wait_fd >= 0;
    FM_OFI_CHECK(fm_ofi_pool_grow(t) == FM_OK, FM_ERR_NOMEM,
                 "provider '%s': out of memory for %zu operation descriptors",
                 t->base.info.provider, t->chunk_ops);
    fm_log(1, "ofi: provider %s, fabric %s, inject %zu B, max message %zu B, wait fd %s, %s%s%s",
           t->base.info.provider, t->base.info.fabric, t->base.info.inject_size,
           t->base.info.max_msg_size, t->wait_fd >= 0 ? "yes" : "no",
           t->base.info.ordered ? "ordered" : "unordered", t->needs_mr ? ", registers buffers" : "",
           t->multi_recv ? ", multi-receive regions" : "");
    if (cfg->multi_recv_min && !t->multi_recv)
        fm_log(1,
               "ofi: provider %s: no multi-receive regions for messages of %zu bytes "
               "(providers/ofi/README.md, Known problems)",
               t->base.info.provider, cfg->multi_recv_min);
    *tp = &t->base;
    return FM_OK;
error:
    if (t)
        fm_ofi_destroy(t);
    return rc;
}

/* The endpoint goes first, so nothing completes into freed ops; registrations must already
 * be gone (mem_dereg), or the domain refuses to close. */
static void fm_ofi_close(fm_tp *tp)
{
    if (tp)
        fm_ofi_destroy(fm_ofi_tp_of(tp));
}

const fm_ofi_stats *fm_ofi_stats_of(const fm_tp *tp)
{
    return &((const fm_ofi_tp *)tp)->stats;
}
