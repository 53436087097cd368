/* SPDX-License-Identifier: BSD-3-Clause */
/* The key=value line parser and escaper shared by PMI-1 and fastmsg-run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "kvline.h"

static void parses_pairs(void **state)
{
    (void)state;
    char line[] = "cmd=put  key=k1 value=abc=def\n";
    fm_kvline l;
    assert_int_equal(fm_kvline_parse(line, &l), 0);
    assert_int_equal(l.n, 3);
    assert_string_equal(fm_kvline_get(&l, "cmd"), "put");
    assert_string_equal(fm_kvline_get(&l, "key"), "k1");
    assert_string_equal(fm_kvline_get(&l, "value"), "abc=def");
    assert_null(fm_kvline_get(&l, "missing"));
}

static void empty_value_allowed(void **state)
{
    (void)state;
    char line[] = "cmd=get_result value=";
    fm_kvline l;
    assert_int_equal(fm_kvline_parse(line, &l), 0);
    assert_string_equal(fm_kvline_get(&l, "value"), "");
}

static void rejects_malformed(void **state)
{
    (void)state;
    fm_kvline l;
    char no_eq[] = "cmd=put junk";
    char empty_key[] = "=x";
    char blank[] = "   \n";
    assert_int_equal(fm_kvline_parse(no_eq, &l), -1);
    assert_int_equal(fm_kvline_parse(empty_key, &l), -1);
    assert_int_equal(fm_kvline_parse(blank, &l), -1);
    char many[512] = "";
    for (int i = 0; i < FM_KVLINE_MAX_PAIRS + 1; i++)
        strcat(many, "a=b ");
    assert_int_equal(fm_kvline_parse(many, &l), -1);
}

static void escape_round_trip(void **state)
{
    (void)state;
    const char *src = "rank 3: 100% = done\n\x01";
    char esc[128];
    assert_true(fm_kvline_escape(src, esc, sizeof esc) > 0);
    assert_null(strchr(esc, ' '));
    assert_null(strchr(esc, '='));
    assert_null(strchr(esc, '\n'));
    assert_int_equal(fm_kvline_unescape(esc), 0);
    assert_string_equal(esc, src);
}

static void escape_bounds(void **state)
{
    (void)state;
    char small[4];
    assert_int_equal(fm_kvline_escape("a b", small, sizeof small), -1);
    assert_int_equal(fm_kvline_escape("abc", small, sizeof small), 3);
    char bad[] = "x%4";
    assert_int_equal(fm_kvline_unescape(bad), -1);
    char bad2[] = "%zz";
    assert_int_equal(fm_kvline_unescape(bad2), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_pairs),      cmocka_unit_test(empty_value_allowed),
        cmocka_unit_test(rejects_malformed), cmocka_unit_test(escape_round_trip),
        cmocka_unit_test(escape_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
