/* SPDX-License-Identifier: BSD-3-Clause */
/* Runtime configuration: the values of every FM_* variable, parsed from the environment
 * through the table in config_table.h. */
#ifndef FM_CONFIG_H
#define FM_CONFIG_H

#include <stddef.h>

#include "config_table.h"

typedef enum { FM_CFG_INT, FM_CFG_SIZE, FM_CFG_BOOL, FM_CFG_STR } fm_cfg_type;
typedef enum { FM_CFG_FROM_DEFAULT, FM_CFG_FROM_ENV } fm_cfg_source;

#define FM_CFG_FIELD_INT(field)                             long field;
#define FM_CFG_FIELD_SIZE(field)                            long field;
#define FM_CFG_FIELD_BOOL(field)                            long field;
#define FM_CFG_FIELD_STR(field)                             char field[128];
#define FM_CFG_FIELD(NAME, field, type, def, min, max, doc) FM_CFG_FIELD_##type(field)

typedef struct fm_config {
    FM_CONFIG_TABLE(FM_CFG_FIELD)
    fm_cfg_source source[48]; /* indexed like fm_config_vars */
} fm_config;

/* One row of the table, for code that walks every variable (info printout, README). */
typedef struct fm_config_var {
    const char *name;
    fm_cfg_type type;
    const char *def;
    long min, max;
    const char *doc;
} fm_config_var;

extern const fm_config_var fm_config_vars[];
extern const int fm_config_nvars;

/* Look-up function, getenv by default; tests pass their own. */
typedef const char *(*fm_config_getenv_fn)(const char *name);

/* Fill cfg from defaults and the environment. On a bad value returns FM_ERR_CONFIG and writes
 * a one-line reason naming the variable into err (errlen bytes). */
int fm_config_load(fm_config *cfg, fm_config_getenv_fn get, char *err, size_t errlen);

/* The value of row i as text (into buf), for printouts. */
const char *fm_config_value_str(const fm_config *cfg, int i, char *buf, size_t len);

/* Parse one value of the given type; exposed for unit tests. Returns 0 or -1. */
int fm_config_parse_value(const fm_config_var *v, const char *text, long *num, char *str,
                          size_t strlen_max);

#endif
