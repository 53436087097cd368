/* SPDX-License-Identifier: BSD-3-Clause */
/* Lines of "key=value key=value ...\n": the text protocol of PMI-1 and of fastmsg-run. */
#ifndef FM_KVLINE_H
#define FM_KVLINE_H

#include <stddef.h>

#define FM_KVLINE_MAX_PAIRS 16

typedef struct fm_kvline {
    int n;
    char *key[FM_KVLINE_MAX_PAIRS];
    char *val[FM_KVLINE_MAX_PAIRS];
} fm_kvline;

/* Split line (modified in place; a trailing '\n' is dropped) into pairs. Tokens are separated
 * by one or more spaces; every token must contain '=' with a non-empty key. Returns 0, or -1
 * for a malformed line or more than FM_KVLINE_MAX_PAIRS pairs. */
int fm_kvline_parse(char *line, fm_kvline *out);

/* The value for key, or NULL. */
const char *fm_kvline_get(const fm_kvline *l, const char *key);

/* Escape src into dst (capacity len) so that it holds no space, '%', '=', or control byte
 * (as %XX). Returns the length written, or -1 if dst is too small. */
int fm_kvline_escape(const char *src, char *dst, size_t len);
/* Undo fm_kvline_escape in place. Returns 0, or -1 for a bad %XX sequence. */
int fm_kvline_unescape(char *s);

#endif
