/* SPDX-License-Identifier: BSD-3-Clause */
/* The links of a torus of hosts and the routes messages take over them, for the multicast
 * model (model.h's fm_model_net): dimension-ordered routing, x first, then y, then z, as the
 * emulated torus (bench/cluster) and wormhole tori route. On a unidirectional torus every hop
 * goes the + way; on a bidirectional one the shorter way round, a tie (half the ring) the +
 * way. Pure functions. */
#ifndef FM_MCAST_TORUS_NET_H
#define FM_MCAST_TORUS_NET_H

struct fm_torus_net {
    int ndims;   /* 1..3 */
    int dims[3]; /* extents, >= 1 (1 on unused axes) */
    int unidirectional;
};

/* Directed links: host h (x + X*(y + Y*z)) has link h * 2 * ndims + 2 * axis (the + way) and
 * that + 1 (the - way, unused on a unidirectional torus). */
int fm_torus_nlinks(const struct fm_torus_net *net);
/* Host index of coordinates c. */
int fm_torus_host(const struct fm_torus_net *net, const int *c);
/* The links from coordinates from to to, in order, into links[0..cap); returns the hop count
 * (snprintf-style: more than cap means only cap were written), 0 for from == to. */
int fm_torus_route(const struct fm_torus_net *net, const int *from, const int *to, int *links,
                   int cap);

/* The most hops a route takes: the sum of the extents. */
int fm_torus_max_hops(const struct fm_torus_net *net);
/* Every member's route from its parent in a tree of n members laid out as fm_tree_layout
 * gives it (first, kids; root's has none), from each member's coordinates (coord: n x 3, by
 * position; has[p] 0 where member p has none: no route to it), into route_first (n + 1) and
 * route_links (room for n x fm_torus_max_hops): what model.h's fm_model_net takes; and, when
 * back_first is not NULL, the route back from each member to its parent (the way its credits
 * go: on a unidirectional torus the rest of the way round) into back_first and back_links,
 * sized alike. parent: n ints of scratch. */
void fm_torus_tree_routes(const struct fm_torus_net *net, int n, int root, const int *first,
                          const int *kids, const int *coord, const char *has, int *parent,
                          int *route_first, int *route_links, int *back_first, int *back_links);

struct fm_model_net;
struct fm_model_tree;
/* model.h's net for tree t on net, each member placed by coord(arg, p, c) (FM_OK, or < 0 when
 * member p has none: no route to or from it): every member's route from its parent and back,
 * in one block that free((void *)out->route_first) frees; for a split multicast (t->first2)
 * the routes down the second tree follow the first's, as streams n .. 2n - 1; routers pass
 * frames of at most `frame` bytes. FM_OK or FM_ERR_NOMEM. */
int fm_torus_model_net(const struct fm_torus_net *net, const struct fm_model_tree *t,
                       int (*coord)(const void *arg, int p, int *c), const void *arg, double frame,
                       struct fm_model_net *out);

#endif
