/* SPDX-License-Identifier: BSD-3-Clause */
/* Topology: host numbering and local positions from host keys, torus coordinates per host and
 * per rank, coordinate files, every malformed spec, the printed table, and this process's host
 * name and key. Expected values are worked out by hand from the rules in topo/topo.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mkstemp, mkdtemp, open_memstream, link */
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fastmsg.h"
#include "topo.h"

#define NKEYS(k) ((int)(sizeof(k) / sizeof((k)[0])))

static char err[512];

static fm_topo *build_ok(int n, const char *const *keys, const char *spec)
{
    fm_topo *t = NULL;
    err[0] = '\0';
    int rc = fm_topo_build(n, keys, spec, &t, err, sizeof err);
    if (rc != FM_OK)
        fail_msg("fm_topo_build(%s) = %d: %s", spec ? spec : "NULL", rc, err);
    assert_non_null(t);
    return t;
}

/* Building fails with code and a reason that contains want. */
static void build_bad(int n, const char *const *keys, const char *spec, int code, const char *want)
{
    fm_topo *t = (fm_topo *)&t; /* must come back NULL */
    err[0] = '\0';
    assert_int_equal(fm_topo_build(n, keys, spec, &t, err, sizeof err), code);
    assert_null(t);
    if (!strstr(err, want))
        fail_msg("spec '%s': error '%s' lacks '%s'", spec ? spec : "NULL", err, want);
}

static void assert_coord(const fm_topo *t, int rank, int x, int y, int z)
{
    int c[3] = {-1, -1, -1}, want[3] = {x, y, z};
    assert_int_equal(fm_topo_coord(t, rank, c), FM_OK);
    for (int i = 0; i < fm_topo_ndims(t); i++)
        if (c[i] != want[i])
            fail_msg("rank %d: axis %d is %d, want %d", rank, i, c[i], want[i]);
    for (int i = fm_topo_ndims(t); i < 3; i++)
        assert_int_equal(c[i], -1); /* nothing past ndims written */
}

/* Ranks on hosts a, b, a, c, b. */
static void interleaved_hosts(void **state)
{
    (void)state;
    const char *keys[] = {"a/10", "b/10", "a/10", "c/10", "b/10"};
    fm_topo *t = build_ok(5, keys, "");
    const int host[] = {0, 1, 0, 2, 1}, local[] = {0, 0, 1, 0, 1}, nlocal[] = {2, 2, 2, 1, 2};
    assert_int_equal(fm_topo_nranks(t), 5);
    assert_int_equal(fm_topo_nhosts(t), 3);
    for (int r = 0; r < 5; r++) {
        assert_int_equal(fm_topo_host(t, r), host[r]);
        assert_int_equal(fm_topo_local(t, r), local[r]);
        assert_int_equal(fm_topo_nlocal(t, r), nlocal[r]);
    }
    assert_int_equal(fm_topo_leader(t, 0), 0);
    assert_int_equal(fm_topo_leader(t, 1), 1);
    assert_int_equal(fm_topo_leader(t, 2), 3);
    const int *ranks = NULL;
    assert_int_equal(fm_topo_host_ranks(t, 0, &ranks), 2);
    assert_int_equal(ranks[0], 0);
    assert_int_equal(ranks[1], 2);
    assert_int_equal(fm_topo_host_ranks(t, 1, &ranks), 2);
    assert_int_equal(ranks[0], 1);
    assert_int_equal(ranks[1], 4);
    assert_int_equal(fm_topo_host_ranks(t, 2, &ranks), 1);
    assert_int_equal(ranks[0], 3);
    assert_int_equal(fm_topo_same_host(t, 0, 2), 1);
    assert_int_equal(fm_topo_same_host(t, 1, 4), 1);
    assert_int_equal(fm_topo_same_host(t, 0, 1), 0);
    assert_int_equal(fm_topo_same_host(t, 3, 3), 1);
    assert_string_equal(fm_topo_name(t, 0), "a");
    assert_string_equal(fm_topo_name(t, 1), "b");
    assert_string_equal(fm_topo_name(t, 2), "c");
    assert_string_equal(fm_topo_key(t, 2), "c/10");
    /* No spec: no coordinates. */
    int dims[3] = {-1, -1, -1}, c[3];
    assert_int_equal(fm_topo_kind(t), FM_TOPO_NONE);
    assert_int_equal(fm_topo_ndims(t), 0);
    assert_int_equal(fm_topo_dims(t, dims), 0);
    assert_int_equal(dims[0], -1);
    assert_int_equal(fm_topo_dims(t, NULL), 0);
    assert_int_equal(fm_topo_coord(t, 0, c), FM_ERR_INVALID);
    fm_topo_free(t);
}

/* The same name in two network namespaces is two hosts; a key without '/' is all name; NULL
 * spec is no spec. */
static void keys_and_names(void **state)
{
    (void)state;
    const char *keys[] = {"n/4026531840", "n/4026532001", "solo", "n/4026531840"};
    fm_topo *t = build_ok(4, keys, NULL);
    assert_int_equal(fm_topo_nhosts(t), 3);
    assert_int_equal(fm_topo_host(t, 3), 0);
    assert_int_equal(fm_topo_local(t, 3), 1);
    assert_string_equal(fm_topo_name(t, 0), "n");
    assert_string_equal(fm_topo_name(t, 1), "n");
    assert_string_equal(fm_topo_name(t, 2), "solo");
    assert_string_equal(fm_topo_key(t, 1), "n/4026532001");
    fm_topo_free(t);

    /* Explicit names replace the keys' name parts. */
    const char *names[] = {"fmh0", "fmh1", "fmh2", "fmh0"};
    assert_int_equal(fm_topo_build_named(4, keys, names, "", &t, err, sizeof err), FM_OK);
    assert_string_equal(fm_topo_name(t, 0), "fmh0");
    assert_string_equal(fm_topo_name(t, 1), "fmh1");
    assert_string_equal(fm_topo_name(t, 2), "fmh2");
    fm_topo_free(t);

    /* The name ends at the last '/': the inode after it is all digits. */
    const char *deep[] = {"rack/a/12"};
    t = build_ok(1, deep, "");
    assert_string_equal(fm_topo_name(t, 0), "rack/a");
    fm_topo_free(t);

    /* Keys are copied: the caller's strings may go away. */
    char k0[] = "x/1", k1[] = "y/1";
    const char *mine[] = {k0, k1};
    t = build_ok(2, mine, "");
    k0[0] = k1[0] = 'z';
    assert_string_equal(fm_topo_key(t, 0), "x/1");
    assert_string_equal(fm_topo_name(t, 1), "y");
    fm_topo_free(t);
}

/* 1000 ranks round-robin over 37 hosts: host r % 37, position r / 37. */
static void many_ranks(void **state)
{
    (void)state;
    enum { N = 1000, H = 37 };
    static char text[N][16];
    const char *keys[N];
    for (int r = 0; r < N; r++) {
        snprintf(text[r], sizeof text[r], "h%d/7", r % H);
        keys[r] = text[r];
    }
    fm_topo *t = build_ok(N, keys, "");
    assert_int_equal(fm_topo_nhosts(t), H);
    for (int r = 0; r < N; r++) {
        assert_int_equal(fm_topo_host(t, r), r % H);
        assert_int_equal(fm_topo_local(t, r), r / H);
        /* 1000 = 27 * 37 + 1: host 0 has 28 ranks, the others 27. */
        assert_int_equal(fm_topo_nlocal(t, r), r % H == 0 ? 28 : 27);
    }
    const int *ranks;
    assert_int_equal(fm_topo_host_ranks(t, 5, &ranks), 27);
    for (int i = 0; i < 27; i++)
        assert_int_equal(ranks[i], 5 + 37 * i);
    fm_topo_free(t);
}

static void torus_per_host(void **state)
{
    (void)state;
    /* 8 ranks, rank r on host r % 4, torus 2x2: host h at (h % 2, h / 2). */
    const char *keys[] = {"h0/1", "h1/1", "h2/1", "h3/1", "h0/1", "h1/1", "h2/1", "h3/1"};
    fm_topo *t = build_ok(8, keys, "torus:2x2");
    int dims[3];
    assert_int_equal(fm_topo_kind(t), FM_TOPO_TORUS_HOSTS);
    assert_int_equal(fm_topo_dims(t, dims), 2);
    assert_int_equal(dims[0], 2);
    assert_int_equal(dims[1], 2);
    assert_coord(t, 0, 0, 0, 0);
    assert_coord(t, 1, 1, 0, 0);
    assert_coord(t, 2, 0, 1, 0);
    assert_coord(t, 3, 1, 1, 0);
    assert_coord(t, 5, 1, 0, 0); /* shares host 1's */
    assert_coord(t, 7, 1, 1, 0);
    fm_topo_free(t);

    /* 12 hosts, torus 2x3x2, x fastest: index 5 = (1,2,0), 6 = (0,0,1), 11 = (1,2,1). */
    const char *k12[] = {"a/1", "b/1", "c/1", "d/1", "e/1", "f/1",
                         "g/1", "h/1", "i/1", "j/1", "k/1", "l/1"};
    t = build_ok(12, k12, "torus:2x3x2");
    assert_int_equal(fm_topo_ndims(t), 3);
    assert_coord(t, 0, 0, 0, 0);
    assert_coord(t, 1, 1, 0, 0);
    assert_coord(t, 2, 0, 1, 0);
    assert_coord(t, 5, 1, 2, 0);
    assert_coord(t, 6, 0, 0, 1);
    assert_coord(t, 7, 1, 0, 1);
    assert_coord(t, 11, 1, 2, 1);
    fm_topo_free(t);

    /* As many hosts as ranks as positions: per host (the same places either way). */
    t = build_ok(4, k12, "torus:4");
    assert_int_equal(fm_topo_kind(t), FM_TOPO_TORUS_HOSTS);
    assert_coord(t, 3, 3, 0, 0);
    fm_topo_free(t);
}

static void torus_per_rank(void **state)
{
    (void)state;
    /* 16 ranks on 4 hosts of 4, torus 4x4: rank r at (r % 4, r / 4). */
    const char *keys[16];
    for (int r = 0; r < 16; r++)
        keys[r] = r < 4 ? "p/1" : r < 8 ? "q/1" : r < 12 ? "r/1" : "s/1";
    fm_topo *t = build_ok(16, keys, "torus:4x4");
    assert_int_equal(fm_topo_kind(t), FM_TOPO_TORUS_RANKS);
    assert_int_equal(fm_topo_nhosts(t), 4);
    assert_coord(t, 0, 0, 0, 0);
    assert_coord(t, 3, 3, 0, 0);
    assert_coord(t, 6, 2, 1, 0);
    assert_coord(t, 9, 1, 2, 0);
    assert_coord(t, 15, 3, 3, 0);
    assert_int_equal(fm_topo_unidirectional(t), 0);
    fm_topo_free(t);
    /* The same unidirectional: the same places. */
    t = build_ok(16, keys, "torus:4x4:uni");
    assert_int_equal(fm_topo_unidirectional(t), 1);
    assert_int_equal(fm_topo_ndims(t), 2);
    assert_coord(t, 9, 1, 2, 0);
    fm_topo_free(t);

    /* One machine emulating a ring of 5. */
    const char *one[] = {"m/1", "m/1", "m/1", "m/1", "m/1"};
    t = build_ok(5, one, "torus:5");
    assert_int_equal(fm_topo_ndims(t), 1);
    assert_coord(t, 3, 3, 0, 0);
    fm_topo_free(t);
}

static void torus_mismatch(void **state)
{
    (void)state;
    const char *keys[] = {"a/1", "a/1", "b/1", "b/1", "c/1", "c/1"};
    build_bad(6, keys, "torus:2x2", FM_ERR_CONFIG, "");
    assert_string_equal(err, "FM_TOPOLOGY 'torus:2x2' has 4 positions, but the job has 3 hosts "
                             "and 6 ranks (and the host names do not end in distinct positions)");
    /* every position's host, listed out of order: placed by name, not by order */
    const char *all[] = {"n3/1", "n1/2", "n0/3", "n2/4"};
    fm_topo *w = build_ok(4, all, "torus:2x2");
    assert_int_equal(fm_topo_kind(w), FM_TOPO_TORUS_HOSTS);
    assert_coord(w, 0, 1, 1, 0);
    assert_coord(w, 1, 1, 0, 0);
    assert_coord(w, 2, 0, 0, 0);
    fm_topo_free(w);
    /* hosts named for positions: fmt5, fmt0, fmt14 of a 4x4 torus, any subset */
    const char *named[] = {"fmt5/1", "fmt0/2", "fmt14/3", "fmt5/1"};
    fm_topo *t = build_ok(4, named, "torus:4x4:uni");
    assert_int_equal(fm_topo_kind(t), FM_TOPO_TORUS_HOSTS);
    assert_int_equal(fm_topo_unidirectional(t), 1);
    assert_coord(t, 0, 1, 1, 0);
    assert_coord(t, 1, 0, 0, 0);
    assert_coord(t, 2, 2, 3, 0);
    assert_coord(t, 3, 1, 1, 0);
    fm_topo_free(t);
    /* a number past the positions, two hosts at one, a name without a number: refused */
    const char *past[] = {"fmt16/1", "fmt0/2"}, *twice[] = {"a3/1", "b3/2"},
               *none[] = {"fmt1/1", "fmt/2"};
    build_bad(2, past, "torus:4x4", FM_ERR_CONFIG, "do not end in distinct positions");
    build_bad(2, twice, "torus:4x4", FM_ERR_CONFIG, "do not end in distinct positions");
    build_bad(2, none, "torus:4x4", FM_ERR_CONFIG, "do not end in distinct positions");
    build_bad(1, keys, "torus:2", FM_ERR_CONFIG,
              "has 2 positions, but the job has 1 host and 1 rank");
}

static void malformed_specs(void **state)
{
    (void)state;
    const char *keys[] = {"a/1"};
    static const struct {
        const char *spec, *want;
    } bad[] = {
        {"torus", "neither torus:AxB[xC][:uni] nor file:PATH"},
        {"Torus:4", "neither"},
        {"mesh:4x4", "neither"},
        {" torus:4", "neither"},
        {"torus:", "dimension 1 is missing"},
        {"torus:x4", "dimension 1 is missing"},
        {"torus:4x", "dimension 2 is missing"},
        {"torus:4xx4", "dimension 2 is missing"},
        {"torus:4x4x", "dimension 3 is missing"},
        {"torus:4x4:", "only ':uni' (a unidirectional torus) may follow, not ':'"},
        {"torus:4x4:bi", "not ':bi'"},
        {"torus:4x4:uni:uni", "not ':uni:uni'"},
        {"torus:4x:uni", "dimension 2 is missing"},
        {"torus::uni", "dimension 1 is missing"},
        {"torus:0x4", "dimension 1 must be a whole number from 1 to 1024, not '0'"},
        {"torus:4x0", "dimension 2 must be a whole number from 1 to 1024, not '0'"},
        {"torus:-4", "not '-4'"},
        {"torus:+4", "not '+4'"},
        {"torus:4x-1", "not '-1'"},
        {"torus: 4", "not ' 4'"},
        {"torus:4 x4", "not '4 '"},
        {"torus:4x4 ", "not '4 '"},
        {"torus:4x4:uni ", "not ':uni '"},
        {"torus:4X4", "not '4X4'"},
        {"torus:4x4a", "not '4a'"},
        {"torus:0x10", "not '0'"},
        {"torus:1.5", "not '1.5'"},
        {"torus:1025", "not '1025'"},
        {"torus:99999999999999999999", "not '99999999999999999999'"},
        {"torus:2x2x2x2", "a torus has at most 3 dimensions"},
        {"torus:1024x1024x2", "2097152 positions, more than 1048576"},
        {"file:", "'file:' names no file"},
        {"file:/nonexistent/fm_topo/hosts", "No such file or directory"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        build_bad(1, keys, bad[i].spec, FM_ERR_CONFIG, bad[i].want);

    /* The limits themselves are accepted. */
    struct fm_topo_spec s;
    assert_int_equal(fm_topo_spec_parse("torus:1024x1024", &s, err, sizeof err), FM_OK);
    assert_int_equal(s.kind, FM_TOPO_SPEC_TORUS);
    assert_int_equal(s.ndims, 2);
    assert_int_equal(s.dims[0], 1024);
    assert_int_equal(s.dims[1], 1024);
    fm_topo_spec_clear(&s);
    assert_int_equal(fm_topo_spec_parse("torus:1x1x1", &s, err, sizeof err), FM_OK);
    assert_int_equal(s.ndims, 3);
    fm_topo_spec_clear(&s);
    assert_int_equal(fm_topo_spec_parse("torus:007", &s, err, sizeof err), FM_OK);
    assert_int_equal(s.dims[0], 7);
    fm_topo_spec_clear(&s);
    assert_int_equal(fm_topo_spec_parse("", &s, err, sizeof err), FM_OK);
    assert_int_equal(s.kind, FM_TOPO_SPEC_NONE);
    assert_int_equal(s.ndims, 0);
    assert_int_equal(fm_topo_spec_parse("x", NULL, err, sizeof err), FM_ERR_INVALID);
    /* err NULL: the code alone. */
    assert_int_equal(fm_topo_spec_parse("torus:0", &s, NULL, 0), FM_ERR_CONFIG);
}

/* A temporary file holding text; its path in path. */
static void write_file(char *path, size_t len, const char *text, size_t textlen)
{
    snprintf(path, len, "/tmp/test_topo_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, textlen), (ssize_t)textlen);
    close(fd);
}

static fm_topo *file_topo(const char *text, int n, const char *const *keys, char *path, int code,
                          const char *want)
{
    char spec[64];
    fm_topo *t = NULL;
    write_file(path, 32, text, strlen(text));
    snprintf(spec, sizeof spec, "file:%s", path);
    err[0] = '\0';
    assert_int_equal(fm_topo_build(n, keys, spec, &t, err, sizeof err), code);
    if (code != FM_OK) {
        assert_null(t);
        if (!strstr(err, want))
            fail_msg("file '%s': error '%s' lacks '%s'", text, err, want);
        char withpath[64];
        snprintf(withpath, sizeof withpath, "'%s'", path);
        assert_non_null(strstr(err, withpath)); /* every file error names the file */
    }
    unlink(path);
    return t;
}

static const char hosts_file[] = "# emulated cluster: 2x2 hosts and a spare\n"
                                 "fmh0 0 0\n"
                                 "fmh1 1 0   # second\n"
                                 "\n"
                                 "   \t\n"
                                 "  fmh2\t0 1\r\n"
                                 "fmh3 1 1\n"
                                 "spare 2 1"; /* no final newline */

static void file_spec(void **state)
{
    (void)state;
    char path[32];
    const char *keys[] = {"fmh0/7", "fmh1/7", "fmh2/7", "fmh3/7", "fmh0/7"};
    fm_topo *t = file_topo(hosts_file, 5, keys, path, FM_OK, NULL);
    int dims[3];
    assert_int_equal(fm_topo_kind(t), FM_TOPO_FILE);
    assert_int_equal(fm_topo_dims(t, dims), 2);
    assert_int_equal(dims[0], 3); /* the spare's x = 2 */
    assert_int_equal(dims[1], 2);
    assert_coord(t, 0, 0, 0, 0);
    assert_coord(t, 1, 1, 0, 0);
    assert_coord(t, 2, 0, 1, 0);
    assert_coord(t, 3, 1, 1, 0);
    assert_coord(t, 4, 0, 0, 0);
    fm_topo_free(t);

    /* Names given per rank, keys that say nothing about them. */
    const char *anon[] = {"x/1", "x/2", "x/3", "x/4"};
    const char *names[] = {"fmh3", "spare", "fmh1", "fmh0"};
    char spec[64];
    write_file(path, sizeof path, hosts_file, strlen(hosts_file));
    snprintf(spec, sizeof spec, "file:%s", path);
    assert_int_equal(fm_topo_build_named(4, anon, names, spec, &t, err, sizeof err), FM_OK);
    unlink(path);
    assert_coord(t, 0, 1, 1, 0);
    assert_coord(t, 1, 2, 1, 0);
    assert_coord(t, 2, 1, 0, 0);
    assert_coord(t, 3, 0, 0, 0);
    fm_topo_free(t);

    /* Three coordinates, one host of the job only. */
    const char *one[] = {"b/1", "b/1"};
    t = file_topo("a 0 0 0\nb 4 1 2\n", 2, one, path, FM_OK, NULL);
    assert_int_equal(fm_topo_dims(t, dims), 3);
    assert_int_equal(dims[0], 5);
    assert_int_equal(dims[1], 2);
    assert_int_equal(dims[2], 3);
    assert_coord(t, 1, 4, 1, 2);
    fm_topo_free(t);
}

static void file_spec_errors(void **state)
{
    (void)state;
    char path[32];
    const char *keys[] = {"fmh0/7", "fmh1/7", "fmh9/7", "fmh9/7"};
    file_topo(hosts_file, 4, keys, path, FM_ERR_CONFIG, "host 'fmh9' (rank 2) is not listed");
    const char *ab[] = {"a/1", "b/1"};
    file_topo("a 0 0\nb 1 0\nc 1 0\n", 2, ab, path, FM_ERR_CONFIG,
              "lines 2 and 3 give hosts 'b' and 'c' the same coordinates");
    file_topo("a 0\nb 1\na 2\n", 2, ab, path, FM_ERR_CONFIG,
              "line 3: host 'a' is listed again (first on line 1)");
    file_topo("# hosts\na 0 0\n\nb 1\n", 2, ab, path, FM_ERR_CONFIG,
              "lines 2 and 4 have different numbers of coordinates (2 and 1)");
    file_topo("a 0\nb 1 1\n", 2, ab, path, FM_ERR_CONFIG,
              "lines 1 and 2 have different numbers of coordinates (1 and 2)");
    file_topo("a 0\nb\n", 2, ab, path, FM_ERR_CONFIG, "line 2: host 'b' has no coordinates");
    file_topo("a 0 0 0 0\n", 2, ab, path, FM_ERR_CONFIG, "line 1: more than 3 coordinates");
    file_topo("a -1\n", 2, ab, path, FM_ERR_CONFIG,
              "line 1: coordinate '-1' is not a whole number from 0 to 1023");
    file_topo("a 1.5\n", 2, ab, path, FM_ERR_CONFIG, "coordinate '1.5'");
    file_topo("a 1024\n", 2, ab, path, FM_ERR_CONFIG, "coordinate '1024'");
    file_topo("a 0x1\n", 2, ab, path, FM_ERR_CONFIG, "coordinate '0x1'");
    file_topo("a 1 2 3\nb 1023 1023 1023\n", 2, ab, path, FM_ERR_CONFIG,
              "span 1073741824 positions, more than 1048576");
    file_topo("", 2, ab, path, FM_ERR_CONFIG, "lists no hosts");
    file_topo("# nothing\n\n  # here\n", 2, ab, path, FM_ERR_CONFIG, "lists no hosts");
    /* Two hosts of the job with one name would share one line's coordinates. */
    const char *twins[] = {"a/1", "a/2"};
    file_topo("a 0\nb 1\n", 2, twins, path, FM_ERR_CONFIG,
              "hosts 'a/1' and 'a/2' both have the name 'a' (line 1");
    /* A NUL byte is not a line ending. */
    char spec[64];
    fm_topo *t = NULL;
    write_file(path, sizeof path, "a 0\0\nb 1\n", 9);
    snprintf(spec, sizeof spec, "file:%s", path);
    assert_int_equal(fm_topo_build(2, ab, spec, &t, err, sizeof err), FM_ERR_CONFIG);
    assert_non_null(strstr(err, "holds a NUL byte"));
    unlink(path);
}

static void spec_lookup(void **state)
{
    (void)state;
    char path[32], spec[64];
    struct fm_topo_spec s;
    write_file(path, sizeof path, hosts_file, strlen(hosts_file));
    snprintf(spec, sizeof spec, "file:%s", path);
    assert_int_equal(fm_topo_spec_parse(spec, &s, err, sizeof err), FM_OK);
    unlink(path);
    assert_int_equal(s.kind, FM_TOPO_SPEC_FILE);
    assert_string_equal(s.path, path);
    assert_int_equal(s.nentries, 5);
    int e = fm_topo_spec_find(&s, "fmh2");
    assert_true(e >= 0);
    assert_string_equal(s.entries[e].name, "fmh2");
    assert_int_equal(s.entries[e].line, 6);
    assert_int_equal(s.entries[e].coord[0], 0);
    assert_int_equal(s.entries[e].coord[1], 1);
    assert_int_equal(s.entries[e].coord[2], 0);
    e = fm_topo_spec_find(&s, "spare");
    assert_true(e >= 0);
    assert_int_equal(s.entries[e].line, 8);
    assert_int_equal(fm_topo_spec_find(&s, "fmh"), -1);
    assert_int_equal(fm_topo_spec_find(&s, "zzz"), -1);
    assert_int_equal(fm_topo_spec_find(&s, NULL), -1);
    fm_topo_spec_clear(&s);
    assert_int_equal(fm_topo_spec_find(&s, "fmh2"), -1);
    fm_topo_spec_clear(NULL);
}

/* The printed text of t. */
static char *printed(const fm_topo *t)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(fm_topo_print(t, f), FM_OK);
    fclose(f);
    return buf;
}

static void print_table(void **state)
{
    (void)state;
    const char *keys[] = {"a/1", "bb/1", "a/1"};
    fm_topo *t = build_ok(3, keys, "");
    char *out = printed(t);
    assert_string_equal(out, "  rank   host  name   local\n"
                             "     0      0  a        0/2\n"
                             "     1      1  bb       0/1\n"
                             "     2      0  a        1/2\n"
                             "3 ranks on 2 hosts\n");
    free(out);
    fm_topo_free(t);

    /* Long names widen the name column. */
    const char *k4[] = {"fmh0/1", "node-long/1", "fmh0/1", "node-long/1"};
    t = build_ok(4, k4, "torus:2");
    out = printed(t);
    assert_non_null(strstr(out, "  rank   host  name        local  coord\n"));
    assert_non_null(strstr(out, "     1      1  node-long     0/2  (1)\n"));
    assert_non_null(strstr(out, "     2      0  fmh0          1/2  (0)\n"));
    assert_non_null(strstr(out, "\n4 ranks on 2 hosts, torus 2, one position per host\n"));
    free(out);
    fm_topo_free(t);

    const char *k16[16];
    for (int r = 0; r < 16; r++)
        k16[r] = r < 4 ? "p/1" : r < 8 ? "q/1" : r < 12 ? "r/1" : "s/1";
    t = build_ok(16, k16, "torus:4x4");
    out = printed(t);
    assert_non_null(strstr(out, "     6      1  q        2/4  (2,1)\n"));
    assert_non_null(strstr(out, "\n16 ranks on 4 hosts, torus 4x4, one position per rank\n"));
    free(out);
    fm_topo_free(t);

    const char *solo[] = {"only/1"};
    t = build_ok(1, solo, "torus:1x1x1");
    out = printed(t);
    assert_non_null(strstr(out, "     0      0  only     0/1  (0,0,0)\n"));
    assert_non_null(strstr(out, "\n1 rank on 1 host, torus 1x1x1, one position per host\n"));
    free(out);
    fm_topo_free(t);

    char path[32], spec[64];
    const char *kf[] = {"fmh3/7", "fmh0/7"};
    write_file(path, sizeof path, hosts_file, strlen(hosts_file));
    snprintf(spec, sizeof spec, "file:%s", path);
    t = build_ok(2, kf, spec);
    unlink(path);
    out = printed(t);
    char summary[128];
    snprintf(summary, sizeof summary, "\n2 ranks on 2 hosts, coordinates 3x2 from %s\n", path);
    assert_non_null(strstr(out, "     0      0  fmh3     0/1  (1,1)\n"));
    assert_non_null(strstr(out, "     1      1  fmh0     0/1  (0,0)\n"));
    assert_non_null(strstr(out, summary));
    free(out);
    assert_int_equal(fm_topo_print(NULL, stdout), FM_ERR_INVALID);
    assert_int_equal(fm_topo_print(t, NULL), FM_ERR_INVALID);
    fm_topo_free(t);
}

static void bad_arguments(void **state)
{
    (void)state;
    const char *keys[] = {"a/1", "b/1"};
    fm_topo *t = NULL;
    assert_int_equal(fm_topo_build(2, keys, "", NULL, err, sizeof err), FM_ERR_INVALID);
    build_bad(0, keys, "", FM_ERR_INVALID, "at least one rank");
    build_bad(2, NULL, "", FM_ERR_INVALID, "at least one rank");
    const char *holes[] = {"a/1", NULL};
    build_bad(2, holes, "", FM_ERR_INVALID, "rank 1 has no host key");
    const char *empty[] = {"a/1", ""};
    build_bad(2, empty, "", FM_ERR_INVALID, "rank 1 has no host key");
    const char *noname[] = {"/4026531840"};
    build_bad(1, noname, "", FM_ERR_INVALID, "rank 0's host name is empty (key '/4026531840')");
    /* Bad arguments are checked before the spec. */
    build_bad(0, keys, "torus:0", FM_ERR_INVALID, "at least one rank");

    const char *same[] = {"a/1", "b/1", "a/1"};
    const char *clash[] = {"x", "y", "z"};
    assert_int_equal(fm_topo_build_named(3, same, clash, "", &t, err, sizeof err), FM_ERR_INVALID);
    assert_null(t);
    assert_string_equal(err, "ranks 0 and 2 share host key 'a/1' but are named 'x' and 'z'");
    const char *gap[] = {"x", NULL, "x"};
    assert_int_equal(fm_topo_build_named(3, same, gap, "", &t, err, sizeof err), FM_ERR_INVALID);
    assert_string_equal(err, "rank 1 has no host name");
    const char *blank[] = {"x", "", "x"};
    assert_int_equal(fm_topo_build_named(3, same, blank, "", &t, err, sizeof err), FM_ERR_INVALID);
    /* err NULL is fine. */
    assert_int_equal(fm_topo_build(0, keys, "", &t, NULL, 0), FM_ERR_INVALID);

    t = build_ok(2, keys, "");
    const int *ranks;
    int c[3];
    assert_int_equal(fm_topo_host(t, -1), FM_ERR_INVALID);
    assert_int_equal(fm_topo_host(t, 2), FM_ERR_INVALID);
    assert_int_equal(fm_topo_local(t, 2), FM_ERR_INVALID);
    assert_int_equal(fm_topo_nlocal(t, -1), FM_ERR_INVALID);
    assert_int_equal(fm_topo_leader(t, 2), FM_ERR_INVALID);
    assert_int_equal(fm_topo_host_ranks(t, 2, &ranks), FM_ERR_INVALID);
    assert_int_equal(fm_topo_host_ranks(t, 0, NULL), FM_ERR_INVALID);
    assert_int_equal(fm_topo_same_host(t, 0, 2), FM_ERR_INVALID);
    assert_int_equal(fm_topo_same_host(t, -1, 0), FM_ERR_INVALID);
    assert_null(fm_topo_name(t, -1));
    assert_null(fm_topo_key(t, 2));
    assert_int_equal(fm_topo_coord(t, 5, c), FM_ERR_INVALID);
    fm_topo_free(t);
    t = build_ok(2, keys, "torus:2");
    assert_int_equal(fm_topo_coord(t, 0, NULL), FM_ERR_INVALID);
    assert_int_equal(fm_topo_coord(t, 2, c), FM_ERR_INVALID);
    assert_int_equal(fm_topo_dims(t, NULL), FM_ERR_INVALID);
    fm_topo_free(t);
    assert_int_equal(fm_topo_nranks(NULL), FM_ERR_INVALID);
    assert_int_equal(fm_topo_nhosts(NULL), FM_ERR_INVALID);
    assert_int_equal(fm_topo_host(NULL, 0), FM_ERR_INVALID);
    assert_int_equal(fm_topo_kind(NULL), FM_ERR_INVALID);
    assert_int_equal(fm_topo_ndims(NULL), FM_ERR_INVALID);
    assert_int_equal(fm_topo_dims(NULL, c), FM_ERR_INVALID);
    assert_int_equal(fm_topo_coord(NULL, 0, c), FM_ERR_INVALID);
    assert_int_equal(fm_topo_same_host(NULL, 0, 0), FM_ERR_INVALID);
    fm_topo_free(NULL);
}

/* This process's key: its host name, '/', its network namespace's inode. */
static void host_key(void **state)
{
    (void)state;
    char name[300], key[320], want[320];
    struct stat st;
    assert_int_equal(fm_topo_host_name(name, sizeof name), FM_OK);
    assert_true(name[0] != '\0');
    assert_null(strchr(name, '/'));
    assert_int_equal(fm_topo_host_key(key, sizeof key), FM_OK);
    unsigned long long ino = stat("/proc/self/ns/net", &st) ? 0 : (unsigned long long)st.st_ino;
    snprintf(want, sizeof want, "%s/%llu", name, ino);
    assert_string_equal(key, want);
    /* The key is what fm_topo_build takes: its name part is the host name. */
    const char *keys[] = {key};
    fm_topo *t = build_ok(1, keys, "");
    assert_string_equal(fm_topo_name(t, 0), name);
    fm_topo_free(t);

    assert_int_equal(fm_topo_host_key(key, strlen(want)), FM_ERR_TOO_LONG);
    assert_int_equal(fm_topo_host_key(key, strlen(want) + 1), FM_OK);
    assert_int_equal(fm_topo_host_name(name, strlen(name)), FM_ERR_TOO_LONG);
    assert_int_equal(fm_topo_host_name(NULL, 10), FM_ERR_INVALID);
    assert_int_equal(fm_topo_host_key(key, 0), FM_ERR_INVALID);
}

/* Named namespaces, with plain files standing in: a hard link shares the inode, as a file in
 * /run/netns shares its namespace's. */
static void host_name_from_netns(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_topo_ns_XXXXXX", self[64], other[64], netns[64], link1[96], link2[96],
         hostname[300], buf[300], want[320];
    struct stat st;
    assert_non_null(mkdtemp(dir));
    snprintf(self, sizeof self, "%s/self", dir);
    snprintf(other, sizeof other, "%s/other", dir);
    snprintf(netns, sizeof netns, "%s/netns", dir);
    snprintf(link1, sizeof link1, "%s/fmh7", netns);
    snprintf(link2, sizeof link2, "%s/zz", netns);
    fclose(fopen(self, "w"));
    fclose(fopen(other, "w"));
    assert_int_equal(mkdir(netns, 0700), 0);
    assert_int_equal(link(self, link2), 0);
    assert_int_equal(link(self, link1), 0);
    assert_int_equal(stat(self, &st), 0);
    assert_int_equal(gethostname(hostname, sizeof hostname), 0);

    /* Two names for our namespace: the smaller one, whatever the directory order. */
    assert_int_equal(fm_topo_host_name_at(netns, self, other, buf, sizeof buf), FM_OK);
    assert_string_equal(buf, "fmh7");
    assert_int_equal(fm_topo_host_key_at(netns, self, other, buf, sizeof buf), FM_OK);
    snprintf(want, sizeof want, "fmh7/%llu", (unsigned long long)st.st_ino);
    assert_string_equal(buf, want);
    /* Init's unreadable (NULL): still the name. */
    assert_int_equal(fm_topo_host_name_at(netns, self, NULL, buf, sizeof buf), FM_OK);
    assert_string_equal(buf, "fmh7");
    /* Our namespace is init's: the hostname, even if it has a name. */
    assert_int_equal(fm_topo_host_name_at(netns, self, link1, buf, sizeof buf), FM_OK);
    assert_string_equal(buf, hostname);
    /* A namespace without a name: the hostname. */
    assert_int_equal(fm_topo_host_name_at(netns, other, NULL, buf, sizeof buf), FM_OK);
    assert_string_equal(buf, hostname);
    /* No netns directory, or no namespace file: the hostname, and inode 0 without one. */
    assert_int_equal(fm_topo_host_name_at(dir, "/nonexistent", NULL, buf, sizeof buf), FM_OK);
    assert_string_equal(buf, hostname);
    assert_int_equal(fm_topo_host_key_at("/nonexistent", "/nonexistent", NULL, buf, sizeof buf),
                     FM_OK);
    snprintf(want, sizeof want, "%s/0", hostname);
    assert_string_equal(buf, want);
    assert_int_equal(fm_topo_host_name_at(netns, self, other, buf, 4), FM_ERR_TOO_LONG);
    assert_int_equal(fm_topo_host_name_at(netns, self, other, buf, 5), FM_OK);

    unlink(link1);
    unlink(link2);
    rmdir(netns);
    unlink(self);
    unlink(other);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(interleaved_hosts), cmocka_unit_test(keys_and_names),
        cmocka_unit_test(many_ranks),        cmocka_unit_test(torus_per_host),
        cmocka_unit_test(torus_per_rank),    cmocka_unit_test(torus_mismatch),
        cmocka_unit_test(malformed_specs),   cmocka_unit_test(file_spec),
        cmocka_unit_test(file_spec_errors),  cmocka_unit_test(spec_lookup),
        cmocka_unit_test(print_table),       cmocka_unit_test(bad_arguments),
        cmocka_unit_test(host_key),          cmocka_unit_test(host_name_from_netns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
