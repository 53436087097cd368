/* SPDX-License-Identifier: BSD-3-Clause */
/* The hybrid provider's packet calls: a send goes down its destination's path (sm for a rank
 * on this host, the network provider for the others); a receive buffer or region goes back
 * to the path it came from, a new one to the path short of its share; poll reads both; the
 * wait fd is an epoll set of both. */
#include "hybrid_internal.h"

#include <stdlib.h>
#include <time.h>

#include "fastmsg.h"

/* The path that reaches rank r (NULL for a rank outside the job, or before connect), its
 * index in *v and r's number on it in *pr. Traffic on the network path marks it busy: a reply
 * may come (poll reads it every time for a while). */
static fm_tp *route(fm_hy_tp *t, int r, int *v, int *pr)
{
    if (r < 0 || r >= t->n || !t->sm_rank)
        return NULL;
    *v = t->via[r];
    *pr = *v == FM_HY_SM ? t->sm_rank[r] : r;
    if (*v == FM_HY_NET)
        fm_hy_net_busy(t);
    return t->path[*v];
}

static fm_tp_mr *part(fm_tp_mr *mr, int p)
{
    return mr ? ((fm_hy_mr *)mr)->part[p] : NULL;
}

int fm_hy_send(fm_tp *tp, int dest, const void *buf, size_t len, fm_tp_mr *mr, void *ctx)
{
    int r, v;
    fm_tp *p = route(fm_hy_of(tp), dest, &v, &r);
    return p ? p->ops->send(p, r, buf, len, part(mr, v), ctx) : FM_ERR_INVALID;
}

int fm_hy_sendv(fm_tp *tp, int dest, const void *hdr, size_t hlen, fm_tp_mr *hmr,
                const void *payload, size_t plen, fm_tp_mr *pmr, void *ctx)
{
    int r, v;
    fm_tp *p = route(fm_hy_of(tp), dest, &v, &r);
    return p ? p->ops->sendv(p, r, hdr, hlen, part(hmr, v), payload, plen, part(pmr, v), ctx)
             : FM_ERR_INVALID;
}

/* A shared payload is sm's alone: copies to other hosts go as sendv. */
int fm_hy_sendv_shared(fm_tp *tp, int dest, const void *hdr, size_t hlen, fm_tp_mr *hmr,
                       const void *payload, size_t plen, fm_tp_mr *pmr, void **share, void *ctx)
{
    int r, v;
    fm_tp *p = route(fm_hy_of(tp), dest, &v, &r);
    if (!p)
        return FM_ERR_INVALID;
    if (!p->ops->sendv_shared)
        return p->ops->sendv(p, r, hdr, hlen, part(hmr, v), payload, plen, part(pmr, v), ctx);
    int rc = p->ops->sendv_shared(p, r, hdr, hlen, part(hmr, v), payload, plen, part(pmr, v), share,
                                  ctx);
    tp->shared = p->shared;
    return rc;
}

void fm_hy_share_release(fm_tp *tp, void *share)
{
    fm_tp *sm = fm_hy_of(tp)->path[FM_HY_SM];
    if (sm && sm->ops->share_release)
        sm->ops->share_release(sm, share);
}

/* Loans are sm's alone. */
void fm_hy_lend_release(fm_tp *tp, uint64_t lend)
{
    fm_tp *sm = fm_hy_of(tp)->path[FM_HY_SM];
    if (sm && sm->ops->lend_release)
        sm->ops->lend_release(sm, lend);
}

int fm_hy_tsend(fm_tp *tp, int dest, const void *buf, size_t len, fm_tp_mr *mr, uint64_t tag,
                void *ctx)
{
    int r, v;
    fm_tp *p = route(fm_hy_of(tp), dest, &v, &r);
    return p ? p->ops->tsend(p, r, buf, len, part(mr, v), tag, ctx) : FM_ERR_INVALID;
}

int fm_hy_trecv(fm_tp *tp, int src, void *buf, size_t len, fm_tp_mr *mr, uint64_t tag, void *ctx)
{
    int r, v;
    fm_tp *p = route(fm_hy_of(tp), src, &v, &r);
    return p ? p->ops->trecv(p, r, buf, len, part(mr, v), tag, ctx) : FM_ERR_INVALID;
}

/* A receive path p gave back (ctx): remembered until the runtime posts it again. Without
 * memory it is not, and share decides where it goes. */
static void gave_back(fm_hy_tp *t, void *ctx, int p)
{
    if (t->nback == t->back_cap) {
        size_t cap = t->back_cap ? 2 * t->back_cap : 64;
        struct fm_hy_back *b = realloc(t->back, cap * sizeof *b);
        if (!b)
            return;
        t->back = b;
        t->back_cap = cap;
    }
    t->back[t->nback++] = (struct fm_hy_back){.ctx = ctx, .path = p};
}

/* The path ctx came back from (and forgotten), or -1 for one never given back. Usually only
 * a few are out at once: a short scan. */
static int came_from(fm_hy_tp *t, const void *ctx)
{
    for (size_t i = 0; i < t->nback; i++)
        if (t->back[i].ctx == ctx) {
            int p = t->back[i].path;
            t->back[i] = t->back[--t->nback];
            return p;
        }
    return -1;
}

/* Which path a receive goes to: the one it came back from, so that each path keeps what its
 * peers' credits count on whatever the runtime holds meanwhile; a new one to sm while sm
 * holds less than its share (the fraction of the job's ranks it serves) of all posted, this
 * one counted, so that posted together at fm_init a buffer per credit per peer comes out
 * exactly as each path's peers need. A path with no region gets the next region. */
static int share(fm_hy_tp *t, const size_t *held, const void *ctx, int regions)
{
    int p = came_from(t, ctx);
    if (regions && !held[FM_HY_SM])
        return FM_HY_SM;
    if (regions && !held[FM_HY_NET])
        return FM_HY_NET;
    if (p >= 0)
        return p;
    size_t total = held[FM_HY_SM] + held[FM_HY_NET] + 1;
    return held[FM_HY_SM] * (size_t)t->n < total * (size_t)t->nlocal ? FM_HY_SM : FM_HY_NET;
}

int fm_hy_post_recv(fm_tp *tp, void *buf, size_t len, fm_tp_mr *mr, void *ctx)
{
    fm_hy_tp *t = fm_hy_of(tp);
    int p = share(t, t->posted, ctx, 0);
    int rc = t->path[p]->ops->post_recv(t->path[p], buf, len, part(mr, p), ctx);
    if (rc == FM_OK)
        t->posted[p]++;
    return rc;
}

int fm_hy_post_recv_multi(fm_tp *tp, void *buf, size_t len, fm_tp_mr *mr, void *ctx)
{
    fm_hy_tp *t = fm_hy_of(tp);
    if (!t->base.info.multi_recv)
        return FM_ERR_INVALID;
    int p = share(t, t->regions, ctx, 1);
    int rc = t->path[p]->ops->post_recv_multi(t->path[p], buf, len, part(mr, p), ctx);
    if (rc == FM_OK)
        t->regions[p]++;
    return rc;
}

int fm_hy_needs_region(fm_tp *tp)
{
    fm_hy_tp *t = fm_hy_of(tp);
    return t->base.info.multi_recv && (!t->regions[FM_HY_SM] || !t->regions[FM_HY_NET]);
}

/* Reads path p's events into ev, counting the receives it gave back. */
static int poll_path(fm_hy_tp *t, int p, fm_tp_event *ev, int max)
{
    int n = t->path[p]->ops->poll(t->path[p], ev, max);
    for (int i = 0; i < n; i++) {
        if (ev[i].kind == FM_TP_RECV_DONE) {
            t->posted[p]--;
            gave_back(t, ev[i].ctx, p);
        } else if (ev[i].kind == FM_TP_RECV_REGION_DONE) {
            t->regions[p]--;
            gave_back(t, ev[i].ctx, p);
        }
    }
    return n;
}

/* Reads sm every time, and the network every time too while it has been busy in the last
 * FM_HY_QUIET_NS (a packet in or out: a reply may be coming), else once in FM_HY_QUIET_EVERY_NS:
 * an idle tcp endpoint costs a poll a system call or two (rxm's progress, about 1 us), several
 * times a ping-pong between two ranks of a host over sm alone. The clock is read only on polls
 * sm found empty, and on one in FM_HY_BUSY_POLLS of the others (sm never starves the
 * network). trywait asks both before any sleep, and a sleep wakes for either. */
#define FM_HY_QUIET_NS       100000
#define FM_HY_QUIET_EVERY_NS 16000
#define FM_HY_BUSY_POLLS     64

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void fm_hy_net_busy(fm_hy_tp *t)
{
    t->net_active = now_ns();
}

int fm_hy_poll(fm_tp *tp, fm_tp_event *ev, int max)
{
    fm_hy_tp *t = fm_hy_of(tp);
    if (max <= 0)
        return 0;
    /* (one slot kept for the network: sm filling every poll must not starve it) */
    int n = poll_path(t, FM_HY_SM, ev, max > 1 ? max - 1 : max), m = 0;
    if (n < 0 || n == max || (n > 0 && ++t->busy_polls < FM_HY_BUSY_POLLS))
        return n;
    t->busy_polls = 0;
    uint64_t now = now_ns();
    if (now - t->net_active >= FM_HY_QUIET_NS && now - t->net_polled < FM_HY_QUIET_EVERY_NS)
        return n;
    t->net_polled = now;
    m = poll_path(t, FM_HY_NET, ev + n, max - n);
    if (m < 0)
        return m;
    if (m > 0)
        t->net_active = now;
    t->base.refused = t->path[FM_HY_SM]->refused + t->path[FM_HY_NET]->refused;
    return n + m;
}

int fm_hy_wait_fd(fm_tp *tp)
{
    return fm_hy_of(tp)->epfd;
}

/* Safe to sleep only when both are: the network's is asked first, since sm's raises its
 * sleeping flag (lowered again by its next poll when the other path has work). */
int fm_hy_trywait(fm_tp *tp)
{
    fm_hy_tp *t = fm_hy_of(tp);
    int rc = t->path[FM_HY_NET]->ops->trywait(t->path[FM_HY_NET]);
    if (rc != FM_OK) { /* the network has work: read it at once */
        fm_hy_net_busy(t);
        return rc;
    }
    t->net_polled = 0; /* (whichever fd ends the sleep, the next poll reads both) */
    return t->path[FM_HY_SM]->ops->trywait(t->path[FM_HY_SM]);
}

int fm_hy_mem_reg(fm_tp *tp, void *buf, size_t len, fm_tp_mr **mr)
{
    fm_hy_tp *t = fm_hy_of(tp);
    fm_tp_mr *m[FM_HY_PATHS] = {NULL, NULL};
    int rc = FM_OK;
    for (int p = 0; p < FM_HY_PATHS && rc == FM_OK; p++)
        rc = t->path[p]->ops->mem_reg(t->path[p], buf, len, &m[p]);
    fm_hy_mr *h = NULL;
    if (rc == FM_OK && (m[0] || m[1]) && !(h = malloc(sizeof *h)))
        rc = FM_ERR_NOMEM;
    if (rc != FM_OK) {
        for (int p = 0; p < FM_HY_PATHS; p++)
            if (m[p])
                t->path[p]->ops->mem_dereg(t->path[p], m[p]);
        return rc;
    }
    if (h) {
        h->part[0] = m[0];
        h->part[1] = m[1];
    }
    *mr = (fm_tp_mr *)h; /* NULL where neither path needs one */
    return FM_OK;
}

void fm_hy_mem_dereg(fm_tp *tp, fm_tp_mr *mr)
{
    fm_hy_tp *t = fm_hy_of(tp);
    if (!mr)
        return;
    fm_hy_mr *h = (fm_hy_mr *)mr;
    for (int p = 0; p < FM_HY_PATHS; p++)
        if (h->part[p])
            t->path[p]->ops->mem_dereg(t->path[p], h->part[p]);
    free(h);
}
