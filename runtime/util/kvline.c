/* SPDX-License-Identifier: BSD-3-Clause */
#include "kvline.h"

#include <stdio.h>
#include <string.h>

int fm_kvline_parse(char *line, fm_kvline *out)
{
    out->n = 0;
    size_t l = strlen(line);
    if (l && line[l - 1] == '\n')
        line[--l] = '\0';
    char *p = line;
    for (;;) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        char *tok = p;
        while (*p && *p != ' ')
            p++;
        if (*p)
            *p++ = '\0';
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok || out->n == FM_KVLINE_MAX_PAIRS)
            return -1;
        *eq = '\0';
        out->key[out->n] = tok;
        out->val[out->n] = eq + 1;
        out->n++;
    }
    return out->n ? 0 : -1;
}

const char *fm_kvline_get(const fm_kvline *l, const char *key)
{
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->key[i], key))
            return l->val[i];
    return NULL;
}

static int needs_escape(unsigned char c)
{
    return c <= ' ' || c == '%' || c == '=' || c >= 0x7f;
}

int fm_kvline_escape(const char *src, char *dst, size_t len)
{
    size_t o = 0;
    for (const unsigned char *s = (const unsigned char *)src; *s; s++) {
        size_t need = needs_escape(*s) ? 3 : 1;
        if (o + need >= len)
            return -1;
        if (need == 3)
            o += (size_t)snprintf(dst + o, 4, "%%%02X", *s);
        else
            dst[o++] = (char)*s;
    }
    if (o >= len)
        return -1;
    dst[o] = '\0';
    return (int)o;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int fm_kvline_unescape(char *s)
{
    char *o = s;
    for (; *s; s++) {
        if (*s != '%') {
            *o++ = *s;
            continue;
        }
        int hi = hexval(s[1]), lo = hi < 0 ? -1 : hexval(s[2]);
        if (hi < 0 || lo < 0)
            return -1;
        *o++ = (char)(hi * 16 + lo);
        s += 2;
    }
    *o = '\0';
    return 0;
}
