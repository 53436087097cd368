/* SPDX-License-Identifier: BSD-3-Clause */
/* Dimension-ordered routes over a torus of hosts (torus_net.h). */
#include <stddef.h>
#include <stdlib.h>

#include "fastmsg.h"
#include "model.h"
#include "torus_net.h"

int fm_torus_nlinks(const struct fm_torus_net *net)
{
    return net->dims[0] * net->dims[1] * net->dims[2] * 2 * net->ndims;
}

int fm_torus_host(const struct fm_torus_net *net, const int *c)
{
    return c[0] + net->dims[0] * (c[1] + net->dims[1] * c[2]);
}

/* Which way to go along a ring of k from a to b: +1, -1 (0: there). */
static int way(const struct fm_torus_net *net, int k, int a, int b)
{
    int ahead = (b - a + k) % k;
    if (ahead == 0)
        return 0;
    return net->unidirectional || 2 * ahead <= k ? 1 : -1;
}

int fm_torus_route(const struct fm_torus_net *net, const int *from, const int *to, int *links,
                   int cap)
{
    int at[3] = {from[0], from[1], from[2]}, hops = 0;
    for (int a = 0; a < net->ndims; a++) {
        int k = net->dims[a];
        for (int dir; (dir = way(net, k, at[a], to[a])) != 0;) {
            if (hops < cap)
                links[hops] = fm_torus_host(net, at) * 2 * net->ndims + 2 * a + (dir < 0);
            hops++;
            at[a] = (at[a] + dir + k) % k;
        }
    }
    return hops;
}

int fm_torus_max_hops(const struct fm_torus_net *net)
{
    int hops = 0;
    for (int a = 0; a < net->ndims; a++)
        hops += net->dims[a];
    return hops;
}

void fm_torus_tree_routes(const struct fm_torus_net *net, int n, int root, const int *first,
                          const int *kids, const int *coord, const char *has, int *parent,
                          int *route_first, int *route_links, int *back_first, int *back_links)
{
    int hops = 0, back = 0, cap = fm_torus_max_hops(net);
    for (int p = 0; p < n; p++)
        for (int e = first[p]; e < first[p + 1]; e++)
            parent[kids[e]] = p;
    for (int v = 0; v < n; v++) {
        route_first[v] = hops;
        if (back_first)
            back_first[v] = back;
        if (v == root || !has[v] || !has[parent[v]])
            continue;
        const int *from = coord + 3 * (size_t)parent[v], *to = coord + 3 * (size_t)v;
        hops += fm_torus_route(net, from, to, route_links + hops, cap);
        if (back_first)
            back += fm_torus_route(net, to, from, back_links + back, cap);
    }
    route_first[n] = hops;
    if (back_first)
        back_first[n] = back;
}

int fm_torus_model_net(const struct fm_torus_net *net, const struct fm_model_tree *t,
                       int (*coord)(const void *arg, int p, int *c), const void *arg, double frame,
                       struct fm_model_net *out)
{
    size_t un = (size_t)t->n, per = (size_t)fm_torus_max_hops(net);
    size_t us = t->first2 ? 2 * un : un; /* streams: tree 1's after tree 0's */
    /* routes there and back, then the coordinates, parents and has (scratch) */
    int *there = malloc((2 * (us + 1 + us * per) + 4 * un) * sizeof *there + un);
    if (!there)
        return FM_ERR_NOMEM;
    int *links = there + us + 1, *back = links + us * per, *back_links = back + us + 1;
    int *pos = back_links + us * per, *parent = pos + 3 * un;
    char *has = (char *)(parent + un);
    for (int p = 0; p < t->n; p++) {
        int *c = pos + 3 * (size_t)p;
        c[0] = c[1] = c[2] = 0;
        has[p] = coord(arg, p, c) == FM_OK;
    }
    fm_torus_tree_routes(net, t->n, t->root, t->first, t->kids, pos, has, parent, there, links,
                         back, back_links);
    if (t->first2) { /* (the second call starts its offsets at 0: shift them past the first's) */
        int hops = there[un], backs = back[un];
        fm_torus_tree_routes(net, t->n, t->root, t->first2, t->kids2, pos, has, parent, there + un,
                             links + hops, back + un, back_links + backs);
        for (size_t v = un; v <= us; v++) {
            there[v] += hops;
            back[v] += backs;
        }
    }
    *out = (struct fm_model_net){.nlinks = fm_torus_nlinks(net),
                                 .route_first = there,
                                 .route_links = links,
                                 .frame = frame,
                                 .back_first = back,
                                 .back_links = back_links};
    return FM_OK;
}
