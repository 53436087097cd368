/* SPDX-License-Identifier: BSD-3-Clause */
/* bench/dag_gen.c: the DAG benchmarks' generator and sequential reference. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "dag_gen.h"

static dag_params small(uint64_t seed)
{
    return (dag_params){.tasks = 203,
                        .width = 16,
                        .degree = 4,
                        .bytes_min = 1,
                        .bytes_max = 4096,
                        .compute_min_us = 0,
                        .compute_max_us = 10,
                        .seed = seed};
}

static void same_seed_same_dag(void **state)
{
    (void)state;
    dag_params p = small(7);
    dag a, b;
    assert_int_equal(dag_build(&p, &a), 0);
    assert_int_equal(dag_build(&p, &b), 0);
    assert_int_equal(a.nedges, b.nedges);
    assert_memory_equal(a.t, b.t, a.ntasks * sizeof *a.t);
    assert_memory_equal(a.in, b.in, a.nedges * sizeof *a.in);
    assert_memory_equal(a.out, b.out, a.nedges * sizeof *a.out);
    assert_true(dag_expected_checksum(&a) == dag_expected_checksum(&b));
    dag_free(&b);
    p.seed = 8;
    assert_int_equal(dag_build(&p, &b), 0);
    assert_true(dag_expected_checksum(&a) != dag_expected_checksum(&b));
    dag_free(&a);
    dag_free(&b);
}

/* The generator's stream is part of the benchmark's definition: a change to it changes every
 * recorded figure, so it must be deliberate. The DAG of bench/README.md's smoke size
 * (--tasks 200 --width 16 --degree 4 --bytes 64-4K --compute-us 0-10 --seed 1), as recorded. */
static void stream_is_fixed(void **state)
{
    (void)state;
    dag_params p = {.tasks = 200,
                    .width = 16,
                    .degree = 4,
                    .bytes_min = 64,
                    .bytes_max = 4096,
                    .compute_min_us = 0,
                    .compute_max_us = 10,
                    .seed = 1};
    dag d;
    assert_int_equal(dag_build(&p, &d), 0);
    assert_int_equal(d.nlayers, 13);
    assert_int_equal(d.nedges, 477);
    assert_int_equal(dag_critical_path_us(&d), 92);
    assert_int_equal(dag_total_compute_us(&d), 996);
    assert_true(dag_expected_checksum(&d) == 0xed038e56d8cf4230ULL);
    dag_free(&d);
}

static void layers_and_degrees(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        dag_params p = small(seed);
        p.degree = 1 + (uint32_t)(seed % 6);
        dag d;
        assert_int_equal(dag_build(&p, &d), 0);
        assert_int_equal(d.nlayers, (p.tasks + p.width - 1) / p.width);
        for (uint32_t t = 0; t < d.ntasks; t++) {
            uint32_t n, layer = d.t[t].layer, prev = 0;
            const uint32_t *in = dag_inputs(&d, t, &n);
            assert_int_equal(layer, t / p.width);
            assert_true(n <= p.degree);
            assert_true(d.t[t].bytes >= p.bytes_min && d.t[t].bytes <= p.bytes_max);
            assert_true(d.t[t].compute_us <= p.compute_max_us);
            if (layer == 0) {
                assert_int_equal(n, 0);
                continue;
            }
            assert_true(n >= 1);
            for (uint32_t i = 0; i < n; i++) {
                /* Acyclic: every input is in an earlier layer; ascending and distinct. */
                assert_true(d.t[in[i]].layer < layer);
                assert_true(i == 0 || in[i] > in[i - 1]);
                prev += d.t[in[i]].layer == layer - 1;
            }
            assert_true(prev >= 1);
        }
        dag_free(&d);
    }
}

/* Every edge is listed once as an input and once as a dependent. */
static void dependents_mirror_inputs(void **state)
{
    (void)state;
    dag_params p = small(3);
    dag d;
    assert_int_equal(dag_build(&p, &d), 0);
    uint32_t outs = 0;
    for (uint32_t t = 0; t < d.ntasks; t++) {
        uint32_t n, m;
        const uint32_t *dep = dag_dependents(&d, t, &n);
        outs += n;
        for (uint32_t i = 0; i < n; i++) {
            const uint32_t *in = dag_inputs(&d, dep[i], &m);
            int found = 0;
            for (uint32_t j = 0; j < m; j++)
                found |= in[j] == t;
            assert_true(found);
            assert_true(dep[i] > t);
        }
    }
    assert_int_equal(outs, d.nedges);
    dag_free(&d);
}

/* A single changed byte of one task's output changes that task's checksum, every task's
 * downstream of it, and the DAG's; tasks not downstream keep theirs. */
typedef struct flip {
    uint32_t task;
    size_t byte;
} flip;

static void flip_one(uint32_t t, unsigned char *out, size_t len, void *arg)
{
    const flip *f = arg;
    if (t == f->task && f->byte < len)
        out[f->byte] ^= 0x10;
}

static void one_byte_changes_downstream(void **state)
{
    (void)state;
    dag_params p = small(11);
    dag d;
    assert_int_equal(dag_build(&p, &d), 0);
    uint64_t *good = calloc(d.ntasks, sizeof *good), *bad = calloc(d.ntasks, sizeof *bad);
    char *down = calloc(d.ntasks, 1);
    assert_non_null(good);
    assert_non_null(bad);
    assert_non_null(down);
    int ok;
    uint64_t want = dag_reference(&d, good, NULL, NULL, &ok);
    assert_true(ok);
    assert_true(want == dag_expected_checksum(&d));
    flip f = {.task = 20, .byte = d.t[20].bytes - 1};
    uint64_t got = dag_reference(&d, bad, flip_one, &f, &ok);
    assert_true(ok);
    assert_true(got != want);
    /* Downstream of task 20: it, and any task with an input downstream (ids ascend). */
    down[f.task] = 1;
    uint32_t ndown = 0;
    for (uint32_t t = 0; t < d.ntasks; t++) {
        uint32_t n;
        const uint32_t *in = dag_inputs(&d, t, &n);
        for (uint32_t i = 0; i < n; i++)
            down[t] |= down[in[i]];
        ndown += down[t];
        if (down[t])
            assert_true(bad[t] != good[t]);
        else
            assert_true(bad[t] == good[t]);
    }
    assert_true(ndown > 1);
    free(good);
    free(bad);
    free(down);
    dag_free(&d);
}

static void checksum_sees_every_byte(void **state)
{
    (void)state;
    unsigned char buf[37];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (unsigned char)(i * 7);
    for (size_t len = 0; len <= sizeof buf; len++) {
        uint64_t h = dag_checksum(buf, len);
        for (size_t i = 0; i < len; i++) {
            buf[i] ^= 1;
            assert_true(dag_checksum(buf, len) != h);
            buf[i] ^= 1;
        }
        /* A zero byte appended is a different message. */
        if (len < sizeof buf && buf[len] == 0)
            assert_true(dag_checksum(buf, len + 1) != h);
    }
}

/* task i -> rank i % n covers every rank, and a task's destinations are the other ranks of
 * its dependents, each once. */
static void mapping_and_destinations(void **state)
{
    (void)state;
    dag_params p = small(5);
    dag d;
    assert_int_equal(dag_build(&p, &d), 0);
    for (int n = 1; n <= 9; n++) {
        int *count = calloc((size_t)n, sizeof *count), ranks[9];
        assert_non_null(count);
        for (uint32_t t = 0; t < d.ntasks; t++)
            count[dag_rank_of(t, n)]++;
        for (int r = 0; r < n; r++)
            assert_true(count[r] >= (int)(d.ntasks / (uint32_t)n));
        for (uint32_t t = 0; t < d.ntasks; t++) {
            int k = dag_dest_ranks(&d, t, n, ranks);
            uint32_t m;
            const uint32_t *dep = dag_dependents(&d, t, &m);
            for (int j = 0; j < k; j++) {
                assert_true(ranks[j] != dag_rank_of(t, n));
                assert_true(j == 0 || ranks[j] > ranks[j - 1]);
            }
            for (uint32_t i = 0; i < m; i++) {
                int r = dag_rank_of(dep[i], n), found = r == dag_rank_of(t, n);
                for (int j = 0; j < k; j++)
                    found |= ranks[j] == r;
                assert_true(found);
            }
        }
        free(count);
    }
    dag_free(&d);
}

static void refuses_bad_params(void **state)
{
    (void)state;
    dag d;
    dag_params p = small(1);
    p.width = p.tasks + 1;
    assert_non_null(dag_check_params(&p));
    assert_int_equal(dag_build(&p, &d), -1);
    p = small(1);
    p.degree = 0;
    assert_int_equal(dag_build(&p, &d), -1);
    p = small(1);
    p.bytes_min = 10;
    p.bytes_max = 9;
    assert_int_equal(dag_build(&p, &d), -1);
    p = small(1);
    p.tasks = 0;
    assert_int_equal(dag_build(&p, &d), -1);
    /* One layer: no edges; zero-byte outputs. */
    p = small(1);
    p.width = p.tasks;
    p.bytes_min = p.bytes_max = 0;
    assert_int_equal(dag_build(&p, &d), 0);
    assert_int_equal(d.nedges, 0);
    assert_int_equal(dag_critical_path_us(&d) <= p.compute_max_us, 1);
    dag_free(&d);
}

static void critical_path_bounds(void **state)
{
    (void)state;
    dag_params p = small(2);
    p.compute_min_us = p.compute_max_us = 5;
    dag d;
    assert_int_equal(dag_build(&p, &d), 0);
    /* Every layer's tasks have an input in the layer before: the longest chain has one task
     * a layer. */
    assert_int_equal(dag_critical_path_us(&d), 5 * d.nlayers);
    assert_int_equal(dag_total_compute_us(&d), 5 * d.ntasks);
    dag_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(same_seed_same_dag),          cmocka_unit_test(stream_is_fixed),
        cmocka_unit_test(layers_and_degrees),          cmocka_unit_test(dependents_mirror_inputs),
        cmocka_unit_test(one_byte_changes_downstream), cmocka_unit_test(checksum_sees_every_byte),
        cmocka_unit_test(mapping_and_destinations),    cmocka_unit_test(refuses_bad_params),
        cmocka_unit_test(critical_path_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
