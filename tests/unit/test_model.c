/* SPDX-License-Identifier: BSD-3-Clause */
/* The FPFS model: DESIGN.md's worked examples, per-member times worked by hand, closed forms
 * for chains and flat trees in both modes, the seconds form, and bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>

#include "fastmsg.h"
#include "model.h"
#include "trees/tree.h"

static struct fm_tree_desc desc(const char *name, int param, int n, int m)
{
    return (struct fm_tree_desc){
        .builder = fm_tree_lookup(name), .param = param, .n = n, .m = m, .lambda = 1.0};
}

static double steps(const char *name, int param, int n, int m, double lambda,
                    enum fm_model_mode mode)
{
    struct fm_tree_desc d = desc(name, param, n, m);
    double T = -1;
    assert_int_equal(fm_model_steps(&d, m, lambda, mode, &T, NULL), FM_OK);
    return T;
}

static void design_examples(void **state)
{
    (void)state;
    assert_true(steps("binomial", 0, 8, 3, 1, FM_MODEL_FPFS) == 9);
    assert_true(steps("binomial", 0, 4, 3, 1, FM_MODEL_FPFS) == 6);
    assert_true(steps("chain", 0, 4, 3, 1, FM_MODEL_FPFS) == 5);
    assert_true(steps("binomial", 0, 64, 64, 1, FM_MODEL_FPFS) == 384);
    assert_true(steps("kbinomial", 0, 64, 64, 1, FM_MODEL_FPFS) == 126); /* optimal k = 1 */
    assert_true(steps("kbinomial", 1, 64, 64, 1, FM_MODEL_FPFS) == 126);
    assert_true(steps("kbinomial", 6, 64, 64, 1, FM_MODEL_FPFS) == 384);
    assert_true(steps("flat", 0, 1, 5, 1, FM_MODEL_FPFS) == 0); /* the root alone */
}

/* Binomial, 8 members, 3 packets (tree 0: 4 2 1, 4: 6 5, 2: 3, 6: 7). The root sends packet j
 * to child i at 3j + i, so 4, 2, 1 finish at 7, 8, 9; 4 holds packets at 1, 4, 7 and sends to 6
 * then 5, finishing them at 8 and 9; 6 and 2 hold packets at 2, 5, 8, so 7 and 3 finish at 9. */
static void per_member_by_hand(void **state)
{
    (void)state;
    struct fm_tree_desc d = desc("binomial", 0, 8, 3);
    double T, got[8], want[8] = {0, 9, 8, 9, 7, 9, 8, 9};
    assert_int_equal(fm_model_steps(&d, 3, 1.0, FM_MODEL_FPFS, &T, got), FM_OK);
    assert_true(T == 9);
    for (int p = 0; p < 8; p++)
        assert_true(got[p] == want[p]);
    d.root = 3; /* rotated: member (p + 3) % 8 plays p's part */
    assert_int_equal(fm_model_steps(&d, 3, 1.0, FM_MODEL_FPFS, &T, got), FM_OK);
    for (int p = 0; p < 8; p++)
        assert_true(got[(p + 3) % 8] == want[p]);
}

/* Chain of n, FPFS: member i holds packet j at i*lambda + j (each hop adds lambda; a member is
 * free again 1 step after starting a send and lambda >= 1, so packets stay 1 step apart), so
 * T = (n-1) lambda + (m-1). Store-and-forward: member i starts once it holds packet m-1 and
 * sends for m steps, so it finishes i (m - 1 + lambda) after the root starts:
 * T = (n-1)(m-1+lambda), which is (n-1) m for lambda = 1. */
static void chain_closed_forms(void **state)
{
    (void)state;
    double lambdas[] = {1, 1.5, 3};
    for (int n = 1; n <= 20; n++)
        for (int m = 1; m <= 10; m++)
            for (int l = 0; l < 3; l++) {
                double lambda = lambdas[l], got[20], T;
                struct fm_tree_desc d = desc("chain", 0, n, m);
                assert_true(steps("chain", 0, n, m, lambda, FM_MODEL_FPFS) ==
                            (n - 1) * lambda + (n > 1 ? m - 1 : 0));
                assert_int_equal(fm_model_steps(&d, m, lambda, FM_MODEL_STORE_FORWARD, &T, got),
                                 FM_OK);
                assert_true(T == (n - 1) * (m - 1 + lambda));
                for (int i = 0; i < n; i++)
                    assert_true(got[i] == i * (m - 1 + lambda));
            }
    assert_true(steps("chain", 0, 6, 4, 1, FM_MODEL_STORE_FORWARD) == 5 * 4);
}

/* Flat: the root sends packet by packet in every mode (it streams the caller's pieces), so
 * the modes agree: the last copy starts at (n-1) m - 1 and lands lambda later, and member i
 * (1-based) finishes at (m-1)(n-1) + i - 1 + lambda. */
static void flat_closed_forms(void **state)
{
    (void)state;
    for (int n = 2; n <= 12; n++)
        for (int m = 1; m <= 6; m++) {
            struct fm_tree_desc d = desc("flat", 0, n, m);
            double fpfs[12], saf[12], T1, T2;
            assert_int_equal(fm_model_steps(&d, m, 2, FM_MODEL_FPFS, &T1, fpfs), FM_OK);
            assert_int_equal(fm_model_steps(&d, m, 2, FM_MODEL_STORE_FORWARD, &T2, saf), FM_OK);
            assert_true(T1 == (n - 1) * m - 1 + 2);
            assert_true(T2 == T1);
            for (int i = 1; i < n; i++) {
                assert_true(fpfs[i] == (m - 1) * (n - 1) + i - 1 + 2);
                assert_true(saf[i] == fpfs[i]);
            }
        }
}

/* Pipelining never loses to store-and-forward. It need not win: on binomial trees of 2^j
 * members both take d_root m steps, as every path's last copy waits for the root anyway. */
static void fpfs_never_loses(void **state)
{
    (void)state;
    const char *names[] = {"binomial", "chain", "postal", "flat", "kbinomial"};
    for (int b = 0; b < 5; b++)
        for (int n = 1; n <= 40; n++)
            for (int m = 1; m <= 8; m += 3) {
                int param = b == 2 ? 2 : b == 4 ? 2 : 0;
                assert_true(steps(names[b], param, n, m, 1, FM_MODEL_FPFS) <=
                            steps(names[b], param, n, m, 1, FM_MODEL_STORE_FORWARD));
            }
    /* Binomial, 8 members, 3 packets (0: 4 2 1, 4: 6 5, 2: 3, 6: 7), store-and-forward: the root
     * sends packet j to child i at 3j + i, so 4 holds all three at 7, 2 at 8; 4 sends 6 the
     * whole message at 7, 8, 9 and then 5 at 10, 11, 12 (done at 13); 6 holds all at 10 and
     * sends 7 at 10, 11, 12 (done at 13); 2 sends 3 at 8, 9, 10. */
    assert_true(steps("binomial", 0, 8, 3, 1, FM_MODEL_STORE_FORWARD) == 13);
    /* 5 members (0 -> 1, 1 -> 3 2, 3 -> 4), 2 packets: FPFS 5 steps; store-and-forward: 1
     * holds both at 2, sends 3 both by 4 and 2 both by 6; 3 then sends 4 both by 6. */
    assert_true(steps("binomial", 0, 5, 2, 1, FM_MODEL_FPFS) == 5);
    assert_true(steps("binomial", 0, 5, 2, 1, FM_MODEL_STORE_FORWARD) == 6);
}

/* A hand-made tree: root -> 1, 1 -> 2..6. The root is not the bottleneck here: member 1 sends
 * packet j to its 5 children from 1 + 5j, so the last copy starts at 15 and lands at 16. */
static void run_on_given_tree(void **state)
{
    (void)state;
    int first[8] = {0, 1, 6, 6, 6, 6, 6, 6}, kids[6] = {1, 2, 3, 4, 5, 6};
    struct fm_model_tree t = {7, 0, first, kids};
    double T, per[7];
    assert_int_equal(fm_model_run(&t, 3, 1.0, FM_MODEL_FPFS, &T, per), FM_OK);
    assert_true(T == 16);
    assert_true(per[1] == 3 && per[2] == 12 && per[6] == 16);
    /* lambda = 2.5: member 1 holds packets at 2.5, 3.5, 4.5 but is busy until 7.5, 12.5 */
    assert_int_equal(fm_model_run(&t, 3, 2.5, FM_MODEL_FPFS, &T, per), FM_OK);
    assert_true(T == 2.5 + 14 + 2.5);
}

static void bad_trees_and_args(void **state)
{
    (void)state;
    double T;
    int first[5] = {0, 1, 2, 3, 3}, cycle[3] = {1, 2, 1}, shared[3] = {1, 2, 2};
    int out_of_range[3] = {1, 2, 9}, bad_first[5] = {0, 2, 1, 3, 3};
    struct fm_model_tree t = {4, 0, first, cycle};
    assert_int_equal(fm_model_run(&t, 1, 1, FM_MODEL_FPFS, &T, NULL), FM_ERR_INVALID);
    t.kids = shared;
    assert_int_equal(fm_model_run(&t, 1, 1, FM_MODEL_FPFS, &T, NULL), FM_ERR_INVALID);
    t.kids = out_of_range;
    assert_int_equal(fm_model_run(&t, 1, 1, FM_MODEL_FPFS, &T, NULL), FM_ERR_INVALID);
    int ok[3] = {1, 2, 3};
    t.kids = ok;
    assert_int_equal(fm_model_run(&t, 2, 1, FM_MODEL_FPFS, &T, NULL), FM_OK);
    assert_true(T == 4); /* the chain 0-1-2-3: 3 + 1 */
    t.root = 2;          /* 2 cannot reach 0 and 1 */
    assert_int_equal(fm_model_run(&t, 2, 1, FM_MODEL_FPFS, &T, NULL), FM_ERR_INVALID);
    t.root = 0;
    t.first = bad_first;
    assert_int_equal(fm_model_run(&t, 2, 1, FM_MODEL_FPFS, &T, NULL), FM_ERR_INVALID);
    t.first = first;
    assert_int_equal(fm_model_run(&t, 0, 1, FM_MODEL_FPFS, &T, NULL), FM_ERR_INVALID);
    assert_int_equal(fm_model_run(&t, 1, 0, FM_MODEL_FPFS, &T, NULL), FM_ERR_INVALID);
    assert_int_equal(fm_model_run(&t, 1, 1, (enum fm_model_mode)7, &T, NULL), FM_ERR_INVALID);
    assert_int_equal(fm_model_run(&t, 1, 1, FM_MODEL_FPFS, NULL, NULL), FM_ERR_INVALID);

    struct fm_tree_desc d = desc("binomial", 0, 8, 3);
    assert_int_equal(fm_model_steps(&d, 3, 0.5, FM_MODEL_FPFS, &T, NULL), FM_ERR_INVALID);
    assert_int_equal(fm_model_steps(&d, 3, NAN, FM_MODEL_FPFS, &T, NULL), FM_ERR_INVALID);
    assert_int_equal(fm_model_steps(&d, 0, 1, FM_MODEL_FPFS, &T, NULL), FM_ERR_INVALID);
    assert_int_equal(fm_model_seconds(&d, 3, 0, 1e-6, FM_MODEL_FPFS, &T, NULL), FM_ERR_INVALID);
    assert_int_equal(fm_model_seconds(&d, 3, 1e-6, -1, FM_MODEL_FPFS, &T, NULL), FM_ERR_INVALID);
    d.n = 0;
    assert_int_equal(fm_model_steps(&d, 3, 1, FM_MODEL_FPFS, &T, NULL), FM_ERR_INVALID);
}

/* Seconds: the step simulation with lambda = lambda_s / step_s, times step_s. So T scales
 * linearly when both costs scale together, and lambda may be below one step. */
static void seconds_form(void **state)
{
    (void)state;
    struct fm_tree_desc d = desc("binomial", 0, 8, 3);
    double T, T2, per[8], per2[8];
    assert_int_equal(fm_model_seconds(&d, 3, 2e-6, 2e-6, FM_MODEL_FPFS, &T, per), FM_OK);
    assert_true(fabs(T - 9 * 2e-6) < 1e-15);
    assert_true(fabs(per[4] - 7 * 2e-6) < 1e-15);
    for (double scale = 0.5; scale <= 8; scale *= 2) {
        assert_int_equal(
            fm_model_seconds(&d, 3, 2e-6 * scale, 5e-6 * scale, FM_MODEL_FPFS, &T2, per2), FM_OK);
        assert_int_equal(fm_model_seconds(&d, 3, 2e-6, 5e-6, FM_MODEL_FPFS, &T, per), FM_OK);
        assert_true(fabs(T2 - scale * T) < 1e-12 * T2);
        for (int p = 0; p < 8; p++)
            assert_true(fabs(per2[p] - scale * per[p]) <= 1e-12 * per2[p]);
    }
    double Ts;
    assert_int_equal(fm_model_steps(&d, 3, 2.5, FM_MODEL_FPFS, &Ts, NULL), FM_OK);
    assert_true(fabs(T - Ts * 2e-6) < 1e-15); /* 5 us / 2 us = 2.5 steps */
    /* cut-through: lambda half a step; a chain of 4 then takes 3 * 0.5 + 2 steps for 3 packets */
    d = desc("chain", 0, 4, 3);
    assert_int_equal(fm_model_seconds(&d, 3, 1.0, 0.5, FM_MODEL_FPFS, &T, NULL), FM_OK);
    assert_true(T == 3.5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(design_examples),    cmocka_unit_test(per_member_by_hand),
        cmocka_unit_test(chain_closed_forms), cmocka_unit_test(flat_closed_forms),
        cmocka_unit_test(fpfs_never_loses),   cmocka_unit_test(run_on_given_tree),
        cmocka_unit_test(bad_trees_and_args), cmocka_unit_test(seconds_form),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
