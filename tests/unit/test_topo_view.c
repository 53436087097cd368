/* SPDX-License-Identifier: BSD-3-Clause */
/* What a tree builder sees of where a multicast's members are: member positions map through
 * the member list (or a list-mode descriptor's) to ranks, and ranks to the job's hosts and
 * torus coordinates. Expected values are worked out by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>

#include "fastmsg.h"
#include "mcast_desc.h"
#include "topo.h"
#include "topo_view.h"

/* 8 ranks, two per host in the order h0 h1 h0 h1 h2 h3 h2 h3; a 2x2 torus of hosts. */
static const char *const keys[] = {"h0/1", "h1/1", "h0/1", "h1/1", "h2/1", "h3/1", "h2/1", "h3/1"};

static fm_topo *job(const char *spec)
{
    fm_topo *t = NULL;
    char err[256];
    assert_int_equal(fm_topo_build(8, keys, spec, &t, err, sizeof err), FM_OK);
    return t;
}

/* Members 5, 2, 7 (positions 0, 1, 2): hosts h3, h0, h3 are host indices 3, 0, 3. */
static void hosts_through_member_list(void **state)
{
    (void)state;
    fm_topo *t = job("torus:2x2");
    const int members[] = {5, 2, 7};
    struct fm_mcast_topo_view v;
    const struct fm_tree_topo *tt = fm_mcast_topo_view(&v, t, members, NULL, 3);
    assert_non_null(tt);
    assert_int_equal(tt->ndims, 2);
    assert_int_equal(tt->dims[0], 2);
    assert_int_equal(tt->dims[1], 2);
    assert_int_equal(tt->host(tt->arg, 0), 3);
    assert_int_equal(tt->host(tt->arg, 1), 0);
    assert_int_equal(tt->host(tt->arg, 2), 3);
    assert_true(tt->host(tt->arg, 3) < 0); /* no such member */
    assert_true(tt->host(tt->arg, -1) < 0);
    /* Host 3 of a 2x2 torus sits at x = 3 % 2 = 1, y = 3 / 2 = 1; host 0 at (0, 0). */
    int c[2];
    assert_int_equal(tt->coord(tt->arg, 0, c), FM_OK);
    assert_int_equal(c[0], 1);
    assert_int_equal(c[1], 1);
    assert_int_equal(tt->coord(tt->arg, 1, c), FM_OK);
    assert_int_equal(c[0], 0);
    assert_int_equal(c[1], 0);
    fm_topo_free(t);
}

/* A forwarding member has only the descriptor: the same answers from its list. */
static void hosts_through_descriptor(void **state)
{
    (void)state;
    fm_topo *t = job("");
    const int members[] = {1, 4, 6, 3};
    fm_mcast_desc d = {.builder = 0, .n = 4, .root_pos = 0, .root_rank = 1};
    size_t len = fm_mcast_desc_size(4);
    unsigned char *buf = malloc(len), seen[8] = {0};
    int set_out[8];
    assert_non_null(buf);
    fm_mcast_desc_encode(&d, members, buf);
    fm_mcast_desc e;
    assert_int_equal(fm_mcast_desc_decode(buf, len, 8, seen, set_out, &e), 0);
    struct fm_mcast_topo_view v;
    const struct fm_tree_topo *tt = fm_mcast_topo_view(&v, t, NULL, &e, 4);
    assert_non_null(tt);
    assert_int_equal(tt->ndims, 0);
    const int want[] = {1, 2, 2, 1}; /* ranks 1, 4, 6, 3 are on h1, h2, h2, h1 */
    for (int i = 0; i < 4; i++)
        assert_int_equal(tt->host(tt->arg, i), want[i]);
    int c[3];
    assert_true(tt->coord(tt->arg, 0, c) < 0); /* no coordinates without FM_TOPOLOGY */
    free(buf);
    fm_topo_free(t);
}

static void no_topology_no_view(void **state)
{
    (void)state;
    struct fm_mcast_topo_view v;
    const int members[] = {0};
    assert_null(fm_mcast_topo_view(&v, NULL, members, NULL, 1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hosts_through_member_list),
        cmocka_unit_test(hosts_through_descriptor),
        cmocka_unit_test(no_topology_no_view),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
