/* SPDX-License-Identifier: BSD-3-Clause */
/* The FM_* table: defaults, parsing, validation with clear messages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "config.h"
#include "fastmsg.h"

static const char *env_names[8], *env_values[8];
static int env_n;

static const char *fake_getenv(const char *name)
{
    for (int i = 0; i < env_n; i++)
        if (!strcmp(env_names[i], name))
            return env_values[i];
    return NULL;
}

static void set_env(const char *name, const char *value)
{
    env_names[env_n] = name;
    env_values[env_n++] = value;
}

static int reset(void **state)
{
    (void)state;
    env_n = 0;
    return 0;
}

static void defaults_parse(void **state)
{
    (void)state;
    fm_config c;
    char err[256];
    assert_int_equal(fm_config_load(&c, fake_getenv, err, sizeof err), FM_OK);
    assert_string_equal(c.provider, "sm");
    assert_int_equal(c.packet_size, 64 * 1024);
    assert_int_equal(c.credits, 8);
    assert_int_equal(c.stats, 0);
    for (int i = 0; i < fm_config_nvars; i++)
        assert_int_equal(c.source[i], FM_CFG_FROM_DEFAULT);
}

static int index_of(const char *name)
{
    for (int i = 0; i < fm_config_nvars; i++)
        if (!strcmp(fm_config_vars[i].name, name))
            return i;
    return -1;
}

static void environment_overrides(void **state)
{
    (void)state;
    set_env("FM_PROVIDER", "tcp");
    set_env("FM_PACKET_SIZE", "64K");
    set_env("FM_STATS", "yes");
    set_env("FM_CREDITS", "1");
    fm_config c;
    char err[256], buf[64];
    assert_int_equal(fm_config_load(&c, fake_getenv, err, sizeof err), FM_OK);
    assert_string_equal(c.provider, "tcp");
    assert_int_equal(c.packet_size, 65536);
    assert_int_equal(c.stats, 1);
    assert_int_equal(c.credits, 1);
    int i = index_of("FM_PACKET_SIZE");
    assert_int_equal(c.source[i], FM_CFG_FROM_ENV);
    assert_string_equal(fm_config_value_str(&c, i, buf, sizeof buf), "65536");
    assert_int_equal(c.source[index_of("FM_TIMEOUT")], FM_CFG_FROM_DEFAULT);
}

static void bad_values_rejected(void **state)
{
    (void)state;
    const char *bad[][2] = {{"FM_CREDITS", "0"},
                            {"FM_CREDITS", "lots"},
                            {"FM_PACKET_SIZE", "16Q"},
                            {"FM_PACKET_SIZE", "8"},
                            {"FM_STATS", "maybe"},
                            {"FM_TIMEOUT", ""},
                            {"FM_CREDITS", "99999999999999999999"}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        env_n = 0;
        set_env(bad[k][0], bad[k][1]);
        fm_config c;
        char err[256] = "";
        assert_int_equal(fm_config_load(&c, fake_getenv, err, sizeof err), FM_ERR_CONFIG);
        assert_non_null(strstr(err, bad[k][0])); /* the message names the variable */
    }
}

static void every_default_is_valid(void **state)
{
    (void)state;
    for (int i = 0; i < fm_config_nvars; i++) {
        const fm_config_var *v = &fm_config_vars[i];
        long num;
        char str[128];
        assert_int_equal(fm_config_parse_value(v, v->def, &num, str, sizeof str), 0);
        assert_true(strncmp(v->name, "FM_", 3) == 0);
        assert_true(strlen(v->doc) > 10);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(defaults_parse, reset),
        cmocka_unit_test_setup(environment_overrides, reset),
        cmocka_unit_test_setup(bad_values_rejected, reset),
        cmocka_unit_test_setup(every_default_is_valid, reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
