/* SPDX-License-Identifier: BSD-3-Clause */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fastmsg.h"

#define FM_CFG_ROW(NAME, field, type, def, min, max, doc)                                          \
    {#NAME, FM_CFG_##type, def, min, max, doc},
const fm_config_var fm_config_vars[] = {FM_CONFIG_TABLE(FM_CFG_ROW)};
const int fm_config_nvars = sizeof(fm_config_vars) / sizeof(fm_config_vars[0]);

_Static_assert(sizeof(fm_config_vars) / sizeof(fm_config_vars[0]) <=
                   sizeof(((fm_config *)0)->source) / sizeof(fm_cfg_source),
               "grow fm_config.source");

static int parse_bool(const char *t, long *out)
{
    static const char *yes[] = {"1", "yes", "true", "on"};
    static const char *no[] = {"0", "no", "false", "off"};
    for (size_t i = 0; i < 4; i++) {
        if (!strcasecmp(t, yes[i]))
            return *out = 1, 0;
        if (!strcasecmp(t, no[i]))
            return *out = 0, 0;
    }
    return -1;
}

static int parse_number(const char *t, int allow_suffix, long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(t, &end, 10);
    if (end == t || errno)
        return -1;
    if (allow_suffix && *end) {
        const char *units = "KMG";
        const char *u = strchr(units, toupper((unsigned char)*end));
        if (!u)
            return -1;
        for (long k = 0; k <= u - units; k++) {
            if (v > (1LL << 53) || v < -(1LL << 53))
                return -1;
            v *= 1024;
        }
        end++;
    }
    if (*end || v > 0x7fffffffffffLL || v < -0x7fffffffffffLL)
        return -1;
    *out = (long)v;
    return 0;
}

int fm_config_parse_value(const fm_config_var *v, const char *text, long *num, char *str,
                          size_t strmax)
{
    switch (v->type) {
    case FM_CFG_STR:
        if (strlen(text) >= strmax)
            return -1;
        strcpy(str, text);
        return 0;
    case FM_CFG_BOOL:
        return parse_bool(text, num);
    case FM_CFG_INT:
    case FM_CFG_SIZE:
        if (parse_number(text, v->type == FM_CFG_SIZE, num))
            return -1;
        return (*num < v->min || *num > v->max) ? -1 : 0;
    }
    return -1;
}

static const char *type_hint(const fm_config_var *v, char *buf, size_t len)
{
    switch (v->type) {
    case FM_CFG_BOOL:
        return "0 or 1";
    case FM_CFG_STR:
        return "text of at most 127 bytes";
    default:
        snprintf(buf, len, "an integer in %ld..%ld%s", v->min, v->max,
                 v->type == FM_CFG_SIZE ? " (K/M/G suffix allowed)" : "");
        return buf;
    }
}

/* Parse row i's text into its field; the X-macro below maps row index to field. */
#define FM_CFG_STORE_INT(field)  p->field = num;
#define FM_CFG_STORE_SIZE(field) p->field = num;
#define FM_CFG_STORE_BOOL(field) p->field = num;
#define FM_CFG_STORE_STR(field)  snprintf(p->field, sizeof p->field, "%s", str);
#define FM_CFG_STORE(NAME, field, type, def, min, max, doc)                                        \
    if (i == idx++) {                                                                              \
        FM_CFG_STORE_##type(field) return;                                                         \
    }

static void store(fm_config *p, int i, long num, const char *str)
{
    int idx = 0;
    FM_CONFIG_TABLE(FM_CFG_STORE)
}

int fm_config_load(fm_config *cfg, fm_config_getenv_fn get, char *err, size_t errlen)
{
    if (!get)
        get = (fm_config_getenv_fn)getenv;
    memset(cfg, 0, sizeof *cfg);
    for (int i = 0; i < fm_config_nvars; i++) {
        const fm_config_var *v = &fm_config_vars[i];
        const char *text = get(v->name);
        cfg->source[i] = text ? FM_CFG_FROM_ENV : FM_CFG_FROM_DEFAULT;
        if (!text)
            text = v->def;
        long num = 0;
        char str[128];
        if (fm_config_parse_value(v, text, &num, str, sizeof str)) {
            char hint[96];
            snprintf(err, errlen, "%s=\"%s\" is not valid: expected %s", v->name, text,
                     type_hint(v, hint, sizeof hint));
            return FM_ERR_CONFIG;
        }
        store(cfg, i, num, str);
    }
    return FM_OK;
}

#define FM_CFG_SHOW_INT(field)  snprintf(buf, len, "%ld", cfg->field);
#define FM_CFG_SHOW_SIZE(field) snprintf(buf, len, "%ld", cfg->field);
#define FM_CFG_SHOW_BOOL(field) snprintf(buf, len, "%ld", cfg->field);
#define FM_CFG_SHOW_STR(field)  snprintf(buf, len, "%s", cfg->field);
#define FM_CFG_SHOW(NAME, field, type, def, min, max, doc)                                         \
    if (i == idx++) {                                                                              \
        FM_CFG_SHOW_##type(field) return buf;                                                      \
    }

const char *fm_config_value_str(const fm_config *cfg, int i, char *buf, size_t len)
{
    int idx = 0;
    FM_CONFIG_TABLE(FM_CFG_SHOW)
    return "?";
}
