/* SPDX-License-Identifier: BSD-3-Clause */
/* The hybrid provider's state: two transports, one for the peers on this host (sm) and one
 * for the others (a network provider), and which of them reaches each rank. */
#ifndef FM_HYBRID_INTERNAL_H
#define FM_HYBRID_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "transport.h"

enum { FM_HY_SM = 0, FM_HY_NET = 1, FM_HY_PATHS = 2 };

typedef struct fm_hy_tp {
    fm_tp base;
    fm_tp *path[FM_HY_PATHS]; /* sm, the network provider */
    int n, rank;              /* the job's ranks, this one */
    int nlocal;               /* ranks on this host, this one included */
    unsigned char *via;       /* per rank: FM_HY_SM or FM_HY_NET */
    int *sm_rank;             /* per rank: its index among this host's ranks (sm's rank), or -1 */
    /* Receives each path holds now: the runtime's buffers and regions are shared out in
     * proportion to the peers each path serves (hybrid_paths.c, share). */
    size_t posted[FM_HY_PATHS], regions[FM_HY_PATHS];
    /* Buffers and regions a path gave back, by the runtime's ctx, until posted again: each
     * goes back to the path it came from. */
    struct fm_hy_back {
        void *ctx;
        int path;
    } * back;
    size_t nback, back_cap;
    int epfd; /* both paths' wait fds, or -1 */
    /* When the network path last had a packet in or out, and was last read (ns, monotonic);
     * sm's polls with something since the clock was last read (hybrid_paths.c, poll). */
    uint64_t net_active, net_polled;
    unsigned busy_polls;
} fm_hy_tp;

/* A registration: each path's own. */
typedef struct fm_hy_mr {
    fm_tp_mr *part[FM_HY_PATHS];
} fm_hy_mr;

static inline fm_hy_tp *fm_hy_of(fm_tp *tp)
{
    return (fm_hy_tp *)tp;
}

/* hybrid_paths.c: every call that moves a packet, routed to the path of its peer (the ops
 * table, in hybrid_transport.c, lists them). */
int fm_hy_send(fm_tp *tp, int dest, const void *buf, size_t len, fm_tp_mr *mr, void *ctx);
int fm_hy_sendv(fm_tp *tp, int dest, const void *hdr, size_t hlen, fm_tp_mr *hmr,
                const void *payload, size_t plen, fm_tp_mr *pmr, void *ctx);
int fm_hy_sendv_shared(fm_tp *tp, int dest, const void *hdr, size_t hlen, fm_tp_mr *hmr,
                       const void *payload, size_t plen, fm_tp_mr *pmr, void **share, void *ctx);
void fm_hy_share_release(fm_tp *tp, void *share);
void fm_hy_lend_release(fm_tp *tp, uint64_t lend);
int fm_hy_tsend(fm_tp *tp, int dest, const void *buf, size_t len, fm_tp_mr *mr, uint64_t tag,
                void *ctx);
int fm_hy_trecv(fm_tp *tp, int src, void *buf, size_t len, fm_tp_mr *mr, uint64_t tag, void *ctx);
int fm_hy_post_recv(fm_tp *tp, void *buf, size_t len, fm_tp_mr *mr, void *ctx);
int fm_hy_post_recv_multi(fm_tp *tp, void *buf, size_t len, fm_tp_mr *mr, void *ctx);
int fm_hy_needs_region(fm_tp *tp);
int fm_hy_poll(fm_tp *tp, fm_tp_event *ev, int max);
int fm_hy_wait_fd(fm_tp *tp);
int fm_hy_trywait(fm_tp *tp);
int fm_hy_mem_reg(fm_tp *tp, void *buf, size_t len, fm_tp_mr **mr);
void fm_hy_mem_dereg(fm_tp *tp, fm_tp_mr *mr);
/* The network path has work: poll reads it every time for a while (hybrid_paths.c). */
void fm_hy_net_busy(fm_hy_tp *t);
/* What the runtime sees: the two paths' capabilities combined (again after connect, which
 * tells sm's tagged path). */
void fm_hy_describe(fm_hy_tp *t);

#endif
