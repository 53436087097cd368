/* SPDX-License-Identifier: BSD-3-Clause */
/* Member positions to hosts and coordinates, for the tree builders. */
#include "topo_view.h"

#include "fastmsg.h"

static int member_rank(const struct fm_mcast_topo_view *v, int pos)
{
    if (pos < 0 || pos >= v->n)
        return -1;
    return v->ranks ? v->ranks[pos] : fm_mcast_desc_member(v->desc, (uint32_t)pos);
}

static int view_host(const void *arg, int pos)
{
    const struct fm_mcast_topo_view *v = arg;
    int r = member_rank(v, pos);
    return r < 0 ? FM_ERR_INVALID : fm_topo_host(v->topo, r);
}

static int view_coord(const void *arg, int pos, int *coord)
{
    const struct fm_mcast_topo_view *v = arg;
    int r = member_rank(v, pos);
    return r < 0 ? FM_ERR_INVALID : fm_topo_coord(v->topo, r, coord);
}

const struct fm_tree_topo *fm_mcast_topo_view(struct fm_mcast_topo_view *v, const fm_topo *topo,
                                              const int *ranks, const fm_mcast_desc *desc, int n)
{
    if (!topo || (!ranks && !desc))
        return NULL;
    *v = (struct fm_mcast_topo_view){.topo = topo, .ranks = ranks, .desc = desc, .n = n};
    v->base = (struct fm_tree_topo){
        .arg = v, .ndims = fm_topo_ndims(topo), .host = view_host, .coord = view_coord};
    fm_topo_dims(topo, v->base.dims);
    return &v->base;
}
