/* SPDX-License-Identifier: BSD-3-Clause */
/* The hybrid provider ("sm+NET", e.g. sm+tcp): its line in the provider table, open (both
 * paths), addr and connect (each path gets the addresses of the ranks it reaches), close.
 * Which ranks share this host comes from the runtime's topology (fm_tp_config.host_of). */
#include "hybrid_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "fastmsg.h"
#include "log.h"

#define FM_HY_PREFIX "sm+"

/* The network path: libfabric's RDM endpoints serve every network name (tcp, "verbs;ofi_rxm",
 * ...). Named here, not looked up in the provider table, which lists this provider too. */
static const fm_tp_provider *const net_provider = &fm_ofi_provider;

/* The network provider's name in "sm+NET", or NULL. */
static const char *net_name(const char *provider)
{
    size_t k = strlen(FM_HY_PREFIX);
    if (!provider || strncmp(provider, FM_HY_PREFIX, k) || !provider[k] ||
        !strncmp(provider + k, "sm", 2))
        return NULL;
    return provider + k;
}

static int hy_serves(const char *provider)
{
    return net_name(provider) != NULL;
}

static fm_tp_config net_config(const fm_tp_config *cfg)
{
    fm_tp_config c = *cfg;
    c.provider = net_name(cfg->provider);
    return c;
}

static int hy_check(const fm_tp_config *cfg, char *err, size_t errlen)
{
    fm_tp_config c = net_config(cfg);
    return net_provider->check ? net_provider->check(&c, err, errlen) : FM_OK;
}

static int hy_fits(const fm_tp_config *cfg, int ranks, char *err, size_t errlen)
{
    fm_tp_config c = net_config(cfg);
    return net_provider->fits ? net_provider->fits(&c, ranks, err, errlen) : FM_OK;
}

static void hy_list(char *buf, size_t len)
{
    snprintf(buf, len, "sm+NET: sm between ranks of a host, NET (e.g. tcp) between hosts");
}

/* Which path reaches each rank, and each local rank's number on sm. */
static int map_ranks(fm_hy_tp *t, const fm_tp_config *cfg, char *err, size_t errlen)
{
    int rc = FM_OK;
    t->via = calloc((size_t)t->n, 1);
    t->sm_rank = malloc((size_t)t->n * sizeof *t->sm_rank);
    FM_TP_CHECK(t->via && t->sm_rank, FM_ERR_NOMEM, "hybrid: out of memory for %d ranks", t->n);
    int mine = cfg->host_of[t->rank];
    for (int r = 0; r < t->n; r++) {
        int local = cfg->host_of[r] == mine;
        t->via[r] = local ? FM_HY_SM : FM_HY_NET;
        t->sm_rank[r] = local ? t->nlocal++ : -1;
    }
error:
    return rc;
}

/* One epoll set over both wait fds (none where either path has none). */
static int wait_set(fm_hy_tp *t, char *err, size_t errlen)
{
    int rc = FM_OK;
    t->epfd = -1;
    if (!t->path[FM_HY_SM]->info.wait_fd || !t->path[FM_HY_NET]->info.wait_fd)
        return FM_OK;
    t->epfd = epoll_create1(EPOLL_CLOEXEC);
    FM_TP_CHECK(t->epfd >= 0, FM_ERR_PROVIDER, "hybrid: epoll_create1 failed");
    for (int p = 0; p < FM_HY_PATHS; p++) {
        struct epoll_event e = {.events = EPOLLIN, .data.u32 = (uint32_t)p};
        int fd = t->path[p]->ops->wait_fd(t->path[p]);
        FM_TP_CHECK(fd >= 0 && epoll_ctl(t->epfd, EPOLL_CTL_ADD, fd, &e) == 0, FM_ERR_PROVIDER,
                    "hybrid: cannot watch %s's wait fd %d", t->path[p]->info.provider, fd);
    }
error:
    return rc;
}

void fm_hy_describe(fm_hy_tp *t)
{
    const fm_tp_info *s = &t->path[FM_HY_SM]->info, *w = &t->path[FM_HY_NET]->info;
    fm_tp_info *in = &t->base.info;
    snprintf(in->provider, sizeof in->provider, "sm+%.59s", w->provider);
    snprintf(in->fabric, sizeof in->fabric, "%s", w->fabric);
    /* The runtime sizes its small packets by the inject size: the network's, the smaller. */
    in->inject_size = s->inject_size < w->inject_size ? s->inject_size : w->inject_size;
    in->max_msg_size = s->max_msg_size < w->max_msg_size ? s->max_msg_size : w->max_msg_size;
    in->needs_mr = s->needs_mr || w->needs_mr;
    in->ordered = s->ordered && w->ordered;
    in->tagged = s->tagged && w->tagged;
    in->sendv = s->sendv && w->sendv;
    in->wait_fd = t->epfd >= 0;
    in->connected = w->connected;
    in->local_only = 0;
    in->local_peers = t->nlocal > 1;
    in->multi_recv = s->multi_recv && w->multi_recv;
    in->zcopy_from = w->zcopy_from;
    in->zcopy_from_local = s->zcopy_from;
}

static void hy_destroy(fm_hy_tp *t)
{
    for (int p = 0; p < FM_HY_PATHS; p++)
        if (t->path[p])
            t->path[p]->ops->close(t->path[p]);
    if (t->epfd >= 0)
        close(t->epfd);
    free(t->via);
    free(t->sm_rank);
    free(t->back);
    free(t);
}

static void hy_close(fm_tp *tp)
{
    if (tp)
        hy_destroy(fm_hy_of(tp));
}

static int hy_addr(fm_tp *tp, void *buf, size_t *len);
static int hy_connect(fm_tp *tp, const void *addrs, size_t addrlen, int n);

static const struct fm_tp_ops fm_hy_ops = {
    .name = "hybrid",
    .addr = hy_addr,
    .connect = hy_connect,
    .mem_reg = fm_hy_mem_reg,
    .mem_dereg = fm_hy_mem_dereg,
    .send = fm_hy_send,
    .sendv = fm_hy_sendv,
    .sendv_shared = fm_hy_sendv_shared,
    .share_release = fm_hy_share_release,
    .lend_release = fm_hy_lend_release,
    .post_recv = fm_hy_post_recv,
    .post_recv_multi = fm_hy_post_recv_multi,
    .tsend = fm_hy_tsend,
    .trecv = fm_hy_trecv,
    .poll = fm_hy_poll,
    .wait_fd = fm_hy_wait_fd,
    .trywait = fm_hy_trywait,
    .needs_region = fm_hy_needs_region,
    .close = hy_close,
};

static int hy_open(const fm_tp_config *cfg, fm_tp **tp, char *err, size_t errlen)
{
    fm_hy_tp *t = NULL;
    int rc = FM_OK;
    FM_TP_CHECK(cfg && tp, FM_ERR_INVALID, "hybrid: open needs a config and a result pointer");
    *tp = NULL;
    FM_TP_CHECK(cfg->host_of && cfg->nranks > 0 && cfg->rank >= 0 && cfg->rank < cfg->nranks,
                FM_ERR_PROVIDER, "hybrid: where the job's ranks run is not known");
    t = calloc(1, sizeof *t);
    FM_TP_CHECK(t, FM_ERR_NOMEM, "hybrid: out of memory");
    t->base.ops = &fm_hy_ops;
    t->epfd = -1;
    t->n = cfg->nranks;
    t->rank = cfg->rank;
    if ((rc = map_ranks(t, cfg, err, errlen)))
        goto error;
    fm_tp_config c = *cfg;
    c.provider = "sm";
    c.all_local = 1;
    c.host_ranks = t->nlocal;
    if ((rc = fm_sm_provider.open(&c, &t->path[FM_HY_SM], err, errlen)))
        goto error;
    c = net_config(cfg);
    if ((rc = net_provider->open(&c, &t->path[FM_HY_NET], err, errlen)))
        goto error;
    if ((rc = wait_set(t, err, errlen)))
        goto error;
    fm_hy_describe(t);
    *tp = &t->base;
    return FM_OK;
error:
    if (t)
        hy_destroy(t);
    return rc;
}

/* An address: sm's length (one byte), sm's address, the network's. */
static int hy_addr(fm_tp *tp, void *buf, size_t *len)
{
    fm_hy_tp *t = fm_hy_of(tp);
    unsigned char *b = buf;
    if (!buf || !len || *len < 2)
        return FM_ERR_INVALID;
    size_t sl = *len - 1;
    int rc = t->path[FM_HY_SM]->ops->addr(t->path[FM_HY_SM], b + 1, &sl);
    if (rc || sl > 255 || sl >= *len - 1)
        return rc ? rc : FM_ERR_TOO_LONG;
    size_t nl = *len - 1 - sl;
    rc = t->path[FM_HY_NET]->ops->addr(t->path[FM_HY_NET], b + 1 + sl, &nl);
    if (rc)
        return rc;
    b[0] = (unsigned char)sl;
    *len = 1 + sl + nl;
    return FM_OK;
}

static int hy_connect(fm_tp *tp, const void *addrs, size_t addrlen, int n)
{
    fm_hy_tp *t = fm_hy_of(tp);
    unsigned char *sm = NULL, *net = NULL;
    const unsigned char *a = addrs;
    int rc = FM_OK;
    FM_CHECK(addrs && addrlen >= 2 && n == t->n, FM_ERR_INVALID,
             "hybrid: connect: bad arguments (%d ranks, %d expected)", n, t->n);
    sm = calloc((size_t)t->nlocal, addrlen);
    net = calloc((size_t)n, addrlen);
    FM_CHECK(sm && net, FM_ERR_NOMEM, "hybrid: out of memory for %d addresses", n);
    for (int r = 0; r < n; r++) {
        const unsigned char *ra = a + (size_t)r * addrlen;
        size_t sl = ra[0];
        FM_CHECK(sl > 0 && 1 + sl < addrlen, FM_ERR_PROVIDER,
                 "hybrid: rank %d's address is not a hybrid address", r);
        if (t->via[r] == FM_HY_SM)
            memcpy(sm + (size_t)t->sm_rank[r] * addrlen, ra + 1, sl);
        memcpy(net + (size_t)r * addrlen, ra + 1 + sl, addrlen - 1 - sl);
    }
    rc = t->path[FM_HY_SM]->ops->connect(t->path[FM_HY_SM], sm, addrlen, t->nlocal);
    FM_CHECK(rc == FM_OK, rc, "hybrid: sm cannot reach the %d ranks of this host", t->nlocal);
    rc = t->path[FM_HY_NET]->ops->connect(t->path[FM_HY_NET], net, addrlen, n);
    FM_CHECK(rc == FM_OK, rc, "hybrid: %s cannot reach the job's ranks",
             t->path[FM_HY_NET]->info.provider);
    fm_hy_describe(t); /* (sm knows only now whether its tagged path works) */
    fm_log(1, "hybrid: %d of %d ranks on this host through sm, the others through %s", t->nlocal, n,
           t->path[FM_HY_NET]->info.provider);
error:
    free(sm);
    free(net);
    return rc;
}

const fm_tp_provider fm_hybrid_provider = {
    .name = "hybrid",
    .serves = hy_serves,
    .check = hy_check,
    .fits = hy_fits,
    .open = hy_open,
    .list = hy_list,
};
